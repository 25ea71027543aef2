/* SPDX-License-Identifier: MIT */
/* tn-conformance: run the shared client scenarios (the JSON files of
 * tests/conformance, language in README.md) through libtenure's client, against
 * a live tenured.  The Python client runs the very same files
 * (tests/integration/python/test_conformance.py), so the two clients cannot
 * drift.
 *
 *   tn-conformance URL FILE...        run each scenario; exit 0 when all pass
 *   tn-conformance --fence SINK RESOURCE TOKEN
 *       one check-and-advance of the C fence kit in its own transaction on
 *       SINK (sqlite:PATH or a postgresql:// URL); prints "admitted" (exit 0)
 *       or "stale" (exit 3), so tests can mix C and Python writers on one
 *       mark table.
 *
 * Every step goes through tn_client_*, except the event steps (events.c)
 * and a force release, which speak HTTP with libcurl here. */
#include "runner.h"

#include <curl/curl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int64_t conf_now_ms(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void conf_sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000),
                          .tv_nsec = (long)(ms % 1000) * 1000000L};
    (void)nanosleep(&ts, NULL);
}

/* The real name of the scenario's symbolic name. */
void conf_real_name(const struct runner *r, const char *sym, char *out,
                    size_t cap)
{
    (void)snprintf(out, cap, "%s%s/%s", r->prefix, r->scenario, sym);
}

/* ---- matching ---------------------------------------------------------- */

static json_t *var_get(struct runner *r, const char *ref)
{
    return json_object_get(r->vars, ref + 1);
}

/* Compare actual with an expected shape; bind "$x" on first sight. */
bool conf_match(struct runner *r, const json_t *exp, json_t *act,
                const char *path)
{
    if (json_is_string(exp) && json_string_value(exp)[0] == '$') {
        const char *ref = json_string_value(exp);
        json_t *bound = var_get(r, ref);
        if (bound == NULL) {
            if (act == NULL || json_is_null(act)) {
                (void)snprintf(r->why, sizeof(r->why), "%s: nothing to bind %s",
                               path, ref);
                return false;
            }
            (void)json_object_set(r->vars, ref + 1, act);
            return true;
        }
        exp = bound;
    }
    if (json_is_object(exp) && json_object_size(exp) == 1 &&
        json_object_get(exp, "gt") != NULL) {
        json_t *lo = json_object_get(exp, "gt");
        if (json_is_string(lo))
            lo = var_get(r, json_string_value(lo));
        if (!json_is_integer(act) || !json_is_integer(lo) ||
            json_integer_value(act) <= json_integer_value(lo)) {
            (void)snprintf(r->why, sizeof(r->why), "%s: expected > %lld", path,
                           lo ? (long long)json_integer_value(lo) : 0LL);
            return false;
        }
        return true;
    }
    if (json_is_object(exp) && json_object_size(exp) == 1 &&
        json_is_array(json_object_get(exp, "range"))) {
        json_t *rg = json_object_get(exp, "range");
        json_int_t lo = json_integer_value(json_array_get(rg, 0));
        json_int_t hi = json_integer_value(json_array_get(rg, 1));
        if (!json_is_integer(act) || json_integer_value(act) < lo ||
            json_integer_value(act) > hi) {
            (void)snprintf(r->why, sizeof(r->why),
                           "%s: expected in [%lld, %lld], got %lld", path,
                           (long long)lo, (long long)hi,
                           act ? (long long)json_integer_value(act) : -1LL);
            return false;
        }
        return true;
    }
    if (json_is_object(exp)) {
        if (!json_is_object(act)) {
            (void)snprintf(r->why, sizeof(r->why), "%s: expected an object",
                           path);
            return false;
        }
        const char *k = NULL;
        json_t *v = NULL;
        json_object_foreach((json_t *)exp, k, v)
        {
            char sub[256];
            (void)snprintf(sub, sizeof(sub), "%s.%s", path, k);
            json_t *a = json_object_get(act, k);
            if (a == NULL && !json_is_null(v)) {
                (void)snprintf(r->why, sizeof(r->why), "%s: missing", sub);
                return false;
            }
            if (strcmp(k, "name") == 0 && json_is_string(v)) {
                char nm[NAME_BUF];
                conf_real_name(r, json_string_value(v), nm, sizeof(nm));
                if (!json_is_string(a) || strcmp(json_string_value(a), nm)) {
                    (void)snprintf(r->why, sizeof(r->why),
                                   "%s: expected %s, got %s", sub, nm,
                                   json_is_string(a) ? json_string_value(a)
                                                     : "(not a string)");
                    return false;
                }
                continue;
            }
            if (!conf_match(r, v, a != NULL ? a : json_null(), sub))
                return false;
        }
        return true;
    }
    if (!json_equal((json_t *)exp, act)) {
        char *e = json_dumps(exp, JSON_ENCODE_ANY);
        char *a = act != NULL ? json_dumps(act, JSON_ENCODE_ANY) : NULL;
        (void)snprintf(r->why, sizeof(r->why), "%s: expected %s, got %s", path,
                       e ? e : "?", a ? a : "(nothing)");
        free(e);
        free(a);
        return false;
    }
    return true;
}

/* ---- results ------------------------------------------------------------ */

static const char *err_name(int rc, bool released)
{
    switch (rc) {
    case TN_ECONFLICT:
        return "held";
    case TN_ELOST:
        return "lost";
    case TN_EEXPIRED:
        return "expired";
    case TN_EFORBIDDEN:
        return "forbidden";
    case TN_ENOTFOUND:
        return "not_found";
    case TN_ELOCKDELAY:
        return "lock_delay";
    case TN_EINVAL:
        return released ? "released" : "bad_request";
    case TN_EUNAUTH:
        return "unauthorized";
    case TN_ETOOMANY:
        return "too_many_requests";
    case TN_EUNAVAIL:
        return "unavailable";
    case TN_ENOTIMPL:
        return "not_implemented";
    case TN_ECAPACITY:
        return "capacity";
    default:
        return tn_errname(rc);
    }
}

json_t *conf_err_result(int rc, bool released)
{
    return json_pack("{s:s}", "error", err_name(rc, released));
}

struct slot *conf_slot_of(struct runner *r, const char *label)
{
    for (size_t i = 0; i < r->n_slots; i++) {
        if (strcmp(r->slots[i].label, label) == 0)
            return &r->slots[i];
    }
    return NULL;
}

int conf_put_slot(struct runner *r, const char *label, struct tn_lease *l)
{
    struct slot *s = conf_slot_of(r, label);
    if (s == NULL) {
        if (r->n_slots == MAX_LEASES)
            return -1;
        s = &r->slots[r->n_slots++];
        (void)snprintf(s->label, sizeof(s->label), "%s", label);
    } else {
        tn_lease_free(s->lease);
    }
    s->lease = l;
    s->released = false;
    return 0;
}

/* An integer argument: a number or a bound "$x". */
int64_t conf_int_arg(struct runner *r, const json_t *step, const char *key,
                     int64_t dflt)
{
    json_t *v = json_object_get(step, key);
    if (json_is_string(v) && json_string_value(v)[0] == '$')
        v = var_get(r, json_string_value(v));
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

const char *conf_str_arg(const json_t *step, const char *key)
{
    return json_string_value(json_object_get(step, key));
}

static json_t *do_acquire(struct runner *r, const json_t *step)
{
    char nm[NAME_BUF];
    conf_real_name(r, conf_str_arg(step, "name"), nm, sizeof(nm));
    struct tn_acquire_args a = {
        .name = nm,
        .ttl_ms = conf_int_arg(r, step, "ttl_ms", 0),
        .wait_ms = conf_int_arg(r, step, "wait_ms", 0),
        .owner_id = conf_str_arg(step, "owner"),
        .request_id = conf_str_arg(step, "request_id"),
        .lock_delay_ms = conf_int_arg(r, step, "lock_delay_ms", 0),
    };
    if (json_object_get(step, "session") != NULL)
        return conf_session_acquire(r, step, &a);
    struct tn_lease *l = NULL;
    struct tn_lease_info holder;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_acquire(r->c, &a, &l, &holder, &em);
    if (rc == TN_ECONFLICT)
        return json_pack("{s:s,s:{s:s,s:I,s:I}}", "error", "held", "holder",
                         "owner_id", holder.owner_id, "token",
                         (json_int_t)holder.token, "expires_in_ms",
                         (json_int_t)holder.expires_in_ms);
    if (rc == TN_ELOCKDELAY)
        return json_pack("{s:s,s:I}", "error", "lock_delay", "retry_after_ms",
                         (json_int_t)holder.retry_after_ms);
    if (rc < 0)
        return conf_err_result(rc, false);
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

static json_t *do_adopt(struct runner *r, const json_t *step)
{
    char nm[NAME_BUF];
    conf_real_name(r, conf_str_arg(step, "name"), nm, sizeof(nm));
    struct tn_lease *l = NULL;
    int rc = tn_client_lease_adopt(r->c, nm,
                                   (uint64_t)conf_int_arg(r, step, "token", 0),
                                   conf_str_arg(step, "secret"), &l);
    if (rc < 0)
        return conf_err_result(rc, false);
    if (conf_put_slot(r, conf_str_arg(step, "as"), l) < 0) {
        tn_lease_free(l);
        return conf_err_result(TN_ENOMEM, false);
    }
    return json_pack("{s:b}", "ok", 1);
}

static json_t *do_lease_op(struct runner *r, const json_t *step, const char *op)
{
    struct slot *s = conf_slot_of(r, conf_str_arg(step, "lease"));
    if (s == NULL)
        return json_pack("{s:s}", "error", "no such lease label");
    struct tn_errmsg em = {{0}};
    int rc = 0;
    if (strcmp(op, "safe") == 0)
        return json_pack("{s:I}", "safe_for_ms",
                         (json_int_t)tn_lease_safe_for_ms(s->lease));
    if (strcmp(op, "renew") == 0) {
        rc = tn_client_renew(r->c, s->lease, conf_int_arg(r, step, "ttl_ms", 0),
                             &em);
        if (rc < 0)
            return conf_err_result(rc, s->released);
        return json_pack("{s:b,s:I}", "ok", 1, "safe_for_ms",
                         (json_int_t)tn_lease_safe_for_ms(s->lease));
    }
    rc = tn_client_release(r->c, s->lease, &em);
    s->released = true;
    if (rc < 0)
        return conf_err_result(rc, false);
    return json_pack("{s:b}", "ok", 1);
}

static json_t *do_check(struct runner *r, const json_t *step)
{
    char nm[NAME_BUF];
    conf_real_name(r, conf_str_arg(step, "name"), nm, sizeof(nm));
    struct tn_check_result cr;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_check(
        r->c, nm, (uint64_t)conf_int_arg(r, step, "token", 0), &cr, &em);
    if (rc < 0)
        return conf_err_result(rc, false);
    return json_pack("{s:b,s:o,s:I}", "current", cr.current, "token",
                     cr.has_token ? json_integer((json_int_t)cr.token)
                                  : json_null(),
                     "floor", (json_int_t)cr.floor);
}

static json_t *do_get(struct runner *r, const json_t *step)
{
    char nm[NAME_BUF];
    conf_real_name(r, conf_str_arg(step, "name"), nm, sizeof(nm));
    struct tn_lease_info info;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_get(r->c, nm, &info, &em);
    if (rc == TN_ENOTFOUND)
        return json_pack("{s:b}", "found", 0);
    if (rc < 0)
        return conf_err_result(rc, false);
    return json_pack("{s:b,s:s,s:I}", "found", 1, "owner_id", info.owner_id,
                     "token", (json_int_t)info.token);
}

/* Force release through the raw API: libtenure has no call for it. */
static json_t *do_force(struct runner *r, const json_t *step)
{
    char nm[NAME_BUF];
    conf_real_name(r, conf_str_arg(step, "name"), nm, sizeof(nm));
    CURL *h = curl_easy_init();
    if (h == NULL)
        return conf_err_result(TN_ENOMEM, false);
    char *esc = curl_easy_escape(h, nm, 0);
    char url[2048];
    (void)snprintf(url, sizeof(url), "%s/v1/leases/%s?force=true", r->url,
                   esc != NULL ? esc : "");
    curl_free(esc);
    (void)curl_easy_setopt(h, CURLOPT_URL, url);
    (void)curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
    (void)curl_easy_setopt(h, CURLOPT_NOBODY, 0L);
    (void)curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
    FILE *sink = fopen("/dev/null", "w");
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, sink);
    long status = 0;
    CURLcode cc = curl_easy_perform(h);
    (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(h);
    if (sink != NULL)
        (void)fclose(sink);
    if (cc != CURLE_OK)
        return conf_err_result(TN_ECONNECT, false);
    if (status == 204 || status == 200)
        return json_pack("{s:b}", "ok", 1);
    return json_pack("{s:s}", "error", status == 409 ? "lost" : "http");
}

/* ---- scenarios ------------------------------------------------------------
 */

static bool run_step(struct runner *r, const json_t *step, size_t i)
{
    const char *op = conf_str_arg(step, "do");
    json_t *res = NULL;
    if (op == NULL) {
        (void)snprintf(r->why, sizeof(r->why), "step %zu: no \"do\"", i);
        return false;
    }
    if (strcmp(op, "sleep") == 0) {
        conf_sleep_ms(conf_int_arg(r, step, "ms", 0));
        return true;
    }
    if (strcmp(op, "events_expect") == 0)
        return conf_events_expect(r, step);
    if (strcmp(op, "acquire") == 0)
        res = do_acquire(r, step);
    else if (strcmp(op, "adopt") == 0)
        res = do_adopt(r, step);
    else if (strcmp(op, "renew") == 0 || strcmp(op, "release") == 0 ||
             strcmp(op, "safe") == 0)
        res = do_lease_op(r, step, op);
    else if (strcmp(op, "check") == 0)
        res = do_check(r, step);
    else if (strcmp(op, "get") == 0)
        res = do_get(r, step);
    else if (strcmp(op, "force_release") == 0)
        res = do_force(r, step);
    else if (strcmp(op, "events_open") == 0)
        res = conf_events_open(r);
    else if ((res = conf_session_step(r, op, step)) != NULL)
        ;
    else {
        (void)snprintf(r->why, sizeof(r->why), "step %zu: unknown op %s", i,
                       op);
        return false;
    }
    const char *err = json_string_value(json_object_get(res, "error"));
    if (r->needs_sessions && err != NULL &&
        strcmp(err, "not_implemented") == 0) {
        r->skipped = true; /* the server has no sessions */
        json_decref(res);
        return false;
    }
    json_t *exp = json_object_get(step, "expect");
    char path[64];
    (void)snprintf(path, sizeof(path), "step %zu (%s)", i, op);
    bool ok = true;
    if (exp != NULL) {
        ok = conf_match(r, exp, res, path);
    } else if (json_object_get(res, "error") != NULL) {
        (void)snprintf(r->why, sizeof(r->why), "%s: failed: %s", path,
                       json_string_value(json_object_get(res, "error")));
        ok = false;
    }
    json_decref(res);
    return ok;
}

static void reset_scenario(struct runner *r)
{
    conf_sessions_reset(r);
    for (size_t i = 0; i < r->n_slots; i++)
        tn_lease_free(r->slots[i].lease);
    r->n_slots = 0;
    conf_events_stop(&r->ev);
    json_object_clear(r->vars);
    r->why[0] = '\0';
}

static bool run_file(struct runner *r, const char *path)
{
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);
    if (doc == NULL) {
        fprintf(stderr, "FAIL %s: %s (line %d)\n", path, jerr.text, jerr.line);
        return false;
    }
    const char *name = conf_str_arg(doc, "scenario");
    (void)snprintf(r->scenario, sizeof(r->scenario), "%s",
                   name != NULL ? name : "unnamed");
    json_t *steps = json_object_get(doc, "steps");
    bool ok = json_array_size(steps) > 0;
    r->needs_sessions = false;
    r->skipped = false;
    size_t k = 0;
    json_t *need = NULL;
    json_array_foreach(json_object_get(doc, "needs"), k, need)
    {
        if (json_is_string(need) &&
            strcmp(json_string_value(need), "sessions") == 0)
            r->needs_sessions = true;
    }
    if (!ok)
        (void)snprintf(r->why, sizeof(r->why), "no steps");
    for (size_t i = 0; ok && i < json_array_size(steps); i++)
        ok = run_step(r, json_array_get(steps, i), i);
    if (r->skipped) {
        printf("skip - %s (C client): the server has no sessions (501)\n",
               r->scenario);
        r->n_skipped++;
        ok = true;
    } else if (ok) {
        printf("ok - %s (C client)\n", r->scenario);
    } else {
        fprintf(stderr, "FAIL %s (C client): %s\n", r->scenario, r->why);
    }
    reset_scenario(r);
    json_decref(doc);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--fence") == 0)
        return conf_fence_main(argc, argv);
    if (argc < 3) {
        fprintf(stderr, "usage: tn-conformance URL SCENARIO.json...\n"
                        "       tn-conformance --fence SINK RESOURCE TOKEN\n");
        return 2;
    }
    (void)curl_global_init(CURL_GLOBAL_DEFAULT);
    struct runner r;
    memset(&r, 0, sizeof(r));
    r.url = argv[1];
    (void)pthread_mutex_init(&r.ev.mu, NULL);
    (void)pthread_cond_init(&r.ev.cond, NULL);
    (void)snprintf(r.prefix, sizeof(r.prefix), "conf-c-%ld-%lld/",
                   (long)getpid(), (long long)(conf_now_ms() % 1000000000));
    r.vars = json_object();
    struct tn_client_options o;
    tn_client_options_init(&o);
    o.urls[0] = argv[1];
    o.n_urls = 1;
    o.owner_id = "conformance-c";
    struct tn_errmsg em = {{0}};
    if (tn_client_new(&o, &r.c, &em) < 0) {
        fprintf(stderr, "client: %s\n", em.text);
        return 1;
    }
    int failed = 0;
    for (int i = 2; i < argc; i++) {
        if (!run_file(&r, argv[i]))
            failed++;
    }
    tn_client_free(r.c);
    json_decref(r.vars);
    curl_global_cleanup();
    printf("%d of %d scenarios passed (C client), %d skipped\n",
           argc - 2 - failed - r.n_skipped, argc - 2, r.n_skipped);
    return failed == 0 ? 0 : 1;
}
