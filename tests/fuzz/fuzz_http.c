/* SPDX-License-Identifier: MIT */
/* Fuzz target for the whole HTTP front end (src/http): bytes in, answers
 * out, over a socketpair driven by the real epoll loop.  Input: the first
 * byte picks the behaviour of the application (park requests and answer
 * them later in reverse order, answer bodies at the headers, the piece
 * size the rest is sent in); the rest is what a client sends.  Checked:
 * whatever comes back is a sequence of well-formed HTTP/1.1 answers (a
 * status line, header fields, a body of exactly Content-Length bytes, or
 * a stream: chunked, or closed by the server for an HTTP/1.0 client), the
 * server ends the connection once the client has gone, and no request,
 * connection or stream byte is left over (the sanitizers catch the rest). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <tenure/err.h>

#include "common/buf.h"
#include "common/loop.h"
#include "fuzz.h"
#include "http/http.h"

#define MAX_PARKED 8

struct app {
    struct tn_http_req *parked[MAX_PARKED]; /* answered at the end */
    size_t n_parked;                        /* how many */
    bool park;                              /* park requests to /p */
    bool deny;                              /* 401 at the headers */
};

static struct app app;
static int stream_closes;

#define CHECK(x)                                                               \
    do {                                                                       \
        if (!(x)) {                                                            \
            (void)fprintf(stderr, "fuzz_http: check failed: %s\n", #x);        \
            abort();                                                           \
        }                                                                      \
    } while (0)

static void on_stream_close(void *ctx)
{
    (void)ctx;
    stream_closes++;
}

static void stream(struct tn_http_req *r)
{
    struct tn_http_stream *s = tn_http_reply_stream(r, "text/event-stream", 512,
                                                    on_stream_close, NULL);
    if (s == NULL)
        return;
    char ev[100];
    memset(ev, 'e', sizeof(ev));
    for (int i = 0; i < 8; i++) {
        if (tn_http_stream_write(s, ev, sizeof(ev)) < 0) {
            tn_http_stream_cut(s, "reset\n\n", 7);
            return;
        }
    }
    tn_http_stream_end(s);
}

static void disc(void *ctx)
{
    (void)ctx;
}

static void handler(void *arg, struct tn_http_req *r)
{
    struct app *a = arg;
    /* An answer to HEAD has no body: answered with a body of no length
     * (refusals included), check_answer needs no request to frame it. */
    bool head = tn_http_req_method(r) == TN_HTTP_HEAD;
    int err = tn_http_req_error(r);
    if (err != 0) {
        const char *m = tn_http_req_error_message(r);
        tn_http_reply(r, err == TN_ETOOBIG ? 413 : 400, "text/plain", m,
                      head ? 0 : strlen(m), 0);
        return;
    }
    const char *path = tn_http_req_path(r);
    if (head) {
        tn_http_reply(r, 200, "text/plain", "", 0, 0);
        return;
    }
    if (strcmp(path, "/s") == 0) {
        stream(r);
        return;
    }
    if (a->park && strcmp(path, "/p") == 0 && a->n_parked < MAX_PARKED) {
        tn_http_req_on_disconnect(r, disc, a);
        a->parked[a->n_parked++] = r;
        return;
    }
    size_t blen = 0;
    size_t qlen = 0;
    const char *body = tn_http_req_body(r, &blen);
    const char *q = tn_http_req_query(r, "q", &qlen);
    struct tn_buf b;
    tn_buf_init(&b, 4096);
    (void)tn_buf_printf(&b, "%s %zu %zu", path, blen, q != NULL ? qlen : 0);
    (void)tn_buf_append(&b, body, blen);
    tn_http_req_set_allow(r, "GET");
    tn_http_reply(r, 200, "text/plain", b.data, b.len, 3);
    tn_buf_release(&b);
}

static bool on_headers(void *arg, struct tn_http_req *r)
{
    struct app *a = arg;
    if (!a->deny)
        return true;
    tn_http_reply(r, 401, "text/plain", "no",
                  tn_http_req_method(r) == TN_HTTP_HEAD ? 0 : 2, 0);
    return false;
}

static struct tn_loop *loop;
static struct tn_http *http;

static void setup(void)
{
    if (loop != NULL)
        return;
    loop = tn_loop_new();
    struct tn_http_config cfg = {.max_connections = 8,
                                 .request_timeout_ms = 600000,
                                 .max_body_bytes = 256,
                                 .max_header_bytes = 512,
                                 .max_pipeline = 4,
                                 .max_stream_bytes_total = 4096,
                                 .handler = handler,
                                 .on_headers = on_headers,
                                 .app = &app};
    struct tn_errmsg em = {{0}};
    CHECK(loop != NULL && tn_http_start(loop, &cfg, &http, &em) == 0);
}

/* Take what the server wrote; true once it closed. */
static bool collect(int fd, struct tn_buf *out)
{
    for (;;) {
        (void)tn_loop_run_once(loop, 0);
        char buf[8192];
        ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n == 0)
            return true;
        if (n < 0)
            return false;
        (void)tn_buf_append(out, buf, (size_t)n);
    }
}

/* One answer at p; returns its length, or 0 if incomplete at the end. */
static size_t check_answer(const char *p, size_t len)
{
    if (len < 12 || memcmp(p, "HTTP/1.1 ", 9) != 0)
        (void)fprintf(stderr, "fuzz_http: bad answer: [%.*s]\n",
                      (int)(len < 200 ? len : 200), p);
    CHECK(len >= 12 && memcmp(p, "HTTP/1.1 ", 9) == 0);
    const char *end = memmem(p, len, "\r\n\r\n", 4);
    if (end == NULL)
        return 0;
    size_t head = (size_t)(end - p) + 4;
    if (memcmp(p + 9, "100 ", 4) == 0)
        return head;
    const char *cl = memmem(p, head, "Content-Length: ", 16);
    if (cl == NULL) {
        /* A stream: chunked, or to an HTTP/1.0 client (which knows no
         * chunked coding) ended by closing the connection. */
        CHECK(memmem(p, head, "Transfer-Encoding: chunked", 26) != NULL ||
              memmem(p, head, "Connection: close", 17) != NULL);
        return len; /* a stream runs to the end of the connection */
    }
    size_t body = strtoul(cl + 16, NULL, 10);
    return head + body <= len ? head + body : 0;
}

static void check_answers(const struct tn_buf *out)
{
    size_t at = 0;
    while (at < out->len) {
        size_t n = check_answer(out->data + at, out->len - at);
        CHECK(n > 0);
        at += n;
    }
}

static void send_pieces(int fd, const uint8_t *data, size_t size, size_t piece,
                        struct tn_buf *out)
{
    for (size_t at = 0; at < size; at += piece) {
        size_t n = size - at < piece ? size - at : piece;
        if (send(fd, data + at, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
            break; /* the server closed: the rest is unread */
        (void)collect(fd, out);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    setup();
    memset(&app, 0, sizeof(app));
    app.park = (data[0] & 1) != 0;
    app.deny = (data[0] & 2) != 0;
    size_t piece = (size_t)(data[0] >> 2) + 1;
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(tn_http_adopt(http, sv[0]) == 0);
    struct tn_buf out;
    tn_buf_init(&out, 1u << 24);
    send_pieces(sv[1], data + 1, size - 1, piece, &out);
    while (app.n_parked > 0) {
        struct tn_http_req *r = app.parked[--app.n_parked];
        tn_http_reply(r, 204, "text/plain", "", 0, 0);
        (void)collect(sv[1], &out);
    }
    (void)shutdown(sv[1], SHUT_WR);
    bool closed = false;
    for (int i = 0; i < 8 && !closed; i++)
        closed = collect(sv[1], &out);
    CHECK(closed);
    check_answers(&out);
    CHECK(tn_http_pending(http) == 0);
    struct tn_http_stats st;
    tn_http_get_stats(http, &st);
    CHECK(st.open == 0 && st.stream_bytes == 0);
    tn_buf_release(&out);
    (void)close(sv[1]);
    return 0;
}
