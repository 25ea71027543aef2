/* SPDX-License-Identifier: MIT */
/* Which web pages may talk to the front end (src/http/origin.c, issue
 * #36): a Host that names no name of this server is refused 421 (DNS
 * rebinding), a request that changes state from a page of another origin
 * 403 (cross-site request forgery), before its body is read; requests
 * without Host or Origin, and the server's own pages, are served. */
#include "http_fixture.h"

/* A front end listening (nowhere) as 127.0.0.1:7300, with these lists. */
static struct tn_http *start(struct tn_loop *loop, bool check_host,
                             const char *hosts, const char *origins)
{
    struct tn_http_config cfg = {.listen = NULL,
                                 .max_connections = 16,
                                 .request_timeout_ms = 30000,
                                 .max_body_bytes = 64,
                                 .max_header_bytes = 512,
                                 .max_pipeline = 4,
                                 .check_host = check_host,
                                 .allow_hosts = hosts,
                                 .allow_origins = origins,
                                 .handler = handler,
                                 .app = &the_app};
    struct tn_http *h = NULL;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_http_start(loop, &cfg, &h, &em), 0);
    return h;
}

/* The status of the answer to one request with these header lines. */
static unsigned status_for(struct tn_http *h, struct tn_loop *loop,
                           const char *method, const char *fields)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(tn_http_adopt(h, sv[0]), 0);
    char req[512];
    int n = snprintf(req, sizeof(req),
                     "%s /v1/leases HTTP/1.1\r\n%sContent-Length: 2\r\n\r\nhi",
                     method, fields);
    assert_int_equal(send(sv[1], req, (size_t)n, 0), n);
    char buf[1024] = "";
    ssize_t got = 0;
    for (int i = 0; i < 20 && got <= 0; i++) {
        assert_int_equal(tn_loop_run_once(loop, 0), 0);
        got = recv(sv[1], buf, sizeof(buf) - 1, MSG_DONTWAIT);
    }
    assert_true(got > 12);
    (void)close(sv[1]);
    for (int i = 0; i < 3; i++)
        (void)tn_loop_run_once(loop, 0);
    return (unsigned)strtoul(buf + 9, NULL, 10);
}

static void test_http__host_names_this_server(void **state)
{
    (void)state;
    struct tn_loop *loop = tn_loop_new();
    struct tn_http *h =
        start(loop, true, "tenure.internal, lb.example\nx.y", NULL);
    static const struct {
        const char *host;
        unsigned status;
    } cases[] = {
        {"localhost", 200},
        {"LOCALHOST:7300", 200},
        {"127.0.0.1", 200},
        {"127.0.0.1:7300", 200},
        {"[::1]", 200},
        {"[::1]:7300", 200},
        {"10.1.2.3:99", 200},
        {"tenure.internal", 200},
        {"lb.example:443", 200},
        {"x.y", 200},
        {"evil.example", 421},
        {"evil.example:7300", 421},
        {"localhost.evil", 421},
        {"tenure.internal.evil", 421},
        {"127.0.0.1.nip.io", 421},
        {"[::1", 421},
        {"localhost:", 421},
        {"localhost:7x", 421},
        {"localhost:123456", 421},
        {"", 421},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char f[128];
        (void)snprintf(f, sizeof(f), "Host: %s\r\n", cases[i].host);
        unsigned st = status_for(h, loop, "GET", f);
        if (st != cases[i].status)
            fail_msg("Host: %s: %u, not %u", cases[i].host, st,
                     cases[i].status);
    }
    assert_int_equal(status_for(h, loop, "GET", ""), 200); /* no Host */
    struct tn_http_stats st;
    tn_http_get_stats(h, &st);
    assert_int_equal(st.cross_site, 10);
    tn_http_stop(h);
    /* Authentication on: names are not checked (the lists still are). */
    h = start(loop, false, NULL, NULL);
    assert_int_equal(status_for(h, loop, "GET", "Host: evil.example\r\n"), 200);
    tn_http_stop(h);
    tn_loop_free(loop);
}

static void test_http__origin_of_state_changes(void **state)
{
    (void)state;
    struct tn_loop *loop = tn_loop_new();
    struct tn_http *h = start(loop, true, "tenure.internal",
                              "https://app.example,http://localhost:3000");
    static const struct {
        const char *method, *fields;
        unsigned status;
    } cases[] = {
        /* No Origin: not a browser (curl, the clients). */
        {"POST", "Host: 127.0.0.1:7300\r\n", 200},
        {"POST", "", 200},
        /* The server's own pages (the console at /ui). */
        {"POST", "Host: 127.0.0.1:7300\r\nOrigin: http://127.0.0.1:7300\r\n",
         200},
        {"DELETE", "Host: localhost:7300\r\nOrigin: http://LocalHost:7300\r\n",
         200},
        {"PATCH",
         "Host: tenure.internal\r\nOrigin: http://tenure.internal:80\r\n", 200},
        /* Listed. */
        {"POST", "Host: 127.0.0.1:7300\r\nOrigin: https://app.example\r\n",
         200},
        {"POST", "Host: 127.0.0.1:7300\r\nOrigin: http://localhost:3000\r\n",
         200},
        /* Reads are not refused: the page cannot read the answer. */
        {"GET", "Host: 127.0.0.1:7300\r\nOrigin: http://evil.example\r\n", 200},
        {"HEAD", "Host: 127.0.0.1:7300\r\nOrigin: null\r\n", 200},
        /* Pages elsewhere, sandboxed ones (null), a scheme or port off. */
        {"POST", "Host: 127.0.0.1:7300\r\nOrigin: http://evil.example\r\n",
         403},
        {"POST", "Host: 127.0.0.1:7300\r\nOrigin: null\r\n", 403},
        {"PATCH", "Host: 127.0.0.1:7300\r\nOrigin: http://127.0.0.1:8000\r\n",
         403},
        {"DELETE", "Host: 127.0.0.1:7300\r\nOrigin: https://127.0.0.1:7300\r\n",
         403},
        {"PUT", "Host: 127.0.0.1:7300\r\nOrigin: http://localhost:7300\r\n",
         403},
        {"POST", "Origin: http://127.0.0.1:7300\r\n", 403}, /* no Host */
        {"POST", "Host: 127.0.0.1:7300\r\nOrigin: https://app.example.evil\r\n",
         403},
        {"POST", "Host: 127.0.0.1:7300\r\nOrigin: 127.0.0.1:7300\r\n", 403},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned st = status_for(h, loop, cases[i].method, cases[i].fields);
        if (st != cases[i].status)
            fail_msg("%s with %s: %u, not %u", cases[i].method, cases[i].fields,
                     st, cases[i].status);
    }
    tn_http_stop(h);
    h = start(loop, true, NULL, "*");
    assert_int_equal(
        status_for(h, loop, "POST", "Host: 127.0.0.1\r\nOrigin: null\r\n"),
        200);
    tn_http_stop(h);
    tn_loop_free(loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http__host_names_this_server),
        cmocka_unit_test(test_http__origin_of_state_changes),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
