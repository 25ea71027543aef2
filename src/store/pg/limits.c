/* SPDX-License-Identifier: MIT */
/* --max-leases and --max-names on PostgreSQL, for the whole database (every
 * instance sharing it): a grant that would pass one is refused with
 * TN_ECAPACITY, as on the embedded store, and changes nothing.  Counting
 * the live leases in every acquire statement would scan the table each
 * time, so the instance keeps an estimate instead: the database's count
 * (COUNT_SQL, run every so often by src/store/pg/events.c) plus the grants
 * and releases it made itself since that count was sent, plus the acquires
 * it has in flight (each counted as a grant until answered, so that one
 * instance alone never passes a limit).  Each acquire is sent with the
 * limits the estimate says are reached ($8, ACQUIRE_FITS in
 * src/store/pg/sql.c); the statement then refuses only what would grant.
 * What other instances granted since the last count is not in the
 * estimate: with several instances the database can go over a limit by
 * what the others grant between two counts (docs/CONFIG.md).  Loop thread
 * only. */
#include "store/pg/limits.h"

#include <tenure/err.h>

#include "common/clock.h"

/* Counts at most every COUNT_MIN_MS, and spend at most a tenth of the
 * time counting (a count scans the table), but at least every
 * COUNT_MAX_MS. */
#define COUNT_MIN_MS 500
#define COUNT_MAX_MS 10000

/* $8 of the acquire: bit 1 leases full, bit 2 names full. */
static const char *const flags_text[4] = {"0", "1", "2", "3"};

bool tn_pg_limits_init(struct tn_pg *p, const struct tn_store_config *cfg)
{
    struct tn_pg_limits *l = &p->limits;
    l->max_leases = (int64_t)cfg->max_leases;
    l->max_names = (int64_t)cfg->max_names;
    return l->max_leases > 0 || l->max_names > 0;
}

void tn_pg_limits_stamp(struct tn_pg *p, struct tn_pg_op *op)
{
    struct tn_pg_limits *l = &p->limits;
    if (op->reserved) {
        op->reserved = false;
        l->inflight--;
    }
    int64_t live = l->live + l->d_live + l->inflight;
    int64_t names = l->names + l->d_names + l->inflight;
    bool blind = l->n_counts == 0; /* nothing counted yet: full */
    unsigned f = 0;
    if (l->max_leases > 0 && (blind || live >= l->max_leases))
        f |= 1u;
    if (l->max_names > 0 && (blind || names >= l->max_names))
        f |= 2u;
    op->values[7] = flags_text[f];
    op->reserved = true;
    l->inflight++;
}

bool tn_pg_limits_counted_once(const struct tn_pg *p)
{
    const struct tn_pg_limits *l = &p->limits;
    return (l->max_leases <= 0 && l->max_names <= 0) || l->n_counts > 0;
}

void tn_pg_limits_unreserve(struct tn_pg *p, struct tn_pg_op *op)
{
    if (op->reserved) {
        op->reserved = false;
        p->limits.inflight--;
    }
}

void tn_pg_limits_answered(struct tn_pg *p, struct tn_pg_op *op)
{
    struct tn_pg_limits *l = &p->limits;
    tn_pg_limits_unreserve(p, op);
    if (op->out->rc != TN_OK)
        return;
    if (op->stmt == TN_PG_ACQUIRE && !op->out->replayed) {
        l->d_live++;
        l->d_names += op->inserted;
    } else if (op->stmt == TN_PG_RELEASE) {
        l->d_live--;
    }
}

void tn_pg_limits_count_sent(struct tn_pg *p)
{
    struct tn_pg_limits *l = &p->limits;
    l->counting = true;
    l->sent_ms = tn_clock_now_ms();
    l->d_live_sent = l->d_live;
    l->d_names_sent = l->d_names;
}

/* What this instance changed before the count was sent is in the count;
 * what it changed while the count ran may or may not be, and stays in the
 * estimate (an estimate too high by that refuses early, never late). */
int64_t tn_pg_limits_counted(struct tn_pg *p)
{
    struct tn_pg_limits *l = &p->limits;
    l->counting = false;
    int64_t took = tn_clock_now_ms() - l->sent_ms;
    if (l->result.rc == TN_OK) {
        l->live = (int64_t)l->result.n_items;
        l->names = (int64_t)l->result.floor;
        l->d_live -= l->d_live_sent;
        l->d_names -= l->d_names_sent;
        l->n_counts++;
    }
    int64_t next = 10 * took;
    if (next < COUNT_MIN_MS)
        next = COUNT_MIN_MS;
    return next > COUNT_MAX_MS ? COUNT_MAX_MS : next;
}

static int64_t at_least_0(int64_t v)
{
    return v > 0 ? v : 0;
}

void tn_pg_limits_metrics(struct tn_pg *p, struct tn_buf *out)
{
    const struct tn_pg_limits *l = &p->limits;
    if (l->max_leases <= 0 && l->max_names <= 0)
        return;
    (void)tn_buf_printf(
        out,
        "# TYPE tenure_leases_live gauge\ntenure_leases_live %lld\n"
        "# TYPE tenure_leases_known gauge\ntenure_leases_known %lld\n"
        "# TYPE tenure_pg_limit_counts_total counter\n"
        "tenure_pg_limit_counts_total %llu\n"
        "# TYPE tenure_pg_limit_count_attempts_total counter\n"
        "tenure_pg_limit_count_attempts_total %llu\n",
        (long long)at_least_0(l->live + l->d_live),
        (long long)at_least_0(l->names + l->d_names),
        (unsigned long long)l->n_counts, (unsigned long long)l->n_attempts);
}
