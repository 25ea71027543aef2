/* SPDX-License-Identifier: MIT */
/* Which pending ops the next batch of a connection takes, and which
 * connections take one (pick.c). */
#ifndef TN_STORE_PG_PICK_H
#define TN_STORE_PG_PICK_H

#include <stdbool.h>
#include <stddef.h>

#include "store/pg/pg.h"

/* Take up to n of the pending ops that c carries, oldest first, into a
 * new in-flight batch of c.  NULL when out of memory, or with *none set
 * when c carries none of them. */
struct tn_pg_batch *tn_pg_take_batch(struct tn_pg_conn *c, size_t n,
                                     bool *none);

/* May c take a batch at this level: ready, fewer than `level` batches in
 * flight, not behind a sweep. */
bool tn_pg_takes(const struct tn_pg *p, const struct tn_pg_conn *c,
                 unsigned level);

/* Free batch slots: connections that take a batch at this level. */
size_t tn_pg_free_slots(const struct tn_pg *p, unsigned level);

/* Pending ops by who may carry them: pinned[i] only connection i, *any
 * every connection (pinned_to). */
void tn_pg_count_pending(const struct tn_pg *p, size_t pinned[TN_PG_CONNS],
                         size_t *any);

#endif
