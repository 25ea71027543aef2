/* SPDX-License-Identifier: MIT */
/* Events of the PostgreSQL store.  Every statement that changes hands
 * writes its event to the session's outbox, sent with pg_notify right
 * after (or, for the sweep, inside) its commit (src/store/pg/sql.c,
 * src/store/pg/store.c), so PostgreSQL delivers each event in commit order to
 * every instance listening, this one included.  Here: the dedicated LISTEN
 * connection (reconnecting with backoff; events sent while it is down are lost,
 * which is allowed: events carry no safety; a heartbeat bounds how long it
 * can sit on a node that stopped answering), whose payloads go to the parser
 * of src/store/pg/events_payload.c (feeding on_event and waking waiters), the
 * periodic expiry sweep (nobody writes when a lease runs out, so each
 * instance asks every SWEEP_MS; one of them announces each expiry) and the
 * periodic prune that bounds the grants ledger.  Loop thread only. */
#include "store/pg/events.h"

#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include <tenure/err.h>

#include "common/clock.h"
#include "common/log.h"
#include "store/pg/batch.h"
#include "store/pg/conn.h"
#include "store/pg/events_payload.h"
#include "store/pg/limits.h"
#include "store/pg/op.h"
#include "store/pg/sql.h"
#include "store/pg/sync.h"
#include "store/pg/wait.h"

#define SWEEP_MS 200
#define SWEEP_ROWS 200
#define PRUNE_MS 30000
#define PRUNE_AGAIN_MS 1000
#define PRUNE_ROWS 10000 /* PRUNE_SQL's LIMIT */
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 1000
/* The LISTEN connection asks every HEARTBEAT_MS whether its node still
 * answers; every answer it waits for must come within ANSWER_WAIT_MS. */
#define HEARTBEAT_MS 1000
#define ANSWER_WAIT_MS 2000
/* Is the node a standby now; has it a synchronous standby (seen here on
 * a connection no batch can clog: a primary left behind by a failover
 * holds its commits, and the check behind them, until the statement
 * timeout, src/store/pg/sync.c). */
#define HEARTBEAT_SQL                                                          \
    "SELECT pg_is_in_recovery(), EXISTS (SELECT 1 FROM pg_stat_replication"    \
    " WHERE sync_state IN ('sync', 'quorum'))"

static void listen_start(struct tn_pg *p);

/* ---- the LISTEN connection ---- */

static void listen_close(struct tn_pg *p)
{
    struct tn_pg_listen *l = &p->listen;
    tn_loop_timer_disarm(p->loop, &l->beat_timer);
    tn_pg_link_close(&l->link);
    l->state = TN_PG_DOWN;
    l->beating = false;
}

static void listen_retry(void *arg)
{
    listen_start(arg);
}

/* The link is closed (it failed, or was given up): reconnect later. */
static void listen_down(void *arg, const char *why)
{
    struct tn_pg *p = arg;
    struct tn_pg_listen *l = &p->listen;
    if (l->state == TN_PG_READY)
        tn_log(TN_LOG_WARN, "store",
               "\"postgresql event connection lost, reconnecting\" why=\"%s\"",
               why);
    else if (p->n_listen_connects == 0 && l->backoff_ms == BACKOFF_MIN_MS)
        tn_log(TN_LOG_WARN, "store",
               "\"postgresql event connection failed; not ready until it is "
               "up\" why=\"%s\"",
               why);
    listen_close(p);
    tn_loop_timer_arm(p->loop, &l->retry_timer,
                      tn_clock_now_ms() + l->backoff_ms, listen_retry, p);
    l->backoff_ms *= 2;
    if (l->backoff_ms > BACKOFF_MAX_MS)
        l->backoff_ms = BACKOFF_MAX_MS;
}

static void listen_drop(struct tn_pg *p, const char *why)
{
    char msg[300];
    char full[400];
    tn_pg_message(p->listen.link.conn, msg, sizeof(msg));
    (void)snprintf(full, sizeof(full), "%s: %s", why, msg);
    tn_pg_link_fail(&p->listen.link, full);
}

static void listen_start(struct tn_pg *p)
{
    p->listen.state = TN_PG_CONNECTING;
    tn_pg_link_connect(&p->listen.link);
}

static void listen_up(void *arg)
{
    struct tn_pg *p = arg;
    struct tn_pg_listen *l = &p->listen;
    if (PQsendQuery(l->link.conn, tn_pg_sql_listen) != 1 ||
        PQflush(l->link.conn) < 0) {
        listen_drop(p, "cannot send LISTEN");
        return;
    }
    l->state = TN_PG_SETUP;
    tn_pg_link_await(&l->link, ANSWER_WAIT_MS);
    tn_pg_link_watch(&l->link, EPOLLIN);
}

static void beat_fire(void *arg);

static void beat_arm(struct tn_pg *p)
{
    tn_loop_timer_arm(p->loop, &p->listen.beat_timer,
                      tn_clock_now_ms() + HEARTBEAT_MS, beat_fire, p);
}

/* Nothing but NOTIFYs arrive on this connection, so a primary that stops
 * answering (paused) or becomes a standby would leave it waiting for ever:
 * every HEARTBEAT_MS it asks whether the node is in recovery, and expects
 * the answer within ANSWER_WAIT_MS.  It also follows the statement
 * connections: events are sent where they commit. */
static void beat_fire(void *arg)
{
    struct tn_pg *p = arg;
    struct tn_pg_listen *l = &p->listen;
    if (l->state != TN_PG_READY || l->beating)
        return;
    if (p->hosts.hint != l->link.host) {
        tn_pg_link_fail(&l->link, "the statement connections moved to "
                                  "another host");
        return;
    }
    if (PQsendQuery(l->link.conn, HEARTBEAT_SQL) != 1 ||
        PQflush(l->link.conn) < 0) {
        listen_drop(p, "cannot send the heartbeat");
        return;
    }
    l->beating = true;
    l->recovery = false;
    tn_pg_link_await(&l->link, ANSWER_WAIT_MS);
}

/* The results of LISTEN: ready once all are in and none failed. */
static void listen_setup(struct tn_pg *p)
{
    struct tn_pg_listen *l = &p->listen;
    bool failed = false;
    while (!PQisBusy(l->link.conn)) {
        PGresult *r = PQgetResult(l->link.conn);
        if (r == NULL) {
            if (failed) {
                listen_drop(p, "LISTEN failed");
                return;
            }
            tn_pg_link_answered(&l->link);
            l->state = TN_PG_READY;
            l->backoff_ms = BACKOFF_MIN_MS;
            p->n_listen_connects++;
            beat_arm(p);
            /* Events sent while nobody listened are gone: waiters must
             * not sleep on a release they never heard of, and
             * subscribers must re-read state. */
            if (p->n_listen_connects > 1 && p->on_event != NULL) {
                struct tn_event ev = {.type = TN_EVENT_RESET};
                p->on_event(p->event_ctx, &ev);
            }
            tn_pg_wait_wake_all(p);
            tn_pg_events_up(p);
            return;
        }
        failed |= PQresultStatus(r) != PGRES_COMMAND_OK;
        PQclear(r);
    }
}

/* The heartbeat's answer, once complete.  False when the link failed. */
static bool beat_result(struct tn_pg *p)
{
    struct tn_pg_listen *l = &p->listen;
    while (l->beating && !PQisBusy(l->link.conn)) {
        PGresult *r = PQgetResult(l->link.conn);
        if (r == NULL) {
            l->beating = false;
            tn_pg_link_answered(&l->link);
            if (l->recovery) {
                tn_pg_link_fail(&l->link, "the node is a standby now");
                return false;
            }
            beat_arm(p);
            break;
        }
        bool ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
                  PQnfields(r) == 2;
        l->recovery |= ok && PQgetvalue(r, 0, 0)[0] == 't';
        bool standby = ok && PQgetvalue(r, 0, 1)[0] == 't';
        PQclear(r);
        if (ok && !l->recovery)
            tn_pg_sync_heard(p, l->link.host, standby);
        if (!ok) {
            listen_drop(p, "heartbeat failed");
            return false;
        }
    }
    return true;
}

static void listen_io(void *arg, uint32_t events)
{
    struct tn_pg *p = arg;
    struct tn_pg_listen *l = &p->listen;
    (void)events;
    if (PQconsumeInput(l->link.conn) != 1) {
        listen_drop(p, "connection broken");
        return;
    }
    if (l->state == TN_PG_SETUP)
        listen_setup(p);
    if (l->state != TN_PG_READY || !beat_result(p))
        return;
    PGnotify *n;
    while ((n = PQnotifies(l->link.conn)) != NULL) {
        tn_pg_events_deliver(p, n->extra);
        PQfreemem(n);
        if (p->listen.link.conn == NULL)
            return; /* dropped meanwhile */
    }
    if (PQstatus(l->link.conn) == CONNECTION_BAD)
        listen_drop(p, "connection broken");
}

static const struct tn_pg_link_ops listen_ops = {
    .up = listen_up,
    .io = listen_io,
    .fail = listen_down,
};

/* ---- the sweep and the prune ---- */

static void sweep_fire(void *arg);
static void prune_fire(void *arg);

static void sweep_done(void *arg)
{
    struct tn_pg *p = arg;
    p->sweeping = false;
    if (p->closing)
        return;
    size_t n = p->sweep_res.rc == TN_OK ? p->sweep_res.n_items : 0;
    p->n_expiries += n;
    /* A full sweep leaves more behind: go on at once. */
    int64_t next = n >= SWEEP_ROWS ? 0 : SWEEP_MS;
    tn_loop_timer_arm(p->loop, &p->sweep_timer, tn_clock_now_ms() + next,
                      sweep_fire, p);
}

/* Submit stmt (sweep or prune) with one numeric parameter. */
static void submit_job(struct tn_pg *p, enum tn_pg_stmt stmt, size_t param,
                       struct tn_store_result *res, tn_store_done_fn done)
{
    tn_store_result_release(res);
    memset(res, 0, sizeof(*res));
    struct tn_pg_op *op = tn_pg_op_new(stmt, "", 0, res);
    if (op != NULL) {
        (void)snprintf(op->n1, sizeof(op->n1), "%zu", param);
        op->values[0] = op->n1;
    }
    tn_pg_submit(p, op, res, done, p);
}

static void sweep_fire(void *arg)
{
    struct tn_pg *p = arg;
    /* Only an instance with event subscribers sweeps: expiries matter to
     * nobody else (waiters have their own timer at the holder's expiry),
     * and the sweep costs a row update per grant that runs out.  An
     * acquire that takes over an unannounced expiry still announces it. */
    bool watched = p->watched == NULL || p->watched(p->event_ctx);
    if (!tn_pg_is_up(p) || !watched) {
        tn_loop_timer_arm(p->loop, &p->sweep_timer,
                          tn_clock_now_ms() + SWEEP_MS, sweep_fire, p);
        return;
    }
    p->sweeping = true;
    submit_job(p, TN_PG_SWEEP, SWEEP_ROWS, &p->sweep_res, sweep_done);
}

static void prune_done(void *arg)
{
    struct tn_pg *p = arg;
    p->pruning = false;
    if (p->closing)
        return;
    size_t n = p->prune_res.rc == TN_OK ? p->prune_res.n_items : 0;
    int64_t next = n >= PRUNE_ROWS ? PRUNE_AGAIN_MS : PRUNE_MS;
    tn_loop_timer_arm(p->loop, &p->prune_timer, tn_clock_now_ms() + next,
                      prune_fire, p);
}

static void prune_fire(void *arg)
{
    struct tn_pg *p = arg;
    if (!tn_pg_is_up(p)) {
        tn_loop_timer_arm(p->loop, &p->prune_timer,
                          tn_clock_now_ms() + PRUNE_MS, prune_fire, p);
        return;
    }
    p->pruning = true;
    submit_job(p, TN_PG_PRUNE, TN_PG_LEDGER_KEEP, &p->prune_res, prune_done);
}

/* The count behind --max-leases and --max-names (src/store/pg/limits.c). */
static void count_fire(void *arg);

static void count_done(void *arg)
{
    struct tn_pg *p = arg;
    int64_t next = tn_pg_limits_counted(p);
    if (!p->closing)
        tn_loop_timer_arm(p->loop, &p->limits.timer, tn_clock_now_ms() + next,
                          count_fire, p);
}

/* A count due while the store is down waits for it to be up again
 * (tn_pg_events_up) instead of looking every so often. */
static void count_fire(void *arg)
{
    struct tn_pg *p = arg;
    p->limits.n_attempts++;
    if (!tn_pg_is_up(p)) {
        p->limits.parked = true;
        return;
    }
    tn_pg_limits_count_sent(p);
    submit_job(p, TN_PG_COUNT, 0, &p->limits.result, count_done);
}

void tn_pg_events_up(struct tn_pg *p)
{
    if (!p->limits.parked || p->closing || !tn_pg_is_up(p))
        return;
    p->limits.parked = false;
    tn_loop_timer_arm(p->loop, &p->limits.timer, tn_clock_now_ms(), count_fire,
                      p);
}

void tn_pg_events_count_start(struct tn_pg *p)
{
    tn_loop_timer_arm(p->loop, &p->limits.timer, tn_clock_now_ms(), count_fire,
                      p);
}

void tn_pg_events_start(struct tn_pg *p)
{
    tn_pg_link_init(&p->listen.link, p->loop, &p->hosts, &listen_ops, p);
    p->listen.backoff_ms = BACKOFF_MIN_MS;
    listen_start(p);
    int64_t now = tn_clock_now_ms();
    tn_loop_timer_arm(p->loop, &p->sweep_timer, now + SWEEP_MS, sweep_fire, p);
    tn_loop_timer_arm(p->loop, &p->prune_timer, now + PRUNE_MS, prune_fire, p);
}

void tn_pg_events_stop(struct tn_pg *p)
{
    tn_loop_timer_disarm(p->loop, &p->sweep_timer);
    tn_loop_timer_disarm(p->loop, &p->prune_timer);
    tn_loop_timer_disarm(p->loop, &p->limits.timer);
    tn_loop_timer_disarm(p->loop, &p->listen.retry_timer);
    listen_close(p);
}

void tn_pg_events_metrics(struct tn_pg *p, struct tn_buf *out)
{
    (void)tn_buf_printf(
        out,
        "# TYPE tenure_pg_listen_ready gauge\ntenure_pg_listen_ready %d\n"
        "# TYPE tenure_pg_listen_connects_total counter\n"
        "tenure_pg_listen_connects_total %llu\n"
        "# TYPE tenure_pg_events_heard_total counter\n"
        "tenure_pg_events_heard_total %llu\n"
        "# TYPE tenure_expiries_total counter\ntenure_expiries_total %llu\n",
        p->listen.state == TN_PG_READY,
        (unsigned long long)p->n_listen_connects,
        (unsigned long long)p->n_events, (unsigned long long)p->n_expiries);
}
