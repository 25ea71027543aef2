/* SPDX-License-Identifier: MIT */
/* How long each lease and each session was certainly valid, and when the
 * history first shows that one ended.  A session is read exactly as a
 * lease is: its open is the grant, its renews replace the deadline, its
 * end (any outcome) may have ended it at its invoke.  A lease under a
 * session has no deadline of its own: it is valid while its session is,
 * and ends at the latest when its session ends (docs/safety/sessions.md). */
#include "check/check_int.h"

/* The lease or session whose validity op acts on: renew and release name
 * a lease, session_renew and session_end a session.  NULL when the
 * history holds no such grant or open. */
static struct tn_check_lease *target_of(struct tn_check_ctx *c,
                                        const struct tn_history_op *op)
{
    switch (op->kind) {
    case TN_HISTORY_RENEW:
    case TN_HISTORY_RELEASE:
        return tn_check_lease_of(c, op);
    case TN_HISTORY_SESSION_RENEW:
    case TN_HISTORY_SESSION_END:
        return tn_check_session_of(c, op->session);
    default:
        return NULL;
    }
}

static bool is_renew(unsigned kind)
{
    return kind == TN_HISTORY_RENEW || kind == TN_HISTORY_SESSION_RENEW;
}

/* First pass: releases and ends, the smallest TTL, and A (applied_t), the
 * latest invoke of the grant and its ok renews. */
static void renew_facts(struct tn_check_ctx *c)
{
    const struct tn_history *h = c->h;
    for (size_t i = 0; i < h->n_ops; i++) {
        const struct tn_history_op *op = &h->ops[i];
        struct tn_check_lease *l = target_of(c, op);
        if (l == NULL)
            continue;
        if (!is_renew(op->kind)) {
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
}

/* Second pass: the earliest deadline each renew that may have been
 * applied last can have set (docs/safety/tenure-check.md rule 3). */
static void renew_bounds(struct tn_check_ctx *c)
{
    const struct tn_history *h = c->h;
    for (size_t i = 0; i < h->n_ops; i++) {
        const struct tn_history_op *op = &h->ops[i];
        if (!is_renew(op->kind) || op->outcome == TN_HISTORY_FAIL)
            continue;
        struct tn_check_lease *l = target_of(c, op);
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
        int64_t until = from + ttl * TN_CHECK_NS_PER_MS;
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
}

/* The grant set the deadline last only if no ok renew can have. */
static void settle(struct tn_check_lease *ls, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        struct tn_check_lease *l = &ls[k];
        l->own_release_t = l->release_t;
        if (l->renewed || l->renew_until < l->valid_until) {
            l->valid_until = l->renew_until;
            l->bound_op = l->renew_op;
        }
    }
}

/* A lease under a session is valid while its session is, whatever renews
 * of the lease itself say (the server refuses them), and ends at the
 * latest at its session's end.  Without the session's open in the
 * history nothing about it is certain. */
static void inherit(struct tn_check_ctx *c)
{
    for (size_t k = 0; k < c->n; k++) {
        struct tn_check_lease *l = &c->by_name[k];
        if (l->session == TN_HISTORY_NO_ID)
            continue;
        const struct tn_check_lease *s = tn_check_session_of(c, l->session);
        if (s == NULL) {
            l->valid_until = 0;
            l->bound_op = l->op;
            continue;
        }
        l->valid_until = s->valid_until;
        l->bound_op = s->bound_op;
        l->from_op = s->from_op;
        if (s->release_t < l->release_t)
            l->release_t = s->release_t;
    }
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
 * any outcome may have ended the lease at that invoke.  Sessions the same,
 * with their opens, renews and ends. */
void tn_check_validity(struct tn_check_ctx *c)
{
    renew_facts(c);
    renew_bounds(c);
    settle(c->by_name, c->n);
    settle(c->sessions, c->n_sessions);
    inherit(c);
}

/* op told its client that the grant of l ended: a renew or release that
 * failed with `lost`, or a check that answered current:false.  Counted
 * only when invoked after the grant completed: before, the token may not
 * have been granted yet. */
static bool reveals_end(const struct tn_history_op *op,
                        const struct tn_check_lease *l)
{
    if (op->invoke_t <= l->complete_t)
        return false;
    if (op->kind == TN_HISTORY_CHECK)
        return op->outcome == TN_HISTORY_OK && !op->current;
    return (op->kind == TN_HISTORY_RENEW || op->kind == TN_HISTORY_RELEASE) &&
           op->outcome == TN_HISTORY_FAIL && op->lost;
}

void tn_check_ends(struct tn_check_ctx *c)
{
    const struct tn_history *h = c->h;
    for (size_t i = 0; i < h->n_ops; i++) {
        const struct tn_history_op *op = &h->ops[i];
        if (op->kind == TN_HISTORY_ACQUIRE ||
            tn_history_is_session_op(op->kind))
            continue;
        struct tn_check_lease *l = tn_check_lease_of(c, op);
        if (l == NULL || !reveals_end(op, l))
            continue;
        if (op->complete_t < l->lost_t) {
            l->lost_t = op->complete_t;
            l->lost_op = i;
        }
        if (op->kind == TN_HISTORY_CHECK && op->complete_t < l->false_t) {
            l->false_t = op->complete_t;
            l->false_op = i;
        }
    }
    /* The first higher grant of each lease's name; it shows the lease had
     * ended only when no release of it alone may have come first. */
    for (size_t k = 0; k < c->n; k++) {
        struct tn_check_lease *l = &c->by_name[k];
        size_t j = tn_check_find_lease(c, l->name, l->token, true);
        if (j == c->n || c->by_name[j].name != l->name)
            continue;
        const struct tn_check_lease *newer = &c->by_name[c->sufmin[j]];
        if (newer->complete_t < l->own_release_t) {
            l->sup_t = newer->complete_t;
            l->sup_by_op = newer->op;
        }
    }
}
