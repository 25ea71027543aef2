/* SPDX-License-Identifier: MIT */
/* tn-conformance's session steps, through <tenure/session.h> (the
 * language is in README.md): a session's owner is symbolic as a lease
 * name is (the real owner_id is the scenario's namespace + it, so that
 * list and events see one run's sessions only), and so are the names of a
 * claim's answer, which is keyed by name. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static struct sslot *sslot_of(struct runner *r, const char *label)
{
    for (size_t i = 0; label != NULL && i < r->n_sessions; i++) {
        if (strcmp(r->sessions[i].label, label) == 0)
            return &r->sessions[i];
    }
    return NULL;
}

static struct sslot *sslot_put(struct runner *r, const char *label,
                               struct tn_session *s)
{
    struct sslot *ss = sslot_of(r, label);
    if (ss == NULL) {
        if (label == NULL || r->n_sessions == MAX_SESSIONS)
            return NULL;
        ss = &r->sessions[r->n_sessions++];
    } else {
        tn_client_session_free(ss->s);
    }
    memset(ss, 0, sizeof(*ss));
    (void)snprintf(ss->label, sizeof(ss->label), "%s", label);
    ss->s = s;
    return ss;
}

/* The scenario's namespace, "<run prefix><scenario>/". */
static void ns(const struct runner *r, char *out, size_t cap)
{
    (void)snprintf(out, cap, "%s%s/", r->prefix, r->scenario);
}

/* owner_id relative to the namespace (as given when it is outside). */
static const char *symbolic(const struct runner *r, const char *real)
{
    char pfx[NAME_BUF];
    ns(r, pfx, sizeof(pfx));
    size_t n = strlen(pfx);
    return strncmp(real, pfx, n) == 0 ? real + n : real;
}

static json_t *err_of(int rc, const struct sslot *ss)
{
    if (rc == TN_EINVAL && ss != NULL && ss->ended)
        return json_pack("{s:s}", "error", "ended");
    if (rc == TN_ENOTIMPL)
        return json_pack("{s:s}", "error", "not_implemented");
    return conf_err_result(rc, false);
}

static json_t *no_session(void)
{
    return json_pack("{s:s}", "error", "no such session label");
}

static json_t *do_open(struct runner *r, const json_t *step)
{
    char owner[NAME_BUF];
    const char *sym = conf_str_arg(step, "owner");
    conf_real_name(r, sym != NULL ? sym : "owner", owner, sizeof(owner));
    struct tn_session_args a = {owner, conf_int_arg(r, step, "ttl_ms", 0)};
    struct tn_session *s = NULL;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_session_open(r->c, &a, &s, &em);
    if (rc < 0)
        return err_of(rc, NULL);
    json_t *res = json_pack(
        "{s:b,s:s,s:s,s:I,s:I}", "ok", 1, "session_id", tn_client_session_id(s),
        "owner_id", symbolic(r, tn_client_session_owner_id(s)), "ttl_ms",
        (json_int_t)tn_client_session_ttl_ms(s), "safe_for_ms",
        (json_int_t)tn_client_session_safe_for_ms(s));
    if (sslot_put(r, conf_str_arg(step, "as"), s) == NULL)
        tn_client_session_free(s);
    return res;
}

static json_t *do_adopt(struct runner *r, const json_t *step)
{
    struct sslot *of = sslot_of(r, conf_str_arg(step, "session"));
    if (of == NULL)
        return no_session();
    struct tn_session *s = NULL;
    int rc = tn_client_session_adopt(r->c, tn_client_session_id(of->s),
                                     conf_str_arg(step, "secret"), &s);
    if (rc < 0)
        return err_of(rc, NULL);
    if (sslot_put(r, conf_str_arg(step, "as"), s) == NULL) {
        tn_client_session_free(s);
        return err_of(TN_ENOMEM, NULL);
    }
    return json_pack("{s:b}", "ok", 1);
}

static json_t *do_cred(struct runner *r, const json_t *step, const char *op)
{
    struct sslot *ss = sslot_of(r, conf_str_arg(step, "session"));
    if (ss == NULL)
        return no_session();
    struct tn_errmsg em = {{0}};
    int rc = 0;
    if (strcmp(op, "session_safe") == 0)
        return json_pack("{s:I}", "safe_for_ms",
                         (json_int_t)tn_client_session_safe_for_ms(ss->s));
    if (strcmp(op, "session_renew") == 0) {
        rc = tn_client_session_renew(ss->s, conf_int_arg(r, step, "ttl_ms", 0),
                                     &em);
        if (rc < 0)
            return err_of(rc, ss);
        return json_pack("{s:b,s:I}", "ok", 1, "safe_for_ms",
                         (json_int_t)tn_client_session_safe_for_ms(ss->s));
    }
    if (strcmp(op, "session_force_end") == 0)
        rc =
            tn_client_session_force_end(r->c, tn_client_session_id(ss->s), &em);
    else {
        rc = tn_client_session_end(ss->s, &em);
        ss->ended = true;
    }
    return rc < 0 ? err_of(rc, NULL) : json_pack("{s:b}", "ok", 1);
}

static json_t *do_get(struct runner *r, const json_t *step)
{
    struct sslot *ss = sslot_of(r, conf_str_arg(step, "session"));
    if (ss == NULL)
        return no_session();
    struct tn_session_info info;
    struct tn_errmsg em = {{0}};
    int rc =
        tn_client_session_get(r->c, tn_client_session_id(ss->s), &info, &em);
    if (rc == TN_ENOTFOUND)
        return json_pack("{s:b}", "found", 0);
    if (rc < 0)
        return err_of(rc, NULL);
    return json_pack(
        "{s:b,s:s,s:I,s:I}", "found", 1, "owner_id", symbolic(r, info.owner_id),
        "ttl_ms", (json_int_t)info.ttl_ms, "leases", (json_int_t)info.leases);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a),
                  json_string_value(*(json_t *const *)b));
}

/* A JSON array of strings, sorted (answers in session_id order are in
 * random order for the scenario). */
static json_t *sorted(json_t *arr)
{
    size_t n = json_array_size(arr);
    json_t **v = calloc(n > 0 ? n : 1, sizeof(*v));
    for (size_t i = 0; v != NULL && i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    if (v != NULL)
        qsort(v, n, sizeof(*v), cmp_str);
    json_t *out = json_array();
    for (size_t i = 0; v != NULL && i < n; i++)
        (void)json_array_append_new(out, v[i]);
    free(v);
    json_decref(arr);
    return out;
}

static json_t *do_list(struct runner *r, const json_t *step)
{
    char pfx[NAME_BUF];
    const char *sym = conf_str_arg(step, "prefix");
    conf_real_name(r, sym != NULL ? sym : "", pfx, sizeof(pfx));
    json_t *owners = json_array();
    char after[TN_SESSION_ID_MAX + 1] = "";
    for (;;) {
        struct tn_session_list_args a = {pfx, after[0] ? after : NULL, 0};
        struct tn_session_list *page = NULL;
        struct tn_errmsg em = {{0}};
        int rc = tn_client_session_list(r->c, &a, &page, &em);
        if (rc < 0) {
            json_decref(owners);
            return err_of(rc, NULL);
        }
        for (size_t i = 0; i < page->count; i++)
            (void)json_array_append_new(
                owners, json_string(symbolic(r, page->items[i].owner_id)));
        bool more = page->has_next;
        (void)snprintf(after, sizeof(after), "%s", page->next);
        tn_client_session_list_free(page);
        if (!more)
            break;
    }
    size_t n = json_array_size(owners);
    return json_pack("{s:I,s:o}", "count", (json_int_t)n, "owners",
                     sorted(owners));
}

json_t *conf_session_acquire(struct runner *r, const json_t *step,
                             struct tn_acquire_args *a)
{
    struct sslot *ss = sslot_of(r, conf_str_arg(step, "session"));
    if (ss == NULL)
        return no_session();
    struct tn_lease *l = NULL;
    struct tn_lease_info holder;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_session_acquire(ss->s, a, &l, &holder, &em);
    if (rc == TN_ECONFLICT)
        return json_pack("{s:s,s:{s:s,s:I,s:I}}", "error", "held", "holder",
                         "owner_id", holder.owner_id, "token",
                         (json_int_t)holder.token, "expires_in_ms",
                         (json_int_t)holder.expires_in_ms);
    if (rc < 0)
        return err_of(rc, ss);
    json_t *res = json_pack("{s:b,s:I,s:s,s:I,s:I}", "ok", 1, "token",
                            (json_int_t)tn_lease_token(l), "owner_id",
                            tn_lease_owner_id(l), "ttl_ms",
                            (json_int_t)tn_lease_ttl_ms(l), "safe_for_ms",
                            (json_int_t)tn_lease_safe_for_ms(l));
    const char *label = conf_str_arg(step, "as");
    if (label == NULL || conf_put_slot(r, label, l) < 0)
        tn_lease_free(l);
    return res;
}

/* The claim's answer keyed by symbolic name; every granted lease goes to
 * the slot labelled <as><name> (as: "" by default). */
static json_t *claim_result(struct runner *r, const json_t *step,
                            struct tn_claim_result *res, char (*sym)[64])
{
    json_t *out =
        json_pack("{s:{},s:{},s:{}}", "granted", "held", "lock_delay");
    const char *as = conf_str_arg(step, "as");
    for (size_t i = 0; i < res->count; i++) {
        struct tn_claim_item *it = &res->items[i];
        json_t *v = NULL;
        const char *key = "granted";
        if (it->status == TN_CLAIM_GRANTED) {
            v = json_pack("{s:I}", "token",
                          (json_int_t)tn_lease_token(it->lease));
            char label[LABEL_MAX];
            (void)snprintf(label, sizeof(label), "%.15s%.16s", as ? as : "",
                           sym[i]);
            if (conf_put_slot(r, label, it->lease) == 0)
                it->lease = NULL;
        } else if (it->status == TN_CLAIM_HELD) {
            key = "held";
            v = json_pack("{s:{s:s,s:I}}", "holder", "owner_id",
                          it->holder.owner_id, "token",
                          (json_int_t)it->holder.token);
        } else {
            key = "lock_delay";
            v = json_pack("{s:I}", "retry_after_ms",
                          (json_int_t)it->holder.retry_after_ms);
        }
        (void)json_object_set_new(json_object_get(out, key), sym[i], v);
    }
    return out;
}

static json_t *do_claim(struct runner *r, const json_t *step)
{
    struct sslot *ss = sslot_of(r, conf_str_arg(step, "session"));
    json_t *names = json_object_get(step, "names");
    size_t n = json_array_size(names);
    if (ss == NULL || n == 0 || n > MAX_LEASES)
        return no_session();
    char real[MAX_LEASES][NAME_BUF];
    char sym[MAX_LEASES][64];
    const char *ptrs[MAX_LEASES];
    for (size_t i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(names, i));
        (void)snprintf(sym[i], sizeof(sym[i]), "%s", s != NULL ? s : "");
        conf_real_name(r, sym[i], real[i], sizeof(real[i]));
        ptrs[i] = real[i];
    }
    struct tn_claim_args a = {ptrs, n, conf_str_arg(step, "owner"),
                              conf_int_arg(r, step, "lock_delay_ms", 0)};
    struct tn_claim_result *res = NULL;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_session_claim(ss->s, &a, &res, &em);
    if (rc < 0)
        return err_of(rc, ss);
    json_t *out = claim_result(r, step, res, sym);
    tn_claim_result_free(res);
    return out;
}

static json_t *do_release_many(struct runner *r, const json_t *step)
{
    struct sslot *ss = sslot_of(r, conf_str_arg(step, "session"));
    json_t *labels = json_object_get(step, "leases");
    size_t n = json_array_size(labels);
    struct tn_lease *l[MAX_LEASES];
    int rcs[MAX_LEASES];
    if (ss == NULL || n == 0 || n > MAX_LEASES)
        return no_session();
    for (size_t i = 0; i < n; i++) {
        struct slot *sl =
            conf_slot_of(r, json_string_value(json_array_get(labels, i)));
        if (sl == NULL)
            return json_pack("{s:s}", "error", "no such lease label");
        l[i] = sl->lease;
        sl->released = true;
    }
    struct tn_errmsg em = {{0}};
    int rc = tn_client_session_release(ss->s, l, n, rcs, &em);
    if (rc < 0)
        return err_of(rc, ss);
    json_t *released = json_array();
    json_t *lost = json_array();
    char pfx[NAME_BUF];
    ns(r, pfx, sizeof(pfx));
    for (size_t i = 0; i < n; i++)
        (void)json_array_append_new(
            rcs[i] == 0 ? released : lost,
            json_string(tn_lease_name(l[i]) + strlen(pfx)));
    return json_pack("{s:b,s:o,s:o}", "ok", 1, "released", sorted(released),
                     "lost", sorted(lost));
}

static void on_lease_end(struct tn_lease *l, enum tn_lease_end why, int rc,
                         void *ud)
{
    (void)l, (void)why, (void)rc;
    struct sslot *ss = ud;
    atomic_fetch_add(&ss->lease_calls, 1);
}

static void on_session_end(struct tn_session *s, enum tn_lease_end why, int rc,
                           void *ud)
{
    (void)s, (void)rc;
    struct sslot *ss = ud;
    atomic_store(&ss->lease_before, atomic_load(&ss->lease_calls));
    atomic_store(&ss->reason, (int)why);
    atomic_fetch_add(&ss->calls, 1);
}

static json_t *do_keepalive(struct runner *r, const json_t *step)
{
    struct sslot *ss = sslot_of(r, conf_str_arg(step, "session"));
    if (ss == NULL)
        return no_session();
    int rc = tn_client_session_keepalive_start(ss->s, on_session_end,
                                               on_lease_end, ss);
    if (rc < 0)
        return err_of(rc, ss);
    ss->kept = true;
    return json_pack("{s:b}", "ok", 1);
}

/* Wait (up to timeout_ms) for the session's keepalive to end; then wait
 * as long again to be sure no callback runs twice. */
static json_t *do_wait_end(struct runner *r, const json_t *step)
{
    struct sslot *ss = sslot_of(r, conf_str_arg(step, "session"));
    if (ss == NULL || !ss->kept)
        return no_session();
    int64_t t = conf_int_arg(r, step, "timeout_ms", 5000);
    int64_t end = conf_now_ms() + t;
    while (atomic_load(&ss->calls) == 0 && conf_now_ms() < end)
        conf_sleep_ms(5);
    if (atomic_load(&ss->calls) == 0)
        return json_pack("{s:s}", "error", "timeout");
    conf_sleep_ms(300);
    return json_pack("{s:s,s:I,s:I,s:I}", "reason",
                     tn_lease_end_name(atomic_load(&ss->reason)), "calls",
                     (json_int_t)atomic_load(&ss->calls), "lease_calls",
                     (json_int_t)atomic_load(&ss->lease_calls), "leases_before",
                     (json_int_t)atomic_load(&ss->lease_before));
}

json_t *conf_session_step(struct runner *r, const char *op, const json_t *step)
{
    if (strcmp(op, "session_open") == 0)
        return do_open(r, step);
    if (strcmp(op, "session_adopt") == 0)
        return do_adopt(r, step);
    if (strcmp(op, "session_renew") == 0 || strcmp(op, "session_end") == 0 ||
        strcmp(op, "session_force_end") == 0 || strcmp(op, "session_safe") == 0)
        return do_cred(r, step, op);
    if (strcmp(op, "session_get") == 0)
        return do_get(r, step);
    if (strcmp(op, "session_list") == 0)
        return do_list(r, step);
    if (strcmp(op, "claim") == 0)
        return do_claim(r, step);
    if (strcmp(op, "release_many") == 0)
        return do_release_many(r, step);
    if (strcmp(op, "session_keepalive") == 0)
        return do_keepalive(r, step);
    if (strcmp(op, "session_wait_end") == 0)
        return do_wait_end(r, step);
    return NULL;
}

void conf_sessions_reset(struct runner *r)
{
    for (size_t i = 0; i < r->n_sessions; i++) {
        struct sslot *ss = &r->sessions[i];
        if (ss->kept)
            tn_client_session_keepalive_stop(ss->s);
        tn_client_session_free(ss->s);
    }
    r->n_sessions = 0;
}
