/* SPDX-License-Identifier: MIT */
/* The fence in PostgreSQL: a SQL function tenure_fence_advance(resource,
 * token) that decides and raises the mark in one conditional upsert (the
 * row lock orders concurrent callers), installed by a migration that may
 * run concurrently with itself.  The caller owns the connection and the
 * transaction the check commits in. */
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/fence_pg.h>

/* Serialises concurrent migrations (CREATE OR REPLACE FUNCTION races). */
#define FENCE_PG_LOCK_KEY "7300406"

static const char migrate_sql[] =
    "BEGIN;"
    "SET LOCAL client_min_messages = warning;"
    "SELECT pg_advisory_xact_lock(" FENCE_PG_LOCK_KEY ");"
    "CREATE TABLE IF NOT EXISTS tenure_fence ("
    " resource text PRIMARY KEY,"
    " hwm bigint NOT NULL CHECK (hwm >= 0));"
    "CREATE OR REPLACE FUNCTION tenure_fence_advance(resource text,"
    " token bigint) RETURNS boolean LANGUAGE sql VOLATILE AS $f$"
    " WITH up AS ("
    "  INSERT INTO tenure_fence AS f (resource, hwm) VALUES ($1, $2)"
    "  ON CONFLICT (resource) DO UPDATE SET hwm = EXCLUDED.hwm"
    "  WHERE f.hwm <= EXCLUDED.hwm RETURNING 1)"
    " SELECT EXISTS (SELECT 1 FROM up) $f$;"
    "COMMIT;";

static int pg_fail(PGconn *conn, PGresult *res, struct tn_errmsg *em,
                   const char *what)
{
    tn_errmsg_set(em, "%s failed: %s", what, PQerrorMessage(conn));
    PQclear(res);
    return PQstatus(conn) == CONNECTION_OK ? TN_EIO : TN_ECONNECT;
}

int tn_fence_pg_migrate(PGconn *conn, struct tn_errmsg *em)
{
    if (PQtransactionStatus(conn) != PQTRANS_IDLE) {
        tn_errmsg_set(em, "fence migration needs an idle connection");
        return TN_EINVAL;
    }
    PGresult *res = PQexec(conn, migrate_sql);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        int rc = pg_fail(conn, res, em, "fence migration");
        PGresult *rb = PQexec(conn, "ROLLBACK");
        PQclear(rb);
        return rc;
    }
    PQclear(res);
    return TN_OK;
}

static int in_txn(PGconn *conn, struct tn_errmsg *em)
{
    PGTransactionStatusType s = PQtransactionStatus(conn);
    if (s == PQTRANS_INTRANS)
        return TN_OK;
    if (s == PQTRANS_INERROR) {
        tn_errmsg_set(em, "fence check in an aborted transaction");
        return TN_EIO;
    }
    tn_errmsg_set(em, "fence check outside a transaction");
    return TN_EINVAL;
}

/* Run a one-row one-column query with (resource, [token]) parameters. */
static int query1(PGconn *conn, const char *sql, const char *const *params,
                  int nparams, PGresult **res_out, struct tn_errmsg *em)
{
    PGresult *res =
        PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(res) != PGRES_TUPLES_OK)
        return pg_fail(conn, res, em, "fence query");
    *res_out = res;
    return TN_OK;
}

static int read_mark(PGconn *conn, const char *sql, const char *name,
                     uint64_t *hwm_out, struct tn_errmsg *em)
{
    const char *params[1] = {name};
    PGresult *res = NULL;
    int rc = query1(conn, sql, params, 1, &res, em);
    if (rc < 0)
        return rc;
    *hwm_out = 0;
    if (PQntuples(res) == 1 &&
        tn_fence_parse_token(PQgetvalue(res, 0, 0),
                             (size_t)PQgetlength(res, 0, 0), hwm_out) < 0) {
        tn_errmsg_set(em, "fence mark of \"%s\" is not a token", name);
        rc = TN_EIO;
    }
    PQclear(res);
    return rc;
}

static int name_copy(const char *resource, size_t len, char *out)
{
    if (len == 0 || len > TN_FENCE_NAME_MAX || memchr(resource, 0, len))
        return TN_EINVAL;
    memcpy(out, resource, len);
    out[len] = '\0';
    return TN_OK;
}

/* The backend of tn_fence_advance: conn is a PGconn *. */
static int ops_in_txn(void *conn, struct tn_errmsg *em)
{
    return in_txn(conn, em);
}

static int ops_get(void *conn, const char *resource, size_t len, bool lock,
                   uint64_t *hwm_out, struct tn_errmsg *em)
{
    char name[TN_FENCE_NAME_MAX + 1];
    if (name_copy(resource, len, name) < 0)
        return TN_EINVAL;
    /* FOR UPDATE inside an advance: the mark read is the one the raise
     * after it sees. */
    return read_mark(conn,
                     lock ? "SELECT hwm FROM tenure_fence WHERE resource=$1"
                            " FOR UPDATE"
                          : "SELECT hwm FROM tenure_fence WHERE resource=$1",
                     name, hwm_out, em);
}

static int ops_raise(void *conn, const char *resource, size_t len,
                     uint64_t token, struct tn_errmsg *em)
{
    char name[TN_FENCE_NAME_MAX + 1];
    if (name_copy(resource, len, name) < 0)
        return TN_EINVAL;
    char digits[21];
    tn_fence_format_token(token, digits);
    const char *params[2] = {name, digits};
    PGresult *res = NULL;
    int rc = query1(conn, "SELECT tenure_fence_advance($1, $2::bigint)", params,
                    2, &res, em);
    if (rc < 0)
        return rc;
    if (PQntuples(res) != 1) {
        PQclear(res);
        return TN_EIO;
    }
    rc = strcmp(PQgetvalue(res, 0, 0), "t") == 0 ? TN_OK : TN_ESTALE;
    PQclear(res);
    return rc;
}

const struct tn_fence_ops tn_fence_pg_ops = {
    .name = "pg",
    .in_txn = ops_in_txn,
    .get = ops_get,
    .raise = ops_raise,
};

int tn_fence_pg_get(PGconn *conn, const char *resource, size_t len,
                    uint64_t *hwm_out, struct tn_errmsg *em)
{
    return tn_fence_get(&tn_fence_pg_ops, conn, resource, len, hwm_out, em);
}

int tn_fence_pg_advance(PGconn *conn, const char *resource, size_t len,
                        uint64_t token, uint64_t *hwm_before_out,
                        struct tn_errmsg *em)
{
    return tn_fence_advance(&tn_fence_pg_ops, conn, resource, len, token,
                            hwm_before_out, em);
}
