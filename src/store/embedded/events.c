/* SPDX-License-Identifier: MIT */
/* Events and expiries of the embedded store.  acquired/released/revoked
 * ride on the commit of the change (a waiter of the open batch), so no
 * event reveals state that is not yet durable.  Expiry is lazy in the
 * state machine; an expiry is recorded (written like any change, and
 * announced as "expired" once that commit is durable) by the first thing
 * that would reveal it, or by one timer at the min-heap of grant expiries,
 * whichever comes first (docs/SAFETY.md section 8). */
#include "store/embedded/events.h"

#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "common/clock.h"
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

/* About 1.2 KiB, past what malloc keeps per thread for quick reuse: the
 * ones announced wait on e->spare_events for the next change. */
struct pending_event {
    struct embedded *e;            /* owner */
    struct pending_event *next;    /* in e->spare_events */
    struct tn_event ev;            /* what to announce */
    struct tn_store_result result; /* rc set if the batch fails */
};

#define SPARE_EVENTS 256

/* The strings are NUL-terminated; the bytes after them are not read. */
static void fill(struct tn_event *ev, enum tn_event_type type,
                 const struct tn_lease_entry *l)
{
    ev->type = type;
    memcpy(ev->name, l->name, l->name_len);
    ev->name[l->name_len] = '\0';
    size_t n = 0;
    if (l->owner_id != NULL) {
        n = strlen(l->owner_id);
        if (n > TN_OWNER_MAX_BYTES)
            n = TN_OWNER_MAX_BYTES;
        memcpy(ev->owner_id, l->owner_id, n);
    }
    ev->owner_id[n] = '\0';
    ev->token = l->token;
    ev->floor = l->token;
}

static void publish(void *arg)
{
    struct pending_event *pe = arg;
    struct embedded *e = pe->e;
    if (pe->result.rc == TN_OK && e->on_event != NULL)
        e->on_event(e->event_ctx, &pe->ev);
    if (e->n_spare_events >= SPARE_EVENTS) {
        tn_free(pe);
        return;
    }
    pe->next = e->spare_events;
    e->spare_events = pe;
    e->n_spare_events++;
}

void tn_embedded_free_events(struct embedded *e)
{
    while (e->spare_events != NULL) {
        struct pending_event *pe = e->spare_events;
        e->spare_events = pe->next;
        tn_free(pe);
    }
    e->n_spare_events = 0;
}

void tn_embedded_emit(struct embedded *e, enum tn_event_type type,
                      const struct tn_lease_entry *l)
{
    if (e->on_event == NULL)
        return;
    struct pending_event *pe = e->spare_events;
    if (pe != NULL) {
        e->spare_events = pe->next;
        e->n_spare_events--;
        memset(&pe->result, 0, sizeof(pe->result));
    } else if ((pe = tn_calloc(1, sizeof(*pe))) == NULL) {
        return; /* events carry no safety; dropping one is allowed */
    }
    pe->e = e;
    fill(&pe->ev, type, l);
    tn_commit_add_waiter(e->commit, publish, pe, &pe->result);
}

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
    if (m->held && !m->counted) {
        m->counted = true;
        e->n_live++;
    }
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
