/* SPDX-License-Identifier: MIT */
/* Replies and event streams.  A reply is formatted once, straight into the
 * connection's output when it is the oldest one waiting, else into its own
 * buffer until the replies before it are out: pipelined answers keep the
 * order of their requests.  Nothing is written here; the end of the loop
 * turn writes each connection's output at once.  A stream's unsent bytes
 * are held to a budget of its own and to one for all streams. */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "common/clock.h"
#include "http_int.h"

static const char *reason(unsigned status)
{
    static const struct {
        unsigned status;
        const char *text;
    } tab[] = {{200, "OK"},
               {201, "Created"},
               {204, "No Content"},
               {400, "Bad Request"},
               {401, "Unauthorized"},
               {403, "Forbidden"},
               {404, "Not Found"},
               {405, "Method Not Allowed"},
               {409, "Conflict"},
               {413, "Content Too Large"},
               {414, "URI Too Long"},
               {415, "Unsupported Media Type"},
               {421, "Misdirected Request"},
               {429, "Too Many Requests"},
               {431, "Request Header Fields Too Large"},
               {500, "Internal Server Error"},
               {501, "Not Implemented"},
               {503, "Service Unavailable"},
               {505, "HTTP Version Not Supported"}};
    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
        if (tab[i].status == status)
            return tab[i].text;
    }
    return "Unknown";
}

/* Where r's bytes go now: the connection's output once it is the oldest
 * reply waiting (nothing before it can still come), else its own. */
static struct tn_buf *sink(struct tn_http_req *r)
{
    return r->c->q_head == r ? &r->c->out : &r->out;
}

/* Fields every reply carries about the connection. */
static void conn_fields(struct tn_buf *b, const struct tn_http_req *r)
{
    if (!r->keep_alive)
        (void)tn_buf_append(b, "Connection: close\r\n", 19);
    else if (r->http10)
        (void)tn_buf_append(b, "Connection: keep-alive\r\n", 24);
}

/* The status line and fields, without a printf: this runs for every
 * answer. */
static void format(struct tn_http_req *r, struct tn_buf *b, unsigned status,
                   const char *type, size_t len, int64_t retry_after_s)
{
    (void)tn_buf_append(b, "HTTP/1.1 ", 9);
    (void)tn_buf_append_uint(b, status);
    (void)tn_buf_append(b, " ", 1);
    (void)tn_buf_append_str(b, reason(status));
    (void)tn_buf_append(b, "\r\nContent-Type: ", 16);
    (void)tn_buf_append_str(b, type);
    (void)tn_buf_append(b, "\r\nContent-Length: ", 18);
    (void)tn_buf_append_uint(b, len);
    (void)tn_buf_append(b, "\r\n", 2);
    if (r->allow != NULL) {
        (void)tn_buf_append(b, "Allow: ", 7);
        (void)tn_buf_append_str(b, r->allow);
        (void)tn_buf_append(b, "\r\n", 2);
    }
    if (r->fields != NULL)
        (void)tn_buf_append_str(b, r->fields);
    if (retry_after_s > 0) {
        (void)tn_buf_append(b, "Retry-After: ", 13);
        (void)tn_buf_append_uint(b, (uint64_t)retry_after_s);
        (void)tn_buf_append(b, "\r\n", 2);
    }
    conn_fields(b, r);
    (void)tn_buf_append(b, "\r\n", 2);
}

/* Take the oldest request off c's queue. */
static void pop(struct conn *c)
{
    struct tn_http_req *r = c->q_head;
    c->q_head = r->next;
    if (c->q_head == NULL)
        c->q_tail = NULL;
    c->n_queued--;
    r->next = NULL;
}

void tn_http_reply(struct tn_http_req *r, unsigned status,
                   const char *content_type, const char *body, size_t len,
                   int64_t retry_after_s)
{
    struct conn *c = r->c;
    TN_ASSERT(!r->replied);
    if (r->dispatched)
        r->h->pending--;
    else if (c != NULL)
        tn_http_conn_enqueue(c, r); /* answered at the headers */
    r->replied = true;
    if (c == NULL) {
        if (!r->orphaning)
            tn_http_req_free(r); /* the client is gone */
        return;
    }
    c->share_bytes += len;
    c->reply_avg = (c->reply_avg + len) / 2;
    struct tn_buf *b = sink(r);
    format(r, b, status, content_type, len, retry_after_s);
    if (r->method != TN_HTTP_HEAD)
        (void)tn_buf_append(b, body, len);
    if (!r->keep_alive)
        c->stop_reading = true;
    if (b == &c->out) {
        pop(c);
        tn_http_req_free(r);
    }
    tn_http_conn_want_flush(c);
}

static void stream_account(struct tn_http_stream *s, size_t add)
{
    s->queued += add;
    s->r->h->st.stream_bytes += add;
}

/* Where a stream's bytes wait: its own buffer once it is the oldest reply
 * (handed to the connection only when what it had is written, so that a
 * cut can drop whole unsent events and put its last words in their
 * place), before that the request's. */
static struct tn_buf *stream_sink(struct tn_http_stream *s)
{
    return s->r->c->q_head == s->r ? &s->pend : &s->r->out;
}

/* Append a stream's bytes, chunk-framed unless the client is HTTP/1.0. */
static void stream_append(struct tn_http_stream *s, const char *p, size_t len)
{
    struct tn_http_req *r = s->r;
    struct tn_buf *b = stream_sink(s);
    size_t before = b->len;
    if (!r->http10)
        (void)tn_buf_printf(b, "%zx\r\n", len);
    (void)tn_buf_append(b, p, len);
    if (!r->http10)
        (void)tn_buf_append(b, "\r\n", 2);
    stream_account(s, b->len - before);
    tn_http_conn_want_flush(r->c);
}

/* Drop a finished or dead stream's request: the queue is then free. */
static void stream_done(struct tn_http_stream *s)
{
    struct tn_http_req *r = s->r;
    r->h->st.stream_bytes -= s->queued;
    s->queued = 0;
    tn_buf_release(&s->pend);
    s->on_close(s->ctx);
    tn_http_req_free(r); /* frees s too */
}

void tn_http_out_collect(struct conn *c)
{
    struct tn_http_req *r;
    while ((r = c->q_head) != NULL && r->replied) {
        if (r->out.len > 0)
            (void)tn_buf_append(&c->out, r->out.data, r->out.len);
        tn_buf_reset(&r->out);
        struct tn_http_stream *s = r->stream;
        if (s != NULL && c->out.len == 0 && s->pend.len > 0) {
            struct tn_buf t = c->out; /* hand its bytes over whole */
            c->out = s->pend;
            s->pend = t;
        }
        if (s != NULL && (!s->ending || s->pend.len > 0))
            return; /* it stays the head */
        pop(c);
        if (r->stream != NULL)
            stream_done(r->stream);
        else
            tn_http_req_free(r);
    }
}

void tn_http_out_wrote(struct conn *c, size_t n)
{
    struct tn_http_req *r = c->q_head;
    if (r == NULL || r->stream == NULL)
        return;
    struct tn_http_stream *s = r->stream;
    size_t d = n < s->queued ? n : s->queued;
    s->queued -= d;
    c->h->st.stream_bytes -= d;
}

/* Handle one request of a connection that died. */
static void orphan_one(struct tn_http_req *r)
{
    struct tn_http *h = r->h;
    if (r->stream != NULL) {
        stream_done(r->stream);
        return;
    }
    if (!r->replied && r->on_disc != NULL && !r->disc_fired) {
        r->disc_fired = true;
        h->st.disconnects++;
        r->on_disc(r->disc_ctx); /* may reply: r is then only marked */
    }
    r->orphaning = false;
    if (r->replied)
        tn_http_req_free(r);
}

void tn_http_out_orphan(struct conn *c)
{
    struct tn_http_req *list = c->q_head;
    c->q_head = c->q_tail = NULL;
    c->n_queued = 0;
    for (struct tn_http_req *r = list; r != NULL; r = r->next) {
        r->c = NULL;
        r->orphaning = true; /* a reply during the loop must not free it */
    }
    while (list != NULL) {
        struct tn_http_req *r = list;
        list = r->next;
        r->next = NULL;
        orphan_one(r);
    }
}

/* Whether c has a parked request that wants to know when its client
 * leaves (a blocking acquire), and whether any request of c is HTTP/1.0. */
static bool parked_waiter(const struct conn *c, bool *http10_out)
{
    bool waiter = false;
    *http10_out = false;
    for (const struct tn_http_req *r = c->q_head; r != NULL; r = r->next) {
        waiter =
            waiter || (!r->replied && r->on_disc != NULL && !r->disc_fired);
        *http10_out = *http10_out || r->http10;
    }
    return waiter;
}

/* A FIN alone cannot tell a client that half-closed and waits for its
 * answer from one that closed its socket and left: the difference shows
 * only when something is written to it (a closed socket answers with a
 * reset, and the connection is then killed: tn_http_out_orphan tells the
 * parked requests).  So a waiter's half-closed client is sent an interim
 * 100 Continue, which HTTP/1.1 clients must skip (RFC 9110 section 15.2);
 * it lands between whole replies, as c->out holds only whole ones.  An
 * HTTP/1.0 client must not be sent one: its half-close counts as leaving,
 * and its waiting requests are told at once. */
void tn_http_out_peer_gone(struct conn *c)
{
    bool http10;
    if (c->probed || !parked_waiter(c, &http10))
        return;
    if (!http10) {
        c->probed = true;
        tn_http_conn_continue(c);
        return;
    }
    bool again = true;
    while (again && !c->dead) {
        again = false;
        for (struct tn_http_req *r = c->q_head; r != NULL; r = r->next) {
            if (r->replied || r->on_disc == NULL || r->disc_fired)
                continue;
            r->disc_fired = true;
            c->h->st.disconnects++;
            r->on_disc(r->disc_ctx); /* may reply, and free r */
            again = true;
            break;
        }
    }
}

struct tn_http_stream *tn_http_reply_stream(struct tn_http_req *r,
                                            const char *content_type,
                                            size_t max_buffered,
                                            tn_http_stream_close_fn on_close,
                                            void *ctx)
{
    struct tn_http_stream *s = tn_calloc(1, sizeof(*s));
    if (s == NULL || r->c == NULL) {
        tn_free(s);
        tn_http_reply(r, 500, "application/json",
                      "{\"error\":\"internal\",\"message\":\"out of memory\"}",
                      48, 0);
        return NULL;
    }
    struct conn *c = r->c;
    TN_ASSERT(r->dispatched && !r->replied);
    r->h->pending--;
    r->replied = true;
    r->stream = s;
    s->r = r;
    s->max_buffered = max_buffered;
    tn_buf_init(&s->pend, (size_t)-1); /* bounded by the budgets */
    s->on_close = on_close;
    s->ctx = ctx;
    c->stop_reading = true; /* nothing follows a stream on its connection */
    /* Bound the kernel's share too: without this, send-buffer autotuning
     * would hold megabytes for a consumer that never reads. */
    int sndbuf = TN_HTTP_STREAM_SNDBUF;
    (void)setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
    struct tn_buf *b = sink(r);
    size_t before = b->len;
    (void)tn_buf_printf(b,
                        "HTTP/1.1 200 OK\r\nContent-Type: %s\r\n"
                        "Cache-Control: no-cache\r\n%s\r\n",
                        content_type,
                        r->http10 ? "Connection: close\r\n"
                                  : "Transfer-Encoding: chunked\r\n");
    stream_account(s, b->len - before);
    tn_http_conn_want_flush(c);
    return s;
}

int tn_http_stream_write(struct tn_http_stream *s, const char *p, size_t len)
{
    struct tn_http *h = s->r->h;
    if (s->cut || s->ending)
        return TN_ETOOBIG;
    size_t add = len + 24; /* chunk framing */
    bool over_mine = s->queued + add > s->max_buffered;
    bool over_all = h->st.stream_bytes + add > h->cfg.max_stream_bytes_total &&
                    s->queued > 0;
    if (over_mine || over_all) {
        s->cut = true;
        h->st.streams_cut++;
        return TN_ETOOBIG;
    }
    stream_append(s, p, len);
    return TN_OK;
}

/* The stream's last bytes are queued: the connection closes once they are
 * written (or, if the client takes nothing, at the request timeout). */
static void stream_finish(struct tn_http_stream *s)
{
    struct conn *c = s->r->c;
    if (!s->r->http10) {
        struct tn_buf *b = stream_sink(s);
        size_t before = b->len;
        (void)tn_buf_append(b, "0\r\n\r\n", 5);
        stream_account(s, b->len - before);
    }
    s->ending = true;
    /* Its client may be stalled and read the last words much later: they
     * cost a few hundred bytes here, and the slot is evicted first when
     * a new connection needs it. */
    c->close_by_ms = tn_clock_now_ms() + TN_HTTP_CUT_HOLD_MS;
    tn_http_conn_want_flush(c);
}

void tn_http_stream_cut(struct tn_http_stream *s, const char *p, size_t len)
{
    if (s->ending)
        return;
    /* The whole events not yet handed to the connection are dropped: the
     * last words take their place, right behind what is on its way. */
    struct tn_buf *b = stream_sink(s);
    if (b == &s->pend) {
        s->queued -= b->len;
        s->r->h->st.stream_bytes -= b->len;
        tn_buf_release(b);
    }
    stream_append(s, p, len);
    s->cut = true;
    stream_finish(s);
}

void tn_http_stream_end(struct tn_http_stream *s)
{
    if (s->ending)
        return;
    stream_finish(s);
}
