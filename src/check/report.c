/* SPDX-License-Identifier: MIT */
/* The checker's JSON report: counts per class, and for each violated class
 * the first witness found, its events as the history recorded them plus a
 * sentence that says why they violate the contract. */
#include <stdio.h>

#include "check/check.h"

#define WHY_BYTES 768

const char *tn_check_class_name(unsigned cls)
{
    static const char *const names[TN_CHECK_N_CLASSES] = {
        "duplicate_token",    "token_order",          "overlapping_grant",
        "superseded_success", "renew_token_changed",  "sink_below_mark",
        "sink_never_granted", "sink_mark_moved_down", "sink_mark_mismatch",
        "renew_after_lost",   "check_revived",
    };
    return cls < TN_CHECK_N_CLASSES ? names[cls] : "?";
}

bool tn_check_is_clean(const struct tn_check_report *r)
{
    for (unsigned i = 0; i < TN_CHECK_N_CLASSES; i++) {
        if (r->count[i] != 0)
            return false;
    }
    return true;
}

static int set_int(json_t *o, const char *key, int64_t v)
{
    return json_object_set_new(o, key, json_integer((json_int_t)v));
}

static int set_str(json_t *o, const char *key, const char *s)
{
    return json_object_set_new(o, key, json_string(s));
}

static json_t *op_json(const struct tn_history *h, size_t idx)
{
    const struct tn_history_op *op = &h->ops[idx];
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    int rc = set_int(o, "line", op->invoke_line);
    rc |= set_str(o, "proc", tn_history_str(h, op->proc));
    rc |= set_str(o, "op", tn_history_kind_name(op->kind));
    if (op->name != TN_HISTORY_NO_ID)
        rc |= set_str(o, "name", tn_history_str(h, op->name));
    if (op->session != TN_HISTORY_NO_ID)
        rc |= set_str(o, "session", tn_history_str(h, op->session));
    rc |= set_int(o, "invoke_t", op->invoke_t);
    if (op->token_in != TN_HISTORY_NONE)
        rc |= set_int(o, "token", op->token_in);
    if (op->ttl_ms != TN_HISTORY_NONE)
        rc |= set_int(o, "ttl_ms", op->ttl_ms);
    rc |= set_str(o, "outcome", tn_history_outcome_name(op->outcome));
    if (op->complete_line != 0) {
        rc |= set_int(o, "complete_line", op->complete_line);
        rc |= set_int(o, "complete_t", op->complete_t);
    }
    if (op->token_out != TN_HISTORY_NONE)
        rc |= set_int(o, "token_returned", op->token_out);
    if (op->kind == TN_HISTORY_CHECK && op->outcome == TN_HISTORY_OK)
        rc |= json_object_set_new(o, "current", json_boolean(op->current));
    if (op->lost)
        rc |= set_str(o, "error", "lost");
    if (rc != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *sink_json(const struct tn_history *h, size_t idx)
{
    const struct tn_history_sink *s = &h->sinks[idx];
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    int rc = set_int(o, "line", s->line);
    rc |= set_str(o, "src", "sink");
    rc |= set_int(o, "t", s->t);
    rc |= set_str(o, "resource", tn_history_str(h, s->resource));
    rc |= set_int(o, "token", s->token);
    rc |= set_str(o, "decision", s->admit ? "admit" : "reject");
    if (s->hwm_before != TN_HISTORY_NONE)
        rc |= set_int(o, "hwm_before", s->hwm_before);
    if (rc != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static long long ll(int64_t v)
{
    return (long long)v;
}

/* What op is, for a sentence: "session_renew of session S", "acquire of
 * "a" under session S", "renew of token 3 of "a"". */
static void what(const struct tn_history *h, const struct tn_history_op *op,
                 char *out, size_t cap)
{
    const char *kind = tn_history_kind_name(op->kind);
    const char *sess = tn_history_str(h, op->session);
    if (tn_history_is_session_op(op->kind))
        (void)snprintf(out, cap, "%s of session %s", kind, sess);
    else if (op->kind == TN_HISTORY_ACQUIRE)
        (void)snprintf(out, cap, "%s of \"%s\" under session %s", kind,
                       tn_history_str(h, op->name), sess);
    else
        (void)snprintf(out, cap, "%s of token %lld of \"%s\"", kind,
                       ll(op->token_in), tn_history_str(h, op->name));
}

/* The witnesses of the session rules (session.c): a session op or an
 * acquire under a session that returned ok, or a check of a lease of an
 * ended session that answered current:true. */
static void why_session(const struct tn_history *h, unsigned cls,
                        const struct tn_check_witness *w, char *out, size_t cap)
{
    const struct tn_history_op *x = &h->ops[w->ev[w->n_ev - 1].idx];
    const struct tn_history_op *p = &h->ops[w->ev[1].idx];
    char wx[200];
    char wp[200];
    what(h, x, wx, sizeof(wx));
    const char *sess = tn_history_str(h, x->kind == TN_HISTORY_CHECK
                                             ? h->ops[w->ev[0].idx].session
                                             : x->session);
    const char *did =
        x->kind == TN_HISTORY_CHECK ? "answered current:true" : "returned ok";
    if (cls == TN_CHECK_SUPERSEDED_SUCCESS || w->n_ev == 4) {
        const struct tn_history_op *l = &h->ops[w->ev[w->n_ev - 3].idx];
        const struct tn_history_op *l2 = &h->ops[w->ev[w->n_ev - 2].idx];
        (void)snprintf(out, cap,
                       "%s invoked at t=%lld %s, though session %s had "
                       "ended: its lease token %lld of \"%s\" was superseded "
                       "by token %lld, granted at t=%lld, with no release of "
                       "it invoked before",
                       wx, ll(x->invoke_t), did, sess, ll(l->token_out),
                       tn_history_str(h, l->name), ll(l2->token_out),
                       ll(w->bound));
        return;
    }
    what(h, p, wp, sizeof(wp));
    (void)snprintf(
        out, cap,
        "%s invoked at t=%lld %s, though session %s had ended: "
        "the %s of line %u had answered at t=%lld that %s",
        wx, ll(x->invoke_t), did, sess, wp, p->invoke_line, ll(w->bound),
        tn_history_is_session_op(p->kind) || p->kind == TN_HISTORY_ACQUIRE
            ? "the session ended"
            : "a lease of it ended");
}

/* Is w one of session.c's witnesses?  Theirs end with an ok session
 * renew or acquire under a session, or (check_revived) show an answer
 * about another grant than the checked one. */
static bool is_session_witness(const struct tn_history *h, unsigned cls,
                               const struct tn_check_witness *w)
{
    const struct tn_history_op *x = &h->ops[w->ev[w->n_ev - 1].idx];
    if (cls == TN_CHECK_SUPERSEDED_SUCCESS || cls == TN_CHECK_RENEW_AFTER_LOST)
        return w->n_ev == 3 && (tn_history_is_session_op(x->kind) ||
                                x->kind == TN_HISTORY_ACQUIRE);
    if (cls != TN_CHECK_CHECK_REVIVED)
        return false;
    const struct tn_history_op *p = &h->ops[w->ev[1].idx];
    return w->n_ev == 4 || p->kind != TN_HISTORY_CHECK || p->name != x->name ||
           p->token_in != x->token_in;
}

static void why_ops(const struct tn_history *h, unsigned cls,
                    const struct tn_check_witness *w, char *out, size_t cap)
{
    const struct tn_history_op *a = &h->ops[w->ev[0].idx];
    const struct tn_history_op *b = &h->ops[w->ev[w->n_ev > 1].idx];
    const char *name = tn_history_str(h, b->name);
    if (is_session_witness(h, cls, w)) {
        why_session(h, cls, w, out, cap);
        return;
    }
    switch (cls) {
    case TN_CHECK_DUPLICATE_TOKEN:
        (void)snprintf(out, cap, "two ok acquires returned token %lld",
                       ll(w->bound));
        break;
    case TN_CHECK_TOKEN_ORDER:
        (void)snprintf(out, cap,
                       "the acquire of line %u completed at t=%lld, before "
                       "the acquire of line %u was invoked at t=%lld, yet "
                       "returned the higher token (%lld > %lld)",
                       a->invoke_line, ll(a->complete_t), b->invoke_line,
                       ll(b->invoke_t), ll(a->token_out), ll(b->token_out));
        break;
    case TN_CHECK_OVERLAPPING_GRANT:
        (void)snprintf(
            out, cap,
            "token %lld of \"%s\"%s%s was certainly valid until "
            "t=%lld, yet token %lld of the same name was granted "
            "by t=%lld",
            ll(a->token_out), name,
            a->session != TN_HISTORY_NO_ID ? ", under session " : "",
            a->session != TN_HISTORY_NO_ID ? tn_history_str(h, a->session) : "",
            ll(w->bound), ll(b->token_out), ll(b->complete_t));
        break;
    case TN_CHECK_SUPERSEDED_SUCCESS:
        (void)snprintf(out, cap,
                       "%s of token %lld of \"%s\" returned ok though invoked "
                       "at t=%lld, after token %lld of that name was granted "
                       "at t=%lld",
                       tn_history_kind_name(b->kind), ll(b->token_in), name,
                       ll(b->invoke_t), ll(a->token_out), ll(a->complete_t));
        break;
    case TN_CHECK_RENEW_AFTER_LOST:
    case TN_CHECK_CHECK_REVIVED: {
        const struct tn_history_op *x = &h->ops[w->ev[2].idx];
        (void)snprintf(out, cap,
                       "%s of token %lld of \"%s\" invoked at t=%lld %s, "
                       "though the %s of line %u had answered at t=%lld "
                       "that this grant ended",
                       tn_history_kind_name(x->kind), ll(x->token_in),
                       tn_history_str(h, x->name), ll(x->invoke_t),
                       x->kind == TN_HISTORY_CHECK ? "answered current:true"
                                                   : "returned ok",
                       tn_history_kind_name(b->kind), b->invoke_line,
                       ll(w->bound));
        break;
    }
    default:
        (void)snprintf(
            out, cap, "renew of token %lld of \"%s\" returned token %lld",
            ll(a->token_in), tn_history_str(h, a->name), ll(a->token_out));
        break;
    }
}

static void why_sink(const struct tn_history *h, unsigned cls,
                     const struct tn_check_witness *w, char *out, size_t cap)
{
    const struct tn_history_sink *s = &h->sinks[w->ev[w->n_ev - 1].idx];
    const char *res = tn_history_str(h, s->resource);
    switch (cls) {
    case TN_CHECK_SINK_BELOW_MARK:
        (void)snprintf(out, cap,
                       "the sink admitted token %lld on \"%s\" below its "
                       "mark %lld",
                       ll(s->token), res, ll(w->bound));
        break;
    case TN_CHECK_SINK_NEVER_GRANTED:
        (void)snprintf(out, cap,
                       "the sink admitted token %lld on \"%s\" that no ok "
                       "acquire returned",
                       ll(s->token), res);
        break;
    case TN_CHECK_SINK_MARK_MOVED_DOWN:
        (void)snprintf(out, cap,
                       "the sink's mark on \"%s\" was %lld, below the %lld "
                       "it had already reached",
                       res, ll(s->hwm_before), ll(w->bound));
        break;
    default:
        (void)snprintf(out, cap,
                       "the sink's mark on \"%s\" was %lld, above every mark "
                       "the history explains (%lld)",
                       res, ll(s->hwm_before), ll(w->bound));
        break;
    }
}

static json_t *violation_json(const struct tn_history *h,
                              const struct tn_check_report *r, unsigned cls)
{
    const struct tn_check_witness *w = &r->witness[cls];
    char why[WHY_BYTES];
    if (cls >= TN_CHECK_SINK_BELOW_MARK && cls <= TN_CHECK_SINK_MARK_MISMATCH)
        why_sink(h, cls, w, why, sizeof(why));
    else
        why_ops(h, cls, w, why, sizeof(why));
    json_t *events = json_array();
    json_t *v = json_object();
    int rc = events == NULL || v == NULL ? -1 : 0;
    for (unsigned i = 0; rc == 0 && i < w->n_ev; i++) {
        const struct tn_check_ref *ref = &w->ev[i];
        json_t *e = ref->sink ? sink_json(h, ref->idx) : op_json(h, ref->idx);
        rc = json_array_append_new(events, e);
    }
    if (rc == 0) {
        rc |= set_str(v, "class", tn_check_class_name(cls));
        rc |= set_int(v, "count", (int64_t)r->count[cls]);
        rc |= set_str(v, "why", why);
        rc |= json_object_set(v, "events", events);
    }
    json_decref(events);
    if (rc != 0) {
        json_decref(v);
        return NULL;
    }
    return v;
}

static json_t *op_counts(const struct tn_history *h)
{
    int64_t kinds[TN_HISTORY_N_KINDS] = {0};
    int64_t outcomes[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < h->n_ops; i++) {
        kinds[h->ops[i].kind]++;
        outcomes[h->ops[i].outcome]++;
    }
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    int rc = 0;
    for (unsigned k = 0; k < TN_HISTORY_N_KINDS; k++)
        rc |= set_int(o, tn_history_kind_name(k), kinds[k]);
    for (unsigned k = 0; k < 4; k++)
        rc |= set_int(o, tn_history_outcome_name(k), outcomes[k]);
    if (rc != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *sink_counts(const struct tn_history *h)
{
    int64_t admit = 0;
    for (size_t i = 0; i < h->n_sinks; i++)
        admit += h->sinks[i].admit ? 1 : 0;
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    int rc = set_int(o, "admit", admit);
    rc |= set_int(o, "reject", (int64_t)h->n_sinks - admit);
    if (rc != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static int add_verdicts(json_t *root, const struct tn_history *h,
                        const struct tn_check_report *r)
{
    json_t *counts = json_object();
    json_t *list = json_array();
    int rc = counts == NULL || list == NULL ? -1 : 0;
    for (unsigned cls = 0; rc == 0 && cls < TN_CHECK_N_CLASSES; cls++) {
        rc = set_int(counts, tn_check_class_name(cls), (int64_t)r->count[cls]);
        if (rc == 0 && r->count[cls] != 0)
            rc = json_array_append_new(list, violation_json(h, r, cls));
    }
    if (rc == 0)
        rc = json_object_set(root, "counts", counts);
    if (rc == 0)
        rc = json_object_set(root, "violations", list);
    json_decref(counts);
    json_decref(list);
    return rc;
}

json_t *tn_check_report_json(const struct tn_history *h,
                             const struct tn_check_report *r)
{
    json_t *root = json_object();
    if (root == NULL)
        return NULL;
    int rc =
        json_object_set_new(root, "valid", json_boolean(tn_check_is_clean(r)));
    rc |= set_int(root, "events", (int64_t)h->n_events);
    rc |= json_object_set_new(root, "operations", op_counts(h));
    rc |= json_object_set_new(root, "sink_decisions", sink_counts(h));
    if (rc == 0)
        rc = add_verdicts(root, h, r);
    if (rc != 0) {
        json_decref(root);
        return NULL;
    }
    return root;
}

json_t *tn_check_op_json(const struct tn_history *h, size_t idx)
{
    return op_json(h, idx);
}

json_t *tn_check_sink_json(const struct tn_history *h, size_t idx)
{
    return sink_json(h, idx);
}
