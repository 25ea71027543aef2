/* SPDX-License-Identifier: MIT */
/* Expiries of the embedded store, of leases and of sessions, and the
 * settling of an ended session's leases.  Expiry is lazy in the state
 * machine; an expiry is recorded (written like any change, and announced
 * as "expired" once that commit is durable, announce.c) by the first
 * thing that would reveal it, or by one timer at the min-heap of grant
 * expiries, whichever comes first (docs/safety/revealed-end.md). */
#include "store/embedded/events.h"

#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "common/clock.h"
#include "store/embedded/announce.h"
#include "store/embedded/history.h"

/* 16 bytes: one per grant or renew still ahead.  An entry whose at_ms is
 * no longer its lease's expiry is stale (renewed, released or granted
 * again) and is skipped; one that matches is checked again by
 * tn_embedded_note_expiry, which acts only on a held grant whose own
 * expiry has passed, so no token is needed to tell grants apart. */
struct tn_expiry {
    int64_t at_ms;            /* the grant's expiry when tracked */
    struct tn_lease_entry *l; /* may be a retired entry, zeroed or reused for
                           another name: at_ms is checked against it */
};

static bool earlier(const void *a, const void *b)
{
    return ((const struct tn_expiry *)a)->at_ms <
           ((const struct tn_expiry *)b)->at_ms;
}

static void on_expiry_timer(void *arg);

static void arm(struct embedded *e)
{
    const struct tn_expiry *top = tn_heap_top(&e->expiries);
    if (top == NULL) {
        tn_loop_timer_disarm(e->loop, &e->expiry_timer);
        return;
    }
    if (!e->expiry_timer.armed || e->expiry_timer.due_ms != top->at_ms)
        tn_loop_timer_arm(e->loop, &e->expiry_timer, top->at_ms,
                          on_expiry_timer, e);
}

/* Tracked with or without events: the live count (--max-leases) goes down
 * when a grant's expiry is handled here. */
void tn_embedded_track_expiry(struct embedded *e,
                              const struct tn_lease_entry *l)
{
    struct tn_lease_entry *m =
        (struct tn_lease_entry *)(uintptr_t)l; /* the table's */
    if (m->session != NULL && m->session->end != TN_SESSION_LIVE)
        return; /* loaded under an ended session: the settle queue's */
    if (m->held && !m->counted) {
        m->counted = true;
        e->n_live++;
    }
    if (m->session != NULL)
        return; /* its session's expiry is tracked instead */
    struct tn_heap *h = &e->expiries;
    if (h->size == 0) {
        /* First sized like the table (the expected live leases): growing
         * by doubling would leave the outgrown arrays as holes in the
         * heap. */
        tn_heap_init(h, sizeof(struct tn_expiry), earlier, NULL);
        size_t n = e->table.map.mask + 1;
        if (tn_heap_reserve(h, n > 64 ? n : 64) == 0 &&
            e->table.map.count < e->table.reserved)
            tn_populate(h->v, n * h->size); /* a load pushes them all */
    }
    struct tn_expiry x = {.at_ms = l->expires_at_ms, .l = m};
    if (tn_heap_push(h, &x) < 0)
        return; /* announced lazily; counted live until retired */
    arm(e);
}

/* Write l, now ended, into the open batch: the answers that reveal the
 * end wait for l->seq like the answer to a change. */
static void record_end(struct embedded *e, struct tn_lease_entry *l)
{
    l->seq = ++e->table.seq;
    tn_commit_add_row(e->commit, l, e->table.last_token);
}

void tn_embedded_note_expiry(struct embedded *e, struct tn_lease_entry *l,
                             int64_t now)
{
    if (l != NULL && l->session != NULL) {
        if (tn_session_is_live(l->session, now) || e->degraded_rc != 0)
            return;
        /* The session's end, recorded first, makes this lease's durable;
         * settled now, the lease is an ordinary ended one for whatever
         * touches it next. */
        tn_embedded_note_session(e, l->session, now);
        tn_embedded_settle(e, l, now);
        return;
    }
    if (l == NULL || !l->held || l->expiry_noted || now < l->expires_at_ms)
        return;
    if (e->degraded_rc != 0)
        return; /* nothing is answered; the reload keeps what is durable */
    if (tn_embedded_ledger_end(e, l, TN_GRANT_EXPIRED, l->expires_at_ms))
        e->expiries_total++;
    l->expiry_noted = true;
    record_end(e, l);
    tn_embedded_emit(e, TN_EVENT_EXPIRED, l);
}

void tn_embedded_expire_due(struct embedded *e, int64_t now)
{
    const struct tn_expiry *top;
    while ((top = tn_heap_top(&e->expiries)) != NULL && top->at_ms <= now) {
        struct tn_expiry x;
        tn_heap_pop(&e->expiries, &x);
        /* Only the entry of the grant's current expiry counts; renews
         * left older entries behind.  The entry may have been retired and
         * reused since: an expiry equal to at_ms (passed) is then the new
         * grant's own, handled early, which is what its entry would do. */
        if (x.l->expires_at_ms == x.at_ms) {
            if (x.l->held)
                tn_embedded_uncount(e, x.l);
            tn_embedded_note_expiry(e, x.l, now);
        }
    }
    arm(e);
}

void tn_embedded_uncount(struct embedded *e, struct tn_lease_entry *l)
{
    if (!l->counted)
        return;
    l->counted = false;
    e->n_live--;
}

static void on_expiry_timer(void *arg)
{
    tn_embedded_expire_due(arg, tn_clock_now_ms());
}

/* A grant whose expiry is still to be handled: held, its end not
 * recorded. */
static bool expiry_pending(const struct tn_lease_entry *l)
{
    return l->held && !l->expiry_noted;
}

static bool track_one(const struct tn_lease_entry *l, void *ctx)
{
    if (expiry_pending(l))
        tn_embedded_track_expiry(ctx, l);
    return true;
}

void tn_embedded_track_loaded(struct embedded *e, struct tn_lease_entry *l)
{
    if (expiry_pending(l))
        tn_embedded_track_expiry(e, l);
    else
        tn_embedded_uncount(e, l);
}

void tn_embedded_track_all(struct embedded *e)
{
    tn_lease_each(&e->table, track_one, e);
}

void tn_embedded_clear_expiries(struct embedded *e)
{
    tn_heap_clear(&e->expiries);
    tn_loop_timer_disarm(e->loop, &e->expiry_timer);
}

/* ---- sessions: their expiries, their ends, and settling their leases ---- */

/* Leases of ended sessions settled per slice (at most one slice a
 * millisecond): each writes a row and announces an event; measured by
 * bench/bench_sessions.c, a slice takes well under a millisecond, so a
 * session of 100,000 leases never holds the loop long between two other
 * requests. */
#define SETTLE_PER_TURN 512

/* One per tracked session: its current expiry.  The session knows its
 * slot (heap_index), so a renew moves it and a freed session leaves. */
struct tn_sexpiry {
    int64_t at_ms;        /* the session's expiry when tracked */
    struct tn_session *s; /* heap_index is its slot */
};

static bool s_earlier(const void *a, const void *b)
{
    return ((const struct tn_sexpiry *)a)->at_ms <
           ((const struct tn_sexpiry *)b)->at_ms;
}

static void s_moved(void *elem, size_t i)
{
    ((struct tn_sexpiry *)elem)->s->heap_index = i;
}

void tn_embedded_sessions_init(struct embedded *e)
{
    tn_heap_init(&e->session_expiries, sizeof(struct tn_sexpiry), s_earlier,
                 s_moved);
}

static void on_session_timer(void *arg)
{
    tn_embedded_expire_sessions(arg, tn_clock_now_ms());
}

static void s_arm(struct embedded *e)
{
    const struct tn_sexpiry *top = tn_heap_top(&e->session_expiries);
    if (top == NULL)
        tn_loop_timer_disarm(e->loop, &e->session_timer);
    else if (!e->session_timer.armed || e->session_timer.due_ms != top->at_ms)
        tn_loop_timer_arm(e->loop, &e->session_timer, top->at_ms,
                          on_session_timer, e);
}

static void untrack_session(struct embedded *e, struct tn_session *s)
{
    if (s->heap_index == SIZE_MAX)
        return;
    tn_heap_remove(&e->session_expiries, s->heap_index, NULL);
    s->heap_index = SIZE_MAX;
    s_arm(e);
}

void tn_embedded_track_session(struct embedded *e, struct tn_session *s)
{
    if (s->heap_index != SIZE_MAX) {
        tn_heap_remove(&e->session_expiries, s->heap_index, NULL);
        s->heap_index = SIZE_MAX;
    }
    struct tn_sexpiry x = {.at_ms = s->expires_at_ms, .s = s};
    if (tn_heap_push(&e->session_expiries, &x) < 0)
        return; /* recorded by the first request that would reveal it */
    s_arm(e);
}

void tn_embedded_expire_sessions(struct embedded *e, int64_t now)
{
    const struct tn_sexpiry *top;
    while ((top = tn_heap_top(&e->session_expiries)) != NULL &&
           top->at_ms <= now) {
        struct tn_sexpiry x;
        tn_heap_pop(&e->session_expiries, &x);
        x.s->heap_index = SIZE_MAX;
        tn_embedded_note_session(e, x.s, now);
    }
    s_arm(e);
}

static void settle_step(void *arg);

/* The settling starts once the session's end is durable: that record is
 * what makes every lease's end durable (a load ends them with it).  It
 * runs from a timer, not a deferred call: a slice at most every `gap_ms`
 * leaves the loop to the requests between two slices, and a loop that
 * stops (its deferred calls run to the end) does not finish it. */
static void schedule_settle(struct embedded *e, int64_t gap_ms)
{
    if (e->settle_timer.armed || e->settle_head == NULL ||
        e->settle_head->seq > e->durable_seq)
        return;
    tn_loop_timer_arm(e->loop, &e->settle_timer, tn_clock_now_ms() + gap_ms,
                      settle_step, e);
}

static void queue_settle(struct embedded *e, struct tn_session *s)
{
    if (s->settling)
        return;
    s->settling = true;
    s->settle_next = NULL;
    if (e->settle_tail != NULL)
        e->settle_tail->settle_next = s;
    else
        e->settle_head = s;
    e->settle_tail = s;
    schedule_settle(e, 0);
}

void tn_embedded_session_ended(struct embedded *e, struct tn_session *s)
{
    TN_ASSERT(s->end != TN_SESSION_LIVE);
    untrack_session(e, s);
    if (s->counted) {
        s->counted = false;
        e->n_sessions_live--;
    }
    e->sessions_ended[s->end]++;
    tn_commit_add_session(e->commit, s, false, e->table.last_token);
    tn_embedded_emit_session(e, TN_EVENT_SESSION_ENDED, s);
    queue_settle(e, s);
}

void tn_embedded_note_session(struct embedded *e, struct tn_session *s,
                              int64_t now)
{
    if (s == NULL || s->end != TN_SESSION_LIVE || now < s->expires_at_ms ||
        e->degraded_rc != 0)
        return;
    tn_session_end(&e->table, s, TN_SESSION_EXPIRED, s->expires_at_ms);
    tn_embedded_session_ended(e, s);
}

static enum tn_event_type event_of(enum tn_session_end how)
{
    return how == TN_SESSION_RELEASED  ? TN_EVENT_RELEASED
           : how == TN_SESSION_REVOKED ? TN_EVENT_REVOKED
                                       : TN_EVENT_EXPIRED;
}

void tn_embedded_settle(struct embedded *e, struct tn_lease_entry *l,
                        int64_t now)
{
    TN_ASSERT(l->session != NULL && l->session->end != TN_SESSION_LIVE);
    enum tn_session_end how = tn_lease_settle(&e->table, l, now);
    tn_embedded_uncount(e, l);
    l->expiry_noted = how == TN_SESSION_EXPIRED;
    TN_ASSERT(l->row_id != 0); /* written when it was granted */
    tn_commit_add_row(e->commit, l, e->table.last_token);
    if (tn_embedded_ledger_end(e, l, tn_embedded_grant_end(how),
                               l->expires_at_ms) &&
        how == TN_SESSION_EXPIRED)
        e->expiries_total++;
    tn_embedded_emit(e, event_of(how), l);
    e->leases_settled++;
    if (l->waiters != NULL && e->lease_freed != NULL)
        e->lease_freed(e, l);
}

/* An ended session with no lease left: its row goes (after every row of
 * its leases in the batch stream, so a load never meets a lease row that
 * names a session the file lost), and so does the session. */
static void session_gone(struct embedded *e, struct tn_session *s)
{
    untrack_session(e, s);
    s->seq = ++e->table.seq;
    tn_commit_add_session(e->commit, s, true, e->table.last_token);
    e->sessions_gone_seq = s->seq;
    tn_session_free(&e->table, s);
}

/* A slice of the settle queue, once per loop turn while it is not empty:
 * requests interleave with a mass end.  Anything that touches a lease of
 * an ended session before its turn settles it first (note_expiry). */
static void settle_step(void *arg)
{
    struct embedded *e = arg;
    if (e->degraded_rc != 0)
        return; /* the reload that follows rebuilds the queue */
    int64_t now = tn_clock_now_ms();
    size_t done = 0;
    struct tn_session *s;
    while ((s = e->settle_head) != NULL && s->seq <= e->durable_seq &&
           done < SETTLE_PER_TURN) {
        while (s->leases != NULL && done < SETTLE_PER_TURN) {
            tn_embedded_settle(e, s->leases, now);
            done++;
        }
        if (s->leases != NULL)
            break;
        e->settle_head = s->settle_next;
        if (e->settle_head == NULL)
            e->settle_tail = NULL;
        s->settling = false;
        session_gone(e, s);
        done++;
    }
    schedule_settle(e, 1);
}

static bool session_loaded(struct tn_session *s, void *ctx)
{
    struct embedded *e = ctx;
    s->heap_index = SIZE_MAX;
    if (s->end != TN_SESSION_LIVE) {
        queue_settle(e, s); /* settled, then gone */
        return true;
    }
    s->counted = true;
    e->n_sessions_live++;
    tn_embedded_track_session(e, s);
    return true;
}

void tn_embedded_settle_kick(struct embedded *e)
{
    schedule_settle(e, 0);
}

void tn_embedded_sessions_loaded(struct embedded *e)
{
    e->n_sessions_live = 0;
    tn_session_each(&e->table, session_loaded, e);
}

void tn_embedded_sessions_clear(struct embedded *e)
{
    tn_heap_clear(&e->session_expiries);
    tn_loop_timer_disarm(e->loop, &e->session_timer);
    tn_loop_timer_disarm(e->loop, &e->settle_timer);
    e->settle_head = e->settle_tail = NULL;
}
