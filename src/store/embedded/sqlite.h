/* SPDX-License-Identifier: MIT */
/* The embedded store's file: SQLite in WAL mode with synchronous=FULL.
 * Schema creation and upgrade, loading the lease table, applying journal
 * records in one transaction (disk.c).  A connection is used by one
 * thread at a time. */
#ifndef TN_STORE_SQLITE_DB_H
#define TN_STORE_SQLITE_DB_H

#include <stdbool.h>
#include <stdint.h>

#include <tenure/err.h>

#include "lease/lease.h"
#include "store/embedded/commit.h"

#define TN_SQLITE_SCHEMA_VERSION 6

struct tn_sqlite_db;

/* Open or create path; upgrade the schema.  0, TN_EIO, TN_EBUSY (another
 * process holds it) or TN_ENOMEM, with detail in em. */
int tn_sqlite_db_open(const char *path, struct tn_sqlite_db **out,
                      struct tn_errmsg *em);
void tn_sqlite_db_close(struct tn_sqlite_db *db);

/* Load every row into t (which must be empty), sessions first
 * (sqlite_load.c).  Restart rule (CONTRACT §4.5):
 * a held row that may have been live at the crash stays held for its full
 * TTL counted from now_ms.  Every write records alive_at_ms (server clock);
 * if the file was written in this same boot, a row whose stored expiry is
 * not after alive_at_ms expired while the server was still running, so it
 * certainly was not live at the crash.  With exact, stored expiries are
 * kept as they are (reload inside one process).  Sessions follow the
 * same rule, and a lease row under a session is on that session's list
 * (live or ended: the store settles the leases of an ended one); a
 * recorded end, a session's or a lease's, stays.  Sets each entry's
 * row_id, t->last_row_id and t->last_session_row.  Records the boot
 * id. */
struct tn_sqlite_load_hook;
int tn_sqlite_db_load(struct tn_sqlite_db *db, struct tn_lease_table *t,
                      int64_t now_ms, bool exact,
                      const struct tn_sqlite_load_hook *hook,
                      struct tn_errmsg *em);

/* Optional: told of each entry a row put in the table, while it is still
 * in the cache (a later row of the same name, which only a bug can write,
 * tells of the same entry again, in its new state). */
struct tn_sqlite_load_hook {
    void (*loaded)(void *ctx, struct tn_lease_entry *l);
    void *ctx;
};

/* Writing, used to apply the journal (disk.c): begin, put rows of any
 * number of batches (row i of b, by its row id, never 0, later rows
 * replacing earlier ones), then commit together with the meta values the
 * rows bring: the token counter, the server's last sign of life, the
 * newest journal generation now in the file and the retirement floor (a
 * retired row is deleted; 0 leaves the stored floor).  0, TN_ENOSPC (disk
 * full), TN_EIO, TN_EBUSY or TN_ENOMEM; a failed commit is rolled back. */
int tn_sqlite_db_begin(struct tn_sqlite_db *db);
int tn_sqlite_db_put_row(struct tn_sqlite_db *db, const struct tn_batch *b,
                         size_t i);
int tn_sqlite_db_commit(struct tn_sqlite_db *db, uint64_t last_token,
                        int64_t alive_at_ms, uint64_t journal_gen,
                        uint64_t retired_floor);
void tn_sqlite_db_rollback(struct tn_sqlite_db *db);
/* Outside a transaction: give the pages of deleted rows back to the file
 * system when there are enough of them.  Failure only leaves them. */
void tn_sqlite_db_shrink(struct tn_sqlite_db *db);

struct tn_sqlite_meta {
    uint64_t last_token;    /* highest token committed to the file */
    int64_t alive_at_ms;    /* last sign of life written to the file */
    uint64_t journal_gen;   /* newest journal generation in the file */
    uint64_t retired_floor; /* floor of every name retired from the file */
    bool same_boot;         /* the file was last loaded during this boot */
};
int tn_sqlite_db_meta(struct tn_sqlite_db *db, struct tn_sqlite_meta *m);

#endif
