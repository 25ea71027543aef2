/* SPDX-License-Identifier: MIT */
/* The embedded store's metrics (its tn_store_ops.metrics). */
#ifndef TN_STORE_EMBEDDED_METRICS_H
#define TN_STORE_EMBEDDED_METRICS_H

#include "common/buf.h"
#include "store/backend.h"

/* Append the Prometheus text lines of s (an embedded store) to out. */
void tn_embedded_metrics(struct tn_store *s, struct tn_buf *out);

#endif
