/* SPDX-License-Identifier: MIT */
/* The keepalive thread: one per client, started on the first keepalive of
 * a lease or a session.  It renews each kept lease when a third of its TTL
 * has passed since the last renew was sent, retries with backoff while
 * safe time is left, bounds every request by its lease's safe deadline,
 * and reports each lease's end exactly once, at the latest when its safe
 * time ends whatever the network does.  Up to ka_conns renews run at once
 * (xfer.c), so one slow answer delays no other lease; sessions
 * (ka_session.c) go first and always find a slot.  It never renews a
 * lease that was released, lost or ran out.  Shares only struct tn_client
 * (under mu) with callers. */
#include <stdio.h>
#include <string.h>

#include <tenure/client.h>
#include <tenure/session.h>

#include "client/client_internal.h"
#include "common/alloc.h"
#include "common/assert.h"

#define TN_RENEW_MSG_MAX 1024

/* Why the keepalive of kept lease l ended (it has: sched.c decided). */
static enum tn_lease_end end_of(struct tn_client *c, struct tn_lease *l,
                                int *rc_out)
{
    (void)tn_lease_safe_at_locked(l, c->now_ms());
    switch (l->state) {
    case TN_LEASE_LOST:
        *rc_out = l->end_rc;
        return TN_LEASE_END_LOST;
    case TN_LEASE_EXPIRED:
        *rc_out = TN_EEXPIRED;
        return TN_LEASE_END_EXPIRED;
    case TN_LEASE_RELEASED:
        *rc_out = l->end_rc;
        return TN_LEASE_END_RELEASED;
    default:
        *rc_out = TN_ECANCELED;
        return TN_LEASE_END_STOPPED;
    }
}

/* Report one ended kept lease, if any: true when one was reported (the
 * lock was dropped meanwhile). */
static bool report_one_locked(struct tn_client *c)
{
    struct tn_lease *l = c->ended;
    if (l == NULL)
        return false;
    c->ended = l->end_next;
    l->end_next = NULL;
    l->ending = false;
    int rc = 0;
    enum tn_lease_end why = end_of(c, l, &rc);
    tn_sched_remove_locked(c, l);
    char msg[TN_RENEW_MSG_MAX];
    (void)snprintf(msg, sizeof(msg),
                   "keepalive of lease \"%s\" token=%llu ended: %s", l->name,
                   (unsigned long long)l->token, tn_lease_end_name(why));
    tn_client_log_locked(c, msg);
    tn_lease_end_fn cb = l->cb;
    void *ud = l->cb_ud;
    (void)pthread_mutex_unlock(&c->mu);
    cb(l, why, rc, ud);
    (void)pthread_mutex_lock(&c->mu);
    tn_lease_unref_locked(l);
    return true;
}

/* Every kept lease whose safe time ended is marked expired and queued. */
static void expire_locked(struct tn_client *c, int64_t now_ms)
{
    struct tn_lease **top = NULL;
    while ((top = tn_heap_top(&c->dl)) != NULL &&
           (*top)->deadline_ms <= now_ms) {
        struct tn_lease *l = *top;
        (void)tn_lease_safe_at_locked(l, now_ms);
        tn_sched_note_locked(c, l);
        /* It left the heap (expired, so ending); never loop on it. */
        if (TN_NEVER(l->dl_idx == 0))
            tn_sched_remove_locked(c, l);
    }
}

static void describe(char *msg, const struct tn_lease *l, int rc,
                     int64_t safe_ms, const char *detail)
{
    unsigned long long tok = (unsigned long long)l->token;
    if (l->state != TN_LEASE_HELD)
        (void)snprintf(msg, TN_RENEW_MSG_MAX,
                       "renew of lease \"%s\" token=%llu answered after the "
                       "lease ended (%s)",
                       l->name, tok, rc == 0 ? "ignored" : tn_strerror(rc));
    else if (rc == 0)
        (void)snprintf(msg, TN_RENEW_MSG_MAX,
                       "renewed lease \"%s\" token=%llu safe_for_ms=%lld",
                       l->name, tok, (long long)safe_ms);
    else
        (void)snprintf(msg, TN_RENEW_MSG_MAX,
                       "renew of lease \"%s\" token=%llu failed: %s (%s)",
                       l->name, tok, tn_strerror(rc), detail);
}

/* Start the renew of l (due, with a free slot).  On a local failure the
 * lease is retried later, as after a failed renew. */
static void start_renew_locked(struct tn_client *c, struct tn_lease *l,
                               int64_t now_ms)
{
    struct tn_xfer *x = tn_xfer_get(&c->ka);
    TN_ASSERT(x != NULL);
    int64_t deadline = now_ms + c->request_timeout_ms;
    if (l->deadline_ms < deadline)
        deadline = l->deadline_ms;
    char *path = tn_client_lease_path(l->name, "");
    char *body = tn_client_renew_body(l, l->ttl_ms);
    x->kind = TN_XFER_LEASE;
    x->owner = l;
    int rc = tn_xfer_start(&c->ka, x, "PATCH", path, body, deadline);
    if (rc < 0) {
        l->next_renew_ms = tn_sched_backoff(l->ttl_ms, &l->backoff_ms, now_ms);
    } else {
        l->in_flight = true;
        l->refs++; /* stays valid even if it ends meanwhile */
    }
    tn_sched_update_locked(c, l);
}

/* Apply a finished renew of a kept lease. */
static void lease_done_locked(struct tn_client *c, struct tn_xfer *x)
{
    struct tn_lease *l = x->owner;
    struct tn_renew_io ro;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_decode_renew_xfer(x, l->ttl_ms, &ro, &em);
    tn_xfer_put(&c->ka, x);
    l->in_flight = false;
    if (l->state == TN_LEASE_HELD)
        rc = tn_lease_apply_renew_locked(l, rc, &ro);
    int64_t now = c->now_ms();
    int64_t safe = tn_lease_safe_at_locked(l, now);
    l->next_renew_ms =
        tn_sched_next_renew(rc, l->sent_ms, l->ttl_ms, &l->backoff_ms, now);
    char msg[TN_RENEW_MSG_MAX];
    describe(msg, l, rc, safe, em.text);
    tn_sched_note_locked(c, l);
    /* A renew that answers after the caller released the lease says
     * nothing the caller needs: the release decided, so it is not logged
     * (after a lease was lost or ran out, the late answer still is). */
    if (l->state != TN_LEASE_RELEASED)
        tn_client_log_locked(c, msg);
    tn_lease_unref_locked(l);
}

/* Start every due renew there is a slot for; sessions first, and one
 * slot is always left to them while any session is kept. */
static void dispatch_locked(struct tn_client *c, int64_t now_ms)
{
    size_t free = c->ka.n - c->ka.busy;
    tn_ka_sessions_dispatch_locked(c, now_ms, &free);
    size_t reserve = c->sessions != NULL && c->ka.n > 1 ? 1 : 0;
    struct tn_lease **top = NULL;
    while (free > reserve && (top = tn_heap_top(&c->due)) != NULL &&
           (*top)->next_renew_ms <= now_ms) {
        start_renew_locked(c, *top, now_ms);
        free--;
    }
}

/* When the thread must next look, if nothing wakes it before. */
static int64_t next_wake_locked(struct tn_client *c)
{
    size_t reserve = c->sessions != NULL && c->ka.n > 1 ? 1 : 0;
    bool slot = c->ka.busy + reserve < c->ka.n;
    int64_t wake = tn_ka_sessions_wake_locked(c, c->ka.busy < c->ka.n);
    struct tn_lease **l = tn_heap_top(&c->dl);
    if (l != NULL && (*l)->deadline_ms < wake)
        wake = (*l)->deadline_ms;
    l = tn_heap_top(&c->due);
    if (slot && l != NULL && (*l)->next_renew_ms < wake)
        wake = (*l)->next_renew_ms;
    return wake;
}

/* tn_client_free: abort every transfer, end every keepalive. */
static void stop_all_locked(struct tn_client *c)
{
    for (size_t i = 0; i < c->ka.n; i++) {
        struct tn_xfer *x = &c->ka.x[i];
        if (!x->busy)
            continue;
        x->rc = TN_ECANCELED;
        (void)snprintf(x->err, sizeof(x->err), "stopped");
        if (x->kind == TN_XFER_LEASE)
            lease_done_locked(c, x);
        else
            tn_ka_session_done_locked(c, x);
    }
    for (struct tn_lease *l = c->kept; l != NULL; l = l->knext)
        tn_sched_note_locked(c, l);
}

static void apply_done_locked(struct tn_client *c, struct tn_xfer **done,
                              size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (done[i]->kind == TN_XFER_LEASE)
            lease_done_locked(c, done[i]);
        else
            tn_ka_session_done_locked(c, done[i]);
    }
}

void *tn_client_renewer_main(void *arg)
{
    struct tn_client *c = arg;
    struct tn_xfer *done[TN_CLIENT_KEEPALIVE_CONNECTIONS_MAX];
    bool stopped = false;
    (void)pthread_mutex_lock(&c->mu);
    for (;;) {
        if (c->stopping && !stopped) {
            stop_all_locked(c);
            stopped = true;
        }
        int64_t now = c->now_ms();
        expire_locked(c, now);
        if (report_one_locked(c) || tn_ka_sessions_report_locked(c, now))
            continue;
        if (c->stopping && c->kept == NULL && c->sessions == NULL &&
            c->ka.busy == 0)
            break;
        if (!c->stopping)
            dispatch_locked(c, now);
        int64_t wake = next_wake_locked(c);
        int64_t wait = wake == INT64_MAX ? 60000 : wake - now;
        (void)pthread_mutex_unlock(&c->mu);
        size_t n = tn_xfer_pool_run(&c->ka, wait, done, c->ka.n);
        (void)pthread_mutex_lock(&c->mu);
        apply_done_locked(c, done, n);
    }
    (void)pthread_mutex_unlock(&c->mu);
    return NULL;
}

static int start_thread_locked(struct tn_client *c)
{
    if (c->thread_started)
        return TN_OK;
    int rc = tn_client_http_init(&c->ka_http, &c->opts, c->auth_header,
                                 &c->abort_io, c->now_ms);
    if (rc == 0)
        rc = tn_xfer_pool_init(&c->ka, &c->ka_http, c->ka_conns);
    if (rc == 0 &&
        pthread_create(&c->thread, NULL, tn_client_renewer_main, c) != 0)
        rc = TN_EIO;
    if (rc < 0) {
        tn_xfer_pool_release(&c->ka);
        tn_client_http_release(&c->ka_http);
        return rc;
    }
    c->thread_started = true;
    return TN_OK;
}

static int can_keep_locked(struct tn_client *c, struct tn_lease *l)
{
    if (l->client != c || l->kept || l->session != NULL || c->stopping)
        return TN_EINVAL;
    int64_t safe = tn_lease_safe_at_locked(l, c->now_ms());
    if (l->state == TN_LEASE_EXPIRED)
        return TN_EEXPIRED;
    return safe > 0 ? TN_OK : TN_EINVAL;
}

/* Start the thread (and the event follower when asked) for a keepalive. */
static int prepare_locked(struct tn_client *c)
{
    int rc = start_thread_locked(c);
    if (rc == 0 && c->opts.watch_events)
        (void)tn_client_events_start_locked(c); /* optional: no error */
    return rc;
}

int tn_client_keepalive_start(struct tn_client *c, struct tn_lease *l,
                              tn_lease_end_fn cb, void *ud)
{
    if (cb == NULL)
        return TN_EINVAL;
    (void)pthread_mutex_lock(&c->mu);
    int rc = can_keep_locked(c, l);
    if (rc == 0)
        rc = tn_sched_reserve_locked(c);
    if (rc == 0)
        rc = prepare_locked(c);
    if (rc == 0) {
        l->stop_requested = false;
        l->cb = cb;
        l->cb_ud = ud;
        l->refs++;
        l->next_renew_ms =
            tn_sched_next_renew(0, l->sent_ms, l->ttl_ms, &l->backoff_ms, 0);
        tn_sched_add_locked(c, l);
        tn_client_wake_locked(c);
    }
    (void)pthread_mutex_unlock(&c->mu);
    return rc;
}

void tn_client_keepalive_stop(struct tn_client *c, struct tn_lease *l)
{
    (void)pthread_mutex_lock(&c->mu);
    if (l->kept) {
        l->stop_requested = true;
        tn_sched_note_locked(c, l);
    }
    (void)pthread_mutex_unlock(&c->mu);
}

int tn_client_session_keepalive_start(struct tn_session *s,
                                      tn_session_end_fn cb,
                                      tn_lease_end_fn lease_cb, void *ud)
{
    struct tn_client *c = s->client;
    if (cb == NULL)
        return TN_EINVAL;
    (void)pthread_mutex_lock(&c->mu);
    int64_t safe = tn_client_session_safe_at_locked(s, c->now_ms());
    int rc = s->kept || c->stopping         ? TN_EINVAL
             : s->state == TN_LEASE_EXPIRED ? TN_EEXPIRED
             : safe > 0                     ? TN_OK
                                            : TN_EINVAL;
    if (rc == 0)
        rc = prepare_locked(c);
    if (rc == 0) {
        s->kept = true;
        s->stop_requested = false;
        s->dirty = false;
        s->cb = cb;
        s->lease_cb = lease_cb;
        s->cb_ud = ud;
        s->refs++;
        s->next_renew_ms =
            tn_sched_next_renew(0, s->sent_ms, s->ttl_ms, &s->backoff_ms, 0);
        s->knext = c->sessions;
        c->sessions = s;
        tn_client_wake_locked(c);
    }
    (void)pthread_mutex_unlock(&c->mu);
    return rc;
}

void tn_client_session_keepalive_stop(struct tn_session *s)
{
    struct tn_client *c = s->client;
    (void)pthread_mutex_lock(&c->mu);
    if (s->kept) {
        s->stop_requested = true;
        tn_client_wake_locked(c);
    }
    (void)pthread_mutex_unlock(&c->mu);
}
