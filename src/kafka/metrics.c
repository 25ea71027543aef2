/* SPDX-License-Identifier: MIT */
/* Materializer metrics as a Prometheus text file, replaced atomically
 * (write to PATH.tmp, rename), so a node exporter's textfile collector or a
 * test can read it at any moment. */
#include <stdio.h>

#include "common/buf.h"
#include "kafka/mat.h"

static int render(const struct tn_mat *m, struct tn_buf *b)
{
    int rc = tn_buf_printf(
        b,
        "# HELP tenure_materializer_admitted_total Records admitted.\n"
        "# TYPE tenure_materializer_admitted_total counter\n"
        "tenure_materializer_admitted_total %llu\n"
        "# HELP tenure_materializer_claims_total Claim records admitted.\n"
        "# TYPE tenure_materializer_claims_total counter\n"
        "tenure_materializer_claims_total %llu\n"
        "# HELP tenure_materializer_batches_total Sink transactions.\n"
        "# TYPE tenure_materializer_batches_total counter\n"
        "tenure_materializer_batches_total %llu\n"
        "# HELP tenure_materializer_rejected_total Records rejected.\n"
        "# TYPE tenure_materializer_rejected_total counter\n",
        (unsigned long long)m->admitted, (unsigned long long)m->claims,
        (unsigned long long)m->batches);
    for (int i = 1; i < TN_MAT_REASONS && rc == 0; i++)
        rc = tn_buf_printf(b,
                           "tenure_materializer_rejected_total{reason=\"%s\"}"
                           " %llu\n",
                           tn_fence_reason_name((enum tn_fence_reason)i),
                           (unsigned long long)m->rejected[i]);
    if (rc == 0)
        rc = tn_buf_printf(b, "# HELP tenure_materializer_lag Records in the"
                              " topic past the committed offset.\n"
                              "# TYPE tenure_materializer_lag gauge\n");
    for (int32_t p = 0; p < m->nparts && rc == 0; p++) {
        int64_t lo = 0;
        int64_t hi = 0;
        if (rd_kafka_get_watermark_offsets(m->consumer, m->cfg->topic, p, &lo,
                                           &hi) != RD_KAFKA_RESP_ERR_NO_ERROR ||
            hi < 0)
            continue;
        long long lag = hi > m->next[p] ? (long long)(hi - m->next[p]) : 0;
        rc = tn_buf_printf(b,
                           "tenure_materializer_lag{topic=\"%s\","
                           "partition=\"%d\"} %lld\n",
                           m->cfg->topic, (int)p, lag);
    }
    return rc;
}

int tn_mat_write_metrics(const struct tn_mat *m)
{
    if (m->cfg->metrics_file == NULL)
        return TN_OK;
    struct tn_buf b;
    tn_buf_init(&b, 1u << 20);
    char tmp[4096];
    int rc = render(m, &b);
    if (rc == 0 && snprintf(tmp, sizeof(tmp), "%s.tmp", m->cfg->metrics_file) >=
                       (int)sizeof(tmp))
        rc = TN_ETOOBIG;
    FILE *f = rc == 0 ? fopen(tmp, "w") : NULL;
    if (f == NULL) {
        tn_buf_release(&b);
        return TN_EIO;
    }
    size_t w = fwrite(b.data, 1, b.len, f);
    int closed = fclose(f);
    rc = (w == b.len && closed == 0) ? TN_OK : TN_EIO;
    if (rc == 0 && rename(tmp, m->cfg->metrics_file) != 0)
        rc = TN_EIO;
    tn_buf_release(&b);
    return rc;
}
