/* SPDX-License-Identifier: MIT */
/* The fence in SQLite: one conditional upsert inside the caller's
 * transaction decides and raises the mark, so the decision commits (or
 * rolls back) together with the write it guards.  Not a connection pool:
 * the caller owns the sqlite3 handle and its transaction. */
#include <sqlite3.h>

#include <tenure/fence_sqlite.h>

#include "common/alloc.h"

static int map_sqlite(sqlite3 *db, int src, struct tn_errmsg *em,
                      const char *what)
{
    tn_errmsg_set(em, "%s failed: %s", what, sqlite3_errmsg(db));
    if (src == SQLITE_BUSY || src == SQLITE_LOCKED)
        return TN_EBUSY;
    return TN_EIO;
}

int tn_fence_sqlite_migrate(sqlite3 *db, struct tn_errmsg *em)
{
    static const char sql[] = "CREATE TABLE IF NOT EXISTS tenure_fence ("
                              " resource TEXT PRIMARY KEY NOT NULL,"
                              " hwm INTEGER NOT NULL CHECK (hwm >= 0))";
    int src = sqlite3_exec(db, sql, NULL, NULL, NULL);
    if (src != SQLITE_OK)
        return map_sqlite(db, src, em, "create tenure_fence");
    return TN_OK;
}

static const char get_sql[] = "SELECT hwm FROM tenure_fence WHERE resource=?1";
static const char upsert_sql[] =
    "INSERT INTO tenure_fence(resource, hwm) VALUES (?1, ?2)"
    " ON CONFLICT(resource) DO UPDATE SET hwm = excluded.hwm"
    " WHERE tenure_fence.hwm <= excluded.hwm";

/* Run the read of get_sql on st (prepared on db), then reset st. */
static int read_hwm(sqlite3 *db, sqlite3_stmt *st, const char *resource,
                    size_t len, uint64_t *hwm_out, struct tn_errmsg *em)
{
    int rc = TN_OK;
    sqlite3_bind_text(st, 1, resource, (int)len, SQLITE_STATIC);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW)
        *hwm_out = (uint64_t)sqlite3_column_int64(st, 0);
    else if (src == SQLITE_DONE)
        *hwm_out = 0;
    else
        rc = map_sqlite(db, src, em, "fence read");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc;
}

/* Run the conditional upsert of upsert_sql on st, then reset st: 0 when
 * the mark was raised or equal, TN_ESTALE when it is above token. */
static int raise_hwm(sqlite3 *db, sqlite3_stmt *st, const char *resource,
                     size_t len, uint64_t token, struct tn_errmsg *em)
{
    int rc = TN_OK;
    sqlite3_bind_text(st, 1, resource, (int)len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)token);
    int src = sqlite3_step(st);
    if (src != SQLITE_DONE)
        rc = map_sqlite(db, src, em, "fence advance");
    else if (sqlite3_changes(db) == 0)
        rc = TN_ESTALE;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc;
}

/* The fence's statements on one connection: prepared when first used,
 * kept for the connection's life by tn_fence_sqlite_prepare (a sink that
 * advances many marks parses the SQL once), or for one call only. */
struct tn_fence_sqlite {
    sqlite3 *db;          /* borrowed */
    unsigned flags;       /* of sqlite3_prepare_v3 */
    sqlite3_stmt *get;    /* SELECT hwm */
    sqlite3_stmt *upsert; /* the conditional upsert */
};

static int stmt(struct tn_fence_sqlite *f, sqlite3_stmt **st, const char *sql,
                struct tn_errmsg *em)
{
    if (*st != NULL)
        return TN_OK;
    int src = sqlite3_prepare_v3(f->db, sql, -1, f->flags, st, NULL);
    return src == SQLITE_OK ? TN_OK
                            : map_sqlite(f->db, src, em, "prepare fence");
}

static void finalize_stmts(struct tn_fence_sqlite *f)
{
    sqlite3_finalize(f->get);
    sqlite3_finalize(f->upsert);
}

/* The backend of tn_fence_advance on prepared statements (conn is a
 * struct tn_fence_sqlite *).  SQLite has no row locks: the write
 * transaction holds the database. */
static int prepared_in_txn(void *conn, struct tn_errmsg *em)
{
    const struct tn_fence_sqlite *f = conn;
    if (sqlite3_get_autocommit(f->db)) {
        tn_errmsg_set(em, "fence check outside a transaction");
        return TN_EINVAL;
    }
    return TN_OK;
}

static int prepared_get(void *conn, const char *resource, size_t len, bool lock,
                        uint64_t *hwm_out, struct tn_errmsg *em)
{
    (void)lock;
    struct tn_fence_sqlite *f = conn;
    int rc = stmt(f, &f->get, get_sql, em);
    return rc < 0 ? rc : read_hwm(f->db, f->get, resource, len, hwm_out, em);
}

static int prepared_raise(void *conn, const char *resource, size_t len,
                          uint64_t token, struct tn_errmsg *em)
{
    struct tn_fence_sqlite *f = conn;
    int rc = stmt(f, &f->upsert, upsert_sql, em);
    return rc < 0 ? rc : raise_hwm(f->db, f->upsert, resource, len, token, em);
}

const struct tn_fence_ops tn_fence_sqlite_prepared_ops = {
    .name = "sqlite-prepared",
    .in_txn = prepared_in_txn,
    .get = prepared_get,
    .raise = prepared_raise,
};

int tn_fence_sqlite_prepare(sqlite3 *db, struct tn_fence_sqlite **out,
                            struct tn_errmsg *em)
{
    struct tn_fence_sqlite *f = tn_calloc(1, sizeof(*f));
    if (f == NULL)
        return TN_ENOMEM;
    f->db = db;
    f->flags = SQLITE_PREPARE_PERSISTENT;
    int rc = stmt(f, &f->get, get_sql, em);
    if (rc == TN_OK)
        rc = stmt(f, &f->upsert, upsert_sql, em);
    if (rc < 0) {
        tn_fence_sqlite_finalize(f);
        return rc;
    }
    *out = f;
    return TN_OK;
}

void tn_fence_sqlite_finalize(struct tn_fence_sqlite *f)
{
    if (f == NULL)
        return;
    finalize_stmts(f);
    tn_free(f);
}

/* The backend on a bare connection (conn is a sqlite3 *): each call
 * prepares what it runs and finalizes it before it returns. */
static int ops_in_txn(void *conn, struct tn_errmsg *em)
{
    struct tn_fence_sqlite f = {.db = conn};
    return prepared_in_txn(&f, em);
}

int tn_fence_sqlite_get(sqlite3 *db, const char *resource, size_t len,
                        uint64_t *hwm_out, struct tn_errmsg *em)
{
    struct tn_fence_sqlite f = {.db = db};
    int rc = prepared_get(&f, resource, len, false, hwm_out, em);
    finalize_stmts(&f);
    return rc;
}

static int ops_get(void *conn, const char *resource, size_t len, bool lock,
                   uint64_t *hwm_out, struct tn_errmsg *em)
{
    (void)lock;
    return tn_fence_sqlite_get(conn, resource, len, hwm_out, em);
}

static int ops_raise(void *conn, const char *resource, size_t len,
                     uint64_t token, struct tn_errmsg *em)
{
    struct tn_fence_sqlite f = {.db = conn};
    int rc = prepared_raise(&f, resource, len, token, em);
    finalize_stmts(&f);
    return rc;
}

const struct tn_fence_ops tn_fence_sqlite_ops = {
    .name = "sqlite",
    .in_txn = ops_in_txn,
    .get = ops_get,
    .raise = ops_raise,
};

int tn_fence_sqlite_advance(sqlite3 *db, const char *resource, size_t len,
                            uint64_t token, uint64_t *hwm_before_out,
                            struct tn_errmsg *em)
{
    return tn_fence_advance(&tn_fence_sqlite_ops, db, resource, len, token,
                            hwm_before_out, em);
}

int tn_fence_sqlite_advance_prepared(struct tn_fence_sqlite *f,
                                     const char *resource, size_t len,
                                     uint64_t token, uint64_t *hwm_before_out,
                                     struct tn_errmsg *em)
{
    return tn_fence_advance(&tn_fence_sqlite_prepared_ops, f, resource, len,
                            token, hwm_before_out, em);
}
