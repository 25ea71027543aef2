/* SPDX-License-Identifier: MIT */
/* The embedded store's lines of /metrics: the table, the commits and their
 * histograms, the waiters, retirement and the disk. */
#include "store/embedded/metrics.h"

#include "common/clock.h"
#include "common/metrics.h"
#include "store/embedded/disk.h"
#include "store/embedded/embedded.h"

static void print_hist(struct tn_buf *out, const char *name, const uint64_t *h,
                       size_t n, uint64_t base, double scale)
{
    struct tn_metrics_hist m = {
        .name = name, .counts = h, .n = n, .base = base, .scale = scale};
    tn_metrics_hist_write(out, &m);
}

/* Sessions: live now, opened and ended by reason, and the leases that
 * ended with their session (settled) or still wait for it. */
static void sessions_metrics(const struct embedded *e, struct tn_buf *out)
{
    size_t settling = 0;
    for (const struct tn_session *s = e->settle_head; s != NULL;
         s = s->settle_next)
        settling += s->n_leases;
    (void)tn_buf_printf(
        out,
        "# TYPE tenure_sessions_live gauge\ntenure_sessions_live %zu\n"
        "# TYPE tenure_sessions_opened_total counter\n"
        "tenure_sessions_opened_total %llu\n"
        "# TYPE tenure_sessions_ended_total counter\n"
        "tenure_sessions_ended_total{reason=\"expired\"} %llu\n"
        "tenure_sessions_ended_total{reason=\"released\"} %llu\n"
        "tenure_sessions_ended_total{reason=\"revoked\"} %llu\n"
        "# TYPE tenure_session_leases_settled_total counter\n"
        "tenure_session_leases_settled_total %llu\n"
        "# TYPE tenure_session_leases_settling gauge\n"
        "tenure_session_leases_settling %zu\n",
        e->n_sessions_live, (unsigned long long)e->sessions_opened,
        (unsigned long long)e->sessions_ended[TN_SESSION_EXPIRED],
        (unsigned long long)e->sessions_ended[TN_SESSION_RELEASED],
        (unsigned long long)e->sessions_ended[TN_SESSION_REVOKED],
        (unsigned long long)e->leases_settled, settling);
}

void tn_embedded_metrics(struct tn_store *s, struct tn_buf *out)
{
    struct embedded *e = (struct embedded *)s;
    int64_t now = tn_clock_now_ms();
    (void)tn_buf_printf(
        out,
        "# TYPE tenure_leases_live gauge\ntenure_leases_live %zu\n"
        "# TYPE tenure_leases_known gauge\ntenure_leases_known %zu\n"
        "# TYPE tenure_last_token gauge\ntenure_last_token %llu\n"
        "# TYPE tenure_store_ready gauge\ntenure_store_ready %d\n"
        "# TYPE tenure_commits_total counter\ntenure_commits_total %llu\n"
        "# TYPE tenure_commit_rows_total counter\n"
        "tenure_commit_rows_total %llu\n"
        "# TYPE tenure_commit_failures_total counter\n"
        "tenure_commit_failures_total %llu\n",
        tn_lease_count_live(&e->table, now), tn_lease_table_count(&e->table),
        (unsigned long long)e->table.last_token, e->degraded_rc == 0,
        (unsigned long long)e->commits, (unsigned long long)e->rows,
        (unsigned long long)e->failures);
    (void)tn_buf_printf(
        out,
        "# TYPE tenure_expiries_total counter\ntenure_expiries_total %llu\n",
        (unsigned long long)e->expiries_total);
    tn_waitq_metrics(&e->waits, out);
    sessions_metrics(e, out);
    (void)tn_buf_printf(
        out,
        "# TYPE tenure_names_retired_total counter\n"
        "tenure_names_retired_total %llu\n"
        "# TYPE tenure_retired_floor gauge\ntenure_retired_floor %llu\n",
        (unsigned long long)e->retired_total,
        (unsigned long long)tn_lease_floor_of_absent(&e->table));
    (void)tn_buf_printf(out, "# TYPE tenure_commit_batch_rows histogram\n");
    print_hist(out, "tenure_commit_batch_rows", e->batch_hist, N_BATCH_BUCKETS,
               1, 1.0);
    (void)tn_buf_printf(out, "tenure_commit_batch_rows_sum %llu\n",
                        (unsigned long long)e->rows);
    (void)tn_buf_printf(out, "# TYPE tenure_commit_seconds histogram\n");
    print_hist(out, "tenure_commit_seconds", e->lat_hist, N_LAT_BUCKETS, 64,
               1e-6);
    (void)tn_buf_printf(out, "tenure_commit_seconds_sum %.6f\n",
                        e->write_seconds);
    (void)tn_buf_printf(out, "# TYPE tenure_store_sync_seconds histogram\n");
    print_hist(out, "tenure_store_sync_seconds", e->sync_hist, N_LAT_BUCKETS,
               64, 1e-6);
    (void)tn_buf_printf(out, "tenure_store_sync_seconds_sum %.6f\n",
                        e->sync_seconds);
    tn_disk_metrics(e->disk, out);
}
