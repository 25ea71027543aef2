/* SPDX-License-Identifier: MIT */
/* Retiring names on PostgreSQL (docs/safety/retired-names.md): every R / 2
 * (R = --retain-ms) each instance deletes the rows of names whose last
 * grant ended more than R ago, with their ledger rows, and raises the
 * retired floor W in tenure_retired to the sequence's last issued value;
 * a name without a row answers W (CHECK_SQL in src/store/pg/sql.c).
 *
 * The race it must not lose: an acquire of a new name draws its token
 * with nextval() before any row exists to lock, so a retirement that read
 * the sequence while such an acquire was in flight would set W above a
 * token that commits later, and that name's floor would go down from W to
 * it.  Every statement that draws a token holds ROW EXCLUSIVE on leases
 * from before its nextval() to its commit; the retirement takes SHARE ROW
 * EXCLUSIVE on leases, in a transaction of its own, before it reads
 * anything: granted only once no such statement is in flight, and holding
 * back every later one until it commits.  That needs a transaction
 * boundary the pipelined batches of src/store/pg/store.c do not give, so
 * the retirement runs on a connection of its own, opened when first
 * needed, one multi-statement query (one implicit transaction) at a time.
 *
 * A round: a probe without locks (is any row old enough?), and only then
 * the locked transaction, which waits for the lock at most LOCK_WAIT
 * (a round that times out is tried again at the next tick).  Any error
 * closes the connection; the next tick opens another.  Loop thread only. */
#include "store/pg/retire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/log.h"
#include "store/pg/batch.h"
#include "store/pg/conn.h"
#include "store/pg/pg.h"
#include "store/pg/sql.h"

#define PERIOD_MIN_MS 50
#define PERIOD_MAX_MS 60000
#define ROUND_ROWS 1000
/* After a full round: a pause that leaves the table to the writers (a
 * round of 1000 rows holds its lock for about 0.1 s). */
#define AGAIN_MS 200
#define LOCK_WAIT "200ms"

enum phase {
    IDLE = 0,   /* waiting for the timer */
    CONNECTING, /* PQconnectPoll in progress */
    PROBING,    /* the probe is running */
    RETIRING    /* the locked transaction is running */
};

struct tn_pg_retire {
    struct tn_pg *p;            /* owner */
    PGconn *conn;               /* NULL while closed */
    int fd;                     /* watched socket, -1 if none */
    uint32_t fd_events;         /* events it is watched for */
    enum phase phase;           /* see above */
    int64_t retain_ms;          /* R */
    int64_t period_ms;          /* between rounds */
    struct tn_loop_timer timer; /* next round */
    bool failed;                /* the running query failed */
    bool lock_timeout;          /* ... because the lock was not granted */
    bool found;                 /* the probe found a row */
    long long deleted;          /* rows the last transaction deleted */
    uint64_t n_retired;         /* names this instance retired */
    uint64_t n_rounds;          /* locked transactions committed */
    uint64_t n_lock_timeouts;   /* rounds that did not get the lock */
    uint64_t n_failures;        /* rounds that failed otherwise */
    uint64_t floor;             /* W as last read */
    char probe_sql[512];        /* the probe, R filled in */
    char retire_sql[3072];      /* the transaction, R filled in */
};

/* A row of leases s whose end is certain more than R ago (R in ms, the
 * format's argument): released, or ran out and past its lock delay, on
 * the database clock.  now() is the start of the transaction, before the
 * lock is granted, so it only makes the test stricter. */
#define OLD_ENOUGH                                                             \
    " s.expires_at + CASE WHEN s.released THEN 0 ELSE s.lock_delay_ms END"     \
    " * interval '1 millisecond' < now() - %lld * interval '1 millisecond'"

#define PROBE_SQL "SELECT EXISTS (SELECT 1 FROM leases s WHERE" OLD_ENOUGH ")"

/* The "expired" event of a grant nobody announced yet (the payload of
 * src/store/pg/sql.h, one line per notify), sent inside the transaction so
 * it leaves with its commit and before any later grant of the name. */
#define EXPIRED_LINE                                                           \
    "'e ' || d.fencing_token::text || ' ' || d.fencing_token::text || ' ' ||"  \
    " octet_length(d.owner_id)::text || ' ' || d.owner_id || d.name"
#define CHANNEL "'" TN_PG_CHANNEL_PREFIX "' || current_schema()"

/* The rows, picked by ctid (stable: nothing else writes leases while the
 * lock is held), and their ledger rows by the name index: a round costs
 * its rows, not a join over both tables (which the planner chose for IN
 * and USING: 0.7 s for 1000 of 100 000 rows). */
#define RETIRE_DELETE                                                          \
    " d AS (DELETE FROM leases l WHERE l.ctid = ANY (ARRAY(SELECT s.ctid"      \
    " FROM leases s WHERE" OLD_ENOUGH " LIMIT %d))"                            \
    " RETURNING l.name, l.owner_id, l.fencing_token, l.released,"              \
    " l.expiry_noted),"                                                        \
    " g AS (DELETE FROM lease_grants e"                                        \
    " WHERE e.name = ANY (ARRAY(SELECT d.name FROM d))),"

/* W: the last token issued, whether its statement committed or not. */
#define RETIRE_FLOOR                                                           \
    " w AS (UPDATE tenure_retired SET floor = greatest(floor, (SELECT"         \
    " CASE WHEN is_called THEN last_value ELSE last_value - 1 END"             \
    " FROM lease_token_seq)) WHERE EXISTS (SELECT 1 FROM d) RETURNING floor)"

/* One implicit transaction (a multi-statement query): its commit is
 * flushed before anyone can read it; the lock excludes every statement
 * that draws a token (and every other change) while W is read and the
 * rows go.  Columns: rows deleted, W, expiries announced. */
#define RETIRE_SQL                                                             \
    "SET LOCAL synchronous_commit TO remote_apply;"                            \
    " SET LOCAL lock_timeout TO '" LOCK_WAIT "';"                              \
    " LOCK TABLE leases IN SHARE ROW EXCLUSIVE MODE;"                          \
    " WITH" RETIRE_DELETE RETIRE_FLOOR " SELECT (SELECT count(*) FROM d),"     \
    " coalesce((SELECT floor FROM w), (SELECT floor FROM tenure_retired)),"    \
    " (SELECT count(pg_notify(" CHANNEL ", " EXPIRED_LINE "))"                 \
    " FROM (SELECT * FROM d WHERE NOT d.released AND NOT d.expiry_noted"       \
    " ORDER BY d.fencing_token) d)"

static void round_fire(void *arg);
static void on_fd(void *arg, uint32_t events);

static void unwatch(struct tn_pg_retire *r)
{
    if (r->fd >= 0)
        tn_loop_del_fd(r->p->loop, r->fd);
    r->fd = -1;
    r->fd_events = 0;
}

static void watch(struct tn_pg_retire *r, uint32_t events)
{
    int fd = r->conn != NULL ? PQsocket(r->conn) : -1;
    if (fd != r->fd)
        unwatch(r);
    if (fd < 0)
        return;
    if (r->fd < 0) {
        if (tn_loop_add_fd(r->p->loop, fd, events, on_fd, r) == 0) {
            r->fd = fd;
            r->fd_events = events;
        }
        return;
    }
    if (events != r->fd_events && tn_loop_mod_fd(r->p->loop, fd, events) == 0)
        r->fd_events = events;
}

static void next_round(struct tn_pg_retire *r, int64_t in_ms)
{
    r->phase = IDLE;
    tn_loop_timer_arm(r->p->loop, &r->timer, tn_clock_now_ms() + in_ms,
                      round_fire, r);
}

static void close_conn(struct tn_pg_retire *r)
{
    unwatch(r);
    if (r->conn != NULL)
        PQfinish(r->conn);
    r->conn = NULL;
}

/* The connection failed: close it, try again at the next tick. */
static void fail(struct tn_pg_retire *r, const char *why)
{
    char msg[300];
    tn_pg_message(r->conn, msg, sizeof(msg));
    tn_log(TN_LOG_WARN, "store",
           "\"postgresql retirement round failed\" why=\"%s: %s\"", why, msg);
    r->n_failures++;
    close_conn(r);
    next_round(r, r->period_ms);
}

static void send_query(struct tn_pg_retire *r, enum phase phase,
                       const char *sql)
{
    r->phase = phase;
    r->failed = false;
    r->lock_timeout = false;
    if (PQsendQuery(r->conn, sql) != 1 || PQflush(r->conn) < 0) {
        fail(r, "cannot send");
        return;
    }
    watch(r, EPOLLIN);
}

static void notice_ignore(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static void round_fire(void *arg)
{
    struct tn_pg_retire *r = arg;
    /* A statement connection is ready: the schema is migrated. */
    if (!tn_pg_is_up(r->p)) {
        next_round(r, r->period_ms);
        return;
    }
    if (r->conn != NULL) {
        send_query(r, PROBING, r->probe_sql);
        return;
    }
    r->conn = PQconnectStart(r->p->conninfo);
    if (r->conn == NULL || PQstatus(r->conn) == CONNECTION_BAD) {
        fail(r, "cannot connect");
        return;
    }
    PQsetNoticeProcessor(r->conn, notice_ignore, NULL);
    r->phase = CONNECTING;
    watch(r, EPOLLOUT);
}

static void poll_connect(struct tn_pg_retire *r)
{
    unwatch(r); /* PQconnectPoll may switch sockets (next host) */
    switch (PQconnectPoll(r->conn)) {
    case PGRES_POLLING_READING:
        watch(r, EPOLLIN);
        return;
    case PGRES_POLLING_WRITING:
        watch(r, EPOLLOUT);
        return;
    case PGRES_POLLING_OK:
        if (PQsetnonblocking(r->conn, 1) != 0) {
            fail(r, "cannot make the connection non-blocking");
            return;
        }
        send_query(r, PROBING, r->probe_sql);
        return;
    default:
        fail(r, "cannot connect");
        return;
    }
}

/* One result of the running query. */
static void take(struct tn_pg_retire *r, PGresult *res)
{
    ExecStatusType st = PQresultStatus(res);
    if (st == PGRES_FATAL_ERROR || st == PGRES_BAD_RESPONSE) {
        const char *code = PQresultErrorField(res, PG_DIAG_SQLSTATE);
        r->failed = true;
        r->lock_timeout |= code != NULL && strcmp(code, "55P03") == 0;
        return;
    }
    if (st != PGRES_TUPLES_OK || PQntuples(res) != 1)
        return;
    if (r->phase == PROBING) {
        r->found = PQgetvalue(res, 0, 0)[0] == 't';
    } else if (PQnfields(res) >= 2) {
        r->deleted = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
        r->floor = strtoull(PQgetvalue(res, 0, 1), NULL, 10);
    }
}

/* The running query is over. */
static void query_done(struct tn_pg_retire *r)
{
    if (r->failed && r->lock_timeout) {
        r->n_lock_timeouts++; /* rolled back; the next tick tries again */
        next_round(r, r->period_ms);
        return;
    }
    if (r->failed) {
        fail(r, "query failed");
        return;
    }
    if (r->phase == PROBING) {
        if (r->found) {
            r->deleted = 0;
            send_query(r, RETIRING, r->retire_sql);
        } else {
            next_round(r, r->period_ms);
        }
        return;
    }
    r->n_rounds++;
    r->n_retired += (uint64_t)r->deleted;
    next_round(r, r->deleted >= ROUND_ROWS ? AGAIN_MS : r->period_ms);
}

static void on_fd(void *arg, uint32_t events)
{
    struct tn_pg_retire *r = arg;
    if (r->phase == CONNECTING) {
        poll_connect(r);
        return;
    }
    if ((events & EPOLLOUT) != 0 && PQflush(r->conn) < 0) {
        fail(r, "cannot send");
        return;
    }
    if (PQconsumeInput(r->conn) != 1) {
        fail(r, "connection broken");
        return;
    }
    while (!PQisBusy(r->conn)) {
        PGresult *res = PQgetResult(r->conn);
        if (res == NULL) {
            query_done(r);
            return;
        }
        take(r, res);
        PQclear(res);
    }
}

int tn_pg_retire_start(struct tn_pg *p, int64_t retain_ms)
{
    p->retire = NULL;
    if (retain_ms <= 0)
        return TN_OK; /* keep every name */
    struct tn_pg_retire *r = tn_calloc(1, sizeof(*r));
    if (r == NULL)
        return TN_ENOMEM;
    r->p = p;
    r->fd = -1;
    r->retain_ms = retain_ms;
    r->period_ms = retain_ms / 2;
    if (r->period_ms < PERIOD_MIN_MS)
        r->period_ms = PERIOD_MIN_MS;
    if (r->period_ms > PERIOD_MAX_MS)
        r->period_ms = PERIOD_MAX_MS;
    int n1 = snprintf(r->probe_sql, sizeof(r->probe_sql), PROBE_SQL,
                      (long long)retain_ms);
    int n2 = snprintf(r->retire_sql, sizeof(r->retire_sql), RETIRE_SQL,
                      (long long)retain_ms, ROUND_ROWS);
    if (n1 < 0 || (size_t)n1 >= sizeof(r->probe_sql) || n2 < 0 ||
        (size_t)n2 >= sizeof(r->retire_sql)) {
        tn_free(r);
        return TN_EINTERNAL; /* the buffers are too small: a bug */
    }
    p->retire = r;
    next_round(r, r->period_ms);
    return TN_OK;
}

void tn_pg_retire_stop(struct tn_pg *p)
{
    struct tn_pg_retire *r = p->retire;
    if (r == NULL)
        return;
    tn_loop_timer_disarm(p->loop, &r->timer);
    close_conn(r);
    tn_free(r);
    p->retire = NULL;
}

void tn_pg_retire_metrics(struct tn_pg *p, struct tn_buf *out)
{
    const struct tn_pg_retire *r = p->retire;
    struct tn_pg_retire none = {0};
    if (r == NULL)
        r = &none;
    (void)tn_buf_printf(
        out,
        "# TYPE tenure_names_retired_total counter\n"
        "tenure_names_retired_total %llu\n"
        "# TYPE tenure_retired_floor gauge\ntenure_retired_floor %llu\n"
        "# TYPE tenure_pg_retire_rounds_total counter\n"
        "tenure_pg_retire_rounds_total %llu\n"
        "# TYPE tenure_pg_retire_lock_timeouts_total counter\n"
        "tenure_pg_retire_lock_timeouts_total %llu\n"
        "# TYPE tenure_pg_retire_failures_total counter\n"
        "tenure_pg_retire_failures_total %llu\n",
        (unsigned long long)r->n_retired, (unsigned long long)r->floor,
        (unsigned long long)r->n_rounds, (unsigned long long)r->n_lock_timeouts,
        (unsigned long long)r->n_failures);
}
