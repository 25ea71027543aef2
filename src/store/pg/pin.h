/* SPDX-License-Identifier: MIT */
/* Changes of a name or a session stay on one connection while one is in
 * flight, so that this instance's events of a name or a session leave in
 * the order of its changes (pin.c, used by batch.c). */
#ifndef TN_STORE_PG_PIN_H
#define TN_STORE_PG_PIN_H

#include <stdbool.h>
#include <stdint.h>

#include "store/pg/op.h"
#include "store/pg/pg.h"

/* Changes whose events leave after their commit (the trailer): they pin
 * their name and session while in flight. */
bool tn_pg_is_change(const struct tn_pg_op *op);
/* op (a change) goes in flight on c, or leaves it (answered, or queued
 * again). */
void tn_pg_change_in(struct tn_pg_conn *c, struct tn_pg_op *op);
void tn_pg_change_out(struct tn_pg *p, struct tn_pg_op *op);
/* The connection op must go to, -1 for any, or -2 for none yet (its
 * names are pinned to two connections). */
int tn_pg_pinned_to(const struct tn_pg *p, const struct tn_pg_op *op);

#endif
