/* SPDX-License-Identifier: MIT */
/* Prometheus histogram lines; see metrics.h. */
#include "metrics.h"

#include <stdio.h>

void tn_metrics_hist_observe(uint64_t *counts, size_t n, uint64_t base,
                             uint64_t v)
{
    size_t i = 0;
    while (i < n && v > (base << i))
        i++;
    counts[i]++;
}

/* name + suffix + {labels[,extra]} ("" when both are empty). */
static void series(struct tn_buf *out, const struct tn_metrics_hist *h,
                   const char *suffix, const char *extra)
{
    const char *labels = h->labels != NULL ? h->labels : "";
    const char *comma = labels[0] != '\0' && extra[0] != '\0' ? "," : "";
    if (labels[0] == '\0' && extra[0] == '\0')
        (void)tn_buf_printf(out, "%s%s ", h->name, suffix);
    else
        (void)tn_buf_printf(out, "%s%s{%s%s%s} ", h->name, suffix, labels,
                            comma, extra);
}

void tn_metrics_hist_write(struct tn_buf *out, const struct tn_metrics_hist *h)
{
    uint64_t cum = 0;
    char le[48];
    for (size_t i = 0; i < h->n; i++) {
        cum += h->counts[i];
        (void)snprintf(le, sizeof(le), "le=\"%g\"",
                       (double)(h->base << i) * h->scale);
        series(out, h, "_bucket", le);
        (void)tn_buf_printf(out, "%llu\n", (unsigned long long)cum);
    }
    cum += h->counts[h->n];
    series(out, h, "_bucket", "le=\"+Inf\"");
    (void)tn_buf_printf(out, "%llu\n", (unsigned long long)cum);
    if (h->sum != NULL) {
        series(out, h, "_sum", "");
        (void)tn_buf_printf(out, "%.6f\n", *h->sum);
    }
    series(out, h, "_count", "");
    (void)tn_buf_printf(out, "%llu\n", (unsigned long long)cum);
}
