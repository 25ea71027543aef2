/* SPDX-License-Identifier: MIT */
/* SQLite file of the embedded store.  SQLITE_* codes stop here. */
#include "store/embedded/sqlite.h"

#include <string.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "common/clock.h"
#include "common/log.h"
#include "lease/session.h"
#include "store/embedded/sqlite_int.h"

static const char *const schema_v1 =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value) "
    "WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS leases("
    " name TEXT PRIMARY KEY, owner_id TEXT NOT NULL, request_id TEXT,"
    " token INTEGER NOT NULL, secret BLOB NOT NULL, ttl_ms INTEGER NOT NULL,"
    " held INTEGER NOT NULL, expires_at_ms INTEGER NOT NULL,"
    " lock_delay_ms INTEGER NOT NULL) WITHOUT ROWID;";

int tn_sqlite_map_rc(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_DONE:
    case SQLITE_ROW:
        return TN_OK;
    case SQLITE_FULL:
        return TN_ENOSPC;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return TN_EBUSY;
    case SQLITE_NOMEM:
        return TN_ENOMEM;
    default:
        return TN_EIO;
    }
}

int tn_sqlite_exec(struct tn_sqlite_db *d, const char *sql,
                   struct tn_errmsg *em)
{
    int rc = sqlite3_exec(d->db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        tn_errmsg_set(em, "sqlite \"%s\": %s", sql, sqlite3_errmsg(d->db));
    return tn_sqlite_map_rc(rc);
}

static int prepare(struct tn_sqlite_db *d, struct tn_errmsg *em)
{
    static const char upsert[] =
        "INSERT OR REPLACE INTO leases(name, owner_id, request_id, token,"
        " secret, ttl_ms, held, expires_at_ms, lock_delay_ms, principal, id,"
        " session) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";
    static const char meta[] =
        "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)";
    static const char del[] = "DELETE FROM leases WHERE id = ?1";
    static const char s_upsert[] =
        "INSERT OR REPLACE INTO sessions(id, session_id, owner_id, principal,"
        " secret, ttl_ms, expires_at_ms, ended, ended_at_ms)"
        " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
    static const char s_del[] = "DELETE FROM sessions WHERE id = ?1";
    /* BEGIN and COMMIT too: each batch would otherwise parse them again. */
    if (sqlite3_prepare_v2(d->db, upsert, -1, &d->upsert, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(d->db, meta, -1, &d->meta, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(d->db, del, -1, &d->del, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(d->db, s_upsert, -1, &d->s_upsert, NULL) !=
            SQLITE_OK ||
        sqlite3_prepare_v2(d->db, s_del, -1, &d->s_del, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(d->db, "BEGIN IMMEDIATE", -1, &d->begin, NULL) !=
            SQLITE_OK ||
        sqlite3_prepare_v2(d->db, "COMMIT", -1, &d->commit, NULL) !=
            SQLITE_OK) {
        tn_errmsg_set(em, "sqlite prepare: %s", sqlite3_errmsg(d->db));
        return TN_EIO;
    }
    return TN_OK;
}

static int set_meta_int(struct tn_sqlite_db *d, const char *key, int64_t v)
{
    sqlite3_reset(d->meta);
    sqlite3_bind_text(d->meta, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(d->meta, 2, v);
    return tn_sqlite_map_rc(sqlite3_step(d->meta));
}

int tn_sqlite_set_meta_text(struct tn_sqlite_db *d, const char *key,
                            const char *v)
{
    sqlite3_reset(d->meta);
    sqlite3_bind_text(d->meta, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(d->meta, 2, v, -1, SQLITE_STATIC);
    return tn_sqlite_map_rc(sqlite3_step(d->meta));
}

static int64_t schema_version(struct tn_sqlite_db *d)
{
    sqlite3_stmt *st = NULL;
    int64_t v = 0;
    if (sqlite3_prepare_v2(d->db,
                           "SELECT value FROM meta WHERE key='schema_version'",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Version 3 keys each lease row by an integer id that the server gives a
 * name once, instead of by the name: a new name's row is appended at the
 * end of the table's B-tree, where a batch of new names fills one or two
 * pages, instead of landing on one random leaf page per name (every
 * touched page is written to the WAL and synced).  There is no index on
 * name: names are unique in memory, and a load that meets two rows of one
 * name keeps the one with the higher token. */
static const char *const upgrade_v3 =
    "CREATE TABLE leases_v3("
    " id INTEGER PRIMARY KEY, name TEXT NOT NULL, owner_id TEXT NOT NULL,"
    " request_id TEXT, token INTEGER NOT NULL, secret BLOB NOT NULL,"
    " ttl_ms INTEGER NOT NULL, held INTEGER NOT NULL,"
    " expires_at_ms INTEGER NOT NULL, lock_delay_ms INTEGER NOT NULL,"
    " principal TEXT);"
    "INSERT INTO leases_v3(name, owner_id, request_id, token, secret, ttl_ms,"
    " held, expires_at_ms, lock_delay_ms, principal)"
    " SELECT name, owner_id, request_id, token, secret, ttl_ms, held,"
    " expires_at_ms, lock_delay_ms, principal FROM leases ORDER BY token;"
    "DROP TABLE leases;"
    "ALTER TABLE leases_v3 RENAME TO leases;";

/* Version 6 adds sessions (docs/SESSIONS.md): a table of their own, with
 * ids of their own, and the session of each lease row (NULL for none).
 * A lease row under a session is held and has no expiry of its own; the
 * session's row decides: under an ended (or missing) session the lease
 * ended at the session's end, which that one row records for all of
 * them.  An older server would read such a lease as held for its row's
 * TTL and bring it back. */
static const char *const upgrade_v6 =
    "CREATE TABLE sessions("
    " id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, owner_id TEXT NOT NULL,"
    " principal TEXT, secret BLOB NOT NULL, ttl_ms INTEGER NOT NULL,"
    " expires_at_ms INTEGER NOT NULL, ended INTEGER NOT NULL,"
    " ended_at_ms INTEGER NOT NULL);"
    "ALTER TABLE leases ADD COLUMN session INTEGER;";

/* Versioned upgrades, inside the caller's transaction, from the version
 * recorded in meta (0 for a new file, which schema_v1 just created).
 * Version 2 binds a grant to the principal that acquired it; version 3
 * keys rows by id; version 4 changes no table but means that the journal
 * next to the file may hold changes the file lacks (meta journal_gen), so
 * that a server older than the journal refuses the file instead of losing
 * them.  Version 5 changes no table either: the journal may hold
 * retirements (rows to delete) and meta holds retired_floor, the floor of
 * every name no longer in the file; an older server would bring retired
 * names back with a floor below it.  A file from a newer server is
 * refused: this one would write rows the newer one does not expect. */
static int upgrade(struct tn_sqlite_db *d, struct tn_errmsg *em)
{
    int64_t v = schema_version(d);
    int rc = TN_OK;
    if (v > TN_SQLITE_SCHEMA_VERSION) {
        tn_errmsg_set(em,
                      "the data file has schema version %lld; this tenured "
                      "knows versions up to %d: run a newer tenured",
                      (long long)v, TN_SQLITE_SCHEMA_VERSION);
        return TN_EINVAL;
    }
    if (v < 2)
        rc = tn_sqlite_exec(d, "ALTER TABLE leases ADD COLUMN principal TEXT",
                            em);
    if (rc == 0 && v < 3)
        rc = tn_sqlite_exec(d, upgrade_v3, em);
    if (rc == 0 && v < 6)
        rc = tn_sqlite_exec(d, upgrade_v6, em);
    return rc;
}

int64_t tn_sqlite_pragma_int(struct tn_sqlite_db *d, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Retired names delete rows; the file gives the pages back only with
 * auto_vacuum (INCREMENTAL = 2, tn_sqlite_db_shrink).  A new file gets it
 * before its first table; an older file is rebuilt once by VACUUM. */
static int set_auto_vacuum(struct tn_sqlite_db *d, struct tn_errmsg *em)
{
    int rc = tn_sqlite_exec(d, "PRAGMA auto_vacuum=INCREMENTAL", em);
    if (rc == 0 && tn_sqlite_pragma_int(d, "PRAGMA auto_vacuum") != 2) {
        tn_log(TN_LOG_INFO, "store",
               "\"rebuilding the data file once so "
               "that it can shrink\"");
        rc = tn_sqlite_exec(d, "VACUUM", em);
    }
    return rc;
}

static int configure(struct tn_sqlite_db *d, struct tn_errmsg *em)
{
    sqlite3_busy_timeout(d->db, 0);
    int rc = tn_sqlite_exec(d, "PRAGMA locking_mode=EXCLUSIVE", em);
    if (rc == 0)
        rc = tn_sqlite_exec(d, "PRAGMA journal_size_limit=16777216", em);
    if (rc == 0)
        rc = set_auto_vacuum(d, em);
    if (rc == 0)
        rc = tn_sqlite_exec(d, "PRAGMA journal_mode=WAL", em);
    if (rc == 0)
        rc = tn_sqlite_exec(d, "PRAGMA synchronous=FULL", em);
    if (rc == 0)
        rc = tn_sqlite_exec(d, "BEGIN IMMEDIATE", em);
    if (rc == 0)
        rc = tn_sqlite_exec(d, schema_v1, em);
    if (rc == 0)
        rc = upgrade(d, em);
    if (rc == 0)
        rc = prepare(d, em);
    if (rc == 0)
        rc = set_meta_int(d, "schema_version", TN_SQLITE_SCHEMA_VERSION);
    if (rc == 0)
        rc = tn_sqlite_exec(d, "COMMIT", em);
    return rc;
}

int tn_sqlite_db_open(const char *path, struct tn_sqlite_db **out,
                      struct tn_errmsg *em)
{
    *out = NULL;
    struct tn_sqlite_db *d = tn_calloc(1, sizeof(*d));
    if (d == NULL)
        return TN_ENOMEM;
    int rc = tn_clock_boot_id(d->boot_id);
    if (rc < 0)
        memcpy(d->boot_id, "unknown", 8);
    int flags =
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &d->db, flags, NULL) != SQLITE_OK) {
        tn_errmsg_set(em, "cannot open \"%s\": %s", path,
                      d->db ? sqlite3_errmsg(d->db) : "out of memory");
        tn_sqlite_db_close(d);
        return TN_EIO;
    }
    rc = configure(d, em);
    if (rc < 0) {
        tn_sqlite_db_close(d);
        return rc;
    }
    *out = d;
    return TN_OK;
}

void tn_sqlite_db_close(struct tn_sqlite_db *d)
{
    if (d == NULL)
        return;
    sqlite3_finalize(d->upsert);
    sqlite3_finalize(d->del);
    sqlite3_finalize(d->s_upsert);
    sqlite3_finalize(d->s_del);
    sqlite3_finalize(d->meta);
    sqlite3_finalize(d->begin);
    sqlite3_finalize(d->commit);
    sqlite3_close(d->db);
    tn_free(d);
}

int tn_sqlite_db_meta(struct tn_sqlite_db *d, struct tn_sqlite_meta *m)
{
    sqlite3_stmt *st = NULL;
    memset(m, 0, sizeof(*m));
    if (sqlite3_prepare_v2(d->db, "SELECT key, value FROM meta", -1, &st,
                           NULL) != SQLITE_OK)
        return TN_EIO;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0);
        if (strcmp(k, "last_token") == 0)
            m->last_token = (uint64_t)sqlite3_column_int64(st, 1);
        if (strcmp(k, "alive_at_ms") == 0)
            m->alive_at_ms = sqlite3_column_int64(st, 1);
        if (strcmp(k, "journal_gen") == 0)
            m->journal_gen = (uint64_t)sqlite3_column_int64(st, 1);
        if (strcmp(k, "retired_floor") == 0)
            m->retired_floor = (uint64_t)sqlite3_column_int64(st, 1);
        if (strcmp(k, "boot_id") == 0) {
            const char *v = (const char *)sqlite3_column_text(st, 1);
            m->same_boot = v != NULL && strcmp(v, d->boot_id) == 0;
        }
    }
    sqlite3_finalize(st);
    return tn_sqlite_map_rc(rc);
}

static int write_row(struct tn_sqlite_db *d, const struct tn_batch *b,
                     const struct tn_row *r)
{
    sqlite3_stmt *st = d->upsert;
    const char *rid = tn_batch_str(b, r->rid_off);
    sqlite3_reset(st);
    TN_ASSERT(r->row_id != 0);
    sqlite3_bind_text(st, 1, tn_batch_str(b, r->name_off), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, tn_batch_str(b, r->owner_off), -1, SQLITE_STATIC);
    if (rid != NULL)
        sqlite3_bind_text(st, 3, rid, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 3);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)r->token);
    sqlite3_bind_blob(st, 5, r->secret, TN_SECRET_BYTES, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, r->ttl_ms);
    /* 0 released, 1 held, 2 held and its expiry recorded (an older server
     * reads 2 as held). */
    sqlite3_bind_int(st, 7, r->held ? (r->ended ? 2 : 1) : 0);
    sqlite3_bind_int64(st, 8, r->expires_at_ms);
    sqlite3_bind_int64(st, 9, r->lock_delay_ms);
    const char *who = tn_batch_str(b, r->principal_off);
    if (who != NULL)
        sqlite3_bind_text(st, 10, who, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 10);
    sqlite3_bind_int64(st, 11, r->row_id);
    if (r->session_row != 0)
        sqlite3_bind_int64(st, 12, r->session_row);
    else
        sqlite3_bind_null(st, 12);
    return tn_sqlite_map_rc(sqlite3_step(st));
}

/* Run a prepared statement that returns no rows. */
static int step_once(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return tn_sqlite_map_rc(rc);
}

int tn_sqlite_db_begin(struct tn_sqlite_db *d)
{
    return step_once(d->begin);
}

/* A session's row: its id, owner, credential, TTL, expiry and end. */
static int write_session(struct tn_sqlite_db *d, const struct tn_batch *b,
                         const struct tn_row *r)
{
    sqlite3_stmt *st = d->s_upsert;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, r->row_id);
    sqlite3_bind_text(st, 2, tn_batch_str(b, r->name_off), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, tn_batch_str(b, r->owner_off), -1, SQLITE_STATIC);
    const char *who = tn_batch_str(b, r->principal_off);
    if (who != NULL)
        sqlite3_bind_text(st, 4, who, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 4);
    sqlite3_bind_blob(st, 5, r->secret, TN_SECRET_BYTES, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, r->ttl_ms);
    sqlite3_bind_int64(st, 7, r->expires_at_ms);
    sqlite3_bind_int(st, 8, r->end);
    sqlite3_bind_int64(st, 9, r->ended_at_ms);
    return tn_sqlite_map_rc(sqlite3_step(st));
}

int tn_sqlite_db_put_row(struct tn_sqlite_db *d, const struct tn_batch *b,
                         size_t i)
{
    const struct tn_row *r = &b->rows[i];
    if (r->session && !r->retired)
        return write_session(d, b, r);
    if (r->session) {
        sqlite3_reset(d->s_del);
        sqlite3_bind_int64(d->s_del, 1, r->row_id);
        return tn_sqlite_map_rc(sqlite3_step(d->s_del));
    }
    if (!r->retired)
        return write_row(d, b, r);
    sqlite3_reset(d->del);
    sqlite3_bind_int64(d->del, 1, r->row_id);
    return tn_sqlite_map_rc(sqlite3_step(d->del));
}

int tn_sqlite_db_commit(struct tn_sqlite_db *d, uint64_t last_token,
                        int64_t alive_at_ms, uint64_t journal_gen,
                        uint64_t retired_floor)
{
    int rc = set_meta_int(d, "last_token", (int64_t)last_token);
    if (rc == 0 && retired_floor > 0)
        rc = set_meta_int(d, "retired_floor", (int64_t)retired_floor);
    if (rc == 0)
        rc = set_meta_int(d, "alive_at_ms", alive_at_ms);
    if (rc == 0)
        rc = set_meta_int(d, "journal_gen", (int64_t)journal_gen);
    if (rc == 0)
        rc = step_once(d->commit);
    if (rc < 0) {
        tn_log(TN_LOG_ERROR, "store", "\"commit failed\" err=\"%s\"",
               sqlite3_errmsg(d->db));
        tn_sqlite_db_rollback(d);
    }
    return rc;
}

/* Free pages worth giving back (4 KiB each): below this, keep them for
 * the next rows. */
#define SHRINK_PAGES 64

void tn_sqlite_db_shrink(struct tn_sqlite_db *d)
{
    if (tn_sqlite_pragma_int(d, "PRAGMA freelist_count") < SHRINK_PAGES)
        return;
    if (sqlite3_exec(d->db, "PRAGMA incremental_vacuum", NULL, NULL, NULL) !=
            SQLITE_OK ||
        sqlite3_exec(d->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL,
                     NULL) != SQLITE_OK)
        tn_log(TN_LOG_WARN, "store",
               "\"could not shrink the data file\" "
               "detail=\"%s\"",
               sqlite3_errmsg(d->db));
}

void tn_sqlite_db_rollback(struct tn_sqlite_db *d)
{
    if (!sqlite3_get_autocommit(d->db))
        (void)sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
}
