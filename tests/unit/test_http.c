/* SPDX-License-Identifier: MIT */
/* The HTTP front end's connection state machine (src/http), driven over a
 * socketpair by scripted byte streams: each script is sent whole, split in
 * two at every byte, and one byte at a time, with a loop turn between the
 * pieces, and must always give the same answers.  The application here
 * echoes what it was given (method, path, query, body) or, for a refused
 * request, the status of its error, so the answers show what the parser
 * made of the bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <tenure/err.h>

#include "common/buf.h"
#include "common/loop.h"
#include "http/http.h"
#include "tn_test.h"

#include <cmocka.h>

#define MAX_PARKED 8

struct app {
    struct tn_http_req *parked[MAX_PARKED]; /* answered by the test */
    size_t n_parked;                        /* how many */
    bool park;                              /* park requests to /park */
    bool deny_bodies;                       /* answer 401 at the headers */
    int disconnects;                        /* disconnect callbacks run */
};

static struct app the_app;

static unsigned status_of(int err)
{
    switch (err) {
    case TN_ETOOBIG:
        return 413;
    case TN_EURITOOLONG:
        return 414;
    case TN_EHDRTOOBIG:
        return 431;
    case TN_ENOTIMPL:
        return 501;
    case TN_EHTTPVERSION:
        return 505;
    default:
        return 400;
    }
}

static void on_disc(void *ctx)
{
    struct app *a = ctx;
    a->disconnects++;
}

static void handler(void *arg, struct tn_http_req *r)
{
    struct app *a = arg;
    if (tn_http_req_error(r) != 0) {
        const char *m = tn_http_req_error_message(r);
        tn_http_reply(r, status_of(tn_http_req_error(r)), "text/plain", m,
                      strlen(m), 0);
        return;
    }
    if (a->park && strcmp(tn_http_req_path(r), "/park") == 0 &&
        a->n_parked < MAX_PARKED) {
        tn_http_req_on_disconnect(r, on_disc, a);
        a->parked[a->n_parked++] = r;
        return;
    }
    char out[512];
    size_t blen = 0;
    const char *body = tn_http_req_body(r, &blen);
    size_t qlen = 0;
    const char *q = tn_http_req_query(r, "q", &qlen);
    int n = snprintf(out, sizeof(out), "m=%d p=%s q=%s b=%.*s",
                     (int)tn_http_req_method(r), tn_http_req_path(r),
                     q != NULL ? q : "-", (int)blen, body);
    tn_http_reply(r, 200, "text/plain", out, (size_t)n, 0);
}

static bool on_headers(void *arg, struct tn_http_req *r)
{
    struct app *a = arg;
    if (!a->deny_bodies)
        return true;
    tn_http_reply(r, 401, "text/plain", "no", 2, 0);
    return false;
}

struct rig {
    struct tn_loop *loop;
    struct tn_http *h;
};

static int rig_setup(void **state)
{
    static struct rig rig;
    memset(&the_app, 0, sizeof(the_app));
    rig.loop = tn_loop_new();
    assert_non_null(rig.loop);
    struct tn_http_config cfg = {.listen = NULL,
                                 .max_connections = 16,
                                 .request_timeout_ms = 30000,
                                 .max_body_bytes = 64,
                                 .max_header_bytes = 256,
                                 .max_pipeline = 4,
                                 .handler = handler,
                                 .on_headers = on_headers,
                                 .app = &the_app};
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_http_start(rig.loop, &cfg, &rig.h, &em), 0);
    *state = &rig;
    return 0;
}

static int rig_teardown(void **state)
{
    struct rig *rig = *state;
    tn_http_stop(rig->h);
    tn_loop_free(rig->loop);
    return 0;
}

static int client_of(struct rig *rig)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(tn_http_adopt(rig->h, sv[0]), 0);
    return sv[1];
}

static void turns(struct rig *rig, int n)
{
    for (int i = 0; i < n; i++)
        assert_int_equal(tn_loop_run_once(rig->loop, 0), 0);
}

/* Everything the server sent until it closed, or until it fell silent. */
static void drain(struct rig *rig, int fd, struct tn_buf *out, bool *closed)
{
    *closed = false;
    for (int idle = 0; idle < 4;) {
        turns(rig, 1);
        char buf[4096];
        ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n == 0) {
            *closed = true;
            return;
        }
        if (n < 0) {
            idle++;
            continue;
        }
        idle = 0;
        assert_int_equal(tn_buf_append(out, buf, (size_t)n), 0);
    }
}

/* Send s in pieces cut at the given points (sorted, 0 < cut < len). */
static void send_cut(struct rig *rig, int fd, const char *s, size_t len,
                     const size_t *cuts, size_t n_cuts)
{
    size_t at = 0;
    for (size_t i = 0; i <= n_cuts; i++) {
        size_t end = i < n_cuts ? cuts[i] : len;
        /* A refused request closes early: later pieces may find no
         * reader, which is what the test is about, not an error. */
        if (send(fd, s + at, end - at, MSG_NOSIGNAL) != (ssize_t)(end - at))
            return;
        at = end;
        turns(rig, 2);
    }
}

struct script {
    const char *in;     /* bytes sent */
    size_t in_len;      /* 0: strlen(in) */
    const char *expect; /* every answer, concatenated */
    bool closes;        /* the server closes the connection */
};

static void run_cut(struct rig *rig, const struct script *sc,
                    const size_t *cuts, size_t n_cuts)
{
    size_t len = sc->in_len != 0 ? sc->in_len : strlen(sc->in);
    int fd = client_of(rig);
    send_cut(rig, fd, sc->in, len, cuts, n_cuts);
    struct tn_buf out;
    tn_buf_init(&out, 1 << 16);
    bool closed = false;
    drain(rig, fd, &out, &closed);
    if (out.len != strlen(sc->expect) ||
        memcmp(out.data, sc->expect, out.len) != 0)
        fail_msg("script %.40s cut at %zu pieces: got [%s]", sc->in, n_cuts + 1,
                 out.data != NULL ? out.data : "");
    assert_int_equal(closed, sc->closes);
    tn_buf_release(&out);
    (void)close(fd);
    turns(rig, 2);
}

/* Whole, cut in two at every byte, and byte by byte. */
static void run_script(struct rig *rig, const struct script *sc)
{
    size_t len = sc->in_len != 0 ? sc->in_len : strlen(sc->in);
    run_cut(rig, sc, NULL, 0);
    for (size_t k = 1; k < len; k++)
        run_cut(rig, sc, &k, 1);
    size_t cuts[1024];
    assert_true(len <= sizeof(cuts) / sizeof(cuts[0]));
    for (size_t k = 1; k < len; k++)
        cuts[k - 1] = k;
    run_cut(rig, sc, cuts, len - 1);
}

/* Expected answers, built with their lengths: a few static buffers used
 * in turn, enough for one script's expectations. */
static char *slot(void)
{
    static char bufs[16][2048]; /* the most answers one table holds */
    static unsigned next;
    char *b = bufs[next++ % 16];
    b[0] = '\0';
    return b;
}

/* The echo answers for bodies b1.. (NULL-ended), concatenated. */
static const char *ok(const char *b1, ...)
{
    char *out = slot();
    va_list ap;
    va_start(ap, b1);
    for (const char *b = b1; b != NULL; b = va_arg(ap, const char *)) {
        size_t at = strlen(out);
        (void)snprintf(out + at, 2048 - at,
                       "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                       "Content-Length: %zu\r\n\r\n%s",
                       strlen(b), b);
    }
    va_end(ap);
    return out;
}

static const char *refused(const char *status_line, const char *msg)
{
    char *out = slot();
    (void)snprintf(out, 2048,
                   "HTTP/1.1 %s\r\nContent-Type: text/plain\r\n"
                   "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                   status_line, strlen(msg), msg);
    return out;
}

#define CL_TE "Content-Length repeated or with Transfer-Encoding"
#define WS_NAME "whitespace in a header field name"
#define ONLY_CHUNKED "only the chunked transfer coding is supported"
#define ONLY_HTTP1 "only HTTP/1.1 and HTTP/1.0 are supported"

static void test_http__get_with_query(void **state)
{
    struct script sc = {"GET /a%2Fb?x=1&q=h%20i+j HTTP/1.1\r\nHost: x\r\n\r\n",
                        0, ok("m=0 p=/a%2Fb q=h i j b=", NULL), false};
    run_script(*state, &sc);
}

static void test_http__post_with_length(void **state)
{
    struct script sc = {"POST /p HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 0,
                        ok("m=2 p=/p q=- b=hello", NULL), false};
    run_script(*state, &sc);
}

static void test_http__chunked_body(void **state)
{
    struct script sc = {"POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                        "\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n",
                        0, ok("m=2 p=/p q=- b=hello", NULL), false};
    run_script(*state, &sc);
}

static void test_http__pipelined_in_order(void **state)
{
    struct script sc = {
        "GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n"
        "DELETE /3 HTTP/1.1\r\n\r\n",
        0, ok("m=0 p=/1 q=- b=", "m=0 p=/2 q=- b=", "m=5 p=/3 q=- b=", NULL),
        false};
    run_script(*state, &sc);
}

static void test_http__http10_closes(void **state)
{
    struct script sc = {"GET /1 HTTP/1.0\r\n\r\n", 0,
                        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                        "Content-Length: 15\r\nConnection: close\r\n\r\n"
                        "m=0 p=/1 q=- b=",
                        true};
    run_script(*state, &sc);
}

static void test_http__expect_continue(void **state)
{
    struct script sc = {"POST /p HTTP/1.1\r\nExpect: 100-continue\r\n"
                        "Content-Length: 2\r\n\r\nhi",
                        0, NULL, false};
    struct rig *rig = *state;
    char want[512];
    (void)snprintf(want, sizeof(want), "HTTP/1.1 100 Continue\r\n\r\n%s",
                   ok("m=2 p=/p q=- b=hi", NULL));
    sc.expect = want;
    /* Whole, the body comes with the headers: 100 is still sent first. */
    run_script(rig, &sc);
}

static void test_http__smuggling_refused(void **state)
{
    const struct script sc[] = {
        {"POST /p HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 7\r\n\r\n"
         "hiGET /x HTTP/1.1\r\n\r\n",
         0, refused("400 Bad Request", CL_TE), true},
        {"POST /p HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n"
         "hi",
         0, refused("400 Bad Request", CL_TE), true},
        {"POST /p HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: "
         "chunked\r\n\r\n0\r\n\r\n",
         0, refused("400 Bad Request", CL_TE), true},
        {"POST /p HTTP/1.1\r\nContent-Length : 2\r\n\r\n"
         "hiGET /x HTTP/1.1\r\n\r\n",
         0, refused("400 Bad Request", WS_NAME), true},
        /* A tab there is no token byte: the parser itself refuses it. */
        {"POST /p HTTP/1.1\r\nTransfer-Encoding\t: chunked\r\n\r\n"
         "0\r\n\r\n",
         0, refused("400 Bad Request", "malformed HTTP request"), true},
        {"POST /p HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 0,
         refused("501 Not Implemented", ONLY_CHUNKED), true},
        {"POST /p HTTP/1.1\r\nTransfer-Encoding: gzip, "
         "chunked\r\n\r\n0\r\n\r\n",
         0, refused("501 Not Implemented", ONLY_CHUNKED), true},
        /* Never read as HTTP/1.1: another version's framing may differ. */
        {"GET /x HTTP/2.0\r\n\r\nGET /y HTTP/1.1\r\n\r\n", 0,
         refused("505 HTTP Version Not Supported", ONLY_HTTP1), true},
        {"GET /x\r\n\r\n", 0,
         refused("505 HTTP Version Not Supported", ONLY_HTTP1), true},
    };
    for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++)
        run_script(*state, &sc[i]);
}

static void test_http__bad_targets_refused(void **state)
{
    static const char nul[] = "GET /a\0b HTTP/1.1\r\n\r\n";
    const struct script sc[] = {
        {nul, sizeof(nul) - 1,
         refused("400 Bad Request", "malformed HTTP request"), true},
        {"GET /a\x01"
         "b HTTP/1.1\r\n\r\n",
         0, refused("400 Bad Request", "malformed HTTP request"), true},
        {"GET /a?q=%00 HTTP/1.1\r\n\r\n", 0, ok("m=0 p=/a q=- b=", NULL),
         false},
    };
    for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++)
        run_script(*state, &sc[i]);
}

static void test_http__caps(void **state)
{
    char longq[400];
    (void)snprintf(longq, sizeof(longq), "GET /a?q=%0300d HTTP/1.1\r\n\r\n", 0);
    char bighdr[400];
    (void)snprintf(bighdr, sizeof(bighdr),
                   "GET /a HTTP/1.1\r\nX: %0250d\r\n\r\n", 0);
    const struct script sc[] = {
        {longq, 0, refused("414 URI Too Long", "request target too long"),
         true},
        {bighdr, 0,
         refused("431 Request Header Fields Too Large",
                 "request header fields too large"),
         true},
        {"POST /p HTTP/1.1\r\nContent-Length: 65\r\n\r\n", 0,
         refused("413 Content Too Large", "request body too large"), true},
    };
    for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++)
        run_script(*state, &sc[i]);
}

static void test_http__chunked_over_cap(void **state)
{
    struct script sc = {
        "POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n41\r\n"
        "0123456789012345678901234567890123456789012345678901234567890123"
        "4\r\n0\r\n\r\n",
        0, refused("413 Content Too Large", "request body too large"), true};
    run_script(*state, &sc);
}

static void test_http__answered_at_headers(void **state)
{
    the_app.deny_bodies = true;
    struct script sc = {"POST /p HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 0,
                        "HTTP/1.1 401 Unauthorized\r\nContent-Type: "
                        "text/plain\r\nContent-Length: 2\r\nConnection: "
                        "close\r\n\r\nno",
                        true};
    run_script(*state, &sc);
    the_app.deny_bodies = false;
}

/* A parked request holds back the answers behind it, and is not read
 * past the pipeline cap; its answer releases them in order. */
static void test_http__parked_keeps_order(void **state)
{
    struct rig *rig = *state;
    the_app.park = true;
    int fd = client_of(rig);
    const char *in = "GET /park HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n";
    assert_int_equal(send(fd, in, strlen(in), 0), (ssize_t)strlen(in));
    struct tn_buf out;
    tn_buf_init(&out, 1 << 16);
    bool closed = false;
    drain(rig, fd, &out, &closed);
    assert_int_equal(out.len, 0); /* /2 is done but waits for /park */
    assert_int_equal(the_app.n_parked, 1);
    assert_int_equal(tn_http_pending(rig->h), 1);
    tn_http_reply(the_app.parked[0], 200, "text/plain", "P", 1, 0);
    the_app.n_parked = 0;
    drain(rig, fd, &out, &closed);
    const char *want = ok("P", "m=0 p=/2 q=- b=", NULL);
    assert_string_equal(out.data, want);
    tn_buf_release(&out);
    (void)close(fd);
    turns(rig, 2);
    the_app.park = false;
}

/* The client of a parked request leaves: the application hears it at
 * once, and the request stays valid until it is answered. */
static void test_http__disconnect_while_parked(void **state)
{
    struct rig *rig = *state;
    the_app.park = true;
    the_app.disconnects = 0;
    int fd = client_of(rig);
    const char *in = "GET /park HTTP/1.1\r\n\r\n";
    assert_int_equal(send(fd, in, strlen(in), 0), (ssize_t)strlen(in));
    turns(rig, 3);
    assert_int_equal(the_app.n_parked, 1);
    assert_true(tn_http_req_is_connected(the_app.parked[0]));
    (void)close(fd);
    turns(rig, 3);
    assert_int_equal(the_app.disconnects, 1);
    assert_false(tn_http_req_is_connected(the_app.parked[0]));
    tn_http_reply(the_app.parked[0], 200, "text/plain", "P", 1, 0);
    the_app.n_parked = 0;
    assert_int_equal(tn_http_pending(rig->h), 0);
    turns(rig, 2);
    the_app.park = false;
}

/* A client that only shuts down its sending side (as a TCP FIN does) is
 * gone too for a parked request: the application hears it at once, and
 * the answer still goes out before the connection closes. */
static void test_http__half_close_while_parked(void **state)
{
    struct rig *rig = *state;
    the_app.park = true;
    the_app.disconnects = 0;
    int fd = client_of(rig);
    const char *in = "GET /park HTTP/1.1\r\n\r\n";
    assert_int_equal(send(fd, in, strlen(in), 0), (ssize_t)strlen(in));
    turns(rig, 3);
    assert_int_equal(the_app.n_parked, 1);
    assert_int_equal(shutdown(fd, SHUT_WR), 0);
    turns(rig, 3);
    assert_int_equal(the_app.disconnects, 1);
    assert_false(tn_http_req_is_connected(the_app.parked[0]));
    tn_http_reply(the_app.parked[0], 200, "text/plain", "P", 1, 0);
    the_app.n_parked = 0;
    struct tn_buf out;
    tn_buf_init(&out, 1 << 16);
    bool closed = false;
    drain(rig, fd, &out, &closed);
    assert_string_equal(out.data, ok("P", NULL));
    assert_true(closed);
    tn_buf_release(&out);
    (void)close(fd);
    turns(rig, 2);
    the_app.park = false;
}

static void on_stream_close(void *ctx)
{
    int *closed = ctx;
    (*closed)++;
}

static void stream_handler(void *arg, struct tn_http_req *r)
{
    struct app *a = arg;
    a->parked[a->n_parked++] = r;
}

/* A stream over its budget refuses the write; its last words go out and
 * the connection closes. */
static void test_http__stream_budget(void **state)
{
    struct rig *rig = *state;
    (void)rig;
    struct tn_loop *loop = tn_loop_new();
    struct tn_http *h = NULL;
    struct app a = {0};
    struct tn_http_config cfg = {.max_connections = 4,
                                 .request_timeout_ms = 30000,
                                 .max_body_bytes = 64,
                                 .max_header_bytes = 256,
                                 .handler = stream_handler,
                                 .app = &a};
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_http_start(loop, &cfg, &h, &em), 0);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(tn_http_adopt(h, sv[0]), 0);
    const char *in = "GET /s HTTP/1.1\r\n\r\n";
    assert_int_equal(send(sv[1], in, strlen(in), 0), (ssize_t)strlen(in));
    for (int i = 0; i < 3; i++)
        (void)tn_loop_run_once(loop, 0);
    assert_int_equal(a.n_parked, 1);
    int closed = 0;
    struct tn_http_stream *s = tn_http_reply_stream(
        a.parked[0], "text/event-stream", 1024, on_stream_close, &closed);
    char chunk[256];
    memset(chunk, 'e', sizeof(chunk));
    int rc = 0;
    for (int i = 0; i < 100 && rc == 0; i++)
        rc = tn_http_stream_write(s, chunk, sizeof(chunk)); /* never read */
    assert_int_equal(rc, TN_ETOOBIG);
    struct tn_http_stats st;
    tn_http_get_stats(h, &st);
    assert_true(st.stream_bytes <= 1024 + 64);
    tn_http_stream_cut(s, "bye", 3);
    for (int i = 0; i < 4; i++)
        (void)tn_loop_run_once(loop, 0);
    assert_int_equal(closed, 1);
    tn_http_get_stats(h, &st);
    assert_int_equal(st.streams_cut, 1);
    assert_int_equal(st.stream_bytes, 0);
    (void)close(sv[1]);
    tn_http_stop(h);
    tn_loop_free(loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http__get_with_query),
        cmocka_unit_test(test_http__post_with_length),
        cmocka_unit_test(test_http__chunked_body),
        cmocka_unit_test(test_http__pipelined_in_order),
        cmocka_unit_test(test_http__http10_closes),
        cmocka_unit_test(test_http__expect_continue),
        cmocka_unit_test(test_http__smuggling_refused),
        cmocka_unit_test(test_http__bad_targets_refused),
        cmocka_unit_test(test_http__caps),
        cmocka_unit_test(test_http__chunked_over_cap),
        cmocka_unit_test(test_http__answered_at_headers),
        cmocka_unit_test(test_http__parked_keeps_order),
        cmocka_unit_test(test_http__disconnect_while_parked),
        cmocka_unit_test(test_http__half_close_while_parked),
        cmocka_unit_test(test_http__stream_budget),
    };
    return TN_RUN_TESTS(tests, rig_setup, rig_teardown);
}
