/* SPDX-License-Identifier: MIT */
/* Unit tests of the client transport against real loopback sockets: a
 * port that refuses, a port that accepts but never answers, and a tiny
 * one-shot HTTP responder thread.  Checks failover order, the
 * "not sent, so try the next URL" rule, timeouts bounded by the deadline
 * and escaping. */
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
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tn_test.h"

#include <cmocka.h>
/* clang-format on */

#include <tenure/client.h>

#include "client/client_internal.h"
#include "common/alloc.h"
#include "common/clock.h"

/* A listening socket on an ephemeral loopback port. */
static int listen_any(int *port_out)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(fd, 8), 0);
    socklen_t len = sizeof(a);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port_out = ntohs(a.sin_port);
    return fd;
}

/* A port that was just closed: connecting is refused. */
static int refusing_port(void)
{
    int port = 0;
    int fd = listen_any(&port);
    close(fd);
    return port;
}

struct responder {
    int fd;             /* listening socket */
    const char *reply;  /* full HTTP response */
    atomic_int served;  /* requests answered */
    char request[2048]; /* the last request head seen */
    pthread_t thread;   /* serving thread */
};

static void *serve(void *arg)
{
    struct responder *r = arg;
    for (;;) {
        int c = accept(r->fd, NULL, NULL);
        if (c < 0)
            return NULL;
        ssize_t n = read(c, r->request, sizeof(r->request) - 1);
        if (n > 0) {
            r->request[n] = '\0';
            (void)!send(c, r->reply, strlen(r->reply), MSG_NOSIGNAL);
            atomic_fetch_add(&r->served, 1);
        }
        close(c);
    }
}

static void responder_start(struct responder *r, const char *reply,
                            int *port_out)
{
    memset(r, 0, sizeof(*r));
    r->reply = reply;
    r->fd = listen_any(port_out);
    assert_int_equal(pthread_create(&r->thread, NULL, serve, r), 0);
}

static void responder_stop(struct responder *r)
{
    shutdown(r->fd, SHUT_RDWR);
    close(r->fd);
    pthread_join(r->thread, NULL);
}

static const char ok_reply[] = "HTTP/1.1 200 OK\r\nContent-Type: "
                               "application/json\r\nContent-Length: 11\r\n"
                               "Connection: close\r\n\r\n{\"ok\":true}";
static const char busy_reply[] =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 23\r\n"
    "Connection: close\r\n\r\n{\"error\":\"unavailable\"}";

static void http_with(struct tn_client_http *h, const int *ports, size_t n)
{
    static char urls[4][64];
    struct tn_client_options o;
    tn_client_options_init(&o);
    for (size_t i = 0; i < n; i++) {
        snprintf(urls[i], sizeof(urls[i]), "http://127.0.0.1:%d/", ports[i]);
        o.urls[i] = urls[i];
    }
    o.n_urls = n;
    assert_int_equal(tn_client_http_init(h, &o, NULL, NULL, tn_clock_mono_ms),
                     0);
}

static void test_client_http__fails_over_to_next_url(void **st)
{
    (void)st;
    struct responder r;
    int ports[2] = {refusing_port(), 0};
    responder_start(&r, ok_reply, &ports[1]);
    struct tn_client_http h;
    http_with(&h, ports, 2);
    struct tn_client_http_resp resp;
    int64_t deadline = tn_clock_mono_ms() + 5000;
    assert_int_equal(
        tn_client_http_do(
            &h,
            &(struct tn_client_http_req){"POST", "/v1/leases", "{}", deadline},
            &resp, NULL),
        0);
    assert_int_equal(resp.status, 200);
    assert_string_equal(resp.body, "{\"ok\":true}");
    assert_int_equal(h.preferred, 1); /* the next call starts there */
    tn_client_http_resp_release(&resp);
    tn_client_http_release(&h);
    responder_stop(&r); /* joined: the request it saw is ours to read */
    assert_non_null(strstr(r.request, "POST /v1/leases HTTP/1.1"));
    assert_non_null(strstr(r.request, "Content-Type: application/json"));
}

static void test_client_http__all_refused_is_econnect(void **st)
{
    (void)st;
    int ports[2] = {refusing_port(), refusing_port()};
    struct tn_client_http h;
    http_with(&h, ports, 2);
    struct tn_client_http_resp resp;
    struct tn_errmsg em = {{0}};
    int64_t deadline = tn_clock_mono_ms() + 5000;
    assert_int_equal(
        tn_client_http_do(
            &h,
            &(struct tn_client_http_req){"GET", "/v1/leases/x", NULL, deadline},
            &resp, &em),
        TN_ECONNECT);
    assert_true(em.text[0] != '\0');
    tn_client_http_release(&h);
}

static void test_client_http__unavailable_tries_next(void **st)
{
    (void)st;
    struct responder busy;
    struct responder ok;
    int ports[2];
    responder_start(&busy, busy_reply, &ports[0]);
    responder_start(&ok, ok_reply, &ports[1]);
    struct tn_client_http h;
    http_with(&h, ports, 2);
    struct tn_client_http_resp resp;
    int64_t deadline = tn_clock_mono_ms() + 5000;
    assert_int_equal(
        tn_client_http_do(
            &h,
            &(struct tn_client_http_req){"GET", "/v1/leases/x", NULL, deadline},
            &resp, NULL),
        0);
    assert_int_equal(resp.status, 200);
    assert_int_equal(atomic_load(&busy.served), 1);
    tn_client_http_resp_release(&resp);
    tn_client_http_release(&h);
    responder_stop(&busy);
    responder_stop(&ok);
}

static void test_client_http__last_unavailable_is_returned(void **st)
{
    (void)st;
    struct responder busy;
    int ports[1];
    responder_start(&busy, busy_reply, &ports[0]);
    struct tn_client_http h;
    http_with(&h, ports, 1);
    struct tn_client_http_resp resp;
    int64_t deadline = tn_clock_mono_ms() + 5000;
    assert_int_equal(
        tn_client_http_do(
            &h, &(struct tn_client_http_req){"GET", "/readyz", NULL, deadline},
            &resp, NULL),
        0);
    assert_int_equal(resp.status, 503);
    tn_client_http_resp_release(&resp);
    tn_client_http_release(&h);
    responder_stop(&busy);
}

static void
test_client_http__silent_server_times_out_without_failover(void **st)
{
    (void)st;
    /* Accepted by the kernel, never answered: the request was sent, so
     * the outcome is unknown and the next URL must not be tried. */
    int port = 0;
    int silent = listen_any(&port);
    struct responder ok;
    int ports[2] = {port, 0};
    responder_start(&ok, ok_reply, &ports[1]);
    struct tn_client_http h;
    http_with(&h, ports, 2);
    struct tn_client_http_resp resp;
    int64_t start = tn_clock_mono_ms();
    assert_int_equal(
        tn_client_http_do(&h,
                          &(struct tn_client_http_req){"PATCH", "/v1/leases/x",
                                                       "{}", start + 300},
                          &resp, NULL),
        TN_ETIMEDOUT);
    int64_t took = tn_clock_mono_ms() - start;
    assert_true(took >= 250 && took < 1500);
    assert_int_equal(atomic_load(&ok.served), 0);
    tn_client_http_release(&h);
    responder_stop(&ok);
    close(silent);
}

static void test_client_http__passed_deadline_sends_nothing(void **st)
{
    (void)st;
    struct responder ok;
    int ports[1];
    responder_start(&ok, ok_reply, &ports[0]);
    struct tn_client_http h;
    http_with(&h, ports, 1);
    struct tn_client_http_resp resp;
    assert_int_equal(
        tn_client_http_do(&h,
                          &(struct tn_client_http_req){"GET", "/x", NULL,
                                                       tn_clock_mono_ms() - 1},
                          &resp, NULL),
        TN_ETIMEDOUT);
    assert_int_equal(atomic_load(&ok.served), 0);
    tn_client_http_release(&h);
    responder_stop(&ok);
}

static void test_client_http__escape_is_one_segment(void **st)
{
    (void)st;
    char *e = tn_client_http_escape("a/b c:1");
    assert_string_equal(e, "a%2Fb%20c%3A1");
    tn_free(e);
}

static const char grant_reply[] =
    "HTTP/1.1 201 Created\r\nContent-Length: 140\r\nConnection: close\r\n"
    "\r\n{\"name\":\"s/1\",\"owner_id\":\"w\",\"token\":41,"
    "\"lease_secret\":\"00112233445566778899aabbccddeeff\",\"ttl_ms\":5000,"
    "\"expires_in_ms\":5000,\"proof\":\"c2ln\"}";

static void test_client_http__acquire_sends_options_and_reads_grant(void **st)
{
    (void)st;
    struct responder r;
    int port = 0;
    responder_start(&r, grant_reply, &port);
    char u[64];
    snprintf(u, sizeof(u), "http://127.0.0.1:%d", port);
    struct tn_client_options o;
    tn_client_options_init(&o);
    o.urls[0] = u;
    o.n_urls = 1;
    o.owner_id = "w";
    struct tn_client *c = NULL;
    assert_int_equal(tn_client_new(&o, &c, NULL), 0);
    struct tn_acquire_args a = {.name = "s/1",
                                .ttl_ms = 5000,
                                .wait_ms = 1500,
                                .request_id = "r-1",
                                .lock_delay_ms = 200};
    struct tn_lease *l = NULL;
    assert_int_equal(tn_client_acquire(c, &a, &l, NULL, NULL), 0);
    assert_int_equal(tn_lease_token(l), 41);
    assert_string_equal(tn_lease_secret(l), "00112233445566778899aabbccddeeff");
    assert_string_equal(tn_lease_proof(l), "c2ln");
    assert_int_equal(tn_lease_ttl_ms(l), 5000);
    int64_t safe = tn_lease_safe_for_ms(l);
    assert_true(safe > 4000 && safe <= 4500); /* minus a tenth */
    tn_lease_free(l);
    tn_client_free(c);
    responder_stop(&r);
    /* The options the server may not support yet are sent anyway. */
    assert_non_null(strstr(r.request, "\"wait_ms\":1500"));
    assert_non_null(strstr(r.request, "\"request_id\":\"r-1\""));
    assert_non_null(strstr(r.request, "\"lock_delay_ms\":200"));
    assert_non_null(strstr(r.request, "\"owner_id\":\"w\""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_http__fails_over_to_next_url),
        cmocka_unit_test(test_client_http__all_refused_is_econnect),
        cmocka_unit_test(test_client_http__unavailable_tries_next),
        cmocka_unit_test(test_client_http__last_unavailable_is_returned),
        cmocka_unit_test(
            test_client_http__silent_server_times_out_without_failover),
        cmocka_unit_test(test_client_http__passed_deadline_sends_nothing),
        cmocka_unit_test(test_client_http__escape_is_one_segment),
        cmocka_unit_test(
            test_client_http__acquire_sends_options_and_reads_grant),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
