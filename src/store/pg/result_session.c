/* SPDX-License-Identifier: MIT */
/* Rows of the PostgreSQL store's session statements (src/store/pg/
 * sql_session.c) into the caller's struct tn_store_result: a session's
 * view, a list of them, the items of a claim or batch release.  Nothing
 * here does I/O. */
#include "store/pg/result_session.h"

#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "store/pg/row.h"

/* The outcome column of the first row, or "" for none. */
static const char *kind_of(const PGresult *r)
{
    return PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "";
}

/* A refusal of the whole request: true with out filled; false for "ok"
 * or an item's kind.  No row at all is lost (an unknown session). */
static bool refused(struct tn_store_result *out, const char *kind)
{
    if (strcmp(kind, "ok") == 0)
        return false;
    if (strcmp(kind, "forbidden") == 0 || strcmp(kind, "F") == 0) {
        out->rc = TN_EFORBIDDEN;
    } else if (strcmp(kind, "capacity") == 0) {
        out->rc = TN_ECAPACITY;
        out->capacity = "sessions";
        out->retry_after_ms = TN_PG_RETRY_AFTER_MS;
    } else if (strcmp(kind, "C") == 0 || strcmp(kind, "M") == 0) {
        out->rc = TN_ECAPACITY;
        out->capacity = kind[0] == 'C' ? "leases" : "names";
        out->retry_after_ms = TN_PG_RETRY_AFTER_MS;
    } else if (strcmp(kind, "lost") == 0 || strcmp(kind, "L") == 0 ||
               kind[0] == '\0') {
        out->rc = TN_ELOST;
        out->reason = TN_PG_SESSION_ENDED;
    } else {
        return false;
    }
    return true;
}

/* A session view from columns owner_id, ttl_ms, expires_in_ms, leases at
 * col0.. of row. */
static void fill_session(struct tn_session_view *v, const char *id,
                         const PGresult *r, int row, int col0)
{
    (void)snprintf(v->id, sizeof(v->id), "%s", id);
    tn_pg_get_str(r, row, col0, v->owner_id, sizeof(v->owner_id));
    v->ttl_ms = tn_pg_get_i64(r, row, col0 + 1);
    v->expires_in_ms = tn_pg_get_i64(r, row, col0 + 2);
    v->n_leases = (uint64_t)tn_pg_get_i64(r, row, col0 + 3);
}

static void parse_open(struct tn_pg_op *op, const PGresult *r)
{
    struct tn_store_result *out = op->out;
    const char *kind = kind_of(r);
    if (refused(out, kind))
        return;
    if (strcmp(kind, "ok") != 0) {
        out->rc = TN_EINTERNAL; /* the random id was taken */
        return;
    }
    struct tn_session_view *v = &out->session;
    (void)snprintf(v->id, sizeof(v->id), "%s", op->sess);
    (void)snprintf(v->owner_id, sizeof(v->owner_id), "%s", op->s2);
    memcpy(v->secret, op->secret, TN_SECRET_BYTES);
    v->ttl_ms = op->ttl_ms;
    v->expires_in_ms = op->ttl_ms; /* now() + ttl, from now() */
    out->rc = TN_OK;
}

/* Renew: outcome, owner_id, ttl_ms, expires_in_ms, leases.  End:
 * outcome, ..., leases released. */
static void parse_renew_end(struct tn_pg_op *op, const PGresult *r)
{
    struct tn_store_result *out = op->out;
    if (refused(out, kind_of(r)))
        return;
    out->rc = TN_OK;
    if (op->stmt == TN_PG_SESSION_RENEW)
        fill_session(&out->session, op->sess, r, 0, 1);
    else
        op->granted = (size_t)tn_pg_get_i64(r, 0, 4);
}

static void parse_get(struct tn_pg_op *op, const PGresult *r)
{
    if (PQntuples(r) < 1) {
        op->out->rc = TN_ENOTFOUND;
        return;
    }
    fill_session(&op->out->session, op->name, r, 0, 0);
    op->out->rc = TN_OK;
}

/* Columns: id, owner_id, ttl_ms, expires_in_ms, leases. */
static void parse_list(struct tn_pg_op *op, const PGresult *r)
{
    struct tn_store_result *out = op->out;
    size_t n = (size_t)PQntuples(r);
    out->more = n > op->limit;
    if (n > op->limit)
        n = op->limit;
    out->sessions = tn_calloc(n > 0 ? n : 1, sizeof(*out->sessions));
    if (out->sessions == NULL) {
        out->rc = TN_ENOMEM;
        return;
    }
    for (size_t i = 0; i < n; i++)
        fill_session(&out->sessions[i], PQgetvalue(r, (int)i, 0), r, (int)i, 1);
    out->n_sessions = n;
    out->rc = TN_OK;
}

/* An item's kind: a claim's (g, i: granted now; r: already this
 * session's; h held; d lock delay) or a batch release's (r released, l
 * lost). */
static enum tn_claim_outcome outcome_of(enum tn_pg_stmt stmt, char kind)
{
    if (stmt == TN_PG_UNCLAIM)
        return kind == 'r' ? TN_CLAIM_RELEASED : TN_CLAIM_LOST;
    if (kind == 'h')
        return TN_CLAIM_HELD;
    return kind == 'd' ? TN_CLAIM_LOCK_DELAY : TN_CLAIM_GRANTED;
}

/* One item row: kind, index (1-based), token, secret, holder, its
 * expires_in_ms, retry_after_ms, the session's expires_in_ms. */
static int parse_item(struct tn_pg_op *op, const PGresult *r, int row)
{
    struct tn_store_result *out = op->out;
    int64_t idx = tn_pg_get_i64(r, row, 1) - 1;
    if (idx < 0 || (size_t)idx >= op->n_names)
        return TN_EINTERNAL;
    char kind = PQgetvalue(r, row, 0)[0];
    struct tn_claim_item *it = &out->claims[idx];
    it->index = (size_t)idx;
    it->outcome = outcome_of(op->stmt, kind);
    it->token = (uint64_t)tn_pg_get_i64(r, row, 2);
    if (it->outcome == TN_CLAIM_GRANTED &&
        tn_pg_get_secret(r, row, 3, it->secret) < 0)
        return TN_EINTERNAL;
    if (it->outcome == TN_CLAIM_HELD) {
        tn_pg_get_str(r, row, 4, it->holder, sizeof(it->holder));
        it->expires_in_ms = tn_pg_get_i64(r, row, 5);
    }
    if (it->outcome == TN_CLAIM_LOCK_DELAY)
        it->retry_after_ms = tn_pg_get_i64(r, row, 6);
    out->session.expires_in_ms = tn_pg_get_i64(r, row, 7);
    /* what the limits count: new grants, or releases */
    bool counts =
        op->stmt == TN_PG_UNCLAIM ? kind == 'r' : kind == 'g' || kind == 'i';
    op->granted += counts ? 1u : 0u;
    op->inserted += kind == 'i' ? 1u : 0u;
    return TN_OK;
}

/* Claim and batch release: one row per name, in any order, or one row
 * for the whole request ('L', 'F', 'C', 'M'; 'A': run it again). */
static void parse_claims(struct tn_pg_op *op, const PGresult *r)
{
    struct tn_store_result *out = op->out;
    const char *kind = kind_of(r);
    if (strcmp(kind, "A") == 0) {
        op->again = true;
        return;
    }
    if (refused(out, kind))
        return;
    size_t n = (size_t)PQntuples(r);
    out->claims = tn_calloc(op->n_names, sizeof(*out->claims));
    if (out->claims == NULL) {
        out->rc = TN_ENOMEM;
        return;
    }
    out->n_claims = op->n_names;
    op->granted = 0;
    op->inserted = 0;
    out->rc = n == op->n_names ? TN_OK : TN_EINTERNAL;
    for (size_t i = 0; i < n && out->rc == TN_OK; i++)
        out->rc = parse_item(op, r, (int)i);
}

void tn_pg_parse_session(struct tn_pg_op *op, const PGresult *r)
{
    switch (op->stmt) {
    case TN_PG_SESSION_OPEN:
        parse_open(op, r);
        return;
    case TN_PG_SESSION_RENEW:
    case TN_PG_SESSION_END:
        parse_renew_end(op, r);
        return;
    case TN_PG_SESSION_GET:
        parse_get(op, r);
        return;
    case TN_PG_SESSION_LIST:
        parse_list(op, r);
        return;
    case TN_PG_CLAIM:
    case TN_PG_UNCLAIM:
        parse_claims(op, r);
        return;
    default:
        op->out->rc = TN_EINTERNAL;
        return;
    }
}
