/* SPDX-License-Identifier: MIT */
/* The rules on sessions (docs/safety/sessions.md).  A lease under a session
 * ends only when released alone or when its session ends, and every lease
 * of a session ends when it does (docs/SESSIONS.md, invariants 1 and 2).
 * So the history proves that a session S ended by time x when
 *   - an end of S returned ok, completing at x; or a renew or end of S, or
 *     an acquire under S, failed `lost`, completing at x and invoked after
 *     S's open completed;
 *   - the server said that a lease L of S ended (a check current:false, a
 *     renew or release `lost`, completing at x) while no release of L
 *     alone had been invoked;
 *   - a grant of L's name with a higher token completed at x while no
 *     release of L alone had been invoked.
 * Once S ended, no renew or end of S and no acquire under S returns ok,
 * and no check of any lease of S answers current:true: such an operation
 * invoked strictly after x is a violation, renew_after_lost (a check:
 * check_revived) when the proof was an answer, superseded_success when it
 * was a higher grant.  One pass over the leases, one over the operations,
 * each a binary search: O(N log N). */
#include "check/check_int.h"

/* op (of session s) answered that s had ended. */
static bool reveals_session_end(const struct tn_history_op *op,
                                const struct tn_check_lease *s)
{
    if (op->kind == TN_HISTORY_SESSION_END && op->outcome == TN_HISTORY_OK)
        return true;
    if (op->outcome != TN_HISTORY_FAIL || !op->lost ||
        op->invoke_t <= s->complete_t)
        return false;
    return op->kind == TN_HISTORY_SESSION_RENEW ||
           op->kind == TN_HISTORY_SESSION_END || op->kind == TN_HISTORY_ACQUIRE;
}

static void note_lost(struct tn_check_lease *s, int64_t t, size_t op)
{
    if (t < s->lost_t) {
        s->lost_t = t;
        s->lost_op = op;
    }
}

/* The earliest proof per session that it ended, of either kind. */
static void session_proofs(struct tn_check_ctx *c)
{
    const struct tn_history *h = c->h;
    for (size_t i = 0; i < h->n_ops; i++) {
        const struct tn_history_op *op = &h->ops[i];
        if (op->session == TN_HISTORY_NO_ID ||
            op->kind == TN_HISTORY_SESSION_OPEN)
            continue;
        struct tn_check_lease *s = tn_check_session_of(c, op->session);
        if (s != NULL && reveals_session_end(op, s))
            note_lost(s, op->complete_t, i);
    }
    for (size_t k = 0; k < c->n; k++) {
        const struct tn_check_lease *l = &c->by_name[k];
        struct tn_check_lease *s = l->session == TN_HISTORY_NO_ID
                                       ? NULL
                                       : tn_check_session_of(c, l->session);
        if (s == NULL)
            continue;
        if (l->lost_t < l->own_release_t)
            note_lost(s, l->lost_t, l->lost_op);
        if (l->sup_t < s->sup_t) {
            s->sup_t = l->sup_t;
            s->sup_op = l->op;
            s->sup_by_op = l->sup_by_op;
        }
    }
}

/* An ok renew or end of s, or an ok acquire under it. */
static void judge_session_op(struct tn_check_ctx *c, size_t i,
                             const struct tn_check_lease *s)
{
    const struct tn_history_op *op = &c->h->ops[i];
    if (s->lost_t < op->invoke_t) {
        struct tn_check_ref ev[3] = {tn_check_op_ref(s->op),
                                     tn_check_op_ref(s->lost_op),
                                     tn_check_op_ref(i)};
        tn_check_report_one(c, TN_CHECK_RENEW_AFTER_LOST, ev, 3, s->lost_t);
    } else if (s->sup_t < op->invoke_t) {
        struct tn_check_ref ev[3] = {tn_check_op_ref(s->sup_op),
                                     tn_check_op_ref(s->sup_by_op),
                                     tn_check_op_ref(i)};
        tn_check_report_one(c, TN_CHECK_SUPERSEDED_SUCCESS, ev, 3, s->sup_t);
    }
}

/* An ok check current:true of l, a lease of s.  A check after an answer
 * about l itself is rule_revived's (check.c). */
static void judge_check(struct tn_check_ctx *c, size_t i,
                        const struct tn_check_lease *l,
                        const struct tn_check_lease *s)
{
    const struct tn_history_op *op = &c->h->ops[i];
    if (l->false_t < op->invoke_t)
        return;
    if (s->lost_t < op->invoke_t) {
        struct tn_check_ref ev[3] = {tn_check_op_ref(l->op),
                                     tn_check_op_ref(s->lost_op),
                                     tn_check_op_ref(i)};
        tn_check_report_one(c, TN_CHECK_CHECK_REVIVED, ev, 3, s->lost_t);
    } else if (s->sup_t < op->invoke_t) {
        struct tn_check_ref ev[4] = {
            tn_check_op_ref(l->op), tn_check_op_ref(s->sup_op),
            tn_check_op_ref(s->sup_by_op), tn_check_op_ref(i)};
        tn_check_report_one(c, TN_CHECK_CHECK_REVIVED, ev, 4, s->sup_t);
    }
}

void tn_check_rule_sessions(struct tn_check_ctx *c)
{
    session_proofs(c);
    const struct tn_history *h = c->h;
    for (size_t i = 0; i < h->n_ops; i++) {
        const struct tn_history_op *op = &h->ops[i];
        if (op->outcome != TN_HISTORY_OK)
            continue;
        if (op->kind == TN_HISTORY_SESSION_RENEW ||
            op->kind == TN_HISTORY_SESSION_END ||
            (op->kind == TN_HISTORY_ACQUIRE &&
             op->session != TN_HISTORY_NO_ID)) {
            const struct tn_check_lease *s =
                tn_check_session_of(c, op->session);
            if (s != NULL)
                judge_session_op(c, i, s);
        } else if (op->kind == TN_HISTORY_CHECK && op->current) {
            const struct tn_check_lease *l = tn_check_lease_of(c, op);
            const struct tn_check_lease *s =
                l == NULL || l->session == TN_HISTORY_NO_ID
                    ? NULL
                    : tn_check_session_of(c, l->session);
            if (s != NULL)
                judge_check(c, i, l, s);
        }
    }
}
