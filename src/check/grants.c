/* SPDX-License-Identifier: MIT */
/* The grants of a history, which the rules of check.c read: every ok
 * acquire, sorted by token and by name, with what its renews, releases
 * and checks tell of how long it was surely valid. */
#include "check/grants.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

int tn_check_cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

static int cmp_by_token(const void *pa, const void *pb)
{
    const struct tn_grant *a = pa;
    const struct tn_grant *b = pb;
    int d = tn_check_cmp_i64(a->token, b->token);
    if (d == 0)
        d = tn_check_cmp_i64(a->invoke_t, b->invoke_t);
    return d != 0 ? d : (a->op > b->op) - (a->op < b->op);
}

static int cmp_by_name(const void *pa, const void *pb)
{
    const struct tn_grant *a = pa;
    const struct tn_grant *b = pb;
    if (a->name != b->name)
        return a->name < b->name ? -1 : 1;
    return cmp_by_token(pa, pb);
}

/* First lease of by_name at or after (name, token) (strictly after when
 * after_token); c->n when none. */
size_t tn_check_find_lease(const struct tn_check_ctx *c, uint32_t name,
                           int64_t token, bool after_token)
{
    size_t lo = 0;
    size_t hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct tn_grant *l = &c->by_name[mid];
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

int tn_check_collect(struct tn_check_ctx *c)
{
    const struct tn_history *h = c->h;
    size_t n = 0;
    for (size_t i = 0; i < h->n_ops; i++) {
        const struct tn_history_op *op = &h->ops[i];
        if (op->kind == TN_HISTORY_ACQUIRE && op->outcome == TN_HISTORY_OK)
            n++;
    }
    c->by_token = tn_calloc(n == 0 ? 1 : n, sizeof(struct tn_grant));
    c->by_name = tn_calloc(n == 0 ? 1 : n, sizeof(struct tn_grant));
    if (c->by_token == NULL || c->by_name == NULL)
        return TN_ENOMEM;
    for (size_t i = 0; i < h->n_ops; i++) {
        const struct tn_history_op *op = &h->ops[i];
        if (op->kind != TN_HISTORY_ACQUIRE || op->outcome != TN_HISTORY_OK)
            continue;
        struct tn_grant l = {.token = op->token_out,
                             .invoke_t = op->invoke_t,
                             .complete_t = op->complete_t,
                             .valid_until =
                                 op->invoke_t + op->ttl_ms * NS_PER_MS,
                             .release_t = TN_HISTORY_NEVER,
                             .applied_t = op->invoke_t,
                             .min_ttl_ms = op->ttl_ms,
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
                             .renewed = false,
                             .name = op->name,
                             .request_id = op->request_id};
        c->by_token[c->n++] = l;
    }
    qsort(c->by_token, c->n, sizeof(struct tn_grant), cmp_by_token);
    memcpy(c->by_name, c->by_token, c->n * sizeof(struct tn_grant));
    qsort(c->by_name, c->n, sizeof(struct tn_grant), cmp_by_name);
    return TN_OK;
}

/* The first lease of op's (name, token_in), or NULL. */
struct tn_grant *tn_check_lease_of(struct tn_check_ctx *c,
                                   const struct tn_history_op *op)
{
    size_t k = tn_check_find_lease(c, op->name, op->token_in, false);
    if (k == c->n || c->by_name[k].name != op->name ||
        c->by_name[k].token != op->token_in)
        return NULL;
    return &c->by_name[k];
}

/* Validity of each lease.  A renew replaces the deadline with (its
 * arrival + its TTL, or the lease's current TTL when it names none), so
 * the deadline is the one set by whichever of the grant and the applied
 * renews the server applied last.  Ok renews were applied, each at or
 * after its own invoke and after the grant; failed ones were not; info and
 * unfinished ones may have been, at any time after their invoke.  The
 * deadline is certainly no earlier than the minimum, over every operation
 * that may have been applied last, of
 *   - an ok renew r (possible last iff it completed no earlier than
 *     applied_t, the latest invoke of the grant and the ok renews):
 *     applied_t + ttl(r), since r was applied after all of them;
 *   - an unknown renew u: max(i(u), applied_t) + ttl(u);
 *   - the grant, when no ok renew can be last: i + ttl.
 * A renew without ttl_ms counts with min_ttl_ms, the smallest TTL that the
 * grant or any renew that may have been applied set.  A release invoke of
 * any outcome may have ended the lease at that invoke.  Facts land on the
 * first lease of their (name, token), the one with the earliest invoke. */
void tn_check_apply_renews(struct tn_check_ctx *c)
{
    const struct tn_history *h = c->h;
    for (size_t i = 0; i < h->n_ops; i++) {
        const struct tn_history_op *op = &h->ops[i];
        if (op->kind == TN_HISTORY_ACQUIRE || op->kind == TN_HISTORY_CHECK)
            continue;
        struct tn_grant *l = tn_check_lease_of(c, op);
        if (l == NULL)
            continue;
        if (op->kind == TN_HISTORY_RELEASE) {
            if (op->invoke_t < l->release_t)
                l->release_t = op->invoke_t;
            continue;
        }
        if (op->outcome == TN_HISTORY_FAIL)
            continue;
        if (op->ttl_ms != TN_HISTORY_NONE && op->ttl_ms < l->min_ttl_ms)
            l->min_ttl_ms = op->ttl_ms;
        if (op->outcome == TN_HISTORY_OK && op->invoke_t > l->applied_t) {
            l->applied_t = op->invoke_t;
            l->applied_op = i;
        }
    }
    for (size_t i = 0; i < h->n_ops; i++) {
        const struct tn_history_op *op = &h->ops[i];
        if (op->kind != TN_HISTORY_RENEW || op->outcome == TN_HISTORY_FAIL)
            continue;
        struct tn_grant *l = tn_check_lease_of(c, op);
        if (l == NULL)
            continue;
        int64_t ttl =
            op->ttl_ms != TN_HISTORY_NONE ? op->ttl_ms : l->min_ttl_ms;
        int64_t from = l->applied_t;
        size_t from_op = l->applied_op;
        if (op->outcome == TN_HISTORY_OK) {
            if (op->complete_t < l->applied_t)
                continue; /* certainly applied before another ok renew */
            l->renewed = true;
        } else if (op->invoke_t > from) {
            from = op->invoke_t;
            from_op = i;
        }
        if (op->invoke_t == from)
            from_op = i;
        int64_t until = from + ttl * NS_PER_MS;
        /* On a tie, prefer the renew that counts from its own invoke: the
         * witness is one event shorter. */
        if (until < l->renew_until ||
            (until == l->renew_until && from_op == i &&
             l->from_op != l->renew_op)) {
            l->renew_until = until;
            l->renew_op = i;
            l->from_op = from_op;
        }
    }
    /* The grant set the deadline last only if no ok renew can have. */
    for (size_t k = 0; k < c->n; k++) {
        struct tn_grant *l = &c->by_name[k];
        if (l->renewed || l->renew_until < l->valid_until) {
            l->valid_until = l->renew_until;
            l->bound_op = l->renew_op;
        }
    }
}
