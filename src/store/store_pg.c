/* SPDX-License-Identifier: MIT */
/* The PostgreSQL store: every decision is one prepared statement (pg_sql.c)
 * on the database clock.  Requests that arrive in one loop iteration are
 * sent together as one pipelined transaction (sorted by name, so that two
 * instances always lock rows in the same order and cannot deadlock) and
 * answered only once its Sync reports the commit.  At most MAX_INFLIGHT
 * batches are in flight; what arrives meanwhile waits for the next one,
 * which is how the commits group.  A failed batch changed nothing: its
 * statements are sent again (serialization failures) or answered with an
 * error; a lost connection answers everything in flight TN_EUNAVAIL, the
 * outcome being unknown.  TN_PG_CONNS connections (PostgreSQL backends)
 * share the work; all of them live on the loop thread.  Events, the
 * expiry sweep and blocking acquire live in pg_events.c and pg_wait.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/rand.h"
#include "pg_sql.h"
#include "pg_store.h"

#define MAX_INFLIGHT 2
#define MAX_BATCH 512
#define MAX_TRIES 5
#define OP_TIMEOUT_MS 5000

static void schedule_flush(struct tn_pg *p);
static bool any_ready(const struct tn_pg *p);

bool tn_pg_is_up(const struct tn_pg *p)
{
    return any_ready(p);
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

static void op_free(struct tn_pg_op *op)
{
    tn_free(op->name);
    tn_free(op->s2);
    tn_free(op->s3);
    tn_free(op->s4);
    tn_free(op);
}

/* Answer op: with its parsed result when rc is TN_OK, else with rc. */
static void op_answer(struct tn_pg *p, struct tn_pg_op *op, int rc)
{
    if (rc < 0) {
        tn_store_result_release(op->out);
        memset(op->out, 0, sizeof(*op->out));
        op->out->rc = rc;
        if (rc == TN_EUNAVAIL || rc == TN_ENOSPC) {
            op->out->retry_after_ms = TN_PG_RETRY_AFTER_MS;
            p->n_unavailable++;
        }
    }
    tn_store_done_fn done = op->done;
    void *arg = op->arg;
    op_free(op);
    done(arg);
}

struct tn_pg_op *tn_pg_op_new(enum tn_pg_stmt stmt, const char *name,
                              size_t name_len, struct tn_store_result *out)
{
    struct tn_pg_op *op = tn_calloc(1, sizeof(*op));
    if (op == NULL)
        return NULL;
    op->stmt = stmt;
    op->out = out;
    op->name = tn_strndup(name, name_len);
    if (op->name == NULL) {
        tn_free(op);
        return NULL;
    }
    op->values[0] = op->name;
    return op;
}

static void set_secret(struct tn_pg_op *op, const uint8_t *secret)
{
    op->secret_hex[0] = '\\';
    op->secret_hex[1] = 'x';
    tn_hex_encode(secret, TN_SECRET_BYTES, op->secret_hex + 2);
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
    if (!any_ready(p)) {
        op_answer(p, op, TN_EUNAVAIL);
        return;
    }
    op->seq = ++p->op_seq;
    p->n_pending++;
    op->next = NULL;
    if (p->pending_tail != NULL)
        p->pending_tail->next = op;
    else
        p->pending = op;
    p->pending_tail = op;
    schedule_flush(p);
}

/* A copy of s, or NULL for NULL; *ok turns false when out of memory. */
static char *dup_opt(const char *s, bool *ok)
{
    if (s == NULL)
        return NULL;
    char *d = tn_strdup(s);
    if (d == NULL)
        *ok = false;
    return d;
}

struct tn_pg_op *tn_pg_op_acquire(const struct tn_acquire_req *r,
                                  struct tn_store_result *out)
{
    struct tn_pg_op *op =
        tn_pg_op_new(TN_PG_ACQUIRE, r->name, r->name_len, out);
    if (op != NULL) {
        bool ok = true;
        op->s2 = dup_opt(r->owner_id, &ok);
        op->s3 = dup_opt(r->request_id, &ok);
        op->s4 = dup_opt(r->principal, &ok);
        if (!ok || op->s2 == NULL) {
            op_free(op);
            op = NULL;
        }
    }
    if (op != NULL) {
        memcpy(op->secret, r->secret, TN_SECRET_BYTES);
        set_secret(op, r->secret);
        (void)snprintf(op->n1, sizeof(op->n1), "%lld", (long long)r->ttl_ms);
        (void)snprintf(op->n2, sizeof(op->n2), "%lld",
                       (long long)r->lock_delay_ms);
        const char *v[] = {op->name, op->s2,         op->n1, op->n2,
                           op->s3,   op->secret_hex, op->s4};
        memcpy(op->values, v, sizeof(v));
    }
    return op;
}

static void pg_acquire(struct tn_store *s, const struct tn_acquire_req *r,
                       struct tn_store_result *out, tn_store_done_fn done,
                       void *arg)
{
    struct tn_pg *p = (struct tn_pg *)s;
    if (tn_pg_wait_acquire(p, r, out, done, arg))
        return;
    tn_pg_submit(p, tn_pg_op_acquire(r, out), out, done, arg);
}

struct tn_pg_op *tn_pg_op_token(enum tn_pg_stmt stmt,
                                const struct tn_token_req *r,
                                struct tn_store_result *out)
{
    struct tn_pg_op *op = tn_pg_op_new(stmt, r->name, r->name_len, out);
    bool ok = true;
    if (op != NULL)
        op->s3 = dup_opt(r->principal, &ok);
    if (!ok) {
        op_free(op);
        op = NULL;
    }
    if (op != NULL) {
        op->token = r->token;
        set_secret(op, r->secret);
        (void)snprintf(op->n1, sizeof(op->n1), "%llu",
                       (unsigned long long)r->token);
        if (stmt == TN_PG_RENEW)
            (void)snprintf(op->n2, sizeof(op->n2), "%lld",
                           (long long)r->ttl_ms);
        else
            (void)snprintf(op->n2, sizeof(op->n2), "%s",
                           r->force ? "true" : "false");
        const char *v[] = {op->name, op->n1, op->secret_hex, op->n2, op->s3};
        memcpy(op->values, v, sizeof(v));
    }
    return op;
}

static void token_op(struct tn_store *s, enum tn_pg_stmt stmt,
                     const struct tn_token_req *r, struct tn_store_result *out,
                     tn_store_done_fn done, void *arg)
{
    tn_pg_submit((struct tn_pg *)s, tn_pg_op_token(stmt, r, out), out, done,
                 arg);
}

static void pg_renew(struct tn_store *s, const struct tn_token_req *r,
                     struct tn_store_result *out, tn_store_done_fn done,
                     void *arg)
{
    token_op(s, TN_PG_RENEW, r, out, done, arg);
}

static void pg_release(struct tn_store *s, const struct tn_token_req *r,
                       struct tn_store_result *out, tn_store_done_fn done,
                       void *arg)
{
    token_op(s, TN_PG_RELEASE, r, out, done, arg);
}

static void pg_get(struct tn_store *s, const char *name, size_t name_len,
                   struct tn_store_result *out, tn_store_done_fn done,
                   void *arg)
{
    tn_pg_submit((struct tn_pg *)s,
                 tn_pg_op_new(TN_PG_GET, name, name_len, out), out, done, arg);
}

static void pg_check(struct tn_store *s, const char *name, size_t name_len,
                     uint64_t token, struct tn_store_result *out,
                     tn_store_done_fn done, void *arg)
{
    struct tn_pg_op *op = tn_pg_op_new(TN_PG_CHECK, name, name_len, out);
    if (op != NULL)
        op->token = token;
    tn_pg_submit((struct tn_pg *)s, op, out, done, arg);
}

static void pg_list(struct tn_store *s, const struct tn_list_req *r,
                    struct tn_store_result *out, tn_store_done_fn done,
                    void *arg)
{
    struct tn_pg_op *op =
        tn_pg_op_new(TN_PG_LIST, r->prefix, r->prefix_len, out);
    if (op != NULL && r->after != NULL) {
        op->s3 = tn_strndup(r->after, r->after_len);
        if (op->s3 == NULL) {
            op_free(op);
            op = NULL;
        }
    }
    if (op != NULL) {
        op->limit = r->limit;
        (void)snprintf(op->n1, sizeof(op->n1), "%zu", r->limit + 1);
        const char *v[] = {op->name, op->s3, op->n1};
        memcpy(op->values, v, sizeof(v));
    }
    tn_pg_submit((struct tn_pg *)s, op, out, done, arg);
}

/* The ledger, newest first (HISTORY_SQL in pg_sql.c). */
static void pg_history(struct tn_store *s, const char *name, size_t name_len,
                       size_t limit, struct tn_store_result *out,
                       tn_store_done_fn done, void *arg)
{
    struct tn_pg_op *op = tn_pg_op_new(TN_PG_HISTORY, name, name_len, out);
    if (op != NULL) {
        op->limit = limit;
        (void)snprintf(op->n1, sizeof(op->n1), "%zu", limit);
        op->values[1] = op->n1;
    }
    tn_pg_submit((struct tn_pg *)s, op, out, done, arg);
}

/* ---- batches ---- */

static void requeue_front(struct tn_pg *p, struct tn_pg_op **ops, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        struct tn_pg_op *op = ops[i];
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

/* Decide each op of a finished batch: answer, or send again. */
static void settle(struct tn_pg *p, struct tn_pg_batch *b, bool committed)
{
    struct tn_pg_op **again = tn_calloc(b->n > 0 ? b->n : 1, sizeof(*again));
    size_t n_again = 0;
    for (size_t i = 0; i < b->n; i++) {
        struct tn_pg_op *op = b->ops[i];
        bool retry = committed ? op->again : b->retry_all || i != b->err_idx;
        if (retry && op->tries < MAX_TRIES && again != NULL)
            again[n_again++] = op;
        else if (committed && !op->again)
            op_answer(p, op, TN_OK);
        else
            op_answer(p, op,
                      !committed && i == b->err_idx ? b->err_rc : TN_EUNAVAIL);
    }
    requeue_front(p, again, n_again);
    tn_free(again);
}

/* The trailer's Sync came back: the batch leaves the connection. */
static void trailer_done(struct tn_pg_conn *c, struct tn_pg_batch *b)
{
    unlink_oldest(c, b);
    tn_free(b);
    watchdog_rearm(c);
    schedule_flush(c->store);
}

/* Answer what the batch's transaction decided.  With a trailer and the
 * connection still usable, the batch stays in flight, emptied, until the
 * trailer's Sync. */
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
    settle(p, b, committed);
    tn_free(b->ops);
    b->ops = NULL;
    b->n = 0;
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

static int op_cmp(const void *a, const void *b)
{
    const struct tn_pg_op *x = *(const struct tn_pg_op *const *)a;
    const struct tn_pg_op *y = *(const struct tn_pg_op *const *)b;
    int cmp = strcmp(x->name, y->name);
    if (cmp != 0)
        return cmp;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Take up to n pending ops into a new in-flight batch of c. */
static struct tn_pg_batch *take_batch(struct tn_pg_conn *c, size_t n)
{
    struct tn_pg *p = c->store;
    struct tn_pg_batch *b = tn_calloc(1, sizeof(*b));
    struct tn_pg_op **ops = tn_calloc(n, sizeof(*ops));
    if (b == NULL || ops == NULL) {
        tn_free(b);
        tn_free(ops);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        ops[i] = p->pending;
        p->pending = p->pending->next;
        ops[i]->tries++;
    }
    p->n_pending -= n;
    if (p->pending == NULL)
        p->pending_tail = NULL;
    qsort(ops, n, sizeof(*ops), op_cmp);
    b->ops = ops;
    b->n = n;
    b->err_idx = n;
    b->sent_ms = tn_clock_now_ms();
    if (c->inflight_tail != NULL)
        c->inflight_tail->next = b;
    else
        c->inflight = b;
    c->inflight_tail = b;
    c->n_inflight++;
    return b;
}

/* Statements that may write events to the outbox. */
static bool writes_events(enum tn_pg_stmt stmt)
{
    return stmt == TN_PG_ACQUIRE || stmt == TN_PG_RELEASE ||
           stmt == TN_PG_SWEEP;
}

static int send_batch(struct tn_pg_conn *c, size_t n)
{
    struct tn_pg_batch *b = take_batch(c, n);
    if (b == NULL)
        return TN_ENOMEM;
    for (size_t i = 0; i < b->n; i++) {
        const struct tn_pg_stmt_def *d = &tn_pg_stmts[b->ops[i]->stmt];
        b->trailer |= writes_events(b->ops[i]->stmt);
        if (PQsendQueryPrepared(c->conn, d->name, d->n_params,
                                b->ops[i]->values, NULL, NULL, 0) != 1)
            return TN_EIO;
    }
    c->store->n_statements += b->n;
    if (PQpipelineSync(c->conn) != 1)
        return TN_EIO;
    /* The events of this transaction go out in the next one, queued
     * behind its Sync, so they follow its commit at once. */
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

/* Free batch slots: connections ready with fewer than `level` batches in
 * flight. */
static size_t free_slots(const struct tn_pg *p, unsigned level)
{
    size_t n = 0;
    for (int i = 0; i < TN_PG_CONNS; i++) {
        const struct tn_pg_conn *c = &p->conns[i];
        if (c->state == TN_PG_READY && c->n_inflight < level)
            n++;
    }
    return n;
}

/* Spread what is pending over the connections: idle ones first, then one
 * more batch on each; the batches of one round share the pending ops
 * evenly. */
static void flush(void *arg)
{
    struct tn_pg *p = arg;
    if (!any_ready(p)) {
        fail_pending(p);
        return;
    }
    for (unsigned level = 1; level <= MAX_INFLIGHT && p->n_pending > 0;
         level++) {
        size_t slots = free_slots(p, level);
        for (int i = 0; i < TN_PG_CONNS && p->n_pending > 0 && slots > 0; i++) {
            struct tn_pg_conn *c = &p->conns[i];
            if (c->state != TN_PG_READY || c->n_inflight >= level)
                continue;
            size_t n = (p->n_pending + slots - 1) / slots;
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
        tn_pg_conn_drop(c, "no answer from postgresql in time");
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

/* ---- the rest of the vtable ---- */

static bool pg_is_ready(struct tn_store *s)
{
    return any_ready((struct tn_pg *)s);
}

static void pg_metrics(struct tn_store *s, struct tn_buf *out)
{
    struct tn_pg *p = (struct tn_pg *)s;
    unsigned inflight = 0;
    int ready = 0;
    for (int i = 0; i < TN_PG_CONNS; i++) {
        inflight += p->conns[i].n_inflight;
        ready += p->conns[i].state == TN_PG_READY;
    }
    (void)tn_buf_printf(
        out,
        "# TYPE tenure_store_ready gauge\ntenure_store_ready %d\n"
        "# TYPE tenure_pg_connections_ready gauge\n"
        "tenure_pg_connections_ready %d\n"
        "# TYPE tenure_pg_batches_total counter\n"
        "tenure_pg_batches_total %llu\n"
        "# TYPE tenure_pg_statements_total counter\n"
        "tenure_pg_statements_total %llu\n"
        "# TYPE tenure_pg_retries_total counter\n"
        "tenure_pg_retries_total %llu\n"
        "# TYPE tenure_pg_batch_failures_total counter\n"
        "tenure_pg_batch_failures_total %llu\n"
        "# TYPE tenure_pg_connects_total counter\n"
        "tenure_pg_connects_total %llu\n"
        "# TYPE tenure_pg_unavailable_total counter\n"
        "tenure_pg_unavailable_total %llu\n"
        "# TYPE tenure_pg_inflight_batches gauge\n"
        "tenure_pg_inflight_batches %u\n",
        ready > 0, ready, (unsigned long long)p->n_batches,
        (unsigned long long)p->n_statements, (unsigned long long)p->n_retries,
        (unsigned long long)p->n_failures, (unsigned long long)p->n_connects,
        (unsigned long long)p->n_unavailable, inflight);
    tn_pg_events_metrics(p, out);
    tn_pg_wait_metrics(p, out);
}

static void pg_drain(struct tn_store *s)
{
    tn_pg_wait_fail_all((struct tn_pg *)s, TN_EUNAVAIL);
}

static void pg_close(struct tn_store *s)
{
    struct tn_pg *p = (struct tn_pg *)s;
    p->closing = true;
    tn_pg_wait_fail_all(p, TN_EUNAVAIL);
    tn_pg_events_stop(p);
    tn_loop_timer_disarm(p->loop, &p->flush_timer);
    for (int i = 0; i < TN_PG_CONNS; i++) {
        struct tn_pg_conn *c = &p->conns[i];
        tn_loop_timer_disarm(p->loop, &c->retry_timer);
        tn_loop_timer_disarm(p->loop, &c->conn_timer);
        tn_pg_conn_unwatch(c);
        if (c->conn != NULL)
            PQfinish(c->conn);
        c->conn = NULL;
        c->state = TN_PG_DOWN;
    }
    for (int i = 0; i < TN_PG_CONNS; i++)
        fail_inflight(&p->conns[i]);
    fail_pending(p);
    tn_pg_wait_free(p);
    tn_store_result_release(&p->sweep_res);
    tn_store_result_release(&p->prune_res);
    tn_free(p->conninfo);
    tn_free(p);
}

static const struct tn_store_ops pg_ops = {
    .version = TN_STORE_OPS_VERSION,
    .name = "postgresql",
    .can_wait = true,
    .has_events = true,
    .binds_principal = true,
    .acquire = pg_acquire,
    .renew = pg_renew,
    .release = pg_release,
    .get = pg_get,
    .check = pg_check,
    .list = pg_list,
    .history = pg_history,
    .is_ready = pg_is_ready,
    .metrics = pg_metrics,
    .drain = pg_drain,
    .close = pg_close,
};

int tn_store_pg_open(struct tn_loop *loop, const struct tn_store_config *cfg,
                     struct tn_store **out, struct tn_errmsg *em)
{
    *out = NULL;
    char *err = NULL;
    PQconninfoOption *opts = PQconninfoParse(cfg->pg_url, &err);
    if (opts == NULL) {
        tn_errmsg_set(em, "bad PostgreSQL connection string: %s",
                      err != NULL ? err : "out of memory");
        PQfreemem(err);
        return TN_EINVAL;
    }
    PQconninfoFree(opts);
    struct tn_pg *p = tn_calloc(1, sizeof(*p));
    if (p == NULL)
        return TN_ENOMEM;
    p->conninfo = tn_strdup(cfg->pg_url);
    if (p->conninfo == NULL) {
        tn_free(p);
        return TN_ENOMEM;
    }
    p->base.ops = &pg_ops;
    p->loop = loop;
    p->on_event = cfg->on_event;
    p->event_ctx = cfg->event_ctx;
    p->watched = cfg->watched;
    if (tn_pg_wait_init(p, cfg) < 0) {
        tn_free(p->conninfo);
        tn_free(p);
        return TN_ENOMEM;
    }
    for (int i = 0; i < TN_PG_CONNS; i++) {
        struct tn_pg_conn *c = &p->conns[i];
        c->store = p;
        c->fd = -1;
        c->backoff_ms = 100;
        tn_pg_conn_start(c);
    }
    tn_pg_events_start(p);
    *out = &p->base;
    return TN_OK;
}
