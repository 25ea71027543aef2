/* SPDX-License-Identifier: MIT */
/* Each statement connection of the PostgreSQL store: a link (link.c: one
 * host at a time, each under its own deadline, so a multi-host string with
 * target_session_attrs=read-write finds the primary even behind a host that
 * stopped answering), then the setup steps (session settings and advisory lock,
 * schema version, migrations each in its own transaction, sequence above
 * every stored token, prepared statements in pipeline mode), then ready.
 * A step that takes a table lock waits for it at most
 * TN_PG_SETUP_LOCK_WAIT (src/store/pg/sql.h), since every writer queues
 * behind a waiting lock; when it gives up, its transaction rolls back and
 * the setup goes on from the schema version after a pause (lock_retry).
 * Any other failure drops the connection and retries with exponential
 * backoff; SETUP_TIMEOUT_MS bounds the whole setup either way.
 * Everything runs on the loop thread; nothing here blocks. */
#include "store/pg/conn.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/log.h"
#include "store/pg/floor.h"
#include "store/pg/sql.h"

#define BACKOFF_MIN_MS 100
/* At most 1 s between rounds over the hosts: after a failover the new
 * primary is found within about a round's deadline plus this. */
#define BACKOFF_MAX_MS 1000
#define SETUP_TIMEOUT_MS 15000
/* Pauses between tries for a busy table lock: 50 ms doubling to 800 ms. */
#define LOCK_RETRY_MIN_MS 50
#define LOCK_RETRY_MAX_SHIFT 4

enum step {
    STEP_SESSION = 0,
    STEP_VERSION,
    STEP_MIGRATE,
    STEP_SEQUENCE,
    STEP_PREPARE,
    N_STEPS
};

static void run_step(struct tn_pg_conn *c);

void tn_pg_conn_unwatch(struct tn_pg_conn *c)
{
    tn_pg_link_unwatch(&c->link);
}

void tn_pg_conn_watch(struct tn_pg_conn *c, uint32_t events)
{
    tn_pg_link_watch(&c->link, events);
}

static void retry_now(void *arg)
{
    tn_pg_conn_start(arg);
}

void tn_pg_conn_drop(struct tn_pg_conn *c, const char *why)
{
    tn_log(TN_LOG_WARN, "store",
           "\"postgresql connection lost, reconnecting\" conn=%d why=\"%s\" "
           "retry_ms=%lld",
           (int)(c - c->store->conns), why, (long long)c->backoff_ms);
    tn_pg_link_close(&c->link);
    c->conn = NULL;
    c->state = TN_PG_DOWN;
    tn_loop_timer_disarm(c->store->loop, &c->conn_timer);
    c->store->conn_failed(c);
    tn_loop_timer_arm(c->store->loop, &c->retry_timer,
                      tn_clock_now_ms() + c->backoff_ms, retry_now, c);
    c->backoff_ms *= 2;
    if (c->backoff_ms > BACKOFF_MAX_MS)
        c->backoff_ms = BACKOFF_MAX_MS;
}

void tn_pg_conn_stalled(struct tn_pg_conn *c, const char *why)
{
    tn_pg_link_stalled(&c->link, why);
}

static void setup_late(void *arg)
{
    struct tn_pg_conn *c = arg;
    tn_pg_link_stalled(&c->link, "setup timed out");
}

void tn_pg_message(PGconn *c, char *out, size_t cap)
{
    (void)snprintf(out, cap, "%s", c != NULL ? PQerrorMessage(c) : "no memory");
    size_t n = strlen(out);
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '"'))
        out[--n] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (out[i] == '\n' || out[i] == '"')
            out[i] = ' ';
    }
}

static void drop_with_message(struct tn_pg_conn *c, const char *what)
{
    char msg[300];
    char why[400];
    tn_pg_message(c->conn, msg, sizeof(msg));
    (void)snprintf(why, sizeof(why), "%s: %s", what, msg);
    tn_pg_conn_drop(c, why);
}

void tn_pg_conn_start(struct tn_pg_conn *c)
{
    c->state = TN_PG_CONNECTING;
    tn_pg_link_connect(&c->link);
}

/* The link found a host that takes writes: set the session up. */
static void link_up(void *arg)
{
    struct tn_pg_conn *c = arg;
    c->conn = c->link.conn;
    c->state = TN_PG_SETUP;
    c->setup_step = STEP_SESSION;
    tn_loop_timer_arm(c->store->loop, &c->conn_timer,
                      tn_clock_now_ms() + SETUP_TIMEOUT_MS, setup_late, c);
    run_step(c);
}

static void link_fail(void *arg, const char *why)
{
    struct tn_pg_conn *c = arg;
    c->conn = NULL;
    tn_pg_conn_drop(c, why);
}

/* The migrations above the database's version, each in a transaction
 * together with its version row.  0 with an empty buffer when none. */
static int build_migrations(struct tn_pg_conn *c, struct tn_buf *b)
{
    int rc = TN_OK;
    for (size_t i = 0; i < tn_pg_n_migrations && rc == 0; i++) {
        const struct tn_pg_migration *m = &tn_pg_migrations[i];
        if (m->version <= c->schema_version)
            continue;
        rc = tn_buf_printf(b,
                           "BEGIN; " TN_PG_SETUP_LOCK_TIMEOUT
                           " %s; INSERT INTO tenure_schema_version "
                           "(version) VALUES (%d); COMMIT; ",
                           m->sql, m->version);
        tn_log(TN_LOG_INFO, "store", "\"migrating the schema\" to=%d",
               m->version);
    }
    return rc;
}

static int send_prepares(struct tn_pg_conn *c)
{
    if (PQenterPipelineMode(c->conn) != 1)
        return TN_EIO;
    for (int i = 0; i < TN_PG_N_STMTS; i++) {
        const struct tn_pg_stmt_def *d = &tn_pg_stmts[i];
        if (PQsendPrepare(c->conn, d->name, d->sql, d->n_params, d->types) != 1)
            return TN_EIO;
    }
    return PQpipelineSync(c->conn) == 1 ? TN_OK : TN_EIO;
}

/* The sequence step, with this instance's token floor set first. */
static int send_sequence(struct tn_pg_conn *c)
{
    struct tn_buf b;
    tn_buf_init(&b, 8192);
    int rc =
        tn_buf_printf(&b, "SET tenure.token_floor TO '%" PRIu64 "'; %s",
                      tn_pg_floor_value(&c->store->floor), tn_pg_sql_sequence);
    if (rc == 0)
        rc = PQsendQuery(c->conn, b.data) == 1 ? 0 : TN_EIO;
    tn_buf_release(&b);
    return rc;
}

/* FLOOR_SQL's row (src/store/pg/sql.c): what the sequence was, whether it
 * was raised. */
static void floor_row(struct tn_pg_conn *c, PGresult *r)
{
    if (PQnfields(r) != 4 || strcmp(PQgetvalue(r, 0, 0), "floor") != 0)
        return;
    uint64_t top = strtoull(PQgetvalue(r, 0, 1), NULL, 10);
    tn_pg_floor_seen(&c->store->floor, top, !PQgetisnull(r, 0, 3));
}

/* Send the current step's SQL; steps with nothing to do are skipped. */
static int send_step(struct tn_pg_conn *c)
{
    int latest = tn_pg_migrations[tn_pg_n_migrations - 1].version;
    switch (c->setup_step) {
    case STEP_SESSION:
        return PQsendQuery(c->conn, tn_pg_sql_session) == 1 ? 0 : TN_EIO;
    case STEP_VERSION: {
        /* after a lock timeout, the failed transaction ends first */
        bool abort = PQtransactionStatus(c->conn) == PQTRANS_INERROR;
        struct tn_buf b;
        tn_buf_init(&b, 4096);
        int rc = tn_buf_printf(&b, "%s%s", abort ? "ROLLBACK; " : "",
                               tn_pg_sql_version);
        if (rc == 0)
            rc = PQsendQuery(c->conn, b.data) == 1 ? 0 : TN_EIO;
        tn_buf_release(&b);
        return rc;
    }
    case STEP_MIGRATE: {
        if (c->schema_version > latest) {
            tn_log(TN_LOG_ERROR, "store",
                   "\"the database schema is newer than this tenured\" "
                   "database=%d known=%d",
                   c->schema_version, latest);
            return TN_EINVAL;
        }
        struct tn_buf b;
        tn_buf_init(&b, 1 << 20);
        int rc = build_migrations(c, &b);
        if (rc == 0 && b.len > 0)
            rc = PQsendQuery(c->conn, b.data) == 1 ? 0 : TN_EIO;
        else if (rc == 0)
            rc = 1; /* nothing to migrate */
        tn_buf_release(&b);
        return rc;
    }
    case STEP_SEQUENCE:
        return send_sequence(c);
    default:
        return send_prepares(c);
    }
}

static void run_step(struct tn_pg_conn *c)
{
    for (;;) {
        if (c->setup_step == N_STEPS) {
            tn_loop_timer_disarm(c->store->loop, &c->conn_timer);
            c->state = TN_PG_READY;
            c->backoff_ms = BACKOFF_MIN_MS;
            c->lock_retries = 0;
            c->store->n_connects++;
            tn_log(TN_LOG_INFO, "store",
                   "\"postgresql store ready\" schema_version=%d",
                   tn_pg_migrations[tn_pg_n_migrations - 1].version);
            tn_pg_conn_watch(c, EPOLLIN);
            c->store->conn_ready(c);
            return;
        }
        c->setup_rc = 0;
        c->lock_busy = false;
        int rc = send_step(c);
        if (rc < 0) {
            drop_with_message(c, "setup failed");
            return;
        }
        if (rc == 0)
            break;
        c->setup_step++; /* skipped */
    }
    int f = PQflush(c->conn);
    if (f < 0) {
        drop_with_message(c, "setup failed");
        return;
    }
    tn_pg_conn_watch(c, EPOLLIN | (f == 1 ? EPOLLOUT : 0u));
}

/* One result of the running step.  Returns true when the step is over. */
static bool step_result(struct tn_pg_conn *c, PGresult *r)
{
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_FATAL_ERROR || st == PGRES_BAD_RESPONSE ||
        st == PGRES_NONFATAL_ERROR) {
        const char *code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        if (c->setup_rc == 0 && code != NULL && strcmp(code, "55P03") == 0 &&
            (c->setup_step == STEP_MIGRATE || c->setup_step == STEP_SEQUENCE))
            c->lock_busy = true; /* lock_not_available: lock_retry */
        else if (c->setup_rc == 0) {
            char msg[300];
            (void)snprintf(msg, sizeof(msg), "%s", PQresultErrorMessage(r));
            for (char *ch = msg; *ch != '\0'; ch++) {
                if (*ch == '\n' || *ch == '"')
                    *ch = ' ';
            }
            tn_log(TN_LOG_ERROR, "store",
                   "\"postgresql setup step failed\" step=%d detail=\"%s\"",
                   c->setup_step, msg);
        }
        c->setup_rc = TN_EIO;
    }
    if (st == PGRES_TUPLES_OK && c->setup_step == STEP_VERSION &&
        PQntuples(r) == 1)
        c->schema_version = (int)strtol(PQgetvalue(r, 0, 0), NULL, 10);
    if (st == PGRES_TUPLES_OK && c->setup_step == STEP_SEQUENCE &&
        PQntuples(r) == 1)
        floor_row(c, r);
    return st == PGRES_PIPELINE_SYNC;
}

static void lock_retry_fire(void *arg)
{
    struct tn_pg_conn *c = arg;
    c->setup_step = STEP_VERSION;
    run_step(c);
}

/* The step gave up waiting for a table lock: nothing to read until the
 * next try, which starts again from the schema version (a migration
 * before the failed one may have committed). */
static void lock_retry(struct tn_pg_conn *c)
{
    unsigned shift = c->lock_retries < LOCK_RETRY_MAX_SHIFT
                         ? c->lock_retries
                         : LOCK_RETRY_MAX_SHIFT;
    int64_t pause = (int64_t)LOCK_RETRY_MIN_MS << shift;
    c->lock_retries++;
    c->store->n_setup_lock_timeouts++;
    tn_log(TN_LOG_WARN, "store",
           "\"postgresql setup waits for a table lock held elsewhere\" "
           "conn=%d step=%d tries=%u retry_ms=%lld",
           (int)(c - c->store->conns), c->setup_step, c->lock_retries,
           (long long)pause);
    tn_pg_conn_unwatch(c);
    tn_loop_timer_arm(c->store->loop, &c->retry_timer,
                      tn_clock_now_ms() + pause, lock_retry_fire, c);
}

static void setup_io(struct tn_pg_conn *c, uint32_t events)
{
    if ((events & EPOLLOUT) != 0) {
        int f = PQflush(c->conn);
        if (f < 0) {
            drop_with_message(c, "setup failed");
            return;
        }
        tn_pg_conn_watch(c, EPOLLIN | (f == 1 ? EPOLLOUT : 0u));
    }
    if (PQconsumeInput(c->conn) != 1) {
        drop_with_message(c, "setup failed");
        return;
    }
    bool prev_null = false;
    while (!PQisBusy(c->conn)) {
        PGresult *r = PQgetResult(c->conn);
        bool over = r == NULL;
        if (r != NULL) {
            over = step_result(c, r);
            PQclear(r);
        }
        if (r == NULL && c->setup_step == STEP_PREPARE) {
            if (prev_null)
                return; /* nothing more until the sync arrives */
            prev_null = true;
            continue; /* end of one prepare */
        }
        prev_null = false;
        if (!over)
            continue;
        if (c->setup_rc < 0 && c->lock_busy) {
            lock_retry(c);
            return;
        }
        if (c->setup_rc < 0) {
            tn_pg_conn_drop(c, "setup failed");
            return;
        }
        c->setup_step++;
        run_step(c);
        return;
    }
}

static void link_io(void *arg, uint32_t events)
{
    struct tn_pg_conn *c = arg;
    switch (c->state) {
    case TN_PG_SETUP:
        setup_io(c, events);
        return;
    case TN_PG_READY:
        c->store->conn_io(c, events);
        return;
    default:
        return;
    }
}

static const struct tn_pg_link_ops link_ops = {
    .up = link_up,
    .io = link_io,
    .fail = link_fail,
};

void tn_pg_conn_init(struct tn_pg_conn *c, struct tn_pg *p)
{
    c->store = p;
    c->backoff_ms = BACKOFF_MIN_MS;
    tn_pg_link_init(&c->link, p->loop, &p->hosts, &link_ops, c);
}

void tn_pg_conn_close(struct tn_pg_conn *c)
{
    tn_loop_timer_disarm(c->store->loop, &c->retry_timer);
    tn_loop_timer_disarm(c->store->loop, &c->conn_timer);
    tn_pg_link_close(&c->link);
    c->conn = NULL;
    c->state = TN_PG_DOWN;
}
