/* SPDX-License-Identifier: MIT */
/* The PostgreSQL store: its vtable, open and close.  Every decision is
 * one prepared statement (src/store/pg/sql.c) on the database clock, run
 * in batches (src/store/pg/batch.c); events and the expiry sweep are in
 * src/store/pg/events.c, blocking acquire in src/store/pg/wait.c,
 * sessions in src/store/pg/session.c. */
#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "store/pg/batch.h"
#include "store/pg/conn.h"
#include "store/pg/events.h"
#include "store/pg/floor.h"
#include "store/pg/limits.h"
#include "store/pg/op.h"
#include "store/pg/retire.h"
#include "store/pg/session.h"
#include "store/pg/sync.h"
#include "store/pg/wait.h"

/* ---- requests ---- */

static void pg_acquire(struct tn_store *s, const struct tn_acquire_req *r,
                       struct tn_store_result *out, tn_store_done_fn done,
                       void *arg)
{
    struct tn_pg *p = (struct tn_pg *)s;
    if (tn_pg_wait_acquire(p, r, out, done, arg))
        return;
    tn_pg_submit(p, tn_pg_op_acquire(r, out), out, done, arg);
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
            tn_pg_op_free(op);
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

/* The ledger, newest first (HISTORY_SQL in src/store/pg/sql.c). */
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

/* ---- sessions (src/store/pg/session.c) ---- */

static void pg_session_open(struct tn_store *s,
                            const struct tn_session_open_req *r,
                            struct tn_store_result *out, tn_store_done_fn done,
                            void *arg)
{
    tn_pg_session_open((struct tn_pg *)s, r, out, done, arg);
}

static void pg_session_renew(struct tn_store *s, const struct tn_session_req *r,
                             struct tn_store_result *out, tn_store_done_fn done,
                             void *arg)
{
    tn_pg_session_renew((struct tn_pg *)s, r, out, done, arg);
}

static void pg_session_end(struct tn_store *s, const struct tn_session_req *r,
                           struct tn_store_result *out, tn_store_done_fn done,
                           void *arg)
{
    tn_pg_session_end((struct tn_pg *)s, r, out, done, arg);
}

static void pg_session_get(struct tn_store *s, const char *id,
                           struct tn_store_result *out, tn_store_done_fn done,
                           void *arg)
{
    tn_pg_session_get((struct tn_pg *)s, id, out, done, arg);
}

static void pg_session_list(struct tn_store *s, const struct tn_list_req *r,
                            struct tn_store_result *out, tn_store_done_fn done,
                            void *arg)
{
    tn_pg_session_list((struct tn_pg *)s, r, out, done, arg);
}

static void pg_claim(struct tn_store *s, const struct tn_claim_req *r,
                     struct tn_store_result *out, tn_store_done_fn done,
                     void *arg)
{
    tn_pg_claim((struct tn_pg *)s, r, out, done, arg);
}

static void pg_unclaim(struct tn_store *s, const struct tn_unclaim_req *r,
                       struct tn_store_result *out, tn_store_done_fn done,
                       void *arg)
{
    tn_pg_unclaim((struct tn_pg *)s, r, out, done, arg);
}

/* ---- the rest of the vtable ---- */

static bool pg_is_ready(struct tn_store *s)
{
    struct tn_pg *p = (struct tn_pg *)s;
    return tn_pg_is_up(p) && tn_pg_limits_counted_once(p) && !p->sync.gate;
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
        "tenure_pg_inflight_batches %u\n"
        "# TYPE tenure_pg_setup_lock_timeouts_total counter\n"
        "tenure_pg_setup_lock_timeouts_total %llu\n",
        tn_pg_is_up(p), ready, (unsigned long long)p->n_batches,
        (unsigned long long)p->n_statements, (unsigned long long)p->n_retries,
        (unsigned long long)p->n_failures, (unsigned long long)p->n_connects,
        (unsigned long long)p->n_unavailable, inflight,
        (unsigned long long)p->n_setup_lock_timeouts);
    tn_pg_events_metrics(p, out);
    tn_pg_wait_metrics(p, out);
    tn_pg_retire_metrics(p, out);
    tn_pg_limits_metrics(p, out);
    tn_pg_sync_metrics(p, out);
    tn_pg_hosts_metrics(&p->hosts, out);
    tn_pg_floor_metrics(&p->floor, out);
    tn_pg_sessions_metrics(p, out);
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
    tn_pg_sessions_stop(p);
    tn_pg_retire_stop(p);
    tn_pg_sync_stop(p);
    tn_loop_timer_disarm(p->loop, &p->flush_timer);
    for (int i = 0; i < TN_PG_CONNS; i++)
        tn_pg_conn_close(&p->conns[i]);
    tn_pg_fail_all(p);
    tn_pg_wait_free(p);
    tn_store_result_release(&p->sweep_res);
    tn_store_result_release(&p->prune_res);
    tn_store_result_release(&p->limits.result);
    tn_pg_sync_free(p);
    tn_pg_hosts_release(&p->hosts);
    tn_pg_floor_close(&p->floor);
    tn_free(p);
}

static void pg_cancel_wait(struct tn_store *s, void *ctx)
{
    tn_pg_wait_cancel((struct tn_pg *)s, ctx);
}

static int pg_open(struct tn_loop *loop, const struct tn_store_config *cfg,
                   struct tn_store **out, struct tn_errmsg *em);

/* Its line in the registry: src/store/backends.def. */
extern const struct tn_store_ops tn_store_pg_ops;
const struct tn_store_ops tn_store_pg_ops = {
    .version = TN_STORE_OPS_VERSION,
    .open = pg_open,
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
    .cancel_wait = pg_cancel_wait,
    .session_open = pg_session_open,
    .session_renew = pg_session_renew,
    .session_end = pg_session_end,
    .session_get = pg_session_get,
    .session_list = pg_session_list,
    .claim = pg_claim,
    .unclaim = pg_unclaim,
};

/* A statement connection is ready: send what waits, and restart what
 * waited for the store to be up. */
static void on_conn_ready(struct tn_pg_conn *c)
{
    tn_pg_on_ready(c);
    tn_pg_events_up(c->store);
    tn_pg_sync_conn_up(c->store);
}

/* How long one host may take to accept a connection (to answer libpq's
 * startup, authentication and target_session_attrs check) when the
 * connection string sets no connect_timeout.  A host that is up answers in
 * milliseconds; one whose machine or processes are paused never does, and
 * the next host is tried after this. */
#define CONNECT_DEADLINE_MS 1000

/* cfg->url is a libpq connection string (postgresql://...).  0, TN_EINVAL
 * (unparsable), TN_ENOMEM; connecting goes on in the background. */
static int pg_open(struct tn_loop *loop, const struct tn_store_config *cfg,
                   struct tn_store **out, struct tn_errmsg *em)
{
    *out = NULL;
    struct tn_pg *p = tn_calloc(1, sizeof(*p));
    if (p == NULL)
        return TN_ENOMEM;
    char err[256] = "";
    int rc = tn_pg_hosts_init(&p->hosts, cfg->url, CONNECT_DEADLINE_MS, err,
                              sizeof(err));
    if (rc < 0) {
        if (rc == TN_EINVAL)
            tn_errmsg_set(em, "bad PostgreSQL connection string: %s", err);
        tn_free(p);
        return rc;
    }
    rc = tn_pg_floor_open(&p->floor, cfg->data_dir, em);
    if (rc < 0) {
        tn_pg_hosts_release(&p->hosts);
        tn_free(p);
        return rc;
    }
    p->base.ops = &tn_store_pg_ops;
    p->loop = loop;
    p->on_event = cfg->on_event;
    p->event_ctx = cfg->event_ctx;
    p->watched = cfg->watched;
    p->conn_ready = on_conn_ready;
    p->conn_io = tn_pg_on_io;
    p->conn_failed = tn_pg_fail_conn;
    if (tn_pg_wait_init(p, cfg) < 0 ||
        tn_pg_retire_start(p, cfg->retain_ms) < 0) {
        tn_pg_wait_free(p);
        tn_pg_hosts_release(&p->hosts);
        tn_pg_floor_close(&p->floor);
        tn_free(p);
        return TN_ENOMEM;
    }
    for (int i = 0; i < TN_PG_CONNS; i++) {
        tn_pg_conn_init(&p->conns[i], p);
        tn_pg_conn_start(&p->conns[i]);
    }
    tn_pg_events_start(p);
    tn_pg_sessions_start(p);
    tn_pg_sync_start(p, cfg->require_sync_standby);
    if (tn_pg_limits_init(p, cfg))
        tn_pg_events_count_start(p);
    *out = &p->base;
    return TN_OK;
}
