/* SPDX-License-Identifier: MIT */
/* The keepalive thread against a scripted loopback responder: it renews,
 * reports "lost" once when the server says so, "expired" once when the
 * server goes silent (at the safe deadline, not later), "released" once
 * after a release with no renew sent afterwards, and "stopped" when the
 * client is freed.  Waits are bounded polls on what the thread did; the
 * thread itself runs on the real monotonic clock; "nothing more is sent"
 * is checked on its state, not by sleeping. */
/* clang-format off: cmocka.h needs these headers first */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tn_test.h"

#include <cmocka.h>
/* clang-format on */

#include <tenure/client.h>

#include "client/client_internal.h"
#include "common/clock.h"

enum mode {
    MODE_OK = 0,     /* renew 200, release 204 */
    MODE_LOST = 1,   /* 409 lost */
    MODE_SILENT = 2, /* read the request, never answer */
};

struct responder {
    int fd;             /* listening socket */
    atomic_int mode;    /* enum mode */
    atomic_int patches; /* renew requests seen */
    atomic_int deletes; /* release requests seen */
    atomic_bool quit;   /* stop serving */
    pthread_t thread;   /* serving thread */
};

static const char renew_ok[] =
    "HTTP/1.1 200 OK\r\nContent-Length: 70\r\nConnection: close\r\n\r\n"
    "{\"name\":\"k\",\"owner_id\":\"u\",\"token\":7,\"ttl_ms\":300,"
    "\"expires_in_ms\":300}";
static const char release_ok[] =
    "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n";
static const char lost[] =
    "HTTP/1.1 409 Conflict\r\nContent-Length: 16\r\nConnection: close\r\n"
    "\r\n{\"error\":\"lost\"}";

/* Read the whole request (headers and Content-Length body) into req: a
 * socket closed with bytes of it unread sends a reset, which can cut the
 * answer short on the client's side. */
static ssize_t read_request(int c, char *req, size_t cap)
{
    size_t len = 0;
    while (len < cap - 1) {
        ssize_t n = read(c, req + len, cap - 1 - len);
        if (n <= 0)
            return -1;
        len += (size_t)n;
        req[len] = '\0';
        char *end = strstr(req, "\r\n\r\n");
        if (end == NULL)
            continue;
        const char *cl = strcasestr(req, "Content-Length:");
        size_t want = cl != NULL && cl < end ? strtoul(cl + 15, NULL, 10) : 0;
        if (len - (size_t)(end + 4 - req) >= want)
            return (ssize_t)len;
    }
    return (ssize_t)len;
}

static void answer(struct responder *r, int c)
{
    char req[4096];
    if (read_request(c, req, sizeof(req)) <= 0)
        return;
    bool is_delete = strncmp(req, "DELETE", 6) == 0;
    atomic_fetch_add(is_delete ? &r->deletes : &r->patches, 1);
    int mode = atomic_load(&r->mode);
    if (mode == MODE_SILENT) {
        while (!atomic_load(&r->quit) && atomic_load(&r->mode) == MODE_SILENT)
            usleep(1000);
        return;
    }
    const char *reply = mode == MODE_LOST ? lost
                        : is_delete       ? release_ok
                                          : renew_ok;
    (void)!send(c, reply, strlen(reply), MSG_NOSIGNAL);
}

static void *serve(void *arg)
{
    struct responder *r = arg;
    while (!atomic_load(&r->quit)) {
        int c = accept(r->fd, NULL, NULL);
        if (c < 0)
            return NULL;
        answer(r, c);
        close(c);
    }
    return NULL;
}

static char url[64];

static void responder_start(struct responder *r)
{
    memset(r, 0, sizeof(*r));
    r->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(r->fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(r->fd, 16), 0);
    socklen_t len = sizeof(a);
    assert_int_equal(getsockname(r->fd, (struct sockaddr *)&a, &len), 0);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(a.sin_port));
    assert_int_equal(pthread_create(&r->thread, NULL, serve, r), 0);
}

static void responder_stop(struct responder *r)
{
    atomic_store(&r->quit, true);
    shutdown(r->fd, SHUT_RDWR);
    close(r->fd);
    pthread_join(r->thread, NULL);
}

struct seen {
    atomic_int calls;   /* callbacks */
    atomic_int reason;  /* enum tn_lease_end of the last one */
    atomic_int rc;      /* its rc */
    atomic_llong at_ms; /* monotonic ms of the first */
};

static void on_end(struct tn_lease *l, enum tn_lease_end why, int rc, void *ud)
{
    (void)l;
    struct seen *s = ud;
    if (atomic_fetch_add(&s->calls, 1) == 0)
        atomic_store(&s->at_ms, (long long)tn_clock_mono_ms());
    atomic_store(&s->reason, (int)why);
    atomic_store(&s->rc, rc);
}

static struct tn_client *client_for(const char *u)
{
    struct tn_client_options o;
    tn_client_options_init(&o);
    o.urls[0] = u;
    o.n_urls = 1;
    o.owner_id = "u";
    o.safety_margin_ms = 0;
    o.request_timeout_ms = 2000;
    struct tn_client *c = NULL;
    assert_int_equal(tn_client_new(&o, &c, NULL), 0);
    return c;
}

/* A lease as if granted by a request sent just now with a 300 ms TTL. */
static struct tn_lease *granted_now(struct tn_client *c)
{
    struct tn_lease *l = NULL;
    assert_int_equal(tn_client_lease_adopt(c, "k", 7, "abcd", &l), 0);
    pthread_mutex_lock(&c->mu);
    tn_lease_granted_locked(l, tn_clock_mono_ms(), 300, 300);
    pthread_mutex_unlock(&c->mu);
    return l;
}

/* The keepalive thread has no lease left to renew. */
static bool keeps_anything(struct tn_client *c)
{
    pthread_mutex_lock(&c->mu);
    bool any = c->kept != NULL;
    pthread_mutex_unlock(&c->mu);
    return any;
}

/* Poll until *v >= want or 5 s passed. */
static bool wait_for(atomic_int *v, int want)
{
    int64_t until = tn_clock_mono_ms() + 5000;
    while (atomic_load(v) < want && tn_clock_mono_ms() < until)
        usleep(1000);
    return atomic_load(v) >= want;
}

static void test_keepalive__renews_then_reports_lost_once(void **st)
{
    (void)st;
    struct responder r;
    responder_start(&r);
    struct tn_client *c = client_for(url);
    struct tn_lease *l = granted_now(c);
    struct seen s = {0};
    assert_int_equal(tn_client_keepalive_start(c, l, on_end, &s), 0);
    assert_int_equal(tn_client_keepalive_start(c, l, on_end, &s), TN_EINVAL);
    int64_t granted = tn_clock_mono_ms();
    assert_true(wait_for(&r.patches, 4)); /* 4 renews: past 1.3 TTLs */
    /* Held past its first TTL only if renews succeeded (a run of failed
     * ones also makes 4 requests, by backoff, well within it). */
    while (tn_clock_mono_ms() < granted + 400)
        usleep(1000);
    assert_true(tn_lease_is_held(l));
    assert_int_equal(atomic_load(&s.calls), 0);
    atomic_store(&r.mode, MODE_LOST);
    assert_true(wait_for(&s.calls, 1));
    assert_int_equal(atomic_load(&s.reason), TN_LEASE_END_LOST);
    assert_int_equal(atomic_load(&s.rc), TN_ELOST);
    assert_false(tn_lease_is_held(l));
    assert_false(keeps_anything(c)); /* so nothing more can be sent */
    tn_lease_free(l);
    tn_client_free(c);
    responder_stop(&r);
}

static void test_keepalive__silent_server_expires_at_deadline(void **st)
{
    (void)st;
    struct responder r;
    responder_start(&r);
    atomic_store(&r.mode, MODE_SILENT);
    struct tn_client *c = client_for(url);
    struct tn_lease *l = granted_now(c);
    int64_t deadline = l->deadline_ms;
    struct seen s = {0};
    assert_int_equal(tn_client_keepalive_start(c, l, on_end, &s), 0);
    assert_true(wait_for(&s.calls, 1));
    assert_int_equal(atomic_load(&s.reason), TN_LEASE_END_EXPIRED);
    assert_int_equal(atomic_load(&s.rc), TN_EEXPIRED);
    long long at = atomic_load(&s.at_ms);
    /* Reported when the safe time ended, though a renew was hanging. */
    assert_true(at >= deadline);
    assert_true(at < deadline + 250);
    assert_false(tn_lease_is_held(l));
    tn_lease_free(l);
    tn_client_free(c);
    atomic_store(&r.mode, MODE_OK);
    responder_stop(&r);
}

static void test_keepalive__release_reports_once_and_stops_renewing(void **st)
{
    (void)st;
    struct responder r;
    responder_start(&r);
    struct tn_client *c = client_for(url);
    struct tn_lease *l = granted_now(c);
    struct seen s = {0};
    assert_int_equal(tn_client_keepalive_start(c, l, on_end, &s), 0);
    assert_true(wait_for(&r.patches, 2));
    assert_int_equal(tn_client_release(c, l, NULL), 0);
    assert_true(wait_for(&s.calls, 1));
    assert_int_equal(atomic_load(&s.reason), TN_LEASE_END_RELEASED);
    assert_int_equal(atomic_load(&s.rc), 0);
    assert_int_equal(atomic_load(&r.deletes), 1);
    assert_false(keeps_anything(c));
    tn_lease_free(l);
    tn_client_free(c);
    responder_stop(&r);
}

static void test_keepalive__free_reports_stopped(void **st)
{
    (void)st;
    struct responder r;
    responder_start(&r);
    struct tn_client *c = client_for(url);
    struct tn_lease *l = granted_now(c);
    struct seen s = {0};
    assert_int_equal(tn_client_keepalive_start(c, l, on_end, &s), 0);
    tn_lease_free(l); /* the keepalive keeps its own reference */
    tn_client_free(c);
    assert_int_equal(atomic_load(&s.calls), 1);
    assert_int_equal(atomic_load(&s.reason), TN_LEASE_END_STOPPED);
    assert_int_equal(atomic_load(&s.rc), TN_ECANCELED);
    responder_stop(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keepalive__renews_then_reports_lost_once),
        cmocka_unit_test(test_keepalive__silent_server_expires_at_deadline),
        cmocka_unit_test(
            test_keepalive__release_reports_once_and_stops_renewing),
        cmocka_unit_test(test_keepalive__free_reports_stopped),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
