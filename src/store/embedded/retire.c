/* SPDX-License-Identifier: MIT */
/* Retiring names (--retain-ms, docs/safety/retired-names.md).  A name
 * whose last grant ended more than retain_ms ago leaves the table and the
 * file; from then on the store answers for it with the table's
 * retired_floor, the token counter at its retirement, which is at least
 * every token the name ever had.  So its floor never goes down and no old
 * token is ever current again; a new grant gets a token above the floor.
 *
 * Only an end that is certain is retired: a release, or an expiry (plus
 * lock delay) that the server's own clock saw pass while it ran.  The
 * retirement is a change like any other (a row of the group commit that
 * deletes the name's row and raises the stored floor); answers about a
 * name that is not in the table wait until the last retirement is durable,
 * so no crash can bring back a name with a floor below one answered.
 *
 * A timer visits a slice of the table's buckets each tick, so that a full
 * pass takes about half the retention (at least a tick, at most a
 * minute): memory follows the names of the last retain_ms, not all names
 * ever seen. */
#include "store/embedded/retire.h"

#include "common/clock.h"
#include "common/log.h"
#include "store/embedded/events.h"
#include "store/embedded/history.h"

#define TICK_MS 100
#define PASS_MAX_MS 60000
#define MIN_BUCKETS_PER_TICK 64

/* When l's last grant stopped blocking the name, or -1 if it has not. */
static int64_t ended_at(const struct tn_lease_entry *l, int64_t now)
{
    if (!l->held)
        return l->expires_at_ms; /* released (no lock delay after that) */
    int64_t end = l->expires_at_ms + l->lock_delay_ms;
    return now >= l->expires_at_ms && now >= end ? end : -1;
}

struct sweep {
    struct embedded *e;
    int64_t now;
    size_t retired;
};

static void retire_one(struct tn_lease_entry *l, void *ctx)
{
    struct sweep *s = ctx;
    struct embedded *e = s->e;
    int64_t end = ended_at(l, s->now);
    if (end < 0 || s->now - end <= e->retain_ms || l->waiters != NULL ||
        l->seq > e->durable_seq)
        return;
    /* Its expiry is announced (and ended in the ledger) before it goes. */
    tn_embedded_note_expiry(e, l, s->now);
    if (l->held && !l->expiry_noted)
        return;
    tn_embedded_uncount(e, l);
    tn_embedded_ledger_forget(e, l);
    l->seq = ++e->table.seq;
    if (l->row_id != 0) {
        tn_commit_add_retire(e->commit, l, e->table.last_token);
        tn_lease_give_back_row(&e->table, l->row_id); /* after its delete */
    }
    e->retired_seq = l->seq;
    tn_lease_remove(&e->table, l);
    e->retired_total++;
    s->retired++;
}

static void on_retire_timer(void *arg);

static void arm(struct embedded *e, int64_t now)
{
    tn_loop_timer_arm(e->loop, &e->retire_timer, now + TICK_MS, on_retire_timer,
                      e);
}

static void on_retire_timer(void *arg)
{
    struct embedded *e = arg;
    int64_t now = tn_clock_now_ms();
    if (e->degraded_rc == 0) {
        /* Expiries due are handled first, so that each is announced (and
         * uncounted) before its name goes. */
        tn_embedded_expire_due(e, now);
        int64_t pass = e->retain_ms / 2;
        if (pass < TICK_MS)
            pass = TICK_MS;
        if (pass > PASS_MAX_MS)
            pass = PASS_MAX_MS;
        size_t buckets = (e->table.map.mask + 1) * TICK_MS / (size_t)pass + 1;
        if (buckets < MIN_BUCKETS_PER_TICK)
            buckets = MIN_BUCKETS_PER_TICK;
        struct sweep s = {.e = e, .now = now, .retired = 0};
        (void)tn_lease_scan(&e->table, &e->retire_cursor, buckets, retire_one,
                            &s);
    }
    arm(e, now);
}

void tn_embedded_retire_start(struct embedded *e)
{
    if (e->retain_ms > 0)
        arm(e, tn_clock_now_ms());
}

void tn_embedded_retire_stop(struct embedded *e)
{
    tn_loop_timer_disarm(e->loop, &e->retire_timer);
}
