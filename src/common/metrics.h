/* SPDX-License-Identifier: MIT */
/* The one Prometheus text writer of tenure's histograms: exponential
 * buckets (bound i is base << i, printed times scale), counted into an
 * array of n + 1 counters whose last one holds what is above every bound.
 * Writes the _bucket lines (cumulative, then +Inf), an optional _sum and
 * the _count; the # TYPE line and any other series are the caller's. */
#ifndef TN_COMMON_METRICS_H
#define TN_COMMON_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

struct tn_metrics_hist {
    const char *name;       /* metric family, e.g. tenure_commit_seconds */
    const char *labels;     /* e.g. `route="acquire"`, or NULL for none */
    const uint64_t *counts; /* n + 1 counters (see above) */
    size_t n;               /* bounded buckets */
    uint64_t base;          /* bound of bucket 0, in observed units */
    double scale;           /* printed bound = (base << i) * scale */
    const double *sum;      /* printed (%.6f) before _count, or NULL */
};

/* Count v in counts[0..n]: the first bucket whose bound base << i is at
 * least v, else counts[n]. */
void tn_metrics_hist_observe(uint64_t *counts, size_t n, uint64_t base,
                             uint64_t v);

/* Append h's lines to out (best effort: a full buffer cuts them short). */
void tn_metrics_hist_write(struct tn_buf *out, const struct tn_metrics_hist *h);

#endif
