/* SPDX-License-Identifier: MIT */
/* The PostgreSQL store's batches: every decision is one prepared statement
 * (src/store/pg/sql.c) on the database clock.  Requests that arrive in one loop
 * iteration are sent together as one pipelined transaction (sorted by name, so
 * that two instances always lock rows in the same order and cannot deadlock)
 * and answered only once its Sync reports the commit.  At most MAX_INFLIGHT
 * batches are in flight; what arrives meanwhile waits for the next one,
 * which is how the commits group.  A failed batch changed nothing: its
 * statements are sent again (serialization failures) or answered with an
 * error; a lost connection answers everything in flight TN_EUNAVAIL, the
 * outcome being unknown.  TN_PG_CONNS connections (PostgreSQL backends)
 * share the work; all of them live on the loop thread.  A change of a
 * name goes to the connection where the previous change of that name is
 * still in flight, until that one's events are sent (pinned_to), so this
 * instance's events of a name leave in the order of its changes.  The vtable
 * is in src/store/pg/store.c, events, the expiry sweep and blocking
 * acquire in src/store/pg/events.c and src/store/pg/wait.c, above this. */
#include "store/pg/batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "store/pg/conn.h"
#include "store/pg/floor.h"
#include "store/pg/limits.h"
#include "store/pg/op.h"
#include "store/pg/pick.h"
#include "store/pg/pin.h"
#include "store/pg/result.h"
#include "store/pg/sql.h"

#define MAX_INFLIGHT 2
#define MAX_BATCH 512
#define MAX_TRIES 5
#define OP_TIMEOUT_MS 5000

static void schedule_flush(struct tn_pg *p);
static bool any_ready(const struct tn_pg *p);

/* A statement connection is up, and the LISTEN connection has been up
 * once since the start, so that whatever this instance answers, its
 * subscribers hear about from then on.  A LISTEN connection lost later
 * does not take the instance out of service (events carry no safety);
 * its subscribers get a reset instead (src/store/pg/events.c). */
bool tn_pg_is_up(const struct tn_pg *p)
{
    return any_ready(p) && p->n_listen_connects > 0;
}

static bool any_ready(const struct tn_pg *p)
{
    for (int i = 0; i < TN_PG_CONNS; i++) {
        if (p->conns[i].state == TN_PG_READY)
            return true;
    }
    return false;
}

/* ---- ops ---- */

/* Answer op with its parsed result, but keep it: a committed change whose
 * trailer has not ended yet still pins its name (pinned_to). */
static void op_reply(struct tn_pg *p, struct tn_pg_op *op)
{
    p->n_unavailable += tn_pg_floor_guard(&p->floor, op->out);
    tn_pg_limits_answered(p, op);
    tn_store_done_fn done = op->done;
    op->done = NULL;
    done(op->arg);
}

/* Answer op: with its parsed result when rc is TN_OK, else with rc. */
static void op_answer(struct tn_pg *p, struct tn_pg_op *op, int rc)
{
    tn_pg_change_out(p, op);
    if (rc < 0) {
        tn_store_result_release(op->out);
        memset(op->out, 0, sizeof(*op->out));
        op->out->rc = rc;
        if (rc == TN_EUNAVAIL || rc == TN_ENOSPC) {
            op->out->retry_after_ms = TN_PG_RETRY_AFTER_MS;
            p->n_unavailable++;
        }
    } else {
        p->n_unavailable += tn_pg_floor_guard(&p->floor, op->out);
    }
    tn_pg_limits_answered(p, op);
    tn_store_done_fn done = op->done;
    void *arg = op->arg;
    tn_pg_op_free(op);
    done(arg);
}

/* Queue op, or answer it now when the store is not ready. */
void tn_pg_submit(struct tn_pg *p, struct tn_pg_op *op,
                  struct tn_store_result *out, tn_store_done_fn done, void *arg)
{
    if (op == NULL) {
        out->rc = TN_ENOMEM;
        done(arg);
        return;
    }
    op->done = done;
    op->arg = arg;
    /* Without the synchronous standby it requires, the instance runs
     * nothing but the check that looks for one (src/store/pg/sync.c). */
    if (!tn_pg_is_up(p) || (p->sync.gate && op->stmt != TN_PG_SYNC)) {
        op_answer(p, op, TN_EUNAVAIL);
        return;
    }
    op->seq = ++p->op_seq;
    if (tn_pg_is_change(op))
        op->hash = tn_pg_op_hash(op->name);
    p->n_pending++;
    op->next = NULL;
    if (p->pending_tail != NULL)
        p->pending_tail->next = op;
    else
        p->pending = op;
    p->pending_tail = op;
    schedule_flush(p);
}

/* ---- batches ---- */

static void requeue_front(struct tn_pg *p, struct tn_pg_op **ops, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        struct tn_pg_op *op = ops[i];
        tn_pg_change_out(p, op);
        tn_pg_limits_unreserve(p, op);
        tn_store_result_release(op->out);
        memset(op->out, 0, sizeof(*op->out));
        op->again = false;
        op->next = p->pending;
        p->pending = op;
        if (p->pending_tail == NULL)
            p->pending_tail = op;
        p->n_pending++;
        p->n_retries++;
    }
}

static void watchdog_rearm(struct tn_pg_conn *c);
static void fail_pending(struct tn_pg *p);

/* Unlink the oldest batch (b) from c's in-flight list. */
static void unlink_oldest(struct tn_pg_conn *c, struct tn_pg_batch *b)
{
    c->inflight = b->next;
    if (c->inflight == NULL)
        c->inflight_tail = NULL;
    c->n_inflight--;
    c->store->n_batches++;
}

/* Decide each op of a finished batch (b->ops, emptied here): answer, or
 * send again.  With hold, the changes the transaction committed are
 * answered but kept in b->held: they pin their names to this connection
 * until the trailer has sent their events.  b stays consistent while the
 * answers' callbacks run. */
static void settle(struct tn_pg *p, struct tn_pg_batch *b, bool committed,
                   bool hold)
{
    struct tn_pg_op **ops = b->ops;
    size_t n = b->n;
    struct tn_pg_op **again = tn_calloc(n > 0 ? n : 1, sizeof(*again));
    size_t n_again = 0;
    b->ops = NULL;
    b->n = 0;
    b->held = ops;
    b->n_held = 0;
    for (size_t i = 0; i < n; i++) {
        struct tn_pg_op *op = ops[i];
        bool retry = committed ? op->again : b->retry_all || i != b->err_idx;
        if (retry && op->tries < MAX_TRIES && again != NULL) {
            again[n_again++] = op;
        } else if (committed && !op->again && hold && tn_pg_is_change(op)) {
            ops[b->n_held++] = op;
            op_reply(p, op);
        } else if (committed && !op->again) {
            op_answer(p, op, TN_OK);
        } else {
            op_answer(p, op,
                      !committed && i == b->err_idx ? b->err_rc : TN_EUNAVAIL);
        }
    }
    if (b->n_held == 0) {
        b->held = NULL;
        tn_free(ops);
    }
    requeue_front(p, again, n_again);
    tn_free(again);
}

/* Free the answered changes a batch kept for its trailer (its events have
 * been sent, or the connection is gone): their names are free to go to
 * any connection again. */
static void forget_held(struct tn_pg *p, struct tn_pg_batch *b)
{
    for (size_t i = 0; i < b->n_held; i++) {
        tn_pg_change_out(p, b->held[i]);
        tn_pg_op_free(b->held[i]);
    }
    tn_free(b->held);
    b->held = NULL;
    b->n_held = 0;
}

/* The trailer's Sync came back: the events of the batch's transaction
 * have been sent.  The batch leaves the connection. */
static void trailer_done(struct tn_pg_conn *c, struct tn_pg_batch *b)
{
    unlink_oldest(c, b);
    forget_held(c->store, b);
    tn_free(b);
    watchdog_rearm(c);
    schedule_flush(c->store);
}

/* Answer what the batch's transaction decided.  With a trailer and the
 * connection still usable, the batch stays in flight until the trailer's
 * Sync, keeping its committed changes (settle). */
static void batch_done(struct tn_pg_conn *c, struct tn_pg_batch *b)
{
    struct tn_pg *p = c->store;
    if (b->settled) {
        trailer_done(c, b);
        return;
    }
    bool committed = b->err_rc == 0;
    if (!committed)
        p->n_failures++;
    bool drop = b->drop;
    if (drop) {
        /* rolled back, but the connection is unusable: the others too */
        b->retry_all = false;
        b->err_idx = b->n;
        b->err_rc = TN_EUNAVAIL;
    }
    bool stays = b->trailer && !drop;
    if (!stays)
        unlink_oldest(c, b);
    settle(p, b, committed, stays);
    if (stays) {
        b->settled = true;
        b->idx = 0;
        b->got = false;
        schedule_flush(p);
        return;
    }
    tn_free(b);
    watchdog_rearm(c);
    if (drop)
        tn_pg_conn_drop(c, "statement failed on the connection");
    schedule_flush(p);
}

/* Send a batch of up to n pending ops on c: TN_OK (also when c carries
 * none of them), TN_ENOMEM, or TN_EIO (the connection is unusable). */
static int send_batch(struct tn_pg_conn *c, size_t n)
{
    bool none = false;
    struct tn_pg_batch *b = tn_pg_take_batch(c, n, &none);
    if (none)
        return TN_OK;
    if (b == NULL)
        return TN_ENOMEM;
    bool events = false;
    for (size_t i = 0; i < b->n; i++) {
        const struct tn_pg_stmt_def *d = &tn_pg_stmts[b->ops[i]->stmt];
        tn_pg_limits_stamp(c->store, b->ops[i]);
        events |= tn_pg_writes_events(b->ops[i]->stmt);
        b->notify_in |= tn_pg_notifies_inside(b->ops[i]->stmt);
        b->sweeps |= tn_pg_is_sweep(b->ops[i]->stmt);
        if (PQsendQueryPrepared(c->conn, d->name, d->n_params,
                                b->ops[i]->values, NULL, NULL, 0) != 1)
            return TN_EIO;
    }
    c->store->n_statements += b->n;
    /* A batch that sweeps sends its events inside its transaction: the
     * names it changes are not known before it runs, so nothing can be
     * pinned behind it; instead whatever changes a swept name next (on
     * any connection) waits for the row lock, hence for this commit and
     * its events.  One sweep at
     * a time, every 200 ms (back to back only while they come back
     * full), so this commit serialized with the other notifying ones,
     * WAL flush included, costs little. */
    if (b->notify_in && PQsendQueryParams(c->conn, tn_pg_sql_notify_in_txn, 0,
                                          NULL, NULL, NULL, NULL, 0) != 1)
        return TN_EIO;
    if (PQpipelineSync(c->conn) != 1)
        return TN_EIO;
    /* Otherwise the events of this transaction go out in the next one,
     * queued behind its Sync, so they follow its commit at once; until it
     * ends, the batch's changes pin their names here (settle). */
    b->trailer = events && !b->notify_in;
    if (b->trailer &&
        (PQsendQueryPrepared(c->conn, tn_pg_stmts[TN_PG_NOTIFY].name, 0, NULL,
                             NULL, NULL, 0) != 1 ||
         PQpipelineSync(c->conn) != 1))
        return TN_EIO;
    int f = PQflush(c->conn);
    if (f < 0)
        return TN_EIO;
    tn_pg_conn_watch(c, EPOLLIN | (f == 1 ? EPOLLOUT : 0u));
    watchdog_rearm(c);
    return TN_OK;
}

/* Spread what is pending over the connections: idle ones first, then one
 * more batch on each; each takes the changes pinned to it and an even
 * share of the rest. */
static void flush(void *arg)
{
    struct tn_pg *p = arg;
    if (!any_ready(p)) {
        fail_pending(p);
        return;
    }
    for (unsigned level = 1; level <= MAX_INFLIGHT && p->n_pending > 0;
         level++) {
        size_t slots = tn_pg_free_slots(p, level);
        for (int i = 0; i < TN_PG_CONNS && p->n_pending > 0 && slots > 0; i++) {
            struct tn_pg_conn *c = &p->conns[i];
            if (!tn_pg_takes(p, c, level))
                continue;
            size_t pinned[TN_PG_CONNS];
            size_t any = 0;
            tn_pg_count_pending(p, pinned, &any);
            size_t n = pinned[i] + (any + slots - 1) / slots;
            if (n == 0) {
                slots--;
                continue;
            }
            if (n > MAX_BATCH)
                n = MAX_BATCH;
            slots--;
            int rc = send_batch(c, n);
            if (rc == TN_ENOMEM)
                return;
            if (rc < 0)
                tn_pg_conn_drop(c, "cannot send statements");
        }
    }
    if (p->n_pending > 0 && !any_ready(p))
        fail_pending(p);
}

/* Run flush after the events of this loop iteration: the batch gathers
 * every request that arrived with them. */
static void schedule_flush(struct tn_pg *p)
{
    if (!p->flush_timer.armed && p->pending != NULL)
        tn_loop_timer_arm(p->loop, &p->flush_timer, 0, flush, p);
}

static void watchdog_fire(void *arg)
{
    struct tn_pg_conn *c = arg;
    if (c->inflight != NULL &&
        tn_clock_now_ms() >= c->inflight->sent_ms + OP_TIMEOUT_MS)
        tn_pg_conn_stalled(c, "no answer from postgresql in time");
    else
        watchdog_rearm(c);
}

static void watchdog_rearm(struct tn_pg_conn *c)
{
    if (c->inflight == NULL) {
        tn_loop_timer_disarm(c->store->loop, &c->watchdog);
        return;
    }
    tn_loop_timer_arm(c->store->loop, &c->watchdog,
                      c->inflight->sent_ms + OP_TIMEOUT_MS, watchdog_fire, c);
}

void tn_pg_on_ready(struct tn_pg_conn *c)
{
    schedule_flush(c->store);
}

static void read_results(struct tn_pg_conn *c)
{
    bool prev_null = false;
    while (c->state == TN_PG_READY && c->inflight != NULL &&
           !PQisBusy(c->conn)) {
        struct tn_pg_batch *b = c->inflight;
        PGresult *r = PQgetResult(c->conn);
        if (r == NULL) {
            if (prev_null || !b->got)
                return;
            prev_null = true;
            b->idx++;
            b->got = false;
            continue;
        }
        prev_null = false;
        if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
            PQclear(r);
            batch_done(c, b);
            continue;
        }
        tn_pg_take_result(b, r);
        PQclear(r);
    }
}

void tn_pg_on_io(struct tn_pg_conn *c, uint32_t events)
{
    if ((events & EPOLLOUT) != 0) {
        int f = PQflush(c->conn);
        if (f < 0) {
            tn_pg_conn_drop(c, "cannot send statements");
            return;
        }
        tn_pg_conn_watch(c, EPOLLIN | (f == 1 ? EPOLLOUT : 0u));
    }
    if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0 &&
        PQconsumeInput(c->conn) != 1) {
        tn_pg_conn_drop(c, "connection broken");
        return;
    }
    read_results(c);
    if (c->state == TN_PG_READY && PQstatus(c->conn) == CONNECTION_BAD)
        tn_pg_conn_drop(c, "connection broken");
}

static void fail_inflight(struct tn_pg_conn *c)
{
    struct tn_pg *p = c->store;
    while (c->inflight != NULL) {
        struct tn_pg_batch *b = c->inflight;
        unlink_oldest(c, b);
        p->n_failures++;
        for (size_t i = 0; i < b->n; i++)
            op_answer(p, b->ops[i], TN_EUNAVAIL);
        tn_free(b->ops);
        forget_held(p, b); /* answered; their events may be lost */
        tn_free(b);
    }
    tn_loop_timer_disarm(p->loop, &c->watchdog);
}

static void fail_pending(struct tn_pg *p)
{
    while (p->pending != NULL) {
        struct tn_pg_op *op = p->pending;
        p->pending = op->next;
        if (p->pending == NULL)
            p->pending_tail = NULL;
        p->n_pending--;
        op_answer(p, op, TN_EUNAVAIL);
    }
}

void tn_pg_fail_conn(struct tn_pg_conn *c)
{
    if (c == NULL)
        return;
    fail_inflight(c);
    if (!any_ready(c->store))
        fail_pending(c->store);
    else
        schedule_flush(c->store);
}

void tn_pg_fail_all(struct tn_pg *p)
{
    for (int i = 0; i < TN_PG_CONNS; i++)
        fail_inflight(&p->conns[i]);
    fail_pending(p);
}
