/* SPDX-License-Identifier: MIT */
/* The keepalive thread: one per client, started on the first
 * tn_client_keepalive_start.  It renews each kept lease when a third of its
 * TTL has passed since the last renew was sent, retries with backoff while
 * safe time is left, bounds every request by the earliest safe deadline of
 * all kept leases (so a hung request never delays a loss report), and
 * reports each lease's end exactly once.  It never renews a lease that was
 * released, lost or ran out.  Shares only struct tn_client (under mu) with
 * callers. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <tenure/client.h>

#include "client/client_internal.h"
#include "common/assert.h"

#define TN_RENEW_MSG_MAX 1024

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* Decide whether l's keepalive has ended; 0 = keep going. */
static enum tn_lease_end end_of(struct tn_client *c, struct tn_lease *l,
                                int64_t now_ms, int *rc_out)
{
    (void)tn_lease_safe_at_locked(l, now_ms);
    switch (l->state) {
    case TN_LEASE_LOST:
        *rc_out = l->end_rc;
        return TN_LEASE_END_LOST;
    case TN_LEASE_EXPIRED:
        *rc_out = TN_EEXPIRED;
        return TN_LEASE_END_EXPIRED;
    case TN_LEASE_RELEASED:
        if (l->release_done) {
            *rc_out = l->end_rc;
            return TN_LEASE_END_RELEASED;
        }
        break;
    default:
        break;
    }
    if (c->stopping || l->stop_requested) {
        *rc_out = TN_ECANCELED;
        return TN_LEASE_END_STOPPED;
    }
    return (enum tn_lease_end)0;
}

static void unlink_lease(struct tn_client *c, struct tn_lease *l)
{
    struct tn_lease **pp = &c->kept;
    while (*pp != l)
        pp = &(*pp)->next;
    *pp = l->next;
    l->next = NULL;
    l->kept = false;
}

/* Report one ended lease, if any: true when one was reported (the lock was
 * dropped meanwhile, so the caller rescans). */
static bool finish_one_locked(struct tn_client *c)
{
    int64_t now = c->now_ms();
    for (struct tn_lease *l = c->kept; l != NULL; l = l->next) {
        int rc = 0;
        enum tn_lease_end why = end_of(c, l, now, &rc);
        if (why == 0)
            continue;
        unlink_lease(c, l);
        tn_lease_end_fn cb = l->cb;
        void *ud = l->cb_ud;
        (void)pthread_mutex_unlock(&c->mu);
        if (c->log != NULL) {
            char msg[TN_RENEW_MSG_MAX];
            (void)snprintf(msg, sizeof(msg),
                           "keepalive of lease \"%s\" token=%llu ended: %s",
                           l->name, (unsigned long long)l->token,
                           tn_lease_end_name(why));
            c->log(c->log_ud, msg);
        }
        cb(l, why, rc, ud);
        (void)pthread_mutex_lock(&c->mu);
        tn_lease_unref_locked(l);
        return true;
    }
    return false;
}

static bool renewable(const struct tn_lease *l)
{
    return l->state == TN_LEASE_HELD && !l->stop_requested;
}

/* Earliest safe deadline among kept leases: no request may outlive it. */
static int64_t earliest_deadline(const struct tn_client *c)
{
    int64_t d = INT64_MAX;
    for (const struct tn_lease *l = c->kept; l != NULL; l = l->next) {
        if (renewable(l))
            d = min64(d, l->deadline_ms);
    }
    return d;
}

static void after_failure(struct tn_lease *l, int64_t now_ms)
{
    int64_t first = max64(10, l->ttl_ms / 30);
    int64_t cap = max64(first, l->ttl_ms / 6);
    l->backoff_ms = l->backoff_ms == 0 ? first : min64(cap, 2 * l->backoff_ms);
    l->next_renew_ms = now_ms + l->backoff_ms;
}

static void describe(char *msg, const struct tn_lease *l, int rc,
                     int64_t safe_ms, const struct tn_errmsg *em)
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
                       l->name, tok, tn_strerror(rc), em->text);
}

/* Renew l once.  Called and returns with c->mu held; drops it while the
 * request is in flight. */
static void renew_one_locked(struct tn_client *c, struct tn_lease *l)
{
    int64_t ttl = l->ttl_ms;
    int64_t deadline =
        min64(c->now_ms() + c->request_timeout_ms, earliest_deadline(c));
    l->refs++; /* stays valid even if unlinked meanwhile */
    (void)pthread_mutex_unlock(&c->mu);
    struct tn_renew_io ro = {
        .ttl_send_ms = ttl, .deadline_ms = deadline, .ttl_ms = ttl};
    struct tn_errmsg em = {{0}};
    int rc = tn_client_renew_raw(&c->ka_http, l, &ro, &em);
    (void)pthread_mutex_lock(&c->mu);
    if (l->state == TN_LEASE_HELD)
        rc = tn_lease_apply_renew_locked(l, rc, &ro);
    int64_t now = c->now_ms();
    int64_t safe = tn_lease_safe_at_locked(l, now);
    if (rc == 0) {
        l->backoff_ms = 0;
        l->next_renew_ms = l->sent_ms + l->ttl_ms / 3;
    } else {
        after_failure(l, now);
    }
    char msg[TN_RENEW_MSG_MAX];
    describe(msg, l, rc, safe, &em);
    /* A renew that answers after the caller released the lease says
     * nothing the caller needs: the release decided, so it is not logged
     * (after a lease was lost or ran out, the late answer still is). */
    bool quiet = l->state == TN_LEASE_RELEASED;
    tn_lease_unref_locked(l);
    if (c->log != NULL && !quiet) {
        (void)pthread_mutex_unlock(&c->mu);
        c->log(c->log_ud, msg);
        (void)pthread_mutex_lock(&c->mu);
    }
}

static void wait_until_locked(struct tn_client *c, int64_t wake_ms)
{
    if (wake_ms == INT64_MAX) {
        (void)pthread_cond_wait(&c->cond, &c->mu);
        return;
    }
    struct timespec ts = {.tv_sec = (time_t)(wake_ms / 1000),
                          .tv_nsec = (long)(wake_ms % 1000) * 1000000L};
    (void)pthread_cond_timedwait(&c->cond, &c->mu, &ts);
}

/* The lease whose renew is due now, or NULL and *wake_ms set to when
 * something next needs attention. */
static struct tn_lease *pick_due(struct tn_client *c, int64_t now_ms,
                                 int64_t *wake_ms)
{
    struct tn_lease *due = NULL;
    *wake_ms = INT64_MAX;
    for (struct tn_lease *l = c->kept; l != NULL; l = l->next) {
        if (!renewable(l))
            continue;
        *wake_ms = min64(*wake_ms, l->deadline_ms);
        if (l->next_renew_ms > now_ms)
            *wake_ms = min64(*wake_ms, l->next_renew_ms);
        else if (due == NULL || l->next_renew_ms < due->next_renew_ms)
            due = l;
    }
    return due;
}

void *tn_client_renewer_main(void *arg)
{
    struct tn_client *c = arg;
    (void)pthread_mutex_lock(&c->mu);
    for (;;) {
        if (finish_one_locked(c))
            continue;
        if (c->stopping && c->kept == NULL)
            break;
        int64_t wake = INT64_MAX;
        struct tn_lease *due = pick_due(c, c->now_ms(), &wake);
        if (due != NULL && !c->stopping)
            renew_one_locked(c, due);
        else
            wait_until_locked(c, wake);
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
    if (rc < 0)
        return rc;
    if (pthread_create(&c->thread, NULL, tn_client_renewer_main, c) != 0) {
        tn_client_http_release(&c->ka_http);
        return TN_EIO;
    }
    c->thread_started = true;
    return TN_OK;
}

static int can_keep_locked(struct tn_client *c, struct tn_lease *l)
{
    if (l->client != c || l->kept || c->stopping)
        return TN_EINVAL;
    int64_t safe = tn_lease_safe_at_locked(l, c->now_ms());
    if (l->state == TN_LEASE_EXPIRED)
        return TN_EEXPIRED;
    return safe > 0 ? TN_OK : TN_EINVAL;
}

int tn_client_keepalive_start(struct tn_client *c, struct tn_lease *l,
                              tn_lease_end_fn cb, void *ud)
{
    if (cb == NULL)
        return TN_EINVAL;
    (void)pthread_mutex_lock(&c->mu);
    int rc = can_keep_locked(c, l);
    if (rc == 0)
        rc = start_thread_locked(c);
    if (rc == 0 && c->opts.watch_events)
        (void)tn_client_events_start_locked(c); /* optional: no error */
    if (rc == 0) {
        l->kept = true;
        l->stop_requested = false;
        l->cb = cb;
        l->cb_ud = ud;
        l->refs++;
        l->backoff_ms = 0;
        l->next_renew_ms = l->sent_ms + l->ttl_ms / 3;
        l->next = c->kept;
        c->kept = l;
        (void)pthread_cond_signal(&c->cond);
    }
    (void)pthread_mutex_unlock(&c->mu);
    return rc;
}

void tn_client_keepalive_stop(struct tn_client *c, struct tn_lease *l)
{
    (void)pthread_mutex_lock(&c->mu);
    if (l->kept) {
        l->stop_requested = true;
        (void)pthread_cond_signal(&c->cond);
    }
    (void)pthread_mutex_unlock(&c->mu);
}
