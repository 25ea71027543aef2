/* SPDX-License-Identifier: MIT */
/* The sessions' part of the keepalive thread (renew.c runs the loop): a
 * kept session is renewed when a third of its TTL has passed since its
 * last renew was sent, retried with backoff while safe time is left, each
 * request bounded by its safe deadline.  When it ends, every lease still
 * in its list is reported through the lease callback with the session's
 * reason, then the session itself, each exactly once; a lease of it that
 * ended alone (released, or lost by an event) is reported when it ends.
 * The leases reported are first gathered under the lock into a chain of
 * the thread's own, so the callbacks run without it and in one pass
 * however many leases the session had.  Kept sessions are few: they are
 * scanned, not heaped. */
#include <stdio.h>

#include <tenure/client.h>
#include <tenure/session.h>

#include "client/client_internal.h"
#include "common/assert.h"

#define MSG_MAX 512

static bool renewable(const struct tn_client *c, const struct tn_session *s)
{
    return s->state == TN_LEASE_HELD && !s->stop_requested && !c->stopping;
}

static void start_renew_locked(struct tn_client *c, struct tn_session *s,
                               int64_t now_ms)
{
    struct tn_xfer *x = tn_xfer_get(&c->ka);
    TN_ASSERT(x != NULL);
    int64_t deadline = now_ms + c->request_timeout_ms;
    if (s->deadline_ms < deadline)
        deadline = s->deadline_ms;
    char *path = tn_client_session_path(s->id, "");
    char *body = tn_client_session_renew_body(s, s->ttl_ms);
    x->kind = TN_XFER_SESSION;
    x->owner = s;
    if (tn_xfer_start(&c->ka, x, "PATCH", path, body, deadline) < 0) {
        s->next_renew_ms = tn_sched_backoff(s->ttl_ms, &s->backoff_ms, now_ms);
        return;
    }
    s->in_flight = true;
    s->refs++;
}

void tn_ka_sessions_dispatch_locked(struct tn_client *c, int64_t now_ms,
                                    size_t *free)
{
    for (struct tn_session *s = c->sessions; s != NULL && *free > 0;
         s = s->knext) {
        if (renewable(c, s) && !s->in_flight && s->next_renew_ms <= now_ms) {
            start_renew_locked(c, s, now_ms);
            (*free)--;
        }
    }
}

static void describe(char *msg, const struct tn_session *s, int rc,
                     int64_t safe_ms, const char *detail)
{
    if (s->state != TN_LEASE_HELD)
        (void)snprintf(msg, MSG_MAX,
                       "renew of session %s answered after it ended (%s)",
                       s->id, rc == 0 ? "ignored" : tn_strerror(rc));
    else if (rc == 0)
        (void)snprintf(msg, MSG_MAX,
                       "renewed session %s leases=%zu safe_for_ms=%lld", s->id,
                       s->n_listed, (long long)safe_ms);
    else
        (void)snprintf(msg, MSG_MAX, "renew of session %s failed: %s (%s)",
                       s->id, tn_strerror(rc), detail);
}

void tn_ka_session_done_locked(struct tn_client *c, struct tn_xfer *x)
{
    struct tn_session *s = x->owner;
    struct tn_renew_io ro;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_decode_renew_xfer(x, s->ttl_ms, &ro, &em);
    tn_xfer_put(&c->ka, x);
    s->in_flight = false;
    if (s->state == TN_LEASE_HELD)
        rc = tn_client_session_apply_renew_locked(s, rc, &ro);
    int64_t now = c->now_ms();
    int64_t safe = tn_client_session_safe_at_locked(s, now);
    s->next_renew_ms =
        tn_sched_next_renew(rc, s->sent_ms, s->ttl_ms, &s->backoff_ms, now);
    char msg[MSG_MAX];
    describe(msg, s, rc, safe, em.text);
    if (s->state != TN_LEASE_RELEASED)
        tn_client_log_locked(c, msg);
    tn_client_session_unref_locked(s);
}

/* Why the keepalive of s ends, or 0 while it goes on. */
static enum tn_lease_end session_end(struct tn_client *c, struct tn_session *s,
                                     int64_t now_ms, int *rc_out)
{
    (void)tn_client_session_safe_at_locked(s, now_ms);
    switch (s->state) {
    case TN_LEASE_LOST:
        *rc_out = s->end_rc;
        return TN_LEASE_END_LOST;
    case TN_LEASE_EXPIRED:
        *rc_out = TN_EEXPIRED;
        return TN_LEASE_END_EXPIRED;
    case TN_LEASE_RELEASED:
        if (s->end_done) {
            *rc_out = s->end_rc;
            return TN_LEASE_END_RELEASED;
        }
        break; /* until the DELETE answered, as a lease's release */
    default:
        break;
    }
    if (s->stop_requested || c->stopping) {
        *rc_out = TN_ECANCELED;
        return TN_LEASE_END_STOPPED;
    }
    return (enum tn_lease_end)0;
}

/* A lease that ended alone, its reason and rc; 0 while it is held. */
static enum tn_lease_end alone_end(const struct tn_lease *l, int *rc_out)
{
    *rc_out = l->end_rc;
    if (l->state == TN_LEASE_LOST)
        return TN_LEASE_END_LOST;
    if (l->state == TN_LEASE_RELEASED && l->release_done)
        return TN_LEASE_END_RELEASED;
    return (enum tn_lease_end)0;
}

/* Gather into a chain (one reference each) the leases of s to report:
 * all of them when the session ended (out of the list, unless only its
 * keepalive stopped: they are still the session's), else those that
 * ended alone. */
static struct tn_lease *gather_locked(struct tn_session *s,
                                      enum tn_lease_end why)
{
    struct tn_lease *chain = NULL;
    struct tn_lease *next = NULL;
    int rc = 0;
    for (struct tn_lease *l = s->leases; l != NULL; l = next) {
        next = l->snext;
        if (why == 0 && alone_end(l, &rc) == 0)
            continue;
        l->refs++;
        l->rnext = chain;
        chain = l;
        if (why != TN_LEASE_END_STOPPED)
            tn_client_session_unlist_locked(l);
    }
    return chain;
}

struct report {
    struct tn_session *s;  /* the session */
    enum tn_lease_end why; /* its end, or 0: leases that ended alone */
    int rc;                /* with why */
};

/* Run the callbacks of a gathered chain (and of the session when it
 * ended) without the lock; then drop the references taken. */
static void report_locked(struct tn_client *c, const struct report *r,
                          struct tn_lease *chain)
{
    struct tn_session *s = r->s;
    tn_lease_end_fn lcb = s->lease_cb;
    void *ud = s->cb_ud;
    (void)pthread_mutex_unlock(&c->mu);
    for (struct tn_lease *l = chain; l != NULL && lcb != NULL; l = l->rnext) {
        int rc = r->rc;
        enum tn_lease_end why = r->why != 0 ? r->why : alone_end(l, &rc);
        lcb(l, why, rc, ud);
    }
    if (r->why != 0)
        s->cb(s, r->why, r->rc, ud);
    (void)pthread_mutex_lock(&c->mu);
    while (chain != NULL) {
        struct tn_lease *l = chain;
        chain = l->rnext;
        l->rnext = NULL;
        tn_lease_unref_locked(l);
    }
}

static void unkeep_locked(struct tn_client *c, struct tn_session *s)
{
    struct tn_session **pp = &c->sessions;
    while (*pp != s)
        pp = &(*pp)->knext;
    *pp = s->knext;
    s->knext = NULL;
    s->kept = false;
}

bool tn_ka_sessions_report_locked(struct tn_client *c, int64_t now_ms)
{
    for (struct tn_session *s = c->sessions; s != NULL; s = s->knext) {
        int rc = 0;
        enum tn_lease_end why = session_end(c, s, now_ms, &rc);
        struct report r = {s, why, rc};
        if (r.why == 0 && !s->dirty)
            continue;
        s->dirty = false;
        /* Each lease takes the session's end as its own before it is
         * reported: inside the callback it already reads not held. */
        for (struct tn_lease *l = s->leases; l != NULL; l = l->snext)
            (void)tn_lease_safe_at_locked(l, now_ms);
        struct tn_lease *chain = gather_locked(s, r.why);
        if (r.why == 0 && chain == NULL)
            continue;
        if (r.why != 0) {
            char msg[MSG_MAX];
            (void)snprintf(msg, sizeof(msg),
                           "keepalive of session %s ended: %s", s->id,
                           tn_lease_end_name(r.why));
            unkeep_locked(c, s);
            tn_client_log_locked(c, msg);
        }
        report_locked(c, &r, chain);
        if (r.why != 0)
            tn_client_session_unref_locked(s); /* the keepalive's */
        return true;
    }
    return false;
}

int64_t tn_ka_sessions_wake_locked(struct tn_client *c, bool slot_free)
{
    int64_t wake = INT64_MAX;
    for (const struct tn_session *s = c->sessions; s != NULL; s = s->knext) {
        bool ending = s->state == TN_LEASE_RELEASED && !s->end_done;
        if (s->dirty || (!renewable(c, s) && !ending))
            return 0; /* something to report: at once */
        if (ending)
            continue; /* tn_client_session_end wakes the thread when done */
        if (s->deadline_ms < wake)
            wake = s->deadline_ms;
        if (slot_free && !s->in_flight && s->next_renew_ms < wake)
            wake = s->next_renew_ms;
    }
    return wake;
}
