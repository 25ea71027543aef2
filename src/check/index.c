/* SPDX-License-Identifier: MIT */
/* The leases and sessions of a history, sorted so that every rule finds
 * what it needs by binary search: ok acquires by token and by (name,
 * token), ok session opens by id.  Facts of a (name, token) or of a
 * session id seen on several ok completions land on the first one, the
 * one invoked first (the others are retries, idempotent claims or
 * duplicates another rule reports). */
#include <stdlib.h>
#include <string.h>

#include "check/check_int.h"
#include "common/alloc.h"

void tn_check_report_one(struct tn_check_ctx *c, unsigned cls,
                         const struct tn_check_ref *ev, unsigned n_ev,
                         int64_t bound)
{
    c->r->count[cls]++;
    struct tn_check_witness *w = &c->r->witness[cls];
    if (w->n_ev != 0)
        return;
    for (unsigned i = 0; i < n_ev; i++)
        w->ev[i] = ev[i];
    w->n_ev = n_ev;
    w->bound = bound;
}

struct tn_check_ref tn_check_op_ref(size_t idx)
{
    struct tn_check_ref ref = {.sink = false, .idx = idx};
    return ref;
}

struct tn_check_ref tn_check_sink_ref(size_t idx)
{
    struct tn_check_ref ref = {.sink = true, .idx = idx};
    return ref;
}

static int cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

static int cmp_by_token(const void *pa, const void *pb)
{
    const struct tn_check_lease *a = pa;
    const struct tn_check_lease *b = pb;
    int d = cmp_i64(a->token, b->token);
    if (d == 0)
        d = cmp_i64(a->invoke_t, b->invoke_t);
    return d != 0 ? d : (a->op > b->op) - (a->op < b->op);
}

/* Leases by (name, token, invoke_t); sessions (token 0) by (id,
 * invoke_t). */
static int cmp_by_name(const void *pa, const void *pb)
{
    const struct tn_check_lease *a = pa;
    const struct tn_check_lease *b = pb;
    if (a->name != b->name)
        return a->name < b->name ? -1 : 1;
    return cmp_by_token(pa, pb);
}

size_t tn_check_find_lease(const struct tn_check_ctx *c, uint32_t name,
                           int64_t token, bool after_token)
{
    size_t lo = 0;
    size_t hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct tn_check_lease *l = &c->by_name[mid];
        bool before = l->name < name ||
                      (l->name == name &&
                       (after_token ? l->token <= token : l->token < token));
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool tn_check_is_granted(const struct tn_check_ctx *c, int64_t token)
{
    size_t lo = 0;
    size_t hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->by_token[mid].token < token)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n && c->by_token[lo].token == token;
}

struct tn_check_lease *tn_check_lease_of(struct tn_check_ctx *c,
                                         const struct tn_history_op *op)
{
    if (op->name == TN_HISTORY_NO_ID)
        return NULL;
    size_t k = tn_check_find_lease(c, op->name, op->token_in, false);
    if (k == c->n || c->by_name[k].name != op->name ||
        c->by_name[k].token != op->token_in)
        return NULL;
    return &c->by_name[k];
}

struct tn_check_lease *tn_check_session_of(struct tn_check_ctx *c, uint32_t id)
{
    size_t lo = 0;
    size_t hi = c->n_sessions;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->sessions[mid].name < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == c->n_sessions || c->sessions[lo].name != id)
        return NULL;
    return &c->sessions[lo];
}

/* A lease (or session) as its ok acquire (or open) i leaves it, before
 * any renew or release is read. */
static struct tn_check_lease grant_of(const struct tn_history_op *op, size_t i)
{
    bool open = op->kind == TN_HISTORY_SESSION_OPEN;
    int64_t ttl = op->ttl_ms != TN_HISTORY_NONE ? op->ttl_ms : 0;
    struct tn_check_lease l = {.token = open ? 0 : op->token_out,
                               .invoke_t = op->invoke_t,
                               .complete_t = op->complete_t,
                               .valid_until =
                                   op->invoke_t + ttl * TN_CHECK_NS_PER_MS,
                               .release_t = TN_HISTORY_NEVER,
                               .own_release_t = TN_HISTORY_NEVER,
                               .applied_t = op->invoke_t,
                               .min_ttl_ms = ttl,
                               .op = i,
                               .bound_op = i,
                               .renew_until = TN_HISTORY_NEVER,
                               .applied_op = i,
                               .renew_op = i,
                               .from_op = i,
                               .lost_t = TN_HISTORY_NEVER,
                               .lost_op = i,
                               .false_t = TN_HISTORY_NEVER,
                               .false_op = i,
                               .sup_t = TN_HISTORY_NEVER,
                               .sup_op = i,
                               .sup_by_op = i,
                               .renewed = false,
                               .name = open ? op->session : op->name,
                               .session = open ? TN_HISTORY_NO_ID : op->session,
                               .request_id = op->request_id};
    return l;
}

static bool is_ok(const struct tn_history_op *op, unsigned kind)
{
    return op->kind == kind && op->outcome == TN_HISTORY_OK;
}

/* A request_id retry, or a claim of a name under the session that holds
 * it, is answered the grant again (docs/SESSIONS.md, idempotent claims):
 * one grant, not a new one. */
static void mark_replays(struct tn_check_ctx *c)
{
    for (size_t i = 1; i < c->n; i++) {
        const struct tn_check_lease *a = &c->by_token[i - 1];
        struct tn_check_lease *b = &c->by_token[i];
        if (a->token != b->token || a->name != b->name)
            continue;
        b->replay =
            (a->request_id != TN_HISTORY_NO_ID &&
             a->request_id == b->request_id) ||
            (a->session != TN_HISTORY_NO_ID && a->session == b->session);
    }
}

/* sufmin[k]: the lease of by_name[k..end of its name) that completed
 * first. */
static void fill_sufmin(struct tn_check_ctx *c)
{
    for (size_t k = c->n; k-- > 0;) {
        c->sufmin[k] = k;
        bool same =
            k + 1 < c->n && c->by_name[k + 1].name == c->by_name[k].name;
        if (same &&
            c->by_name[c->sufmin[k + 1]].complete_t < c->by_name[k].complete_t)
            c->sufmin[k] = c->sufmin[k + 1];
    }
}

int tn_check_collect(struct tn_check_ctx *c)
{
    const struct tn_history *h = c->h;
    size_t n = 0;
    size_t n_open = 0;
    for (size_t i = 0; i < h->n_ops; i++) {
        n += is_ok(&h->ops[i], TN_HISTORY_ACQUIRE);
        n_open += is_ok(&h->ops[i], TN_HISTORY_SESSION_OPEN);
    }
    c->by_token = tn_calloc(n == 0 ? 1 : n, sizeof(struct tn_check_lease));
    c->by_name = tn_calloc(n == 0 ? 1 : n, sizeof(struct tn_check_lease));
    c->sufmin = tn_calloc(n == 0 ? 1 : n, sizeof(size_t));
    c->sessions =
        tn_calloc(n_open == 0 ? 1 : n_open, sizeof(struct tn_check_lease));
    if (c->by_token == NULL || c->by_name == NULL || c->sufmin == NULL ||
        c->sessions == NULL)
        return TN_ENOMEM;
    for (size_t i = 0; i < h->n_ops; i++) {
        const struct tn_history_op *op = &h->ops[i];
        if (is_ok(op, TN_HISTORY_ACQUIRE))
            c->by_token[c->n++] = grant_of(op, i);
        else if (is_ok(op, TN_HISTORY_SESSION_OPEN))
            c->sessions[c->n_sessions++] = grant_of(op, i);
    }
    qsort(c->by_token, c->n, sizeof(struct tn_check_lease), cmp_by_token);
    mark_replays(c);
    memcpy(c->by_name, c->by_token, c->n * sizeof(struct tn_check_lease));
    qsort(c->by_name, c->n, sizeof(struct tn_check_lease), cmp_by_name);
    qsort(c->sessions, c->n_sessions, sizeof(struct tn_check_lease),
          cmp_by_name);
    fill_sufmin(c);
    return TN_OK;
}

void tn_check_release(struct tn_check_ctx *c)
{
    tn_free(c->by_token);
    tn_free(c->by_name);
    tn_free(c->sufmin);
    tn_free(c->sessions);
}
