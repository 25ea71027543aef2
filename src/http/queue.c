/* SPDX-License-Identifier: MIT */
/* A connection's reply queue and the turn's work lists: what the parser
 * (parse.c), the replies (out.c) and the connection state machine
 * (conn.c) all need.  A whole request goes on the queue and to the
 * application; a reply or an interim 100 Continue puts the connection on
 * the flush list, written at the end of the loop turn.  This file calls
 * none of the others, so they depend on it, never on each other in a
 * circle. */
#include "common/assert.h"
#include "http_int.h"

void tn_http_want_tick(struct tn_http *h)
{
    if (h->tick_queued)
        return;
    h->tick_queued = true;
    tn_loop_defer(h->loop, &h->tick);
}

void tn_http_conn_touch(struct conn *c)
{
    if (TAILQ_FIRST(&c->h->conns) == c)
        return;
    TAILQ_REMOVE(&c->h->conns, c, lru);
    TAILQ_INSERT_HEAD(&c->h->conns, c, lru);
}

void tn_http_conn_want_flush(struct conn *c)
{
    if (c->in_flush || c->dead)
        return;
    c->in_flush = true;
    c->flush_next = c->h->flush;
    c->h->flush = c;
    tn_http_want_tick(c->h);
}

void tn_http_conn_enqueue(struct conn *c, struct tn_http_req *r)
{
    r->dispatched = true;
    if (c->q_tail != NULL)
        c->q_tail->next = r;
    else
        c->q_head = r;
    c->q_tail = r;
    c->n_queued++;
}

void tn_http_conn_dispatch(struct conn *c, struct tn_http_req *r)
{
    struct tn_http *h = c->h;
    c->req_start_ms = 0;
    if (c->turn_left > 0)
        c->turn_left--;
    h->pending++;
    tn_http_conn_enqueue(c, r);
    if (!r->keep_alive)
        c->stop_reading = true;
    tn_http_conn_touch(c);
    h->cfg.handler(h->cfg.app, r);
}

bool tn_http_conn_app_headers(struct conn *c, struct tn_http_req *r)
{
    struct tn_http *h = c->h;
    if (h->cfg.on_headers == NULL)
        return true;
    r->keep_alive = false; /* if answered now: the body is never read */
    if (h->cfg.on_headers(h->cfg.app, r))
        return true;
    TN_ASSERT(r->replied || c->dead);
    h->st.early_replies++;
    c->cur = NULL; /* the reply queue holds it */
    c->stop_reading = true;
    return false;
}

void tn_http_conn_continue(struct conn *c)
{
    static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
    (void)tn_buf_append(&c->out, cont, sizeof(cont) - 1);
    tn_http_conn_want_flush(c);
}
