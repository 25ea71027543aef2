/* SPDX-License-Identifier: MIT */
/* The fence in PostgreSQL (libtenure-pg, which links libpq; pkg-config
 * tenure-pg): a mark table and a SQL function tenure_fence_advance.  The
 * caller owns the connection and its transaction. */
#ifndef TENURE_FENCE_PG_H
#define TENURE_FENCE_PG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/fence.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pg_conn; /* PGconn, declared here so as not to pull in libpq-fe.h */

/* The backend for tn_fence_advance / tn_fence_get: conn is a PGconn *. */
extern TN_EXTERN const struct tn_fence_ops tn_fence_pg_ops;

/* The advance function below has the contract of tn_fence_advance. */

/* PostgreSQL: create tenure_fence(resource text primary key, hwm bigint not
 * null) and the SQL function tenure_fence_advance(resource text, token
 * bigint) returns boolean (true = admitted), so that any SQL client can
 * fence too.  Safe to run concurrently.  0, TN_EIO, TN_ECONNECT. */
TN_EXTERN int tn_fence_pg_migrate(struct pg_conn *conn, struct tn_errmsg *em);
TN_EXTERN int tn_fence_pg_advance(struct pg_conn *conn, const char *resource,
                                  size_t len, uint64_t token,
                                  uint64_t *hwm_before_out,
                                  struct tn_errmsg *em);
TN_EXTERN int tn_fence_pg_get(struct pg_conn *conn, const char *resource,
                              size_t len, uint64_t *hwm_out,
                              struct tn_errmsg *em);

#ifdef __cplusplus
}
#endif
#endif
