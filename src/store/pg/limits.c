/* SPDX-License-Identifier: MIT */
/* --max-leases, --max-names and --max-sessions on PostgreSQL, for the
 * whole database (every instance sharing it): a grant or an open that
 * would pass one is refused with TN_ECAPACITY, as on the embedded store,
 * and changes nothing.  Counting the live leases in every acquire
 * statement would scan the table each time, so the instance keeps an
 * estimate instead: the database's count (COUNT_SQL, run every so often
 * by src/store/pg/events.c) plus the grants, releases, opens and ends it
 * made itself since that count was sent, plus the requests it has in
 * flight (each acquire counted as a grant, each claim as a grant of all
 * its names, each open as a session, until answered, so that one instance
 * alone never passes a limit).  Each acquire is sent with the limits the
 * estimate says are reached ($8, ACQUIRE_FITS in src/store/pg/
 * sql_acquire.c), each claim with the room left ($9, $10 of the claim in
 * sql_session.c), each open with whether --max-sessions is reached; the
 * statement then refuses only what would grant or open.  What other
 * instances granted or opened since the last count is not in the
 * estimate: with several instances the database can go over a limit by
 * what the others grant between two counts (docs/CONFIG.md).  An expiry
 * is not subtracted until the next count (the estimate errs high: it
 * refuses early, never late).  Loop thread only. */
#include "store/pg/limits.h"

#include <stdio.h>

#include <tenure/err.h>

#include "common/clock.h"

/* Counts at most every COUNT_MIN_MS, and spend at most a tenth of the
 * time counting (a count scans the table), but at least every
 * COUNT_MAX_MS. */
#define COUNT_MIN_MS 500
#define COUNT_MAX_MS 10000

/* $8 of the acquire: bit 1 leases full, bit 2 names full, bit 4 no
 * grant (wait.c). */
static const char *const flags_text[8] = {"0", "1", "2", "3",
                                          "4", "5", "6", "7"};

bool tn_pg_limits_init(struct tn_pg *p, const struct tn_store_config *cfg)
{
    struct tn_pg_limits *l = &p->limits;
    l->max_leases = (int64_t)cfg->max_leases;
    l->max_names = (int64_t)cfg->max_names;
    l->max_sessions = (int64_t)cfg->max_sessions;
    return l->max_leases > 0 || l->max_names > 0 || l->max_sessions > 0;
}

/* Room left under max (0 = no cap: -1) for a count of used plus what is
 * in flight; none before the first count. */
static int64_t room(const struct tn_pg_limits *l, int64_t max, int64_t used)
{
    if (max <= 0)
        return -1;
    if (l->n_counts == 0 || used >= max)
        return 0;
    return max - used;
}

/* What op counts while in flight: grants (acquire, claim), or one
 * session (open). */
static int64_t weight(const struct tn_pg_op *op)
{
    if (tn_pg_is_acquire(op->stmt))
        return op->no_grant ? 0 : 1;
    if (op->stmt == TN_PG_CLAIM)
        return (int64_t)op->n_names;
    return op->stmt == TN_PG_SESSION_OPEN ? 1 : 0;
}

static void reserve(struct tn_pg_limits *l, struct tn_pg_op *op, bool on)
{
    int64_t w = on ? weight(op) : -weight(op);
    if (op->stmt == TN_PG_SESSION_OPEN)
        l->sessions_inflight += w;
    else
        l->inflight += w;
    op->reserved = on;
}

void tn_pg_limits_stamp(struct tn_pg *p, struct tn_pg_op *op)
{
    struct tn_pg_limits *l = &p->limits;
    if (op->reserved)
        reserve(l, op, false);
    int64_t leases = room(l, l->max_leases, l->live + l->d_live + l->inflight);
    int64_t names = room(l, l->max_names, l->names + l->d_names + l->inflight);
    if (tn_pg_is_acquire(op->stmt)) {
        unsigned f = op->no_grant ? 4u : 0u;
        f |= leases == 0 ? 1u : 0u;
        f |= names == 0 ? 2u : 0u;
        op->values[7] = flags_text[f];
    } else if (op->stmt == TN_PG_CLAIM) {
        (void)snprintf(op->n3, sizeof(op->n3), "%lld", (long long)leases);
        (void)snprintf(op->n4, sizeof(op->n4), "%lld", (long long)names);
        op->values[8] = op->n3;
        op->values[9] = op->n4;
    } else if (op->stmt == TN_PG_SESSION_OPEN) {
        int64_t s = room(l, l->max_sessions,
                         l->sessions + l->d_sessions + l->sessions_inflight);
        op->values[5] = flags_text[s == 0 ? 1 : 0];
    } else {
        return;
    }
    reserve(l, op, true);
}

bool tn_pg_limits_counted_once(const struct tn_pg *p)
{
    const struct tn_pg_limits *l = &p->limits;
    return (l->max_leases <= 0 && l->max_names <= 0 && l->max_sessions <= 0) ||
           l->n_counts > 0;
}

void tn_pg_limits_unreserve(struct tn_pg *p, struct tn_pg_op *op)
{
    if (op->reserved)
        reserve(&p->limits, op, false);
}

void tn_pg_limits_answered(struct tn_pg *p, struct tn_pg_op *op)
{
    struct tn_pg_limits *l = &p->limits;
    tn_pg_limits_unreserve(p, op);
    if (op->out->rc != TN_OK)
        return;
    int64_t n = (int64_t)op->granted;
    switch (op->stmt) {
    case TN_PG_ACQUIRE:
    case TN_PG_ACQUIRE_SESSION:
        l->d_live += op->out->replayed ? 0 : 1;
        l->d_names += (int64_t)op->inserted;
        return;
    case TN_PG_CLAIM:
        l->d_live += n;
        l->d_names += (int64_t)op->inserted;
        return;
    case TN_PG_RELEASE:
        l->d_live--;
        return;
    case TN_PG_UNCLAIM:
        l->d_live -= n;
        return;
    case TN_PG_SESSION_OPEN:
        l->d_sessions++;
        p->sessions.n_opened++;
        return;
    case TN_PG_SESSION_END:
        l->d_sessions--;
        l->d_live -= n;
        if (op->values[2][0] == 't') /* forced */
            p->sessions.n_revoked++;
        else
            p->sessions.n_released++;
        return;
    default:
        return;
    }
}

void tn_pg_limits_count_sent(struct tn_pg *p)
{
    struct tn_pg_limits *l = &p->limits;
    l->counting = true;
    l->sent_ms = tn_clock_now_ms();
    l->d_live_sent = l->d_live;
    l->d_names_sent = l->d_names;
    l->d_sessions_sent = l->d_sessions;
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
        l->sessions = (int64_t)l->result.n_sessions;
        l->d_live -= l->d_live_sent;
        l->d_names -= l->d_names_sent;
        l->d_sessions -= l->d_sessions_sent;
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
    if (l->max_leases <= 0 && l->max_names <= 0 && l->max_sessions <= 0)
        return;
    (void)tn_buf_printf(
        out,
        "# TYPE tenure_leases_live gauge\ntenure_leases_live %lld\n"
        "# TYPE tenure_leases_known gauge\ntenure_leases_known %lld\n"
        "# TYPE tenure_sessions_live gauge\ntenure_sessions_live %lld\n"
        "# TYPE tenure_pg_limit_counts_total counter\n"
        "tenure_pg_limit_counts_total %llu\n"
        "# TYPE tenure_pg_limit_count_attempts_total counter\n"
        "tenure_pg_limit_count_attempts_total %llu\n",
        (long long)at_least_0(l->live + l->d_live),
        (long long)at_least_0(l->names + l->d_names),
        (long long)at_least_0(l->sessions + l->d_sessions),
        (unsigned long long)l->n_counts, (unsigned long long)l->n_attempts);
}
