/* SPDX-License-Identifier: MIT */
/* Sessions on PostgreSQL (docs/SESSIONS.md): the session ops of the
 * vtable, each one statement of src/store/pg/sql_session.c run in the
 * batches like any other (src/store/pg/batch.c), and the session sweep.
 * Nothing about a session is kept in memory: a session is its row, and
 * any instance answers for any session. */
#include "store/pg/session.h"

#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "store/pg/batch.h"
#include "store/pg/op.h"
#include "store/pg/wait.h"

/* Sessions recorded and leases settled per sweep: a sweep that reaches
 * either runs again at once, so a session of 100,000 leases is settled
 * in steps that the other statements interleave with. */
#define SWEEP_MS 200
#define SWEEP_SESSIONS 100
#define SWEEP_LEASES 200
/* An array parameter holds at most this much text. */
#define ARRAY_MAX_BYTES (8u << 20)

/* An op on session id (borrowed): its name (the sort key of the batch)
 * and its session (the pin, pin.c) are the id.  NULL when out of
 * memory. */
static struct tn_pg_op *session_op(enum tn_pg_stmt stmt, const char *id,
                                   struct tn_store_result *out)
{
    struct tn_pg_op *op = tn_pg_op_new(stmt, id, strlen(id), out);
    if (op == NULL)
        return NULL;
    op->sess = tn_strdup(id);
    if (op->sess == NULL) {
        tn_pg_op_free(op);
        return NULL;
    }
    op->sess_hash = tn_pg_op_hash(op->sess);
    return op;
}

/* A copy of s into *dst (NULL stays NULL); false when out of memory. */
static bool dup_into(char **dst, const char *s)
{
    *dst = s != NULL ? tn_strdup(s) : NULL;
    return s == NULL || *dst != NULL;
}

void tn_pg_session_open(struct tn_pg *p, const struct tn_session_open_req *r,
                        struct tn_store_result *out, tn_store_done_fn done,
                        void *arg)
{
    struct tn_pg_op *op = session_op(TN_PG_SESSION_OPEN, r->id, out);
    if (op != NULL &&
        (!dup_into(&op->s2, r->owner_id) || !dup_into(&op->s3, r->principal))) {
        tn_pg_op_free(op);
        op = NULL;
    }
    if (op != NULL) {
        memcpy(op->secret, r->secret, TN_SECRET_BYTES);
        tn_pg_op_bytea(op->secret_hex, r->secret);
        op->ttl_ms = r->ttl_ms;
        (void)snprintf(op->n1, sizeof(op->n1), "%lld", (long long)r->ttl_ms);
        /* $6, --max-sessions, is the limits' (tn_pg_limits_stamp) */
        const char *v[] = {op->name,       op->s2, op->s3,
                           op->secret_hex, op->n1, "0"};
        memcpy(op->values, v, sizeof(v));
    }
    tn_pg_submit(p, op, out, done, arg);
}

/* An op naming session r and its credential: $1 id, $2 secret, and the
 * principal (s3) for the statement to place. */
static struct tn_pg_op *credential_op(enum tn_pg_stmt stmt,
                                      const struct tn_session_req *r,
                                      struct tn_store_result *out)
{
    struct tn_pg_op *op = session_op(stmt, r->id, out);
    if (op != NULL && !dup_into(&op->s3, r->principal)) {
        tn_pg_op_free(op);
        return NULL;
    }
    if (op != NULL) {
        tn_pg_op_bytea(op->sess_hex, r->secret);
        op->values[1] = op->sess_hex;
    }
    return op;
}

void tn_pg_session_renew(struct tn_pg *p, const struct tn_session_req *r,
                         struct tn_store_result *out, tn_store_done_fn done,
                         void *arg)
{
    struct tn_pg_op *op = credential_op(TN_PG_SESSION_RENEW, r, out);
    if (op != NULL) {
        (void)snprintf(op->n1, sizeof(op->n1), "%lld", (long long)r->ttl_ms);
        op->values[2] = op->n1;
        op->values[3] = op->s3;
    }
    tn_pg_submit(p, op, out, done, arg);
}

void tn_pg_session_end(struct tn_pg *p, const struct tn_session_req *r,
                       struct tn_store_result *out, tn_store_done_fn done,
                       void *arg)
{
    struct tn_pg_op *op = credential_op(TN_PG_SESSION_END, r, out);
    if (op != NULL) {
        op->values[2] = r->force ? "true" : "false";
        op->values[3] = op->s3;
    }
    tn_pg_submit(p, op, out, done, arg);
}

void tn_pg_session_get(struct tn_pg *p, const char *id,
                       struct tn_store_result *out, tn_store_done_fn done,
                       void *arg)
{
    tn_pg_submit(p, tn_pg_op_new(TN_PG_SESSION_GET, id, strlen(id), out), out,
                 done, arg);
}

void tn_pg_session_list(struct tn_pg *p, const struct tn_list_req *r,
                        struct tn_store_result *out, tn_store_done_fn done,
                        void *arg)
{
    struct tn_pg_op *op =
        tn_pg_op_new(TN_PG_SESSION_LIST, r->prefix, r->prefix_len, out);
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
    tn_pg_submit(p, op, out, done, arg);
}

/* ---- array parameters ---- */

/* Append s (len bytes) to an array literal as one quoted element. */
static int quoted(struct tn_buf *b, const char *s, size_t len)
{
    int rc = tn_buf_append(b, "\"", 1);
    for (size_t i = 0; i < len && rc == 0; i++) {
        if (s[i] == '"' || s[i] == '\\')
            rc = tn_buf_append(b, "\\", 1);
        if (rc == 0)
            rc = tn_buf_append(b, &s[i], 1);
    }
    return rc == 0 ? tn_buf_append(b, "\"", 1) : rc;
}

/* Take b's text as op's array parameter i ("{}" when empty, which no
 * request is). */
static int take_array(struct tn_pg_op *op, size_t i, struct tn_buf *b)
{
    int rc = tn_buf_append(b, "}", 1);
    if (rc < 0) {
        tn_buf_release(b);
        return rc;
    }
    op->arrays[i] = b->data;
    b->data = NULL;
    return TN_OK;
}

/* The names of a claim or batch release: the text[] literal (array 0)
 * and the NUL-separated copy that pins them (pin.c).  name_at(req, i, &len)
 * gives name i. */
typedef const char *(*name_at_fn)(const void *req, size_t i, size_t *len);

static int set_names(struct tn_pg_op *op, const void *req, size_t n,
                     name_at_fn name_at)
{
    struct tn_buf arr;
    struct tn_buf all;
    tn_buf_init(&arr, ARRAY_MAX_BYTES);
    tn_buf_init(&all, ARRAY_MAX_BYTES);
    int rc = tn_buf_append(&arr, "{", 1);
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t len = 0;
        const char *s = name_at(req, i, &len);
        if (i > 0)
            rc = tn_buf_append(&arr, ",", 1);
        if (rc == 0)
            rc = quoted(&arr, s, len);
        if (rc == 0)
            rc = tn_buf_append(&all, s, len);
        if (rc == 0) /* the separator: a NUL after each name */
            rc = tn_buf_append(&all, "", 1);
    }
    if (rc == 0)
        rc = take_array(op, 0, &arr);
    if (rc < 0) {
        tn_buf_release(&arr);
        tn_buf_release(&all);
        return rc;
    }
    op->names = all.data;
    op->n_names = n;
    return TN_OK;
}

static const char *claim_name_at(const void *req, size_t i, size_t *len)
{
    const struct tn_claim_req *r = req;
    *len = r->names[i].len;
    return r->names[i].name;
}

static const char *unclaim_name_at(const void *req, size_t i, size_t *len)
{
    const struct tn_unclaim_req *r = req;
    *len = r->leases[i].len;
    return r->leases[i].name;
}

/* A claim's secrets (bytea[], array 1) and whether each name has waiters
 * on this instance (boolean[], array 2). */
static int set_claim_arrays(struct tn_pg *p, struct tn_pg_op *op,
                            const struct tn_claim_req *r)
{
    struct tn_buf sec;
    struct tn_buf q;
    tn_buf_init(&sec, ARRAY_MAX_BYTES);
    tn_buf_init(&q, ARRAY_MAX_BYTES);
    int rc = tn_buf_append(&sec, "{", 1);
    if (rc == 0)
        rc = tn_buf_append(&q, "{", 1);
    for (size_t i = 0; i < r->n_names && rc == 0; i++) {
        char hex[3 + 2 * TN_SECRET_BYTES];
        tn_pg_op_bytea(hex, r->secrets + i * TN_SECRET_BYTES);
        bool queued =
            tn_pg_wait_has_waiters(p, r->names[i].name, r->names[i].len);
        rc = tn_buf_printf(&sec, "%s\"\\%s\"", i > 0 ? "," : "", hex);
        if (rc == 0)
            rc =
                tn_buf_printf(&q, "%s%c", i > 0 ? "," : "", queued ? 't' : 'f');
    }
    if (rc == 0)
        rc = take_array(op, 1, &sec);
    if (rc == 0)
        rc = take_array(op, 2, &q);
    tn_buf_release(&sec);
    tn_buf_release(&q);
    return rc;
}

void tn_pg_claim(struct tn_pg *p, const struct tn_claim_req *r,
                 struct tn_store_result *out, tn_store_done_fn done, void *arg)
{
    struct tn_pg_op *op = credential_op(TN_PG_CLAIM, &r->session, out);
    if (op != NULL && (!dup_into(&op->s2, r->owner_id) ||
                       set_names(op, r, r->n_names, claim_name_at) < 0 ||
                       set_claim_arrays(p, op, r) < 0)) {
        tn_pg_op_free(op);
        op = NULL;
    }
    if (op != NULL) {
        (void)snprintf(op->n1, sizeof(op->n1), "%lld",
                       (long long)r->lock_delay_ms);
        /* $9, $10: the room the limits leave (tn_pg_limits_stamp) */
        const char *v[] = {
            op->name,      op->sess_hex,  op->s3,        op->s2, op->n1,
            op->arrays[0], op->arrays[1], op->arrays[2], "-1",   "-1"};
        memcpy(op->values, v, sizeof(v));
    }
    tn_pg_submit(p, op, out, done, arg);
}

/* A batch release's tokens (bigint[], array 1). */
static int set_tokens(struct tn_pg_op *op, const struct tn_unclaim_req *r)
{
    struct tn_buf t;
    tn_buf_init(&t, ARRAY_MAX_BYTES);
    int rc = tn_buf_append(&t, "{", 1);
    for (size_t i = 0; i < r->n_leases && rc == 0; i++)
        rc = tn_buf_printf(&t, "%s%llu", i > 0 ? "," : "",
                           (unsigned long long)r->leases[i].token);
    if (rc == 0)
        rc = take_array(op, 1, &t);
    tn_buf_release(&t);
    return rc;
}

void tn_pg_unclaim(struct tn_pg *p, const struct tn_unclaim_req *r,
                   struct tn_store_result *out, tn_store_done_fn done,
                   void *arg)
{
    struct tn_pg_op *op = credential_op(TN_PG_UNCLAIM, &r->session, out);
    if (op != NULL && (set_names(op, r, r->n_leases, unclaim_name_at) < 0 ||
                       set_tokens(op, r) < 0)) {
        tn_pg_op_free(op);
        op = NULL;
    }
    if (op != NULL) {
        const char *v[] = {op->name, op->sess_hex, op->s3, op->arrays[0],
                           op->arrays[1]};
        memcpy(op->values, v, sizeof(v));
    }
    tn_pg_submit(p, op, out, done, arg);
}

/* ---- the session sweep ---- */

static void sweep_fire(void *arg);

static void sweep_done(void *arg)
{
    struct tn_pg *p = arg;
    struct tn_pg_sessions *ss = &p->sessions;
    ss->sweeping = false;
    if (p->closing)
        return;
    const struct tn_store_result *r = &ss->sweep_res;
    bool full = false;
    if (r->rc == TN_OK) {
        ss->n_expired += r->n_items;
        ss->n_settled += r->floor;
        full = r->n_items >= SWEEP_SESSIONS || r->floor >= SWEEP_LEASES ||
               r->n_sessions >= SWEEP_SESSIONS;
    }
    /* A full sweep leaves more behind: go on at once. */
    tn_loop_timer_arm(p->loop, &ss->timer,
                      tn_clock_now_ms() + (full ? 0 : SWEEP_MS), sweep_fire, p);
}

/* Every instance sweeps, watched or not (unlike the lease sweep of
 * events.c, which only announces): the sweep also records ends, which
 * spares the reads their locks (LEASE_END), and deletes the rows of
 * sessions that are over.  When nothing is due it costs two index
 * probes. */
static void sweep_fire(void *arg)
{
    struct tn_pg *p = arg;
    struct tn_pg_sessions *ss = &p->sessions;
    if (!tn_pg_is_up(p)) {
        tn_loop_timer_arm(p->loop, &ss->timer, tn_clock_now_ms() + SWEEP_MS,
                          sweep_fire, p);
        return;
    }
    tn_store_result_release(&ss->sweep_res);
    memset(&ss->sweep_res, 0, sizeof(ss->sweep_res));
    struct tn_pg_op *op =
        tn_pg_op_new(TN_PG_SESSION_SWEEP, "", 0, &ss->sweep_res);
    if (op != NULL) {
        (void)snprintf(op->n1, sizeof(op->n1), "%d", SWEEP_SESSIONS);
        (void)snprintf(op->n2, sizeof(op->n2), "%d", SWEEP_LEASES);
        op->values[0] = op->n1;
        op->values[1] = op->n2;
    }
    ss->sweeping = true;
    tn_pg_submit(p, op, &ss->sweep_res, sweep_done, p);
}

void tn_pg_sessions_start(struct tn_pg *p)
{
    tn_loop_timer_arm(p->loop, &p->sessions.timer, tn_clock_now_ms() + SWEEP_MS,
                      sweep_fire, p);
}

void tn_pg_sessions_stop(struct tn_pg *p)
{
    tn_loop_timer_disarm(p->loop, &p->sessions.timer);
    tn_store_result_release(&p->sessions.sweep_res);
}

/* The embedded store's names (src/store/embedded/metrics.c), each for
 * what this instance did; tenure_sessions_live, the database's, is the
 * limits' (limits.c). */
void tn_pg_sessions_metrics(struct tn_pg *p, struct tn_buf *out)
{
    const struct tn_pg_sessions *ss = &p->sessions;
    (void)tn_buf_printf(
        out,
        "# TYPE tenure_sessions_opened_total counter\n"
        "tenure_sessions_opened_total %llu\n"
        "# TYPE tenure_sessions_ended_total counter\n"
        "tenure_sessions_ended_total{reason=\"expired\"} %llu\n"
        "tenure_sessions_ended_total{reason=\"released\"} %llu\n"
        "tenure_sessions_ended_total{reason=\"revoked\"} %llu\n"
        "# TYPE tenure_session_leases_settled_total counter\n"
        "tenure_session_leases_settled_total %llu\n",
        (unsigned long long)ss->n_opened, (unsigned long long)ss->n_expired,
        (unsigned long long)ss->n_released, (unsigned long long)ss->n_revoked,
        (unsigned long long)ss->n_settled);
}
