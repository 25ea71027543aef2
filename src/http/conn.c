/* SPDX-License-Identifier: MIT */
/* Connections: accept, read, parse, dispatch, write, close, and the
 * budgets that keep hostile clients from holding the server.
 *
 * Each socket is registered once, edge-triggered, for input, output and
 * the peer's close.  A connection reads and parses until it has as many
 * requests in flight as the pipeline cap, then simply stops: a request
 * parked for its commit costs no system call, and the bytes behind it wait
 * in the kernel.  Replies are collected during a loop turn and written at
 * its end, one write per connection.  A connection is freed only at the
 * end of a turn, so an event fetched for it earlier in the turn is dropped,
 * never run on freed memory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "common/clock.h"
#include "common/log.h"
#include "http_int.h"

static void pump(struct conn *c);
static void read_some(struct conn *c);

/* Most recently active first: eviction and sweeps start at the tail. */
static void lru_unlink(struct tn_http *h, struct conn *c)
{
    TAILQ_REMOVE(&h->conns, c, lru);
}

/* Close at once.  Requests still waiting for their reply stay valid until
 * it comes (then they are freed unsent); their disconnect callbacks run. */
void tn_http_conn_kill(struct conn *c)
{
    struct tn_http *h = c->h;
    if (c->dead)
        return;
    c->dead = true;
    h->st.reply_bytes -= c->unsent;
    c->unsent = 0;
    tn_loop_watch_del(h->loop, &c->w);
    if (c->ssl != NULL)
        tn_tls_close(c->ssl);
    (void)close(c->fd);
    lru_unlink(h, c);
    h->st.open--;
    c->dead_next = h->dead;
    h->dead = c;
    tn_http_want_tick(h);
    tn_http_out_orphan(c);
}

void tn_http_conn_free(struct conn *c)
{
    if (c->cur != NULL)
        tn_http_req_free(c->cur);
    tn_buf_release(&c->pend);
    tn_buf_release(&c->out);
    tn_free(c);
}

/* Plain or TLS input: >0 bytes, 0 end, TN_EBUSY would block, TN_EIO. */
static long conn_read(struct conn *c, char *p, size_t len)
{
    if (c->ssl != NULL)
        return tn_tls_read(c->ssl, p, len);
    ssize_t n = recv(c->fd, p, len, 0);
    if (n >= 0)
        return (long)n;
    return errno == EAGAIN || errno == EINTR ? TN_EBUSY : TN_EIO;
}

static long conn_write(struct conn *c, const char *p, size_t len)
{
    if (c->ssl != NULL)
        return tn_tls_write(c->ssl, p, len);
    ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
    if (n >= 0)
        return (long)n;
    return errno == EAGAIN || errno == EINTR ? TN_EBUSY : TN_EIO;
}

/* Requests it may have in flight: --max-pipeline, fewer when its answers
 * are large (in flight x average answer within one share, at least one).
 * Answers that wait for a commit are all made when it lands: without
 * this, a hundred clients pipelining large lists behind one acquire made
 * that loop turn last seconds.  A new connection starts at one, until
 * its first answer shows what its answers cost. */
static size_t depth(const struct conn *c)
{
    size_t d = TN_HTTP_SHARE_BYTES / (c->reply_avg + 1);
    if (d < 1)
        return 1;
    return d < c->h->cfg.max_pipeline ? d : c->h->cfg.max_pipeline;
}

/* Not while its answers cannot be written: a client that sends and never
 * reads would otherwise grow c->out without end. */
static bool may_read(const struct conn *c)
{
    return !c->dead && !c->stop_reading && !c->peer_closed && !c->wr_blocked &&
           c->n_queued < depth(c);
}

/* may_read, and this pump has not had its share yet: --max-pipeline
 * requests, or replies of TN_HTTP_SHARE_BYTES, whichever comes first.
 * The bytes bound the work one connection gets per loop turn, so that
 * clients pipelining large lists cannot make a turn last seconds. */
static bool may_parse(const struct conn *c)
{
    return may_read(c) && c->turn_left > 0 &&
           c->share_bytes < TN_HTTP_SHARE_BYTES;
}

/* Parse what is buffered; false when it could not all be parsed. */
static bool parse_pending(struct conn *c)
{
    while (c->pend.len > 0 && may_parse(c)) {
        long n = tn_http_conn_feed(c, c->pend.data, c->pend.len);
        if (n < 0)
            tn_http_conn_kill(c); /* no memory to answer its error */
        if (c->dead)
            return false;
        memmove(c->pend.data, c->pend.data + n, c->pend.len - (size_t)n);
        c->pend.len -= (size_t)n;
    }
    if (c->pend.len == 0 && c->pend.cap > TN_HTTP_OUT_KEEP_BYTES)
        tn_buf_release(&c->pend);
    return c->pend.len == 0;
}

/* Parse fresh bytes; keep what the pipeline cap left unparsed. */
static void parse_fresh(struct conn *c, const char *p, size_t len)
{
    if (c->req_start_ms == 0 && c->cur == NULL)
        c->req_start_ms = tn_clock_now_ms();
    while (len > 0 && may_parse(c)) {
        long n = tn_http_conn_feed(c, p, len);
        if (n < 0)
            tn_http_conn_kill(c); /* no memory to answer its error */
        if (c->dead)
            return;
        p += n;
        len -= (size_t)n;
        if (c->cur == NULL && len > 0)
            c->req_start_ms = tn_clock_now_ms();
    }
    if (len > 0 && !c->stop_reading && tn_buf_append(&c->pend, p, len) < 0)
        tn_http_conn_kill(c);
}

/* The end of c's input was read.  A half-close is not an abort (RFC 9112
 * section 9.6): the requests it sent are answered, and the connection
 * closes once they are written (flush_one).  Only a request cut short is
 * refused, and a stream, which reads nothing, ends.  A client that really
 * left is found when writing to it fails. */
static void on_eof(struct conn *c)
{
    c->peer_closed = true;
    c->rdhup = true;
    if (c->cur != NULL)
        tn_http_conn_cut_short(c);
    if (c->dead)
        return;
    bool stream = c->q_head != NULL && c->q_head->stream != NULL;
    if (stream || (c->n_queued == 0 && c->out.len == 0))
        tn_http_conn_kill(c); /* nothing left to answer */
    else
        tn_http_out_peer_gone(c); /* parked ones learn it now */
}

/* Read and parse until the socket is drained or the cap is reached.  A
 * short plain read drained the socket: the next bytes raise a new edge. */
static void drop_input(struct conn *c)
{
    char *buf = c->h->rbuf;
    while (c->rd_ready && !c->dead) {
        long n = conn_read(c, buf, TN_HTTP_READ_BYTES);
        if (n == TN_EBUSY) {
            c->rd_ready = false;
            return;
        }
        c->lingered += n > 0 ? (size_t)n : 0;
        if (n <= 0 || c->lingered > TN_HTTP_LINGER_BYTES)
            tn_http_conn_kill(c);
    }
}

/* Read and parse what the socket has, at most one share (may_parse) in
 * one call: a client that keeps sending requests answered at once gets
 * its next share after the other connections' events (the flush at the
 * end of this turn, then each turn). */
static void pump(struct conn *c)
{
    if (c->lingering) {
        drop_input(c);
        return;
    }
    c->turn_left = c->h->cfg.max_pipeline;
    c->share_bytes = 0;
    read_some(c);
    if (!c->dead && !may_parse(c) && may_read(c) &&
        (c->rd_ready || c->pend.len > 0))
        tn_http_conn_want_flush(c); /* its next share */
}

static void read_some(struct conn *c)
{
    if (!parse_pending(c))
        return;
    char *buf = c->h->rbuf;
    while (c->rd_ready && may_parse(c)) {
        long n = conn_read(c, buf, TN_HTTP_READ_BYTES);
        /* A short read drained the socket, unless the client's FIN is
         * behind the bytes: its read of 0 comes next, with no new edge. */
        if (n == TN_EBUSY || (n > 0 && c->ssl == NULL && !c->rdhup &&
                              (size_t)n < TN_HTTP_READ_BYTES))
            c->rd_ready = false;
        if (n == 0) {
            on_eof(c);
            return;
        }
        if (n < 0 && n != TN_EBUSY) {
            tn_http_conn_kill(c);
            return;
        }
        if (n > 0)
            parse_fresh(c, buf, (size_t)n);
    }
}

/* The client's FIN is there, but c is not reading (its pipeline is full,
 * or its last request is being answered): the end is read later, after
 * the requests before it.  Parked waiters must learn it now. */
static void rdhup(struct conn *c)
{
    if (c->q_head != NULL && c->q_head->stream != NULL)
        tn_http_conn_kill(c); /* a subscriber that hangs up has left */
    else
        tn_http_out_peer_gone(c);
}

void tn_http_conn_on_event(void *arg, uint32_t events)
{
    struct conn *c = arg;
    if (events & (EPOLLERR | EPOLLHUP)) {
        tn_http_conn_kill(c);
        return;
    }
    if (events & (EPOLLIN | EPOLLRDHUP))
        c->rd_ready = true;
    if (events & EPOLLRDHUP)
        c->rdhup = true; /* the end is to be read too: see read_some */
    if (c->wr_blocked && ((events & EPOLLOUT) || c->ssl != NULL)) {
        c->wr_blocked = false;
        tn_http_conn_want_flush(c);
    }
    if (c->ssl != NULL && (events & EPOLLOUT))
        c->rd_ready = true; /* a handshake may wait for room to write */
    pump(c);
    if (!c->dead && (events & EPOLLRDHUP) && !c->peer_closed && !may_read(c))
        rdhup(c);
}

/* Write c->out; false when the connection died. */
static bool write_out(struct conn *c)
{
    while (c->out_off < c->out.len) {
        long n =
            conn_write(c, c->out.data + c->out_off, c->out.len - c->out_off);
        if (n == TN_EBUSY) {
            c->wr_blocked = true;
            c->wr_since_ms = tn_clock_now_ms();
            return true;
        }
        if (n <= 0) {
            tn_http_conn_kill(c);
            return false;
        }
        c->out_off += (size_t)n;
        tn_http_out_wrote(c, (size_t)n);
    }
    c->out_off = 0;
    if (c->out.cap > TN_HTTP_OUT_KEEP_BYTES)
        tn_buf_release(&c->out);
    else
        tn_buf_reset(&c->out);
    return true;
}

/* A refused or last request is answered: stop sending, and read and drop
 * what the client still sends until it closes (or a cap, or the grace).
 * Closing at once with unread input would reset the connection, and the
 * client could lose the answer. */
static void linger(struct conn *c)
{
    if (c->ssl != NULL || c->peer_closed || shutdown(c->fd, SHUT_WR) < 0) {
        tn_http_conn_kill(c);
        return;
    }
    c->lingering = true;
    c->close_by_ms = tn_clock_now_ms() + TN_HTTP_LINGER_MS;
    c->rd_ready = true;
    pump(c);
}

/* Over --reply-buffer-total-bytes: close the connections whose socket
 * does not take their replies, most unsent bytes first, until under it.
 * Each connection alone is bounded (it reads no more while its write
 * blocks, and starts at most --max-pipeline requests ahead of its
 * replies), but a thousand of them that pipeline large lists and never
 * read would together hold gigabytes. */
static void shed_slow_readers(struct tn_http *h)
{
    while (h->st.reply_bytes > h->cfg.max_reply_bytes_total) {
        struct conn *worst = NULL, *c;
        TAILQ_FOREACH(c, &h->conns, lru)
        {
            if (c->wr_blocked && (worst == NULL || c->unsent > worst->unsent))
                worst = c;
        }
        if (worst == NULL)
            return; /* all of it is being taken: it drains */
        h->st.slow_readers++;
        tn_http_conn_kill(worst);
    }
}

/* c's unsent bytes changed: count them, and shed if over the total. */
static void count_unsent(struct conn *c)
{
    struct tn_http *h = c->h;
    size_t now = c->out.len - c->out_off;
    h->st.reply_bytes += now;
    h->st.reply_bytes -= c->unsent;
    c->unsent = now;
    if (now > 0 && h->st.reply_bytes > h->cfg.max_reply_bytes_total)
        shed_slow_readers(h);
}

static void flush_one(struct conn *c)
{
    c->in_flush = false;
    if (c->dead)
        return;
    /* A stream hands its bytes over only once what the connection had is
     * written: go on while the socket takes them. */
    do {
        tn_http_out_collect(c);
        if (!c->wr_blocked && !write_out(c))
            return;
    } while (!c->wr_blocked && c->out.len == 0 && c->q_head != NULL &&
             c->q_head->stream != NULL && c->q_head->stream->pend.len > 0);
    count_unsent(c);
    if (c->dead)
        return;
    bool idle = c->n_queued == 0 && c->out.len == 0;
    if (idle && c->peer_closed) {
        tn_http_conn_kill(c);
        return;
    }
    if (idle && c->stop_reading) {
        if (!c->lingering)
            linger(c);
        return;
    }
    if (idle && c->req_start_ms == 0)
        c->idle_since_ms = tn_clock_now_ms();
    pump(c); /* the cap may have been what stopped reading */
}

/* End of a loop turn: write what the turn produced, free what died. */
void tn_http_conn_tick(void *arg)
{
    struct tn_http *h = arg;
    h->tick_queued = false;
    /* Each connection flushed here reads at most --max-pipeline requests
     * more; what those answer at once is flushed next turn, after the
     * other connections' events. */
    struct conn *list = h->flush;
    h->flush = NULL;
    while (list != NULL) {
        struct conn *c = list;
        list = c->flush_next;
        flush_one(c);
    }
    for (struct conn **pp = &h->flush; *pp != NULL;) {
        struct conn *c = *pp;
        if (c->dead) {
            c->in_flush = false; /* freed below: out of next turn's list */
            *pp = c->flush_next;
        } else {
            pp = &c->flush_next;
        }
    }
    while (h->dead != NULL) {
        struct conn *c = h->dead;
        h->dead = c->dead_next;
        TN_ASSERT(!c->in_flush);
        tn_http_conn_free(c);
    }
}
