/* SPDX-License-Identifier: MIT */
/* Blocking acquire for the embedded store, on the shared FIFO waiter queue
 * (src/store/waitq.c): each name's queue hangs on its lease entry.  A name
 * that becomes free (release, or expiry plus lock delay, watched by one
 * timer per queue) is granted at once to the first waiter that is still
 * there; a waiter whose client went away is dropped before its turn and
 * never holds the lease.  A waiter whose deadline passes is answered as a
 * non-waiting acquire would be. */
#include "store/embedded/wait.h"

#include <string.h>

#include <tenure/err.h>

#include "common/clock.h"
#include "store/embedded/announce.h"
#include "store/embedded/change.h"
#include "store/embedded/events.h"
#include "store/embedded/history.h"

/* A name's queue: the shared one, and the lease it hangs on. */
struct equeue {
    struct tn_waitq q;        /* first */
    struct embedded *e;       /* owner */
    struct tn_lease_entry *l; /* the name; l->waiters == this */
};

static void wake_timer(void *arg);

bool tn_embedded_has_waiters(const struct tn_lease_entry *l)
{
    return l != NULL && l->waiters != NULL;
}

/* When the current grant stops blocking the name: at expiry plus lock
 * delay (a release frees it at once and calls wake directly).  Under a
 * session, its session's expiry (a renew moves it: wake then finds the
 * lease live and looks again later; a DELETE of the session serves the
 * queue at once, lease_freed). */
static int64_t free_at(const struct tn_lease_entry *l, int64_t now)
{
    if (!l->held)
        return now;
    return tn_lease_expires_at(l) + l->lock_delay_ms;
}

/* Answer w as a non-waiting acquire of a blocked name would be. */
static void answer_blocked(struct embedded *e, struct tn_blocked *w,
                           struct tn_lease_entry *l, int64_t now)
{
    struct tn_store_result *out = w->out;
    tn_embedded_note_expiry(e, l, now); /* lock_delay reveals the end */
    tn_store_view_from_lease(&out->lease, l, now);
    if (tn_lease_is_live(l, now)) {
        out->rc = TN_ECONFLICT;
    } else {
        out->rc = TN_ELOCKDELAY;
        out->retry_after_ms = free_at(l, now) - now;
    }
    tn_embedded_finish(e, l->seq, out, w->done, w->arg);
}

static void on_deadline(struct tn_blocked *w)
{
    struct equeue *q = (struct equeue *)w->q;
    tn_waitq_unlink(w);
    q->e->waits.timed_out++;
    answer_blocked(q->e, w, q->l, tn_clock_now_ms());
    tn_waitq_blocked_free(w);
    (void)tn_waitq_release(&q->q);
}

static void on_free(struct tn_waitq *q)
{
    ((struct equeue *)q)->l->waiters = NULL;
}

static const struct tn_waitq_hooks hooks = {.queue_size = sizeof(struct equeue),
                                            .on_deadline = on_deadline,
                                            .on_free = on_free};

/* e->lease_freed: l ended while its session was settled, outside any
 * request about its name.  Its queue is served by its own timer, due
 * now: wake cannot run inside the settling (which may itself run inside
 * a wake of this very queue). */
static void wake_soon(struct embedded *e, struct tn_lease_entry *l)
{
    struct equeue *q = l->waiters;
    tn_loop_timer_arm(e->loop, &q->q.timer, tn_clock_now_ms(), wake_timer, q);
}

int tn_embedded_wait_init(struct embedded *e, const struct tn_store_config *cfg)
{
    e->lease_freed = wake_soon;
    return tn_waitq_init(&e->waits, e->loop, cfg, &hooks);
}

int tn_embedded_wait(struct embedded *e, struct tn_lease_entry *l,
                     const struct tn_acquire_req *r,
                     struct tn_store_result *out, tn_store_done_fn done,
                     void *arg)
{
    struct tn_waitq *q = l->waiters;
    int rc = tn_waitq_admit(&e->waits, q, out, RETRY_AFTER_MS);
    if (rc < 0)
        return rc;
    bool fresh = q == NULL;
    if (tn_waitq_push(&e->waits, &q, r, out, done, arg) == NULL)
        return TN_ENOMEM;
    struct equeue *eq = (struct equeue *)q;
    if (fresh) {
        eq->e = e;
        eq->l = l;
        l->waiters = eq;
    }
    if (!q->timer.armed)
        tn_loop_timer_arm(e->loop, &q->timer, free_at(l, tn_clock_now_ms()),
                          wake_timer, eq);
    return TN_OK;
}

/* What became of the first waiter of a free name. */
enum turn {
    TURN_STOP, /* granted (answered after the commit), or the name is not
                  free for it: it stays first */
    TURN_NEXT, /* answered otherwise (its session ended, out of memory):
                  try the next */
};

/* Answer the unlinked w with rc, once the change seq it reveals is
 * durable. */
static void answer_after(struct embedded *e, struct tn_blocked *w, int rc,
                         uint64_t seq)
{
    w->out->rc = rc;
    tn_embedded_finish(e, seq, w->out, w->done, w->arg);
    tn_waitq_blocked_free(w);
}

/* A waiter under a session that is no longer live (or not its bearer's)
 * never gets the lease: answered lost (or forbidden) once the session's
 * recorded end is durable.  True if w was answered. */
static bool session_refuses(struct embedded *e, struct tn_blocked *w,
                            int64_t now)
{
    if (w->session_id == NULL)
        return false;
    struct tn_session *s = tn_session_find(&e->table, w->session_id);
    tn_embedded_note_session(e, s, now);
    int rc = tn_session_auth(s, w->session_secret, w->principal, now);
    if (rc == TN_OK)
        return false;
    tn_waitq_unlink(w);
    if (rc == TN_ELOST)
        w->out->reason = TN_EMBEDDED_SESSION_LOST;
    answer_after(e, w, rc, s != NULL ? s->seq : e->sessions_gone_seq);
    return true;
}

/* Try to grant the name to w (TURN_STOP when granted or still blocked). */
static enum turn grant_to(struct embedded *e, struct tn_blocked *w,
                          struct tn_lease_entry *l, int64_t now)
{
    struct tn_acquire_req r = tn_waitq_request(w);
    struct tn_lease_entry *got = NULL;
    bool replayed = false;
    int64_t retry = 0;
    tn_embedded_note_expiry(e, l, now);
    if (session_refuses(e, w, now))
        return TURN_NEXT;
    int rc = tn_lease_acquire(&e->table, &r, now, &got, &replayed, &retry);
    if (rc == TN_ECONFLICT || rc == TN_ELOCKDELAY)
        return TURN_STOP;
    tn_waitq_unlink(w);
    if (rc != TN_OK) {
        tn_waitq_answer(w, rc, 0); /* out of memory */
        return TURN_NEXT;
    }
    e->waits.granted++;
    w->out->rc = TN_OK;
    w->out->replayed = replayed;
    tn_store_view_from_lease(&w->out->lease, got, now);
    if (replayed)
        tn_embedded_finish(e, got->seq, w->out, w->done, w->arg);
    else {
        tn_embedded_commit_change(e, got, w->out, w->done, w->arg);
        tn_embedded_ledger_grant(e, got, now);
        tn_embedded_emit(e, TN_EVENT_ACQUIRED, got);
        tn_embedded_track_expiry(e, got);
    }
    tn_waitq_blocked_free(w);
    return TURN_STOP;
}

void tn_embedded_wake(struct embedded *e, struct tn_lease_entry *l)
{
    struct tn_waitq *q = l->waiters;
    if (q == NULL)
        return;
    int64_t now = tn_clock_now_ms();
    struct tn_blocked *w;
    while ((w = TAILQ_FIRST(&q->waiters)) != NULL) {
        if (tn_waitq_gone(w)) {
            tn_waitq_unlink(w); /* its client left: it never gets the lease */
            e->waits.dropped++;
            answer_blocked(e, w, l, now);
            tn_waitq_blocked_free(w);
            continue;
        }
        if (grant_to(e, w, l, now) == TURN_STOP)
            break;
    }
    if (tn_waitq_release(q))
        return;
    tn_loop_timer_arm(e->loop, &q->timer, free_at(l, now), wake_timer, q);
}

static void wake_timer(void *arg)
{
    struct equeue *q = arg;
    tn_embedded_wake(q->e, q->l);
}

void tn_embedded_fail_waiters(struct embedded *e, int rc)
{
    tn_waitq_fail_all(&e->waits, rc, RETRY_AFTER_MS);
}

void tn_embedded_cancel_wait(struct embedded *e, void *ctx)
{
    tn_waitq_cancel(&e->waits, ctx);
}
