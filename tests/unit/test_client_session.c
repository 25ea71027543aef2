/* SPDX-License-Identifier: MIT */
/* Sessions in libtenure against a scripted responder (client_fixture.h):
 * a claim's answer read item by item (and refused when it says nothing of
 * a name), a retried claim answering the handle it already gave, leases
 * whose safe time is their session's, a session kept alive and its loss
 * reported once for every lease of it and then for the session, a silent
 * server running them all out at the session's deadline, a lease released
 * alone reported once, the end of a session reporting the rest as
 * released, a batch release reading which leases were already lost, and a
 * server without sessions answering TN_ENOTIMPL.  The end-to-end
 * behaviour against tenured is tests/integration/t320-client-sessions.sh
 * and the conformance scenarios session_*.json. */
/* clang-format off: cmocka.h needs these headers first */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tn_test.h"

#include <cmocka.h>
/* clang-format on */

#include <tenure/client.h>
#include <tenure/session.h>

#include "client_fixture.h"

enum renew_mode { RENEW_OK, RENEW_LOST, RENEW_SILENT };

struct script {
    atomic_int renew;              /* enum renew_mode: what PATCH
                                      /v1/sessions/s1 answers */
    _Atomic(const char *) claim;   /* the answer to a claim */
    _Atomic(const char *) release; /* the answer to a batch release */
    atomic_int open_status;        /* of POST /v1/sessions (0: 201) */
    atomic_int renews;             /* PATCH /v1/sessions/s1 seen */
    atomic_int lease_deletes;      /* DELETE /v1/leases/... seen */
    atomic_int ends;               /* DELETE /v1/sessions/s1 seen */
};

static const char open_ok[] =
    "{\"session_id\":\"s1\",\"session_secret\":\"sec\",\"owner_id\":\"w\","
    "\"ttl_ms\":900,\"expires_in_ms\":900}";
static const char renew_ok[] =
    "{\"session_id\":\"s1\",\"owner_id\":\"w\",\"ttl_ms\":900,"
    "\"expires_in_ms\":900,\"leases\":2}";
static const char claim_two_held_one[] =
    "{\"granted\":[{\"name\":\"a\",\"token\":7,\"lease_secret\":\"x7\"},"
    "{\"name\":\"b\",\"token\":8,\"lease_secret\":\"x8\"}],"
    "\"held\":[{\"name\":\"c\",\"holder\":{\"owner_id\":\"other\","
    "\"token\":3,\"expires_in_ms\":900}}],\"lock_delay\":[],"
    "\"expires_in_ms\":280}";

static void answer(struct fx *fx, const struct fx_req *r, struct fx_answer *out)
{
    struct script *s = fx->ud;
    bool post = strcmp(r->method, "POST") == 0;
    bool del = strcmp(r->method, "DELETE") == 0;
    int mode = atomic_load(&s->renew);
    int open_status = atomic_load(&s->open_status);
    if (post && strcmp(r->path, "/v1/sessions") == 0) {
        out->status = open_status != 0 ? open_status : 201;
        out->body = open_status != 0 ? "{\"error\":\"not_found\"}" : open_ok;
    } else if (strcmp(r->method, "PATCH") == 0 &&
               strcmp(r->path, "/v1/sessions/s1") == 0) {
        atomic_fetch_add(&s->renews, 1);
        out->status = mode == RENEW_OK ? 200 : mode == RENEW_LOST ? 409 : 0;
        out->body = mode == RENEW_OK ? renew_ok : "{\"error\":\"lost\"}";
    } else if (strcmp(r->path, "/v1/sessions/s1/leases") == 0) {
        out->status = 200;
        out->body = post ? atomic_load(&s->claim) : atomic_load(&s->release);
    } else if (del && strcmp(r->path, "/v1/sessions/s1") == 0) {
        atomic_fetch_add(&s->ends, 1);
        out->status = 204;
        out->body = NULL;
    } else if (del && strncmp(r->path, "/v1/leases/", 11) == 0) {
        atomic_fetch_add(&s->lease_deletes, 1);
        out->status = 204;
        out->body = NULL;
    }
}

struct seen {
    atomic_int lease_calls;   /* lease callbacks */
    atomic_int lease_reason;  /* reason of the last */
    atomic_int session_calls; /* session callbacks */
    atomic_int session_reason;
    atomic_int session_rc;    /* rc of the session's */
    atomic_int lease_rc;      /* rc of the last lease callback */
    atomic_int leases_before; /* lease callbacks seen when the session's
                                 ran */
    atomic_int held_in_cb;    /* leases that read held inside their cb */
};

static void on_lease(struct tn_lease *l, enum tn_lease_end why, int rc,
                     void *ud)
{
    struct seen *s = ud;
    if (tn_lease_is_held(l))
        atomic_fetch_add(&s->held_in_cb, 1);
    atomic_store(&s->lease_reason, (int)why);
    atomic_store(&s->lease_rc, rc);
    atomic_fetch_add(&s->lease_calls, 1);
}

static void on_session(struct tn_session *ss, enum tn_lease_end why, int rc,
                       void *ud)
{
    (void)ss;
    struct seen *s = ud;
    atomic_store(&s->leases_before, atomic_load(&s->lease_calls));
    atomic_store(&s->session_reason, (int)why);
    atomic_store(&s->session_rc, rc);
    atomic_fetch_add(&s->session_calls, 1);
}

struct rig {
    struct fx fx;
    struct script sc;
    struct tn_client *c;
    struct tn_session *s;
    struct seen seen;
};

static void rig_start(struct rig *g)
{
    memset(g, 0, sizeof(*g));
    g->sc.claim = claim_two_held_one;
    fx_start(&g->fx, answer, &g->sc);
    struct tn_client_options o;
    tn_client_options_init(&o);
    o.urls[0] = g->fx.url;
    o.n_urls = 1;
    o.owner_id = "w";
    o.safety_margin_ms = 0;
    o.request_timeout_ms = 2000;
    assert_int_equal(tn_client_new(&o, &g->c, NULL), 0);
}

static void rig_open(struct rig *g)
{
    struct tn_session_args a = {.ttl_ms = 900};
    assert_int_equal(tn_client_session_open(g->c, &a, &g->s, NULL), 0);
    assert_string_equal(tn_client_session_id(g->s), "s1");
    assert_true(tn_client_session_is_live(g->s));
}

static void rig_stop(struct rig *g)
{
    tn_client_session_free(g->s);
    tn_client_free(g->c);
    fx_stop(&g->fx);
}

/* Claim a, b, c: a and b granted, c held.  Leases of the result. */
static struct tn_claim_result *claim_abc(struct rig *g)
{
    const char *names[] = {"a", "b", "c"};
    struct tn_claim_args a = {.names = names, .n_names = 3};
    struct tn_claim_result *res = NULL;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_client_session_claim(g->s, &a, &res, &em), 0);
    return res;
}

static void test_session__claim_reads_each_name(void **st)
{
    (void)st;
    struct rig g;
    rig_start(&g);
    rig_open(&g);
    struct tn_claim_result *res = claim_abc(&g);
    assert_int_equal(res->count, 3);
    assert_int_equal(res->n_granted, 2);
    assert_int_equal(res->expires_in_ms, 280);
    assert_int_equal(res->items[0].status, TN_CLAIM_GRANTED);
    assert_int_equal(tn_lease_token(res->items[0].lease), 7);
    assert_string_equal(tn_lease_secret(res->items[1].lease), "x8");
    assert_string_equal(tn_lease_owner_id(res->items[1].lease), "w");
    assert_ptr_equal(tn_lease_session(res->items[1].lease), g.s);
    assert_int_equal(res->items[2].status, TN_CLAIM_HELD);
    assert_null(res->items[2].lease);
    assert_string_equal(res->items[2].holder.owner_id, "other");
    assert_int_equal(res->items[2].holder.token, 3);
    /* A lease of a session has the session's safe time. */
    int64_t ls = tn_lease_safe_for_ms(res->items[0].lease);
    int64_t ss = tn_client_session_safe_for_ms(g.s);
    assert_true(ls > 0 && ls <= 900 && ss - ls <= 5 && ls - ss <= 5);
    assert_int_equal(tn_client_session_lease_count(g.s), 2);
    /* Its own keepalive is refused: the session keeps it. */
    assert_int_equal(
        tn_client_keepalive_start(g.c, res->items[0].lease, on_lease, &g.seen),
        TN_EINVAL);
    /* Sent again, a claim answers the handles already given. */
    struct tn_claim_result *again = claim_abc(&g);
    assert_ptr_equal(again->items[0].lease, res->items[0].lease);
    tn_claim_result_free(again);
    tn_claim_result_free(res);
    rig_stop(&g);
}

static void test_session__claim_answer_leaving_a_name_out_is_refused(void **st)
{
    (void)st;
    struct rig g;
    rig_start(&g);
    g.sc.claim = "{\"granted\":[{\"name\":\"a\",\"token\":7,"
                 "\"lease_secret\":\"x\"}],\"held\":[],\"lock_delay\":[]}";
    rig_open(&g);
    const char *names[] = {"a", "b"};
    struct tn_claim_args a = {.names = names, .n_names = 2};
    struct tn_claim_result *res = NULL;
    assert_int_equal(tn_client_session_claim(g.s, &a, &res, NULL), TN_EPROTO);
    assert_null(res);
    g.sc.claim = "{\"granted\":[{\"name\":\"zz\",\"token\":7,"
                 "\"lease_secret\":\"x\"}]}";
    assert_int_equal(tn_client_session_claim(g.s, &a, &res, NULL), TN_EPROTO);
    rig_stop(&g);
}

static void test_session__loss_reported_once_per_lease_then_session(void **st)
{
    (void)st;
    struct rig g;
    rig_start(&g);
    rig_open(&g);
    struct tn_claim_result *res = claim_abc(&g);
    assert_int_equal(
        tn_client_session_keepalive_start(g.s, on_session, on_lease, &g.seen),
        0);
    assert_int_equal(
        tn_client_session_keepalive_start(g.s, on_session, on_lease, &g.seen),
        TN_EINVAL);
    assert_true(fx_wait_for(&g.sc.renews, 4)); /* past 1.3 TTLs */
    assert_true(tn_lease_is_held(res->items[0].lease));
    assert_int_equal(atomic_load(&g.seen.lease_calls), 0);
    atomic_store(&g.sc.renew, RENEW_LOST);
    assert_true(fx_wait_for(&g.seen.session_calls, 1));
    assert_int_equal(atomic_load(&g.seen.session_reason), TN_LEASE_END_LOST);
    assert_int_equal(atomic_load(&g.seen.session_rc), TN_ELOST);
    assert_int_equal(atomic_load(&g.seen.leases_before), 2);
    assert_int_equal(atomic_load(&g.seen.lease_reason), TN_LEASE_END_LOST);
    assert_int_equal(atomic_load(&g.seen.lease_rc), TN_ELOST);
    assert_int_equal(atomic_load(&g.seen.held_in_cb), 0);
    assert_false(tn_lease_is_held(res->items[1].lease));
    assert_false(tn_client_session_is_live(g.s));
    assert_int_equal(tn_client_session_renew(g.s, 0, NULL), TN_ELOST);
    fx_nap_ms(100);
    assert_int_equal(atomic_load(&g.seen.lease_calls), 2);
    assert_int_equal(atomic_load(&g.seen.session_calls), 1);
    tn_claim_result_free(res);
    rig_stop(&g);
}

static void test_session__silent_server_runs_all_out_at_deadline(void **st)
{
    (void)st;
    struct rig g;
    rig_start(&g);
    atomic_store(&g.sc.renew, RENEW_SILENT);
    rig_open(&g);
    struct tn_claim_result *res = claim_abc(&g);
    int64_t deadline = tn_clock_mono_ms() + tn_client_session_safe_for_ms(g.s);
    assert_int_equal(
        tn_client_session_keepalive_start(g.s, on_session, on_lease, &g.seen),
        0);
    assert_true(fx_wait_for(&g.seen.session_calls, 1));
    int64_t at = tn_clock_mono_ms();
    assert_int_equal(atomic_load(&g.seen.session_reason), TN_LEASE_END_EXPIRED);
    assert_int_equal(atomic_load(&g.seen.lease_calls), 2);
    assert_true(at >= deadline - 5 && at < deadline + 250);
    assert_false(tn_lease_is_held(res->items[0].lease));
    tn_claim_result_free(res);
    atomic_store(&g.sc.renew, RENEW_OK);
    rig_stop(&g);
}

static void test_session__release_alone_then_end(void **st)
{
    (void)st;
    struct rig g;
    rig_start(&g);
    rig_open(&g);
    struct tn_claim_result *res = claim_abc(&g);
    assert_int_equal(
        tn_client_session_keepalive_start(g.s, on_session, on_lease, &g.seen),
        0);
    assert_int_equal(tn_client_release(g.c, res->items[0].lease, NULL), 0);
    assert_true(fx_wait_for(&g.seen.lease_calls, 1));
    assert_int_equal(atomic_load(&g.seen.lease_reason), TN_LEASE_END_RELEASED);
    assert_int_equal(tn_client_session_lease_count(g.s), 1);
    assert_true(tn_client_session_is_live(g.s));
    assert_int_equal(atomic_load(&g.sc.lease_deletes), 1);
    assert_int_equal(tn_client_session_end(g.s, NULL), 0);
    assert_true(fx_wait_for(&g.seen.session_calls, 1));
    assert_int_equal(atomic_load(&g.seen.session_reason),
                     TN_LEASE_END_RELEASED);
    assert_int_equal(atomic_load(&g.seen.session_rc), 0);
    assert_int_equal(atomic_load(&g.seen.lease_calls), 2);
    assert_false(tn_lease_is_held(res->items[1].lease));
    int renews = atomic_load(&g.sc.renews);
    fx_nap_ms(400); /* more than a third of the TTL: no renew after end */
    assert_int_equal(atomic_load(&g.sc.renews), renews);
    assert_int_equal(atomic_load(&g.sc.ends), 1);
    tn_claim_result_free(res);
    rig_stop(&g);
}

static void test_session__batch_release_reads_lost(void **st)
{
    (void)st;
    struct rig g;
    rig_start(&g);
    g.sc.release = "{\"released\":[{\"name\":\"a\",\"token\":7}],"
                   "\"lost\":[{\"name\":\"b\",\"token\":8}]}";
    rig_open(&g);
    struct tn_claim_result *res = claim_abc(&g);
    struct tn_lease *two[] = {res->items[0].lease, res->items[1].lease};
    int rcs[2] = {-99, -99};
    assert_int_equal(tn_client_session_release(g.s, two, 2, rcs, NULL), 0);
    assert_int_equal(rcs[0], 0);
    assert_int_equal(rcs[1], TN_ELOST);
    assert_false(tn_lease_is_held(two[0]));
    assert_false(tn_lease_is_held(two[1]));
    assert_true(tn_client_session_is_live(g.s));
    assert_int_equal(tn_client_session_lease_count(g.s), 0);
    tn_claim_result_free(res);
    rig_stop(&g);
}

static void test_session__server_without_sessions(void **st)
{
    (void)st;
    struct rig g;
    rig_start(&g);
    atomic_store(&g.sc.open_status, 404);
    struct tn_session_args a = {.ttl_ms = 300};
    assert_int_equal(tn_client_session_open(g.c, &a, &g.s, NULL), TN_ENOTIMPL);
    assert_null(g.s);
    rig_stop(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session__claim_reads_each_name),
        cmocka_unit_test(
            test_session__claim_answer_leaving_a_name_out_is_refused),
        cmocka_unit_test(
            test_session__loss_reported_once_per_lease_then_session),
        cmocka_unit_test(test_session__silent_server_runs_all_out_at_deadline),
        cmocka_unit_test(test_session__release_alone_then_end),
        cmocka_unit_test(test_session__batch_release_reads_lost),
        cmocka_unit_test(test_session__server_without_sessions),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
