/* SPDX-License-Identifier: MIT */
/* The PostgreSQL store's statements to run (op.c). */
#ifndef TN_STORE_PG_OP_H
#define TN_STORE_PG_OP_H

#include <stddef.h>

#include "store/pg/pg.h"

/* Build the op of an acquire / renew or release / other statement (name
 * is the name, list prefix, or "" for the sweep and prune); NULL when out
 * of memory. */
struct tn_pg_op *tn_pg_op_acquire(const struct tn_acquire_req *r,
                                  struct tn_store_result *out);
struct tn_pg_op *tn_pg_op_token(enum tn_pg_stmt stmt,
                                const struct tn_token_req *r,
                                struct tn_store_result *out);
struct tn_pg_op *tn_pg_op_new(enum tn_pg_stmt stmt, const char *name,
                              size_t name_len, struct tn_store_result *out);
/* secret as PostgreSQL's bytea text, "\\x" and hex digits. */
void tn_pg_op_bytea(char out[3 + 2 * TN_SECRET_BYTES], const uint8_t *secret);
/* The keyed hash of the in-memory tables (common/map.h) of a
 * NUL-terminated string (a name, a session id): pin.c's slots. */
uint32_t tn_pg_op_hash(const char *s);
/* Free op and its strings (not its result). */
void tn_pg_op_free(struct tn_pg_op *op);

#endif
