/* SPDX-License-Identifier: MIT */
/* The fence in SQLite (libtenure): a mark table and one conditional upsert
 * inside the caller's transaction.  The caller owns the connection. */
#ifndef TENURE_FENCE_SQLITE_H
#define TENURE_FENCE_SQLITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/fence.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sqlite3; /* sqlite3, declared here so as not to pull in sqlite3.h */

/* The backend for tn_fence_advance / tn_fence_get: conn is a sqlite3 *.
 * tn_fence_sqlite_prepared_ops: conn is a struct tn_fence_sqlite * (the
 * statements prepared once, below). */
extern TN_EXTERN const struct tn_fence_ops tn_fence_sqlite_ops;
extern TN_EXTERN const struct tn_fence_ops tn_fence_sqlite_prepared_ops;

/* The advance functions below have the contract of tn_fence_advance. */

/* SQLite: create tenure_fence(resource TEXT PRIMARY KEY, hwm INTEGER NOT
 * NULL) if missing.  0, TN_EIO, TN_EBUSY. */
TN_EXTERN int tn_fence_sqlite_migrate(struct sqlite3 *db, struct tn_errmsg *em);
TN_EXTERN int tn_fence_sqlite_advance(struct sqlite3 *db, const char *resource,
                                      size_t len, uint64_t token,
                                      uint64_t *hwm_before_out,
                                      struct tn_errmsg *em);
/* Current mark (0 when none).  0, TN_EIO. */
TN_EXTERN int tn_fence_sqlite_get(struct sqlite3 *db, const char *resource,
                                  size_t len, uint64_t *hwm_out,
                                  struct tn_errmsg *em);

/* SQLite, for callers that advance many marks on one connection: the
 * fence's statements prepared once (tn_fence_sqlite_migrate must have
 * run).  The handle borrows db and must be finalized before db is closed;
 * it belongs to the thread that uses db.  0, TN_ENOMEM, TN_EIO. */
struct tn_fence_sqlite;
TN_EXTERN int tn_fence_sqlite_prepare(struct sqlite3 *db,
                                      struct tn_fence_sqlite **out,
                                      struct tn_errmsg *em);
TN_EXTERN void tn_fence_sqlite_finalize(struct tn_fence_sqlite *f);
/* As tn_fence_sqlite_advance, on f's connection. */
TN_EXTERN int tn_fence_sqlite_advance_prepared(struct tn_fence_sqlite *f,
                                               const char *resource, size_t len,
                                               uint64_t token,
                                               uint64_t *hwm_before_out,
                                               struct tn_errmsg *em);

#ifdef __cplusplus
}
#endif
#endif
