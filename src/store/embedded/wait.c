/* SPDX-License-Identifier: MIT */
/* Blocking acquire for the embedded store: a FIFO queue of waiters per
 * name, hung on the lease entry.  A name that becomes free (release, or
 * expiry plus lock delay, watched by one timer per queue) is granted at
 * once to the first waiter that is still there; a waiter whose client went
 * away is dropped before its turn and never holds the lease.  A waiter
 * whose deadline passes is answered as a non-waiting acquire would be. */
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "store/embedded/embedded.h"

struct tn_blocked {
    struct tn_waitq *q;              /* its queue */
    struct tn_blocked *next;         /* FIFO */
    struct tn_blocked *prev;         /* FIFO */
    char *owner_id;                  /* owned */
    char *request_id;                /* owned, or NULL */
    int64_t ttl_ms;                  /* of the grant it asks for */
    int64_t lock_delay_ms;           /* of the grant it asks for */
    uint8_t secret[TN_SECRET_BYTES]; /* drawn by the API */
    bool (*wanted)(void *ctx);       /* is the client still there */
    void *wanted_ctx;                /* its argument */
    struct tn_store_result *out;     /* the caller's result */
    tn_store_done_fn done;           /* the caller's completion */
    void *arg;                       /* its argument */
    struct tn_loop_timer deadline;   /* wait_ms */
};

struct tn_waitq {
    struct embedded *e;         /* owner */
    struct tn_lease_entry *l;   /* the name; l->waiters == this */
    struct tn_blocked *head;    /* first in line */
    struct tn_blocked *tail;    /* last in line */
    size_t n;                   /* waiters */
    struct tn_loop_timer timer; /* when the name may become free */
    struct tn_waitq *next;      /* e->queues */
    struct tn_waitq *prev;      /* e->queues */
};

static void wake_timer(void *arg);

bool tn_embedded_has_waiters(const struct tn_lease_entry *l)
{
    return l != NULL && l->waiters != NULL;
}

/* When the current grant stops blocking the name: at expiry plus lock
 * delay (a release frees it at once and calls wake directly). */
static int64_t free_at(const struct tn_lease_entry *l, int64_t now)
{
    if (!l->held)
        return now;
    return l->expires_at_ms + l->lock_delay_ms;
}

static struct tn_waitq *queue_of(struct embedded *e, struct tn_lease_entry *l)
{
    if (l->waiters != NULL)
        return l->waiters;
    struct tn_waitq *q = tn_calloc(1, sizeof(*q));
    if (q == NULL)
        return NULL;
    q->e = e;
    q->l = l;
    q->next = e->queues;
    if (e->queues != NULL)
        e->queues->prev = q;
    e->queues = q;
    l->waiters = q;
    return q;
}

static void queue_free_if_empty(struct tn_waitq *q)
{
    if (q->n > 0)
        return;
    struct embedded *e = q->e;
    tn_loop_timer_disarm(e->loop, &q->timer);
    if (q->prev != NULL)
        q->prev->next = q->next;
    else
        e->queues = q->next;
    if (q->next != NULL)
        q->next->prev = q->prev;
    q->l->waiters = NULL;
    tn_free(q);
}

static void unlink_waiter(struct tn_blocked *w)
{
    struct tn_waitq *q = w->q;
    if (w->prev != NULL)
        w->prev->next = w->next;
    else
        q->head = w->next;
    if (w->next != NULL)
        w->next->prev = w->prev;
    else
        q->tail = w->prev;
    q->n--;
    q->e->n_waiters--;
    tn_loop_timer_disarm(q->e->loop, &w->deadline);
}

static void waiter_free(struct tn_blocked *w)
{
    tn_free(w->owner_id);
    tn_free(w->request_id);
    tn_free(w);
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

static void on_deadline(void *arg)
{
    struct tn_blocked *w = arg;
    struct tn_waitq *q = w->q;
    struct embedded *e = q->e;
    struct tn_lease_entry *l = q->l;
    unlink_waiter(w);
    e->waits_timed_out++;
    answer_blocked(e, w, l, tn_clock_now_ms());
    waiter_free(w);
    queue_free_if_empty(q);
}

int tn_embedded_wait(struct embedded *e, struct tn_lease_entry *l,
                     const struct tn_acquire_req *r,
                     struct tn_store_result *out, tn_store_done_fn done,
                     void *arg)
{
    if (e->n_waiters >= e->max_waiters ||
        (l->waiters != NULL &&
         ((struct tn_waitq *)l->waiters)->n >= e->max_waiters_per_name)) {
        out->capacity =
            e->n_waiters >= e->max_waiters ? "waiters" : "waiters_per_name";
        out->retry_after_ms = RETRY_AFTER_MS;
        return TN_ECAPACITY;
    }
    struct tn_blocked *w = tn_calloc(1, sizeof(*w));
    struct tn_waitq *q = w != NULL ? queue_of(e, l) : NULL;
    if (w != NULL)
        w->owner_id = tn_strdup(r->owner_id);
    if (w != NULL && r->request_id != NULL)
        w->request_id = tn_strdup(r->request_id);
    if (q == NULL || w->owner_id == NULL ||
        (r->request_id != NULL && w->request_id == NULL)) {
        if (w != NULL)
            waiter_free(w);
        return TN_ENOMEM;
    }
    w->q = q;
    w->ttl_ms = r->ttl_ms;
    w->lock_delay_ms = r->lock_delay_ms;
    memcpy(w->secret, r->secret, TN_SECRET_BYTES);
    w->wanted = r->wanted;
    w->wanted_ctx = r->wanted_ctx;
    w->out = out;
    w->done = done;
    w->arg = arg;
    w->prev = q->tail;
    if (q->tail != NULL)
        q->tail->next = w;
    else
        q->head = w;
    q->tail = w;
    q->n++;
    e->n_waiters++;
    int64_t now = tn_clock_now_ms();
    int64_t wait = r->wait_ms < e->max_wait_ms ? r->wait_ms : e->max_wait_ms;
    tn_loop_timer_arm(e->loop, &w->deadline, now + wait, on_deadline, w);
    if (!q->timer.armed)
        tn_loop_timer_arm(e->loop, &q->timer, free_at(l, now), wake_timer, q);
    return TN_OK;
}

/* Try to grant the name to w; TN_OK when granted (answered after the
 * commit), else the state machine's refusal. */
static int grant_to(struct embedded *e, struct tn_blocked *w,
                    struct tn_lease_entry *l, int64_t now)
{
    struct tn_acquire_req r = {.name = l->name,
                               .name_len = l->name_len,
                               .owner_id = w->owner_id,
                               .request_id = w->request_id,
                               .ttl_ms = w->ttl_ms,
                               .lock_delay_ms = w->lock_delay_ms,
                               .secret = w->secret};
    struct tn_lease_entry *got = NULL;
    bool replayed = false;
    int64_t retry = 0;
    tn_embedded_note_expiry(e, l, now);
    int rc = tn_lease_acquire(&e->table, &r, now, &got, &replayed, &retry);
    if (rc != TN_OK)
        return rc;
    unlink_waiter(w);
    e->waits_granted++;
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
    waiter_free(w);
    return TN_OK;
}

void tn_embedded_wake(struct embedded *e, struct tn_lease_entry *l)
{
    struct tn_waitq *q = l->waiters;
    if (q == NULL)
        return;
    int64_t now = tn_clock_now_ms();
    while (q->head != NULL) {
        struct tn_blocked *w = q->head;
        if (w->wanted != NULL && !w->wanted(w->wanted_ctx)) {
            unlink_waiter(w); /* its client left: it never gets the lease */
            e->waits_dropped++;
            answer_blocked(e, w, l, now);
            waiter_free(w);
            continue;
        }
        int rc = grant_to(e, w, l, now);
        if (rc == TN_ECONFLICT || rc == TN_ELOCKDELAY || rc == TN_OK)
            break;
        unlink_waiter(w); /* out of memory: answer it, try the next */
        w->out->rc = rc;
        w->done(w->arg);
        waiter_free(w);
    }
    if (q->head == NULL) {
        queue_free_if_empty(q);
        return;
    }
    tn_loop_timer_arm(e->loop, &q->timer, free_at(l, now), wake_timer, q);
}

static void wake_timer(void *arg)
{
    struct tn_waitq *q = arg;
    tn_embedded_wake(q->e, q->l);
}

void tn_embedded_fail_waiters(struct embedded *e, int rc)
{
    while (e->queues != NULL) {
        struct tn_waitq *q = e->queues;
        while (q->head != NULL) {
            struct tn_blocked *w = q->head;
            unlink_waiter(w);
            w->out->rc = rc;
            w->out->retry_after_ms = 1000;
            w->done(w->arg);
            waiter_free(w);
        }
        queue_free_if_empty(q);
    }
}

/* A scan of every queue: cancels are rare (a client left mid-wait), and
 * the queues are bounded by --max-waiters. */
void tn_embedded_cancel_wait(struct embedded *e, void *ctx)
{
    for (struct tn_waitq *q = e->queues; q != NULL; q = q->next) {
        for (struct tn_blocked *w = q->head; w != NULL; w = w->next) {
            if (w->wanted_ctx != ctx)
                continue;
            unlink_waiter(w);
            e->waits_dropped++;
            w->out->rc = TN_ECANCELED;
            w->done(w->arg);
            waiter_free(w);
            queue_free_if_empty(q);
            return;
        }
    }
}
