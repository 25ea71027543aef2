/* SPDX-License-Identifier: MIT */
/* The rules of tenure-check.  Each rule is a sort plus one sweep, so the
 * whole check is O(N log N).  Unknown outcomes never create a violation:
 * an info acquire contributes no token, a release invoke of any outcome may
 * have ended its lease at its invoke, and a renew (which replaces the
 * lease's deadline, so may shorten it) is taken to have been applied last
 * whenever it may have been, so the deadline used is the earliest one
 * possible.  See docs/safety/tenure-check.md for each rule and why. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check_int.h"
#include "common/alloc.h"

static int cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

/* Tokens unique: two ok acquires never return the same token, for any
 * names, except a request_id retry of the same name, or a claim of the
 * same name under the same session (docs/SESSIONS.md: an idempotent
 * claim answers the grant the session holds): the same grant. */
static void rule_duplicate(struct tn_check_ctx *c)
{
    for (size_t i = 1; i < c->n; i++) {
        const struct tn_check_lease *a = &c->by_token[i - 1];
        const struct tn_check_lease *b = &c->by_token[i];
        if (a->token != b->token)
            continue;
        if (b->replay)
            continue;
        struct tn_check_ref ev[2] = {tn_check_op_ref(a->op),
                                     tn_check_op_ref(b->op)};
        tn_check_report_one(c, TN_CHECK_DUPLICATE_TOKEN, ev, 2, a->token);
    }
}

static int cmp_complete(const void *pa, const void *pb)
{
    const struct tn_check_lease *a = pa;
    const struct tn_check_lease *b = pb;
    int d = cmp_i64(a->complete_t, b->complete_t);
    return d != 0 ? d : (a->op > b->op) - (a->op < b->op);
}

static int cmp_invoke(const void *pa, const void *pb)
{
    const struct tn_check_lease *a = pa;
    const struct tn_check_lease *b = pb;
    int d = cmp_i64(a->invoke_t, b->invoke_t);
    return d != 0 ? d : (a->op > b->op) - (a->op < b->op);
}

/* Real-time order: if A completed strictly before B was invoked, then
 * token(A) < token(B), across all names.  Equal tokens are the duplicate
 * rule's, and a replay B is no new grant (its grant was made when the
 * acquire it repeats was).  Sweep B by invoke time, keeping the highest
 * token of the acquires completed before it. */
static int rule_token_order(struct tn_check_ctx *c)
{
    struct tn_check_lease *by_c =
        tn_calloc(c->n == 0 ? 1 : c->n, sizeof(*by_c));
    struct tn_check_lease *by_i =
        tn_calloc(c->n == 0 ? 1 : c->n, sizeof(*by_i));
    int rc = TN_ENOMEM;
    if (by_c == NULL || by_i == NULL)
        goto out_free;
    memcpy(by_c, c->by_token, c->n * sizeof(*by_c));
    memcpy(by_i, c->by_token, c->n * sizeof(*by_i));
    qsort(by_c, c->n, sizeof(*by_c), cmp_complete);
    qsort(by_i, c->n, sizeof(*by_i), cmp_invoke);
    size_t j = 0;
    const struct tn_check_lease *best = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const struct tn_check_lease *b = &by_i[i];
        for (; j < c->n && by_c[j].complete_t < b->invoke_t; j++) {
            if (best == NULL || by_c[j].token > best->token)
                best = &by_c[j];
        }
        if (best != NULL && best->token > b->token && !b->replay) {
            struct tn_check_ref ev[2] = {tn_check_op_ref(best->op),
                                         tn_check_op_ref(b->op)};
            tn_check_report_one(c, TN_CHECK_TOKEN_ORDER, ev, 2, best->token);
        }
    }
    rc = TN_OK;
out_free:
    tn_free(by_c);
    tn_free(by_i);
    return rc;
}

static int64_t lease_end(const struct tn_check_lease *l)
{
    return l->valid_until < l->release_t ? l->valid_until : l->release_t;
}

/* One name's leases [a, b) of by_name: a grant whose ok completed while a
 * lease with a lower token was certainly valid (before its validity bound
 * and before any release of it was invoked). */
static void overlap_in_name(struct tn_check_ctx *c, size_t a, size_t b)
{
    const struct tn_check_lease *best =
        NULL; /* max lease_end among lower tokens */
    size_t g = a;
    while (g < b) {
        size_t e = g;
        while (e < b && c->by_name[e].token == c->by_name[g].token)
            e++;
        for (size_t k = g; best != NULL && k < e; k++) {
            const struct tn_check_lease *l2 = &c->by_name[k];
            if (l2->complete_t >= lease_end(best))
                continue;
            /* L1, L2, then the operation that set the deadline and the
             * one that shows it was applied that late, when not L1. */
            struct tn_check_ref ev[4] = {tn_check_op_ref(best->op),
                                         tn_check_op_ref(l2->op)};
            unsigned n_ev = 2;
            if (best->bound_op != best->op) {
                ev[n_ev++] = tn_check_op_ref(best->bound_op);
                if (best->from_op != best->bound_op &&
                    best->from_op != best->op)
                    ev[n_ev++] = tn_check_op_ref(best->from_op);
            }
            tn_check_report_one(c, TN_CHECK_OVERLAPPING_GRANT, ev, n_ev,
                                lease_end(best));
        }
        if (best == NULL || lease_end(&c->by_name[g]) > lease_end(best))
            best = &c->by_name[g];
        g = e;
    }
}

static void rule_overlap(struct tn_check_ctx *c)
{
    size_t a = 0;
    while (a < c->n) {
        size_t b = a;
        while (b < c->n && c->by_name[b].name == c->by_name[a].name)
            b++;
        overlap_in_name(c, a, b);
        a = b;
    }
}

/* A renew or release that returned ok although it was invoked after an
 * acquire of the same name with a higher token had completed. */
static void rule_superseded(struct tn_check_ctx *c)
{
    const struct tn_history *h = c->h;
    for (size_t i = 0; i < h->n_ops; i++) {
        const struct tn_history_op *op = &h->ops[i];
        if ((op->kind != TN_HISTORY_RENEW && op->kind != TN_HISTORY_RELEASE) ||
            op->outcome != TN_HISTORY_OK)
            continue;
        size_t k = tn_check_find_lease(c, op->name, op->token_in, true);
        if (k == c->n || c->by_name[k].name != op->name)
            continue;
        const struct tn_check_lease *newer = &c->by_name[c->sufmin[k]];
        if (newer->complete_t >= op->invoke_t)
            continue;
        struct tn_check_ref ev[2] = {tn_check_op_ref(newer->op),
                                     tn_check_op_ref(i)};
        tn_check_report_one(c, TN_CHECK_SUPERSEDED_SUCCESS, ev, 2,
                            newer->token);
    }
}

/* A renew that returned ok with a token other than the one it renewed. */
static void rule_renew_token(struct tn_check_ctx *c)
{
    const struct tn_history *h = c->h;
    for (size_t i = 0; i < h->n_ops; i++) {
        const struct tn_history_op *op = &h->ops[i];
        if (op->kind != TN_HISTORY_RENEW || op->outcome != TN_HISTORY_OK ||
            op->token_out == TN_HISTORY_NONE || op->token_out == op->token_in)
            continue;
        struct tn_check_ref ev[1] = {tn_check_op_ref(i)};
        tn_check_report_one(c, TN_CHECK_RENEW_TOKEN_CHANGED, ev, 1,
                            op->token_out);
    }
}

/* An ended grant stays ended (docs/safety/revealed-end.md): no renew of it
 * returns ok and no check of it answers current:true when invoked strictly
 * after the server said it ended (the earliest such answer per lease is
 * tn_check_ends's). */
static void rule_revived(struct tn_check_ctx *c)
{
    const struct tn_history *h = c->h;
    for (size_t i = 0; i < h->n_ops; i++) {
        const struct tn_history_op *op = &h->ops[i];
        if (op->outcome != TN_HISTORY_OK ||
            (op->kind != TN_HISTORY_RENEW &&
             !(op->kind == TN_HISTORY_CHECK && op->current)))
            continue;
        const struct tn_check_lease *l = tn_check_lease_of(c, op);
        if (l == NULL)
            continue;
        if (op->kind == TN_HISTORY_RENEW && l->lost_t < op->invoke_t) {
            struct tn_check_ref ev[3] = {tn_check_op_ref(l->op),
                                         tn_check_op_ref(l->lost_op),
                                         tn_check_op_ref(i)};
            tn_check_report_one(c, TN_CHECK_RENEW_AFTER_LOST, ev, 3, l->lost_t);
        }
        if (op->kind == TN_HISTORY_CHECK && l->false_t < op->invoke_t) {
            struct tn_check_ref ev[3] = {tn_check_op_ref(l->op),
                                         tn_check_op_ref(l->false_op),
                                         tn_check_op_ref(i)};
            tn_check_report_one(c, TN_CHECK_CHECK_REVIVED, ev, 3, l->false_t);
        }
    }
}

struct mark {
    int64_t value; /* replayed mark, TN_HISTORY_NONE before any fact */
    size_t setter; /* sink decision that set it */
};

/* Compare the sink's own hwm_before with the replayed mark, then adopt the
 * higher of the two. */
static void sink_hwm(struct tn_check_ctx *c, struct mark *m, size_t i)
{
    const struct tn_history_sink *s = &c->h->sinks[i];
    if (s->hwm_before == TN_HISTORY_NONE)
        return;
    if (m->value != TN_HISTORY_NONE && s->hwm_before != m->value) {
        struct tn_check_ref ev[2] = {tn_check_sink_ref(m->setter),
                                     tn_check_sink_ref(i)};
        unsigned cls = s->hwm_before < m->value ? TN_CHECK_SINK_MARK_MOVED_DOWN
                                                : TN_CHECK_SINK_MARK_MISMATCH;
        tn_check_report_one(c, cls, ev, 2, m->value);
    }
    if (m->value == TN_HISTORY_NONE || s->hwm_before > m->value) {
        m->value = s->hwm_before;
        m->setter = i;
    }
}

static void sink_admit(struct tn_check_ctx *c, struct mark *m, size_t i)
{
    const struct tn_history_sink *s = &c->h->sinks[i];
    if (m->value != TN_HISTORY_NONE && s->token < m->value) {
        struct tn_check_ref ev[2] = {tn_check_sink_ref(m->setter),
                                     tn_check_sink_ref(i)};
        tn_check_report_one(c, TN_CHECK_SINK_BELOW_MARK, ev, 2, m->value);
    }
    if (!tn_check_is_granted(c, s->token)) {
        struct tn_check_ref ev[1] = {tn_check_sink_ref(i)};
        tn_check_report_one(c, TN_CHECK_SINK_NEVER_GRANTED, ev, 1, s->token);
    }
    if (m->value == TN_HISTORY_NONE || s->token > m->value) {
        m->value = s->token;
        m->setter = i;
    }
}

static int rule_sink(struct tn_check_ctx *c)
{
    const struct tn_history *h = c->h;
    size_t n = h->n_strs == 0 ? 1 : h->n_strs;
    struct mark *marks = tn_calloc(n, sizeof(*marks));
    if (marks == NULL)
        return TN_ENOMEM;
    for (size_t i = 0; i < n; i++)
        marks[i].value = TN_HISTORY_NONE;
    for (size_t i = 0; i < h->n_sinks; i++) {
        struct mark *m = &marks[h->sinks[i].resource];
        sink_hwm(c, m, i);
        if (h->sinks[i].admit)
            sink_admit(c, m, i);
    }
    tn_free(marks);
    return TN_OK;
}

int tn_check_run(const struct tn_history *h, struct tn_check_report *out)
{
    memset(out, 0, sizeof(*out));
    struct tn_check_ctx c = {.h = h, .r = out};
    int rc = tn_check_collect(&c);
    if (rc < 0)
        goto out_free;
    tn_check_validity(&c);
    tn_check_ends(&c);
    rule_duplicate(&c);
    rc = rule_token_order(&c);
    if (rc < 0)
        goto out_free;
    rule_overlap(&c);
    rule_superseded(&c);
    rule_renew_token(&c);
    rule_revived(&c);
    tn_check_rule_sessions(&c);
    rc = rule_sink(&c);
out_free:
    tn_check_release(&c);
    return rc;
}
