/* SPDX-License-Identifier: MIT */
/* PostgreSQL sink: the same tables as the SQLite sink, one transaction per
 * batch, the fence decision by the SQL function tenure_fence_advance inside
 * it.  Row locks order a second materializer behind the first, and its
 * offset compare-and-set then fails. */
#include <libpq-fe.h>
#include <stdio.h>
#include <string.h>

#include <tenure/fence_pg.h>

#include "common/alloc.h"
#include "kafka/sink.h"

struct pg_sink {
    struct tn_sink base; /* must be first */
    PGconn *conn;        /* owned */
};

static const char schema_sql[] =
    "BEGIN;"
    "SELECT pg_advisory_xact_lock(7300407);"
    "CREATE TABLE IF NOT EXISTS tenure_offsets ("
    " topic text NOT NULL, \"partition\" integer NOT NULL,"
    " next_offset bigint NOT NULL, PRIMARY KEY (topic, \"partition\"));"
    "CREATE TABLE IF NOT EXISTS tenure_admitted ("
    " topic text NOT NULL, \"partition\" integer NOT NULL,"
    " \"offset\" bigint NOT NULL, resource text, token bigint,"
    " key bytea, value bytea, claim integer NOT NULL DEFAULT 0,"
    " PRIMARY KEY (topic, \"partition\", \"offset\"));"
    "CREATE TABLE IF NOT EXISTS tenure_rejected ("
    " topic text NOT NULL, \"partition\" integer NOT NULL,"
    " \"offset\" bigint NOT NULL, resource text, token bigint,"
    " reason text NOT NULL, PRIMARY KEY (topic, \"partition\", \"offset\"));"
    "COMMIT;";

static int fail(struct pg_sink *s, PGresult *res, const char *what,
                struct tn_errmsg *em)
{
    tn_errmsg_set(em, "sink %s failed: %s", what, PQerrorMessage(s->conn));
    PQclear(res);
    return TN_EIO;
}

static int exec_cmd(struct pg_sink *s, const char *sql, struct tn_errmsg *em)
{
    PGresult *res = PQexec(s->conn, sql);
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        return fail(s, res, sql, em);
    PQclear(res);
    return TN_OK;
}

static int p_begin(struct tn_sink *b, struct tn_errmsg *em)
{
    return exec_cmd((struct pg_sink *)b, "BEGIN", em);
}

static int p_advance(struct tn_sink *b, const char *resource, size_t len,
                     uint64_t token, uint64_t *hwm_before_out,
                     struct tn_errmsg *em)
{
    struct pg_sink *s = (struct pg_sink *)b;
    return tn_fence_pg_advance(s->conn, resource, len, token, hwm_before_out,
                               em);
}

/* Text parameters for the columns every row has; storage in the caller's
 * arrays (bufs of 32 bytes each). */
struct params {
    const char *v[8];                 /* values, NULL = SQL NULL */
    int len[8];                       /* lengths (binary ones) */
    int fmt[8];                       /* 0 text, 1 binary */
    char part[16];                    /* partition digits */
    char off[24];                     /* offset digits */
    char tok[24];                     /* token digits */
    char name[TN_FENCE_NAME_MAX + 1]; /* resource, NUL-terminated */
};

static void fill_common(struct params *p, const struct tn_sink_row *r)
{
    memset(p, 0, sizeof(*p));
    (void)snprintf(p->part, sizeof(p->part), "%d", (int)r->partition);
    (void)snprintf(p->off, sizeof(p->off), "%lld", (long long)r->offset);
    p->v[0] = r->topic;
    p->v[1] = p->part;
    p->v[2] = p->off;
    if (r->resource != NULL && r->resource_len <= TN_FENCE_NAME_MAX) {
        memcpy(p->name, r->resource, r->resource_len);
        p->v[3] = p->name;
    }
    if (r->has_token) {
        tn_fence_format_token(r->token, p->tok);
        p->v[4] = p->tok;
    }
}

static int run(struct pg_sink *s, const char *sql, int n, struct params *p,
               const char *what, struct tn_errmsg *em)
{
    PGresult *res =
        PQexecParams(s->conn, sql, n, NULL, p->v, p->len, p->fmt, 0);
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        return fail(s, res, what, em);
    PQclear(res);
    return TN_OK;
}

static int p_admit(struct tn_sink *b, const struct tn_sink_row *r,
                   struct tn_errmsg *em)
{
    struct params p;
    fill_common(&p, r);
    p.v[5] = r->key;
    p.len[5] = (int)r->key_len;
    p.fmt[5] = 1;
    p.v[6] = r->value;
    p.len[6] = (int)r->value_len;
    p.fmt[6] = 1;
    p.v[7] = r->claim ? "1" : "0";
    return run((struct pg_sink *)b,
               "INSERT INTO tenure_admitted VALUES ($1, $2::int, $3::bigint,"
               " $4, $5::bigint, $6::bytea, $7::bytea, $8::int)",
               8, &p, "insert admitted", em);
}

static int p_reject(struct tn_sink *b, const struct tn_sink_row *r,
                    const char *reason, struct tn_errmsg *em)
{
    struct params p;
    fill_common(&p, r);
    p.v[5] = reason;
    return run((struct pg_sink *)b,
               "INSERT INTO tenure_rejected VALUES ($1, $2::int, $3::bigint,"
               " $4, $5::bigint, $6)",
               6, &p, "insert rejected", em);
}

static int p_cas(struct tn_sink *b, const char *topic, int32_t partition,
                 int64_t expected, int64_t next, struct tn_errmsg *em)
{
    struct pg_sink *s = (struct pg_sink *)b;
    char part[16];
    char exp[24];
    char nxt[24];
    (void)snprintf(part, sizeof(part), "%d", (int)partition);
    (void)snprintf(exp, sizeof(exp), "%lld", (long long)expected);
    (void)snprintf(nxt, sizeof(nxt), "%lld", (long long)next);
    const char *v[4] = {nxt, topic, part, exp};
    PGresult *res = PQexecParams(
        s->conn,
        "UPDATE tenure_offsets SET next_offset=$1::bigint WHERE topic=$2"
        " AND \"partition\"=$3::int AND next_offset=$4::bigint",
        4, NULL, v, NULL, NULL, 0);
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        return fail(s, res, "update offsets", em);
    int changed = strcmp(PQcmdTuples(res), "1") == 0;
    PQclear(res);
    if (!changed) {
        tn_errmsg_set(em,
                      "offset of \"%s\" partition %d is no longer %lld:"
                      " another materializer writes this sink",
                      topic, (int)partition, (long long)expected);
        return TN_ECONFLICT;
    }
    return TN_OK;
}

static int p_commit(struct tn_sink *b, struct tn_errmsg *em)
{
    return exec_cmd((struct pg_sink *)b, "COMMIT", em);
}

static void p_rollback(struct tn_sink *b)
{
    struct pg_sink *s = (struct pg_sink *)b;
    if (PQtransactionStatus(s->conn) != PQTRANS_IDLE) {
        PGresult *res = PQexec(s->conn, "ROLLBACK");
        PQclear(res);
    }
}

static int read_offset(struct pg_sink *s, const char *topic, int32_t p,
                       int64_t *out, struct tn_errmsg *em)
{
    char part[16];
    (void)snprintf(part, sizeof(part), "%d", (int)p);
    const char *v[2] = {topic, part};
    PGresult *res =
        PQexecParams(s->conn,
                     "INSERT INTO tenure_offsets VALUES ($1, $2::int, 0)"
                     " ON CONFLICT DO NOTHING",
                     2, NULL, v, NULL, NULL, 0);
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        return fail(s, res, "insert offsets", em);
    PQclear(res);
    res = PQexecParams(s->conn,
                       "SELECT next_offset FROM tenure_offsets"
                       " WHERE topic=$1 AND \"partition\"=$2::int",
                       2, NULL, v, NULL, NULL, 0);
    uint64_t next = 0;
    if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 ||
        tn_fence_parse_token(PQgetvalue(res, 0, 0),
                             (size_t)PQgetlength(res, 0, 0), &next) < 0)
        return fail(s, res, "read offsets", em);
    PQclear(res);
    *out = (int64_t)next;
    return TN_OK;
}

static int p_load_offsets(struct tn_sink *b, const char *topic, int32_t n,
                          int64_t *next_out, struct tn_errmsg *em)
{
    struct pg_sink *s = (struct pg_sink *)b;
    int rc = exec_cmd(s, "BEGIN", em);
    for (int32_t p = 0; p < n && rc == 0; p++)
        rc = read_offset(s, topic, p, &next_out[p], em);
    if (rc == 0)
        rc = exec_cmd(s, "COMMIT", em);
    if (rc < 0)
        p_rollback(b);
    return rc;
}

static void p_close(struct tn_sink *b)
{
    struct pg_sink *s = (struct pg_sink *)b;
    if (s == NULL)
        return;
    PQfinish(s->conn);
    tn_free(s);
}

static const struct tn_sink_ops pg_ops = {
    .begin = p_begin,
    .advance = p_advance,
    .admit = p_admit,
    .reject = p_reject,
    .cas_offset = p_cas,
    .commit = p_commit,
    .rollback = p_rollback,
    .load_offsets = p_load_offsets,
    .close = p_close,
};

int tn_sink_pg_open(const char *url, struct tn_sink **out, struct tn_errmsg *em)
{
    struct pg_sink *s = tn_calloc(1, sizeof(*s));
    if (s == NULL)
        return TN_ENOMEM;
    s->base.ops = &pg_ops;
    s->conn = PQconnectdb(url);
    int rc = TN_OK;
    if (PQstatus(s->conn) != CONNECTION_OK) {
        tn_errmsg_set(em, "cannot connect to sink: %s",
                      PQerrorMessage(s->conn));
        rc = TN_ECONNECT;
        goto out_close;
    }
    PGresult *res = PQexec(s->conn, "SET client_min_messages = warning");
    PQclear(res);
    rc = exec_cmd(s, schema_sql, em);
    if (rc < 0) {
        p_rollback(&s->base);
        goto out_close;
    }
    rc = tn_fence_pg_migrate(s->conn, em);
    if (rc < 0)
        goto out_close;
    *out = &s->base;
    return TN_OK;
out_close:
    p_close(&s->base);
    return rc;
}
