/* SPDX-License-Identifier: MIT */
/* Retiring names on PostgreSQL (retire.c, docs/safety/retired-names.md). */
#ifndef TN_STORE_PG_RETIRE_H
#define TN_STORE_PG_RETIRE_H

#include <stdint.h>

#include "common/buf.h"
#include "store/pg/pg.h"

/* Start the periodic retirement (retain_ms 0: none, p->retire NULL). */
int tn_pg_retire_start(struct tn_pg *p, int64_t retain_ms);
/* Stop it and close its connection. */
void tn_pg_retire_stop(struct tn_pg *p);
void tn_pg_retire_metrics(struct tn_pg *p, struct tn_buf *out);

#endif
