/* SPDX-License-Identifier: MIT */
/* Ops batched into pipelined transactions over the connections (batch.c). */
#ifndef TN_STORE_PG_BATCH_H
#define TN_STORE_PG_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "store/pg/pg.h"

/* Queue op (NULL: answer TN_ENOMEM) for the next batch; done(arg) runs
 * exactly once, possibly before this returns (store not ready). */
void tn_pg_submit(struct tn_pg *p, struct tn_pg_op *op,
                  struct tn_store_result *out, tn_store_done_fn done,
                  void *arg);
/* Takes requests: a statement connection is ready, and the LISTEN
 * connection has been ready once since the start. */
bool tn_pg_is_up(const struct tn_pg *p);

/* The conn_* hooks of struct tn_pg. */
/* A connection is ready: send what is pending. */
void tn_pg_on_ready(struct tn_pg_conn *c);
/* Socket events while ready. */
void tn_pg_on_io(struct tn_pg_conn *c, uint32_t events);
/* Answer every op in flight on c with TN_EUNAVAIL; and the pending ones
 * too when no connection is ready any more. */
void tn_pg_fail_conn(struct tn_pg_conn *c);
/* Answer every op in flight or pending TN_EUNAVAIL (closing). */
void tn_pg_fail_all(struct tn_pg *p);

#endif
