/* SPDX-License-Identifier: MIT */
/* The PostgreSQL store's connection module (src/store/pg/link.c, its host
 * lists in hosts.c) without a PostgreSQL: the host lists of a connection string
 * (one entry per host, one port for all, hostaddr, mismatched lists and too
 * many hosts refused, connect_timeout as the per-host deadline), and the order
 * of a round on a real loop against local ports that refuse or never answer:
 * from the host that was read-write last, the hosts that stalled last and the
 * one that stalled most recently last of all; a host that accepts the TCP
 * connection and then answers nothing is given up on after the deadline,
 * counted, and tried last from then on. */
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <tenure/err.h>

#include "common/clock.h"
#include "common/loop.h"
#include "store/pg/link.h"
#include "tn_test.h"

#include <cmocka.h>

/* ---- host lists ---- */

static void test_pg_link__hosts_split(void **state)
{
    (void)state;
    struct tn_pg_hosts h;
    char err[256] = "";
    assert_int_equal(tn_pg_hosts_init(&h,
                                      "postgresql://u@a:1,b:2,c:3/db?"
                                      "target_session_attrs=read-write",
                                      1500, err, sizeof(err)),
                     TN_OK);
    assert_int_equal(h.n, 3);
    assert_string_equal(h.host[1], "b");
    assert_string_equal(h.port[2], "3");
    assert_int_equal(h.deadline_ms, 1500); /* no connect_timeout */
    char name[64];
    tn_pg_hosts_name(&h, 0, name, sizeof(name));
    assert_string_equal(name, "a:1");
    tn_pg_hosts_release(&h);

    assert_int_equal(tn_pg_hosts_init(&h,
                                      "host=x,y port=5433 connect_timeout=3 "
                                      "keepalives_idle=9",
                                      1000, err, sizeof(err)),
                     TN_OK);
    assert_int_equal(h.n, 2);
    assert_string_equal(h.port[1], "5433"); /* one port for every host */
    assert_int_equal(h.deadline_ms, 3000);
    bool idle = false;
    for (size_t i = 0; h.keys[i] != NULL; i++) {
        if (strcmp(h.keys[i], "keepalives_idle") == 0) {
            assert_false(idle); /* given once: the string's, no default */
            assert_string_equal(h.vals[i], "9");
            idle = true;
        }
    }
    assert_true(idle);
    tn_pg_hosts_release(&h);
}

static void test_pg_link__hosts_defaults_and_errors(void **state)
{
    (void)state;
    struct tn_pg_hosts h;
    char err[256] = "";
    assert_int_equal(tn_pg_hosts_init(&h, "dbname=x", 1000, err, sizeof(err)),
                     TN_OK);
    assert_int_equal(h.n, 1); /* libpq's default host */
    assert_null(h.host[0]);
    bool user_timeout = false;
    for (size_t i = 0; h.keys[i] != NULL; i++)
        user_timeout |= strcmp(h.keys[i], "tcp_user_timeout") == 0;
    assert_true(user_timeout);
    tn_pg_hosts_release(&h);

    assert_int_equal(
        tn_pg_hosts_init(&h, "host=a,b port=1,2,3", 1000, err, sizeof(err)),
        TN_EINVAL);
    assert_int_equal(tn_pg_hosts_init(&h, "host=a,b hostaddr=1.2.3.4", 1000,
                                      err, sizeof(err)),
                     TN_EINVAL);
    assert_int_equal(tn_pg_hosts_init(&h, "nonsense", 1000, err, sizeof(err)),
                     TN_EINVAL);
    char many[2048] = "host=h";
    size_t at = strlen(many);
    for (int i = 1; i < TN_PG_MAX_HOSTS + 1; i++)
        at += (size_t)snprintf(many + at, sizeof(many) - at, ",h");
    assert_int_equal(tn_pg_hosts_init(&h, many, 1000, err, sizeof(err)),
                     TN_EINVAL);
}

/* ---- rounds on a real loop ---- */

struct probe {
    struct tn_loop *loop;
    bool done;
    bool up;
    char why[1024];
};

static void on_up(void *arg)
{
    struct probe *p = arg;
    p->up = true;
    p->done = true;
}

static void on_io(void *arg, uint32_t events)
{
    (void)arg;
    (void)events;
}

static void on_fail(void *arg, const char *why)
{
    struct probe *p = arg;
    (void)snprintf(p->why, sizeof(p->why), "%s", why);
    p->done = true;
}

static const struct tn_pg_link_ops ops = {on_up, on_io, on_fail};

/* A listening socket on a free port: refuse = closed before the round (a
 * port nothing listens on), else it accepts and never answers. */
static int listener(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    socklen_t len = sizeof(a);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    assert_int_equal(listen(fd, 8), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

/* Run one round over hosts; the failures it reports, in order. */
static void round_over(struct tn_pg_hosts *h, struct probe *p)
{
    struct tn_pg_link l;
    memset(p, 0, sizeof(*p));
    p->loop = tn_loop_new();
    assert_non_null(p->loop);
    tn_pg_link_init(&l, p->loop, h, &ops, p);
    tn_pg_link_connect(&l);
    int64_t until = tn_clock_now_ms() + 20000;
    while (!p->done && tn_clock_now_ms() < until)
        (void)tn_loop_run_once(p->loop, 50);
    assert_true(p->done);
    tn_pg_link_close(&l);
    tn_loop_free(p->loop);
}

/* The position of "127.0.0.1:port" in why, or -1. */
static long pos_of(const char *why, int port)
{
    char name[64];
    (void)snprintf(name, sizeof(name), "127.0.0.1:%d:", port);
    const char *at = strstr(why, name);
    return at != NULL ? at - why : -1;
}

static void test_pg_link__round_order(void **state)
{
    (void)state;
    int port[3];
    for (int i = 0; i < 3; i++)
        (void)close(listener(&port[i])); /* refused from now on */
    char conninfo[256];
    (void)snprintf(conninfo, sizeof(conninfo),
                   "host=127.0.0.1,127.0.0.1,127.0.0.1 port=%d,%d,%d "
                   "connect_timeout=5 user=u dbname=d",
                   port[0], port[1], port[2]);
    struct tn_pg_hosts h;
    char err[256] = "";
    assert_int_equal(tn_pg_hosts_init(&h, conninfo, 1000, err, sizeof(err)),
                     TN_OK);
    struct probe p;
    h.hint = 1; /* read-write last: first */
    round_over(&h, &p);
    assert_false(p.up);
    assert_true(pos_of(p.why, port[1]) < pos_of(p.why, port[2]));
    assert_true(pos_of(p.why, port[2]) < pos_of(p.why, port[0]));
    /* stalled hosts last, the most recent of them last of all */
    tn_pg_hosts_avoid(&h, 1);
    h.suspect_ms[1] = 100;
    tn_pg_hosts_avoid(&h, 2);
    h.suspect_ms[2] = 50;
    round_over(&h, &p);
    assert_true(pos_of(p.why, port[0]) >= 0);
    assert_true(pos_of(p.why, port[0]) < pos_of(p.why, port[2]));
    assert_true(pos_of(p.why, port[2]) < pos_of(p.why, port[1]));
    tn_pg_hosts_release(&h);
}

static void test_pg_link__silent_host_given_up(void **state)
{
    (void)state;
    int silent_port;
    int refused_port;
    int silent = listener(&silent_port); /* accepts, never answers */
    (void)close(listener(&refused_port));
    char conninfo[256];
    (void)snprintf(conninfo, sizeof(conninfo),
                   "host=127.0.0.1,127.0.0.1 port=%d,%d connect_timeout=1 "
                   "user=u dbname=d",
                   silent_port, refused_port);
    struct tn_pg_hosts h;
    char err[256] = "";
    assert_int_equal(tn_pg_hosts_init(&h, conninfo, 1000, err, sizeof(err)),
                     TN_OK);
    struct probe p;
    round_over(&h, &p);
    /* the silent first host was given up on, and the next one tried */
    assert_int_equal(h.n_timeouts, 1);
    assert_non_null(strstr(p.why, "no answer within 1000 ms"));
    assert_true(pos_of(p.why, silent_port) < pos_of(p.why, refused_port));
    assert_true(h.suspect_ms[0] != 0);
    /* from then on it is tried last */
    round_over(&h, &p);
    assert_true(pos_of(p.why, refused_port) < pos_of(p.why, silent_port));
    tn_pg_hosts_release(&h);
    (void)close(silent);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pg_link__hosts_split),
        cmocka_unit_test(test_pg_link__hosts_defaults_and_errors),
        cmocka_unit_test(test_pg_link__round_order),
        cmocka_unit_test(test_pg_link__silent_host_given_up),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
