/* SPDX-License-Identifier: MIT */
/* Results of the PostgreSQL store's statements: rows into the caller's
 * struct tn_store_result (the columns each statement of src/store/pg/sql.c
 * returns), and SQLSTATEs into what the batch does next.  The only place where
 * PostgreSQL's codes are read; nothing here does I/O. */
#include "store/pg/result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/log.h"
#include "common/rand.h"
#include "store/pg/result_session.h"
#include "store/pg/row.h"
#include "store/pg/sql.h"

/* A lease view from columns owner, token, ttl, expires_in at col0.. */
static void fill_view(struct tn_lease_view *v, const char *name,
                      const PGresult *r, int row, const int cols[4])
{
    (void)snprintf(v->name, sizeof(v->name), "%s", name);
    tn_pg_get_str(r, row, cols[0], v->owner_id, sizeof(v->owner_id));
    v->token = (uint64_t)tn_pg_get_i64(r, row, cols[1]);
    v->ttl_ms = tn_pg_get_i64(r, row, cols[2]);
    v->expires_in_ms = tn_pg_get_i64(r, row, cols[3]);
}

/* The session of a grant or a read: column col, NULL for none. */
static void get_session(const PGresult *r, int row, int col,
                        struct tn_lease_view *v)
{
    if (!PQgetisnull(r, row, col))
        tn_pg_get_str(r, row, col, v->session_id, sizeof(v->session_id));
}

/* Columns: kind, token, owner_id, secret, ttl_ms, expires_in_ms, when the
 * name frees up, session id (ACQUIRE_ANSWER in sql_acquire.c). */
static void parse_acquire(struct tn_pg_op *op, const PGresult *r)
{
    struct tn_store_result *out = op->out;
    if (PQntuples(r) < 1) {
        op->again = true;
        return;
    }
    static const int cols[4] = {2, 1, 4, 5};
    char kind = PQgetvalue(r, 0, 0)[0];
    fill_view(&out->lease, op->name, r, 0, cols);
    get_session(r, 0, 7, &out->lease);
    switch (kind) {
    case 'g':
    case 'i':
        out->rc = TN_OK;
        op->inserted = kind == 'i' ? 1 : 0;
        memcpy(out->lease.secret, op->secret, TN_SECRET_BYTES);
        return;
    case 'c':
    case 'm': /* nothing changed (ACQUIRE_FITS in src/store/pg/sql.c) */
        memset(&out->lease, 0, sizeof(out->lease));
        out->rc = TN_ECAPACITY;
        out->capacity = kind == 'c' ? "leases" : "names";
        out->retry_after_ms = TN_PG_RETRY_AFTER_MS;
        return;
    case 'l':
    case 'f':
        memset(&out->lease, 0, sizeof(out->lease));
        out->rc = kind == 'l' ? TN_ELOST : TN_EFORBIDDEN;
        out->reason = kind == 'l' ? TN_PG_SESSION_ENDED : NULL;
        return;
    case 'r':
        out->rc = TN_OK;
        out->replayed = true;
        if (tn_pg_get_secret(r, 0, 3, out->lease.secret) < 0)
            out->rc = TN_EINTERNAL;
        return;
    case 'h':
        out->rc = TN_ECONFLICT;
        out->retry_after_ms = tn_pg_get_i64(r, 0, 6); /* when it frees up */
        return;
    case 'q': /* free, but promised to a waiter of this instance */
        out->rc = TN_ELOCKDELAY;
        out->retry_after_ms = 1;
        return;
    default:
        out->rc = TN_ELOCKDELAY;
        out->retry_after_ms = tn_pg_get_i64(r, 0, 6);
        return;
    }
}

static void parse_token_op(struct tn_pg_op *op, const PGresult *r)
{
    struct tn_store_result *out = op->out;
    const char *kind = PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "lost";
    if (strcmp(kind, "ok") == 0) {
        static const int cols[4] = {1, 2, 3, 3};
        fill_view(&out->lease, op->name, r, 0, cols);
        out->rc = TN_OK;
    } else if (strcmp(kind, "forbidden") == 0) {
        out->rc = TN_EFORBIDDEN;
    } else if (strcmp(kind, "session") == 0) {
        out->rc = TN_EINVAL;
        out->reason = TN_PG_RENEW_THE_SESSION;
    } else {
        out->rc = TN_ELOST;
    }
}

static void parse_get(struct tn_pg_op *op, const PGresult *r)
{
    static const int cols[4] = {0, 1, 2, 3};
    if (PQntuples(r) < 1) {
        op->out->rc = TN_ENOTFOUND;
        return;
    }
    fill_view(&op->out->lease, op->name, r, 0, cols);
    op->out->lease.lock_delay_ms = tn_pg_get_i64(r, 0, 4);
    get_session(r, 0, 5, &op->out->lease);
    op->out->rc = TN_OK;
}

static void parse_check(struct tn_pg_op *op, const PGresult *r)
{
    static const int cols[4] = {2, 0, 3, 4};
    struct tn_store_result *out = op->out;
    out->rc = TN_OK;
    if (PQntuples(r) < 1)
        return;
    out->floor = (uint64_t)tn_pg_get_i64(r, 0, 0);
    out->has_live = PQgetvalue(r, 0, 1)[0] == 't';
    out->current = out->has_live && out->floor == op->token;
    if (out->has_live) {
        fill_view(&out->lease, op->name, r, 0, cols);
        get_session(r, 0, 5, &out->lease);
    }
}

static void parse_list(struct tn_pg_op *op, const PGresult *r)
{
    static const int cols[4] = {1, 2, 3, 4};
    struct tn_store_result *out = op->out;
    size_t n = (size_t)PQntuples(r);
    out->more = n > op->limit;
    if (n > op->limit)
        n = op->limit;
    /* What was found, not the limit: an answer may wait for a commit, and
     * a thousand empty views each would let small lists hold much memory. */
    out->items = tn_calloc(n > 0 ? n : 1, sizeof(*out->items));
    if (out->items == NULL) {
        out->rc = TN_ENOMEM;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        fill_view(&out->items[i], PQgetvalue(r, (int)i, 0), r, (int)i, cols);
        out->items[i].lock_delay_ms = tn_pg_get_i64(r, (int)i, 5);
        get_session(r, (int)i, 6, &out->items[i]);
    }
    out->n_items = n;
    out->rc = TN_OK;
}

static enum tn_grant_end end_of(const char *s)
{
    if (strcmp(s, "released") == 0)
        return TN_GRANT_RELEASED;
    if (strcmp(s, "expired") == 0)
        return TN_GRANT_EXPIRED;
    if (strcmp(s, "revoked") == 0)
        return TN_GRANT_REVOKED;
    return TN_GRANT_SUPERSEDED;
}

/* Columns: token, owner_id, granted ms ago, end or NULL, ended ms ago. */
static void parse_history(struct tn_pg_op *op, const PGresult *r)
{
    struct tn_store_result *out = op->out;
    size_t n = (size_t)PQntuples(r);
    if (n > op->limit)
        n = op->limit;
    out->history =
        tn_calloc(op->limit > 0 ? op->limit : 1, sizeof(*out->history));
    if (out->history == NULL) {
        out->rc = TN_ENOMEM;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        struct tn_grant_record *g = &out->history[i];
        int row = (int)i;
        g->token = (uint64_t)tn_pg_get_i64(r, row, 0);
        tn_pg_get_str(r, row, 1, g->owner_id, sizeof(g->owner_id));
        g->granted_ms_ago = tn_pg_get_i64(r, row, 2);
        g->end = TN_GRANT_LIVE;
        g->ended_ms_ago = -1;
        if (!PQgetisnull(r, row, 3)) {
            g->end = end_of(PQgetvalue(r, row, 3));
            g->ended_ms_ago = tn_pg_get_i64(r, row, 4);
        }
    }
    out->n_history = n;
    out->rc = TN_OK;
}

/* The sweep: one row per expiry it announced.  The prune: one row, the
 * count of ledger rows it deleted.  Both report in n_items.  The count of
 * leases: live leases in n_items, names in floor, live sessions in
 * n_sessions.  The synchronous standby check: its state in n_items, the
 * standbys connected in floor.  The session sweep: sessions whose end it
 * recorded in n_items, leases it settled in floor, sessions it deleted
 * in n_sessions. */
static void parse_count(struct tn_pg_op *op, const PGresult *r)
{
    struct tn_store_result *out = op->out;
    out->rc = TN_OK;
    bool two = op->stmt == TN_PG_COUNT || op->stmt == TN_PG_SYNC ||
               op->stmt == TN_PG_SESSION_SWEEP;
    if (two && PQntuples(r) > 0) {
        out->n_items = (size_t)tn_pg_get_i64(r, 0, 0);
        out->floor = (uint64_t)tn_pg_get_i64(r, 0, 1);
        if (PQnfields(r) > 2)
            out->n_sessions = (size_t)tn_pg_get_i64(r, 0, 2);
    } else if (op->stmt == TN_PG_SWEEP)
        out->n_items = (size_t)PQntuples(r);
    else
        out->n_items = PQntuples(r) > 0 ? (size_t)tn_pg_get_i64(r, 0, 0) : 0;
}

static void parse_rows(struct tn_pg_op *op, const PGresult *r)
{
    switch (op->stmt) {
    case TN_PG_ACQUIRE:
    case TN_PG_ACQUIRE_SESSION:
        parse_acquire(op, r);
        return;
    case TN_PG_RENEW:
    case TN_PG_RELEASE:
        parse_token_op(op, r);
        return;
    case TN_PG_GET:
        parse_get(op, r);
        return;
    case TN_PG_CHECK:
        parse_check(op, r);
        return;
    case TN_PG_HISTORY:
        parse_history(op, r);
        return;
    case TN_PG_SWEEP:
    case TN_PG_PRUNE:
    case TN_PG_COUNT:
    case TN_PG_SYNC:
    case TN_PG_SESSION_SWEEP:
        parse_count(op, r);
        return;
    case TN_PG_LIST:
        parse_list(op, r);
        return;
    default:
        tn_pg_parse_session(op, r);
        return;
    }
}

/* SQLSTATE -> what to do with the batch (the only place they are read). */
static void classify_error(struct tn_pg_batch *b, const PGresult *r)
{
    const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    if (st == NULL)
        st = "XX000";
    b->err_idx = b->idx;
    b->err_rc = TN_EUNAVAIL;
    if (strcmp(st, "40001") == 0 || strcmp(st, "40P01") == 0) {
        b->retry_all = true; /* serialization failure, deadlock */
    } else if (strcmp(st, "53100") == 0) {
        b->err_rc = TN_ENOSPC; /* disk full */
    } else if (strncmp(st, "08", 2) == 0 || strncmp(st, "57", 2) == 0 ||
               strcmp(st, "25006") == 0 || strcmp(st, "26000") == 0) {
        b->drop = true; /* connection, shutdown, standby, lost statements */
    } else if (strncmp(st, "53", 2) != 0) {
        b->err_rc = TN_EINTERNAL;
    }
    char msg[240];
    (void)snprintf(msg, sizeof(msg), "%s", PQresultErrorMessage(r));
    for (char *c = msg; *c != '\0'; c++) {
        if (*c == '\n' || *c == '"')
            *c = ' ';
    }
    tn_log(TN_LOG_WARN, "store",
           "\"postgresql statement failed\" sqlstate=%s detail=\"%s\"", st,
           msg);
}

void tn_pg_take_result(struct tn_pg_batch *b, PGresult *r)
{
    ExecStatusType st = PQresultStatus(r);
    b->got = true;
    if (b->idx >= b->n) {
        /* The notify.  Inside the transaction (notify_in) its failure
         * rolls the batch back, so it fails the batch; as the trailer it
         * only sends events. */
        if (b->notify_in && !b->settled && b->err_rc == 0 &&
            st != PGRES_TUPLES_OK) {
            if (st == PGRES_FATAL_ERROR)
                classify_error(b, r);
            else
                b->err_rc = TN_EUNAVAIL;
        }
        return;
    }
    if (st == PGRES_TUPLES_OK && b->err_rc == 0)
        parse_rows(b->ops[b->idx], r);
    else if (st == PGRES_FATAL_ERROR && b->err_rc == 0)
        classify_error(b, r);
    else if (st != PGRES_TUPLES_OK && b->err_rc == 0)
        b->err_rc = TN_EUNAVAIL; /* aborted or unexpected */
}
