/* SPDX-License-Identifier: MIT */
/* What the HTTP front end's tests share: an application that echoes what
 * it was given (method, path, query, body), parks requests to /park when
 * asked, answers /big with more than a pump's share, or, for a refused
 * request, answers the status of its error; a rig of one loop and one
 * front end (cmocka setup/teardown); and helpers that run loop turns,
 * drain a client and build expected answers. */
#ifndef TN_TEST_HTTP_FIXTURE_H
#define TN_TEST_HTTP_FIXTURE_H

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
    int big;                                /* /big requests answered */
    int cap_asked;                          /* body_cap calls */
};

#define BIG_BYTES (70 * 1024) /* one answer over a pump's share */
/* The whole answer to /big: status line, fields, body. */
#define BIG_ANSWER_BYTES                                                       \
    (sizeof("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"                  \
            "Content-Length: 71680\r\n\r\n") -                                 \
     1 + BIG_BYTES)

static struct app the_app;

static inline unsigned status_of(int err)
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
    case TN_EFORBIDDEN:
        return 403;
    case TN_EMISDIRECTED:
        return 421;
    default:
        return 400;
    }
}

static inline void on_disc(void *ctx)
{
    struct app *a = ctx;
    a->disconnects++;
}

static inline void handler(void *arg, struct tn_http_req *r)
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
    if (strcmp(tn_http_req_path(r), "/big") == 0) {
        static char big[BIG_BYTES];
        memset(big, 'b', sizeof(big));
        a->big++;
        tn_http_reply(r, 200, "text/plain", big, sizeof(big), 0);
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

static inline bool on_headers(void *arg, struct tn_http_req *r)
{
    struct app *a = arg;
    if (!a->deny_bodies)
        return true;
    tn_http_reply(r, 401, "text/plain", "no", 2, 0);
    return false;
}

/* Bodies to /wide may be up to WIDE_BYTES; the others keep the usual
 * cap (64 in the rig). */
#define WIDE_BYTES 128

static inline size_t body_cap(void *arg, struct tn_http_req *r)
{
    struct app *a = arg;
    a->cap_asked++;
    return strcmp(tn_http_req_path(r), "/wide") == 0 ? WIDE_BYTES : 0;
}

struct rig {
    struct tn_loop *loop;
    struct tn_http *h;
};

static inline int rig_setup(void **state)
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
                                 .body_cap = body_cap,
                                 .app = &the_app};
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_http_start(rig.loop, &cfg, &rig.h, &em), 0);
    *state = &rig;
    return 0;
}

static inline int rig_teardown(void **state)
{
    struct rig *rig = *state;
    tn_http_stop(rig->h);
    tn_loop_free(rig->loop);
    return 0;
}

static inline int client_of(struct rig *rig)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(tn_http_adopt(rig->h, sv[0]), 0);
    return sv[1];
}

static inline void turns(struct rig *rig, int n)
{
    for (int i = 0; i < n; i++)
        assert_int_equal(tn_loop_run_once(rig->loop, 0), 0);
}

/* Everything the server sent until it closed, or until it fell silent. */
static inline void drain(struct rig *rig, int fd, struct tn_buf *out,
                         bool *closed)
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

/* Expected answers, built with their lengths: a few static buffers used
 * in turn, enough for one script's expectations. */
static inline char *slot(void)
{
    static char bufs[16][2048]; /* the most answers one table holds */
    static unsigned next;
    char *b = bufs[next++ % 16];
    b[0] = '\0';
    return b;
}

/* The echo answers for bodies b1.. (NULL-ended), concatenated. */
static inline const char *ok(const char *b1, ...)
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

#endif
