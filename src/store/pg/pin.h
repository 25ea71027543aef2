/* SPDX-License-Identifier: MIT */
/* Changes of a name stay on one connection while one is in flight, so that
 * this instance's events of a name leave in the order of its changes
 * (pin.c, used by batch.c). */
#ifndef TN_STORE_PG_PIN_H
#define TN_STORE_PG_PIN_H

#include <stdbool.h>
#include <stdint.h>

#include "store/pg/pg.h"

/* Changes of a name: the statements whose events must leave in order. */
bool tn_pg_is_change(const struct tn_pg_op *op);
/* FNV-1a of a NUL-terminated name. */
uint32_t tn_pg_name_hash(const char *s);
/* op (a change) goes in flight on c, or leaves it (answered, or queued
 * again). */
void tn_pg_change_in(struct tn_pg_conn *c, struct tn_pg_op *op);
void tn_pg_change_out(struct tn_pg *p, struct tn_pg_op *op);
/* The connection a change must go to, or -1 for any. */
int tn_pg_pinned_to(const struct tn_pg *p, const struct tn_pg_op *op);

#endif
