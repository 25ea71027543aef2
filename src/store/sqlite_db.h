/* SPDX-License-Identifier: MIT */
/* The embedded store's file: SQLite in WAL mode with synchronous=FULL.
 * Schema creation and upgrade, loading the lease table, writing a batch in
 * one transaction.  A connection is used by one thread at a time. */
#ifndef TN_STORE_SQLITE_DB_H
#define TN_STORE_SQLITE_DB_H

#include <stdint.h>

#include <tenure/err.h>

#include "commit.h"
#include "lease/lease.h"

#define TN_SQLITE_SCHEMA_VERSION 3

struct tn_sqlite_db;

/* Open or create path; upgrade the schema.  0, TN_EIO, TN_EBUSY (another
 * process holds it) or TN_ENOMEM, with detail in em. */
int tn_sqlite_db_open(const char *path, struct tn_sqlite_db **out,
                      struct tn_errmsg *em);
void tn_sqlite_db_close(struct tn_sqlite_db *db);

/* Load every row into t (which must be empty).  Restart rule (DESIGN §4.5):
 * a held row that may have been live at the crash stays held for its full
 * TTL counted from now_ms.  Every write records alive_at_ms (server clock);
 * if the file was written in this same boot, a row whose stored expiry is
 * not after alive_at_ms expired while the server was still running, so it
 * certainly was not live at the crash.  With exact, stored expiries are
 * kept as they are (reload inside one process).  Sets each entry's
 * row_id and t->last_row_id.  Records the boot id. */
int tn_sqlite_db_load(struct tn_sqlite_db *db, struct tn_lease_table *t,
                      int64_t now_ms, bool exact, struct tn_errmsg *em);

/* Write b in one transaction, each row by its row id (never 0); set
 * b->sync_us to the time of the COMMIT (WAL frames written and synced).
 * 0, TN_ENOSPC (disk full), TN_EIO, TN_EBUSY or TN_ENOMEM. */
int tn_sqlite_db_write(struct tn_sqlite_db *db, struct tn_batch *b);

/* Record that the server is alive now (meta alive_at_ms), in its own
 * transaction.  Also proves that the file takes writes again. */
int tn_sqlite_db_probe(struct tn_sqlite_db *db);

#endif
