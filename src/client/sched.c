/* SPDX-License-Identifier: MIT */
/* When the keepalive thread looks at which lease: two heaps of the kept
 * leases, one by the time of the next renew (those waiting for one) and
 * one by the end of their safe time (all still held), and a queue of the
 * leases whose end the thread must report.  So the thread finds the next
 * thing to do in O(log n) however many leases it keeps, where a scan of
 * every lease per renew made 5,000 leases cost more than their renews.
 * Whoever changes a lease's state (release, an event, a stop) calls
 * tn_sched_note_locked, which queues it and wakes the thread.  Everything
 * here runs under the client's mu. */
#include <pthread.h>

#include <tenure/client.h>

#include "client/client_internal.h"
#include "common/assert.h"

static bool due_before(const void *a, const void *b)
{
    const struct tn_lease *x = *(struct tn_lease *const *)a;
    const struct tn_lease *y = *(struct tn_lease *const *)b;
    return x->next_renew_ms < y->next_renew_ms;
}

static void due_moved(void *elem, size_t i)
{
    (*(struct tn_lease **)elem)->due_idx = i;
}

static bool dl_before(const void *a, const void *b)
{
    const struct tn_lease *x = *(struct tn_lease *const *)a;
    const struct tn_lease *y = *(struct tn_lease *const *)b;
    return x->deadline_ms < y->deadline_ms;
}

static void dl_moved(void *elem, size_t i)
{
    (*(struct tn_lease **)elem)->dl_idx = i;
}

void tn_sched_init(struct tn_client *c)
{
    tn_heap_init(&c->due, sizeof(struct tn_lease *), due_before, due_moved);
    tn_heap_init(&c->dl, sizeof(struct tn_lease *), dl_before, dl_moved);
}

void tn_sched_release(struct tn_client *c)
{
    tn_heap_release(&c->due);
    tn_heap_release(&c->dl);
}

int tn_sched_reserve_locked(struct tn_client *c)
{
    size_t n = tn_heap_count(&c->dl) + 1;
    int rc = tn_heap_reserve(&c->due, n < 16 ? 16 : 2 * n);
    if (rc == 0)
        rc = tn_heap_reserve(&c->dl, n < 16 ? 16 : 2 * n);
    return rc;
}

static void unqueue(struct tn_heap *h, size_t *idx)
{
    if (*idx == TN_NOT_QUEUED)
        return;
    tn_heap_remove(h, *idx, NULL);
    *idx = TN_NOT_QUEUED;
}

/* Push never fails: tn_sched_reserve_locked made room for every kept
 * lease before it was added. */
static void queue(struct tn_heap *h, struct tn_lease *l)
{
    int rc = tn_heap_push(h, &l);
    TN_ASSERT(rc == 0);
}

void tn_sched_update_locked(struct tn_client *c, struct tn_lease *l)
{
    unqueue(&c->due, &l->due_idx);
    unqueue(&c->dl, &l->dl_idx);
    if (!l->kept || l->ending || l->state != TN_LEASE_HELD)
        return;
    queue(&c->dl, l);
    if (!l->in_flight && !l->stop_requested)
        queue(&c->due, l);
}

void tn_sched_add_locked(struct tn_client *c, struct tn_lease *l)
{
    l->kept = true;
    l->kprev = NULL;
    l->knext = c->kept;
    if (c->kept != NULL)
        c->kept->kprev = l;
    c->kept = l;
    tn_sched_update_locked(c, l);
}

void tn_sched_remove_locked(struct tn_client *c, struct tn_lease *l)
{
    unqueue(&c->due, &l->due_idx);
    unqueue(&c->dl, &l->dl_idx);
    if (!l->kept)
        return;
    if (l->kprev != NULL)
        l->kprev->knext = l->knext;
    else
        c->kept = l->knext;
    if (l->knext != NULL)
        l->knext->kprev = l->kprev;
    l->knext = l->kprev = NULL;
    l->kept = false;
}

void tn_client_wake_locked(struct tn_client *c)
{
    if (c->thread_started)
        tn_xfer_pool_wakeup(&c->ka);
}

int64_t tn_sched_backoff(int64_t ttl_ms, int64_t *backoff_ms, int64_t now_ms)
{
    int64_t first = ttl_ms / 30 > 10 ? ttl_ms / 30 : 10;
    int64_t cap = ttl_ms / 6 > first ? ttl_ms / 6 : first;
    int64_t next = *backoff_ms == 0 ? first : 2 * *backoff_ms;
    *backoff_ms = next < cap ? next : cap;
    return now_ms + *backoff_ms;
}

int64_t tn_sched_next_renew(int rc, int64_t sent_ms, int64_t ttl_ms,
                            int64_t *backoff_ms, int64_t now_ms)
{
    if (rc != 0)
        return tn_sched_backoff(ttl_ms, backoff_ms, now_ms);
    *backoff_ms = 0;
    return sent_ms + ttl_ms / 3;
}

void tn_client_log_locked(struct tn_client *c, const char *msg)
{
    if (c->log == NULL)
        return;
    (void)pthread_mutex_unlock(&c->mu);
    c->log(c->log_ud, msg);
    (void)pthread_mutex_lock(&c->mu);
}

/* Whether the keepalive of a kept lease has ended (released once the
 * release request completed: until then a renew could still be sent). */
static bool kept_ends(const struct tn_client *c, const struct tn_lease *l)
{
    if (l->state == TN_LEASE_RELEASED)
        return l->release_done;
    return l->state != TN_LEASE_HELD || l->stop_requested || c->stopping;
}

static void push_ended(struct tn_client *c, struct tn_lease *l)
{
    l->ending = true;
    l->end_next = c->ended;
    c->ended = l;
    tn_client_wake_locked(c);
}

void tn_sched_note_locked(struct tn_client *c, struct tn_lease *l)
{
    if (l->ending)
        return;
    if (l->kept) {
        if (kept_ends(c, l)) {
            tn_sched_update_locked(c, l); /* leaves both heaps */
            push_ended(c, l);
        } else {
            tn_sched_update_locked(c, l);
            tn_client_wake_locked(c);
        }
        return;
    }
    /* A lease of a session that ended alone: reported by the session's
     * keepalive, or, with none, simply no longer in its list. */
    bool alone_ended = l->state == TN_LEASE_LOST ||
                       (l->state == TN_LEASE_RELEASED && l->release_done);
    if (!l->listed || !alone_ended)
        return;
    if (l->session->kept) {
        l->session->dirty = true;
        tn_client_wake_locked(c);
    } else {
        tn_client_session_unlist_locked(l);
    }
}
