/* SPDX-License-Identifier: MIT */
/* The keepalive's concurrency against a scripted responder
 * (client_fixture.h): with keepalive_connections N, up to N renews wait
 * for their answers at once (and with 1, one at a time); a renew the
 * server never answers delays no other lease's; a session's renews go on
 * while every lease renew hangs.  How many leases that keeps in practice
 * is a bench (bench/keepalive.sh), not a test. */
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

#include "client/client_internal.h"
#include "client_fixture.h"

struct script {
    atomic_bool hold;    /* hold every lease renew until held_go */
    atomic_int k_renews; /* renews of lease "k" */
    atomic_int s_renews; /* renews of session "s1" */
};

static const char renew_ok[] =
    "{\"name\":\"k\",\"owner_id\":\"u\",\"token\":7,\"ttl_ms\":600,"
    "\"expires_in_ms\":600}";
static const char session_ok[] =
    "{\"session_id\":\"s1\",\"owner_id\":\"u\",\"ttl_ms\":600,"
    "\"expires_in_ms\":600,\"leases\":0}";

static void answer(struct fx *fx, const struct fx_req *r, struct fx_answer *out)
{
    struct script *s = fx->ud;
    if (strcmp(r->path, "/v1/sessions/s1") == 0) {
        atomic_fetch_add(&s->s_renews, 1);
        out->status = 200;
        out->body = session_ok;
        return;
    }
    if (strcmp(r->path, "/v1/leases/k") == 0)
        atomic_fetch_add(&s->k_renews, 1);
    /* "stuck*" is never answered; the others as scripted. */
    out->status = strncmp(r->path, "/v1/leases/stuck", 16) == 0 ? 0 : 200;
    out->body = renew_ok;
    out->hold = atomic_load(&s->hold);
}

struct seen {
    atomic_int calls;  /* callbacks */
    atomic_int reason; /* of the last */
};

static void on_end(struct tn_lease *l, enum tn_lease_end why, int rc, void *ud)
{
    (void)l;
    (void)rc;
    struct seen *s = ud;
    atomic_store(&s->reason, (int)why);
    atomic_fetch_add(&s->calls, 1);
}

static void on_session(struct tn_session *ss, enum tn_lease_end why, int rc,
                       void *ud)
{
    (void)ss;
    (void)why;
    (void)rc;
    (void)ud;
}

static struct tn_client *client_for(const char *u, size_t conns)
{
    struct tn_client_options o;
    tn_client_options_init(&o);
    o.urls[0] = u;
    o.n_urls = 1;
    o.owner_id = "u";
    o.safety_margin_ms = 0;
    o.request_timeout_ms = 5000;
    o.keepalive_connections = conns;
    struct tn_client *c = NULL;
    assert_int_equal(tn_client_new(&o, &c, NULL), 0);
    return c;
}

/* A kept lease as if granted by a request sent just now with a TTL of
 * ttl_ms. */
static struct tn_lease *kept_ttl(struct tn_client *c, const char *name,
                                 int64_t ttl_ms, struct seen *seen)
{
    struct tn_lease *l = NULL;
    assert_int_equal(tn_client_lease_adopt(c, name, 7, "abcd", &l), 0);
    pthread_mutex_lock(&c->mu);
    tn_lease_granted_locked(l, tn_clock_mono_ms(), ttl_ms, ttl_ms);
    pthread_mutex_unlock(&c->mu);
    assert_int_equal(tn_client_keepalive_start(c, l, on_end, seen), 0);
    return l;
}

static struct tn_lease *kept_now(struct tn_client *c, const char *name,
                                 struct seen *seen)
{
    return kept_ttl(c, name, 600, seen);
}

static void renews_at_once(size_t conns, int want_max)
{
    struct script sc = {0};
    struct fx fx;
    atomic_store(&sc.hold, true);
    fx_start(&fx, answer, &sc);
    struct tn_client *c = client_for(fx.url, conns);
    struct seen seen = {0};
    struct tn_lease *l[4];
    const char *names[4] = {"a", "b", "k", "d"};
    for (int i = 0; i < 4; i++)
        l[i] = kept_now(c, names[i], &seen);
    /* All four are due after 200 ms; held, they pile up to conns. */
    assert_true(fx_wait_for(&fx.waiting, want_max));
    fx_nap_ms(100);
    assert_int_equal(atomic_load(&fx.max_waiting), want_max);
    atomic_store(&fx.held_go, true);
    atomic_store(&sc.hold, false);
    assert_true(fx_wait_for(&fx.requests, 8)); /* all renewed, again */
    for (int i = 0; i < 4; i++) {
        assert_true(tn_lease_is_held(l[i]));
        tn_lease_free(l[i]);
    }
    tn_client_free(c);
    assert_int_equal(atomic_load(&seen.reason), TN_LEASE_END_STOPPED);
    fx_stop(&fx);
}

static void test_multi__renews_run_at_once(void **st)
{
    (void)st;
    renews_at_once(4, 4);
}

static void test_multi__one_connection_renews_one_at_a_time(void **st)
{
    (void)st;
    renews_at_once(1, 1);
}

static void test_multi__hung_renew_delays_no_other(void **st)
{
    (void)st;
    struct script sc = {0};
    struct fx fx;
    fx_start(&fx, answer, &sc);
    struct tn_client *c = client_for(fx.url, 2);
    struct seen stuck_seen = {0};
    struct seen k_seen = {0};
    struct tn_lease *stuck = kept_now(c, "stuck", &stuck_seen);
    int64_t deadline = stuck->deadline_ms;
    struct tn_lease *k = kept_now(c, "k", &k_seen);
    /* The hung renew runs out its lease at the deadline... */
    assert_true(fx_wait_for(&stuck_seen.calls, 1));
    assert_int_equal(atomic_load(&stuck_seen.reason), TN_LEASE_END_EXPIRED);
    assert_true(tn_clock_mono_ms() < deadline + 250);
    /* ...while the other lease was renewed all along. */
    assert_true(atomic_load(&sc.k_renews) >= 2);
    assert_true(tn_lease_is_held(k));
    assert_int_equal(atomic_load(&k_seen.calls), 0);
    tn_lease_free(stuck);
    tn_lease_free(k);
    tn_client_free(c);
    fx_stop(&fx);
}

static void test_multi__session_renews_while_lease_renews_hang(void **st)
{
    (void)st;
    struct script sc = {0};
    struct fx fx;
    fx_start(&fx, answer, &sc);
    struct tn_client *c = client_for(fx.url, 2);
    struct seen seen = {0};
    struct tn_session *s = NULL;
    assert_int_equal(tn_client_session_adopt(c, "s1", "sec", &s), 0);
    assert_int_equal(tn_client_session_renew(s, 0, NULL), 0);
    assert_int_equal(
        tn_client_session_keepalive_start(s, on_session, NULL, NULL), 0);
    /* From 300 ms on, lease renews hang until their leases run out at
     * 900 ms: had they every slot, the session (600 ms, renewed each 200)
     * would run out meanwhile. */
    struct tn_lease *l[3];
    const char *names[3] = {"stuck1", "stuck2", "stuck3"};
    for (int i = 0; i < 3; i++)
        l[i] = kept_ttl(c, names[i], 900, &seen);
    assert_true(fx_wait_for(&seen.calls, 3)); /* the leases ran out */
    assert_true(tn_client_session_is_live(s));
    assert_true(atomic_load(&sc.s_renews) >= 4);
    for (int i = 0; i < 3; i++)
        tn_lease_free(l[i]);
    tn_client_session_free(s);
    tn_client_free(c);
    fx_stop(&fx);
}

static void answer_503(struct fx *fx, const struct fx_req *r,
                       struct fx_answer *out)
{
    (void)fx;
    (void)r;
    out->status = 503;
    out->body = "{\"error\":\"unavailable\"}";
}

/* The keepalive's requests move on as the callers' do: past a URL that
 * refuses connections and past one that answers 503. */
static void test_multi__renews_move_to_the_next_url(void **st)
{
    (void)st;
    struct script sc = {0};
    struct fx down;
    struct fx up;
    fx_start(&down, answer_503, NULL);
    fx_start(&up, answer, &sc);
    struct tn_client_options o;
    tn_client_options_init(&o);
    o.urls[0] = "http://127.0.0.1:1"; /* refused */
    o.urls[1] = down.url;
    o.urls[2] = up.url;
    o.n_urls = 3;
    o.owner_id = "u";
    o.safety_margin_ms = 0;
    o.connect_timeout_ms = 200;
    struct tn_client *c = NULL;
    assert_int_equal(tn_client_new(&o, &c, NULL), 0);
    struct seen seen = {0};
    struct tn_lease *k = kept_now(c, "k", &seen);
    assert_true(fx_wait_for(&sc.k_renews, 3));
    assert_true(atomic_load(&down.requests) >= 1);
    assert_true(tn_lease_is_held(k));
    assert_int_equal(atomic_load(&seen.calls), 0);
    tn_lease_free(k);
    tn_client_free(c);
    fx_stop(&down);
    fx_stop(&up);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_multi__renews_run_at_once),
        cmocka_unit_test(test_multi__one_connection_renews_one_at_a_time),
        cmocka_unit_test(test_multi__hung_renew_delays_no_other),
        cmocka_unit_test(test_multi__session_renews_while_lease_renews_hang),
        cmocka_unit_test(test_multi__renews_move_to_the_next_url),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
