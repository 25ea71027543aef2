/* SPDX-License-Identifier: MIT */
/* Unit tests of the client's pure parts: safe-time arithmetic on an
 * injected clock, the rules that stop renews after loss, release or run
 * out, the error table and response decoding.  The client points at a port
 * that refuses connections, so any request that is sent shows up as
 * TN_ECONNECT. */
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

#include "client/client_internal.h"

static int64_t fake_now; /* ms, the injected monotonic clock */

static int64_t fake_clock(void)
{
    return fake_now;
}

/* A URL nobody listens on: port 1 on loopback refuses at once. */
#define REFUSING_URL "http://127.0.0.1:1"

static struct tn_client *new_client(int64_t margin_ms)
{
    struct tn_client_options o;
    tn_client_options_init(&o);
    o.urls[0] = REFUSING_URL;
    o.n_urls = 1;
    o.owner_id = "unit";
    o.safety_margin_ms = margin_ms;
    struct tn_client *c = NULL;
    assert_int_equal(tn_client_new(&o, &c, NULL), 0);
    tn_client_set_clock(c, fake_clock);
    return c;
}

/* A lease as if granted at sent_ms with ttl_ms. */
static struct tn_lease *granted(struct tn_client *c, int64_t sent_ms,
                                int64_t ttl_ms)
{
    struct tn_lease *l = NULL;
    assert_int_equal(tn_client_lease_adopt(c, "shard:1", 7, "ab12", &l), 0);
    pthread_mutex_lock(&c->mu);
    tn_lease_granted_locked(l, sent_ms, ttl_ms, ttl_ms);
    pthread_mutex_unlock(&c->mu);
    return l;
}

static void test_client__safe_for_counts_from_send_minus_margin(void **st)
{
    (void)st;
    struct tn_client *c = new_client(-1); /* default margin: ttl / 10 */
    fake_now = 1000;
    struct tn_lease *l = granted(c, 1000, 10000);
    assert_int_equal(tn_lease_safe_for_ms(l), 9000);
    fake_now = 4000;
    assert_int_equal(tn_lease_safe_for_ms(l), 6000);
    assert_true(tn_lease_is_held(l));
    fake_now = 9999;
    assert_int_equal(tn_lease_safe_for_ms(l), 1);
    fake_now = 10000;
    assert_int_equal(tn_lease_safe_for_ms(l), 0);
    assert_false(tn_lease_is_held(l));
    tn_lease_free(l);
    tn_client_free(c);
}

static void test_client__configured_margin_is_used(void **st)
{
    (void)st;
    struct tn_client *c = new_client(250);
    fake_now = 0;
    struct tn_lease *l = granted(c, 0, 1000);
    assert_int_equal(tn_lease_safe_for_ms(l), 750);
    tn_lease_free(l);
    tn_client_free(c);
}

static void test_client__expiry_is_sticky(void **st)
{
    (void)st;
    struct tn_client *c = new_client(0);
    fake_now = 0;
    struct tn_lease *l = granted(c, 0, 100);
    fake_now = 100;
    assert_int_equal(tn_lease_safe_for_ms(l), 0);
    /* A renew answer that arrives now, even one sent recently, must not
     * make the lease held again. */
    struct tn_renew_io ro = {
        .sent_ms = 99, .ttl_ms = 100, .expires_in_ms = 100};
    pthread_mutex_lock(&c->mu);
    int rc = tn_lease_apply_renew_locked(l, 0, &ro);
    pthread_mutex_unlock(&c->mu);
    assert_int_equal(rc, TN_EEXPIRED);
    assert_int_equal(tn_lease_safe_for_ms(l), 0);
    tn_lease_free(l);
    tn_client_free(c);
}

static void test_client__late_answer_of_old_request_ignored(void **st)
{
    (void)st;
    struct tn_client *c = new_client(0);
    fake_now = 600;
    struct tn_lease *l = granted(c, 500, 1000); /* deadline 1500 */
    struct tn_renew_io old = {
        .sent_ms = 100, .ttl_ms = 1000, .expires_in_ms = 1000};
    pthread_mutex_lock(&c->mu);
    assert_int_equal(tn_lease_apply_renew_locked(l, 0, &old), 0);
    pthread_mutex_unlock(&c->mu);
    assert_int_equal(tn_lease_safe_for_ms(l), 900);
    tn_lease_free(l);
    tn_client_free(c);
}

static void test_client__renew_success_moves_deadline(void **st)
{
    (void)st;
    struct tn_client *c = new_client(0);
    fake_now = 0;
    struct tn_lease *l = granted(c, 0, 300);
    fake_now = 150;
    struct tn_renew_io ro = {
        .sent_ms = 100, .ttl_ms = 300, .expires_in_ms = 300};
    pthread_mutex_lock(&c->mu);
    assert_int_equal(tn_lease_apply_renew_locked(l, 0, &ro), 0);
    pthread_mutex_unlock(&c->mu);
    assert_int_equal(tn_lease_safe_for_ms(l), 250); /* 100 + 300 - 150 */
    tn_lease_free(l);
    tn_client_free(c);
}

static void test_client__lost_answer_ends_lease(void **st)
{
    (void)st;
    struct tn_client *c = new_client(0);
    fake_now = 0;
    struct tn_lease *l = granted(c, 0, 1000);
    pthread_mutex_lock(&c->mu);
    assert_int_equal(tn_lease_apply_renew_locked(l, TN_ELOST, NULL), TN_ELOST);
    pthread_mutex_unlock(&c->mu);
    assert_int_equal(tn_lease_safe_for_ms(l), 0);
    /* A later renew is refused locally, without a request. */
    assert_int_equal(tn_client_renew(c, l, 0, NULL), TN_ELOST);
    tn_lease_free(l);
    tn_client_free(c);
}

static void test_client__transport_error_keeps_lease(void **st)
{
    (void)st;
    struct tn_client *c = new_client(0);
    fake_now = 0;
    struct tn_lease *l = granted(c, 0, 1000);
    /* The request goes out (the refusing port answers TN_ECONNECT) and
     * the lease stays held with its old deadline. */
    assert_int_equal(tn_client_renew(c, l, 0, NULL), TN_ECONNECT);
    assert_int_equal(tn_lease_safe_for_ms(l), 1000);
    tn_lease_free(l);
    tn_client_free(c);
}

static void test_client__no_renew_after_safe_time_ran_out(void **st)
{
    (void)st;
    struct tn_client *c = new_client(0);
    fake_now = 0;
    struct tn_lease *l = granted(c, 0, 100);
    fake_now = 100;
    /* TN_EEXPIRED, not TN_ECONNECT: nothing was sent. */
    assert_int_equal(tn_client_renew(c, l, 0, NULL), TN_EEXPIRED);
    assert_int_equal(tn_client_keepalive_start(c, l, NULL, NULL), TN_EINVAL);
    tn_lease_free(l);
    tn_client_free(c);
}

static void on_end(struct tn_lease *l, enum tn_lease_end why, int rc, void *ud)
{
    (void)l;
    (void)why;
    (void)rc;
    (void)ud;
}

static void test_client__keepalive_refuses_dead_leases(void **st)
{
    (void)st;
    struct tn_client *c = new_client(0);
    fake_now = 0;
    struct tn_lease *l = granted(c, 0, 100);
    fake_now = 100;
    assert_int_equal(tn_client_keepalive_start(c, l, on_end, NULL),
                     TN_EEXPIRED);
    struct tn_lease *adopted = NULL;
    assert_int_equal(tn_client_lease_adopt(c, "x", 1, "ff", &adopted), 0);
    assert_int_equal(tn_lease_safe_for_ms(adopted), 0);
    assert_int_equal(tn_client_keepalive_start(c, adopted, on_end, NULL),
                     TN_EINVAL);
    tn_lease_free(adopted);
    tn_lease_free(l);
    tn_client_free(c);
}

static void test_client__no_renew_after_release(void **st)
{
    (void)st;
    struct tn_client *c = new_client(0);
    fake_now = 0;
    struct tn_lease *l = granted(c, 0, 1000);
    /* The release request fails (refused) but the lease is let go. */
    assert_int_equal(tn_client_release(c, l, NULL), TN_ECONNECT);
    assert_false(tn_lease_is_held(l));
    assert_int_equal(tn_client_renew(c, l, 0, NULL), TN_EINVAL);
    tn_lease_free(l);
    tn_client_free(c);
}

struct err_case {
    long status;      /* HTTP status */
    const char *body; /* response body */
    int rc;           /* expected tn_err */
};

static void test_client__error_table(void **st)
{
    (void)st;
    static const struct err_case cases[] = {
        {400, "{\"error\":\"bad_request\",\"message\":\"m\"}", TN_EINVAL},
        {401, "{\"error\":\"unauthorized\",\"message\":\"m\"}", TN_EUNAUTH},
        {403, "{\"error\":\"forbidden\",\"message\":\"m\"}", TN_EFORBIDDEN},
        {404, "{\"error\":\"not_found\",\"message\":\"m\"}", TN_ENOTFOUND},
        {405, "{\"error\":\"method_not_allowed\"}", TN_EMETHOD},
        {409, "{\"error\":\"held\",\"message\":\"m\"}", TN_ECONFLICT},
        {409, "{\"error\":\"lost\",\"message\":\"m\"}", TN_ELOST},
        {409, "{\"error\":\"lock_delay\",\"retry_after_ms\":5}", TN_ELOCKDELAY},
        {413, "{\"error\":\"payload_too_large\"}", TN_ETOOBIG},
        {415, "{\"error\":\"unsupported_media_type\"}", TN_EMEDIA},
        {429, "{\"error\":\"too_many_requests\"}", TN_ETOOMANY},
        {431, "{\"error\":\"request_header_fields_too_large\"}", TN_EHDRTOOBIG},
        {500, "{\"error\":\"internal\"}", TN_EINTERNAL},
        {503, "{\"error\":\"unavailable\"}", TN_EUNAVAIL},
        {503, "{\"error\":\"capacity\",\"message\":\"m\"}", TN_ECAPACITY},
        /* Unknown codes and bodies that are not JSON: the status decides. */
        {409, "{\"error\":\"something_new\"}", TN_ECONFLICT},
        {503, "<html>busy</html>", TN_EUNAVAIL},
        {502, "", TN_EINTERNAL},
        {418, "{}", TN_EPROTO},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct err_case *k = &cases[i];
        int rc = tn_client_map_error(k->status, k->body, strlen(k->body), NULL,
                                     NULL);
        if (rc != k->rc)
            fail_msg("case %zu (%ld %s): got %s", i, k->status, k->body,
                     tn_errname(rc));
    }
}

static void test_client__error_message_and_holder(void **st)
{
    (void)st;
    const char *body = "{\"error\":\"held\",\"message\":\"lease is held\","
                       "\"holder\":{\"owner_id\":\"w1\",\"token\":403,"
                       "\"expires_in_ms\":900}}";
    struct tn_lease_info h;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_client_map_error(409, body, strlen(body), &h, &em),
                     TN_ECONFLICT);
    assert_string_equal(em.text, "lease is held");
    assert_string_equal(h.owner_id, "w1");
    assert_int_equal(h.token, 403);
    assert_int_equal(h.expires_in_ms, 900);
    assert_int_equal(h.retry_after_ms, -1);
    const char *delay = "{\"error\":\"lock_delay\",\"retry_after_ms\":1234}";
    assert_int_equal(tn_client_map_error(409, delay, strlen(delay), &h, &em),
                     TN_ELOCKDELAY);
    assert_int_equal(h.retry_after_ms, 1234);
}

static void test_client__decode_info_rejects_bad_token(void **st)
{
    (void)st;
    struct tn_lease_info info;
    json_t *ok = json_loads("{\"name\":\"a\",\"owner_id\":\"o\",\"token\":5,"
                            "\"expires_in_ms\":10}",
                            0, NULL);
    assert_int_equal(tn_client_decode_info(ok, &info, NULL), 0);
    assert_string_equal(info.name, "a");
    assert_int_equal(info.token, 5);
    json_t *bad = json_loads("{\"name\":\"a\",\"token\":\"5\"}", 0, NULL);
    assert_int_equal(tn_client_decode_info(bad, &info, NULL), TN_EPROTO);
    json_t *neg = json_loads("{\"name\":\"a\",\"token\":-1}", 0, NULL);
    assert_int_equal(tn_client_decode_info(neg, &info, NULL), TN_EPROTO);
    json_decref(ok);
    json_decref(bad);
    json_decref(neg);
}

static void test_client__options_are_checked(void **st)
{
    (void)st;
    struct tn_client_options o;
    struct tn_client *c = NULL;
    tn_client_options_init(&o);
    assert_int_equal(tn_client_new(&o, &c, NULL), TN_EINVAL); /* no URL */
    o.urls[0] = "ftp://x";
    o.n_urls = 1;
    assert_int_equal(tn_client_new(&o, &c, NULL), TN_EINVAL);
    /* Read by the one parser of addresses (common/url.h): refused at
     * creation, not at the first request. */
    static const char *const bad[] = {"http://", "http://:7300",
                                      "http://h:70000", "http://::1:7300",
                                      "https://h h/"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        o.urls[0] = bad[i];
        if (tn_client_new(&o, &c, NULL) != TN_EINVAL)
            fail_msg("server URL %s was taken", bad[i]);
    }
    o.events_url = "redis://h:70000/s";
    o.urls[0] = "http://[::1]:7300/base";
    assert_int_equal(tn_client_new(&o, &c, NULL), TN_EINVAL);
    o.events_url = NULL;
    assert_int_equal(tn_client_new(&o, &c, NULL), 0);
    tn_client_free(c);
    c = NULL;
    o.urls[0] = "http://127.0.0.1:7300";
    o.request_timeout_ms = 0;
    assert_int_equal(tn_client_new(&o, &c, NULL), TN_EINVAL);
    o.request_timeout_ms = 100;
    assert_int_equal(tn_client_new(&o, &c, NULL), 0);
    tn_client_free(c);
}

static void test_client__bad_requests_are_not_sent(void **st)
{
    (void)st;
    struct tn_client *c = new_client(0);
    struct tn_lease *l = NULL;
    struct tn_acquire_args a = {.name = "", .ttl_ms = 100};
    assert_int_equal(tn_client_acquire(c, &a, &l, NULL, NULL), TN_EINVAL);
    a.name = "n";
    a.ttl_ms = 0;
    assert_int_equal(tn_client_acquire(c, &a, &l, NULL, NULL), TN_EINVAL);
    a.ttl_ms = 100;
    assert_int_equal(tn_client_acquire(c, &a, &l, NULL, NULL), TN_ECONNECT);
    assert_null(l);
    tn_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client__safe_for_counts_from_send_minus_margin),
        cmocka_unit_test(test_client__configured_margin_is_used),
        cmocka_unit_test(test_client__expiry_is_sticky),
        cmocka_unit_test(test_client__late_answer_of_old_request_ignored),
        cmocka_unit_test(test_client__renew_success_moves_deadline),
        cmocka_unit_test(test_client__lost_answer_ends_lease),
        cmocka_unit_test(test_client__transport_error_keeps_lease),
        cmocka_unit_test(test_client__no_renew_after_safe_time_ran_out),
        cmocka_unit_test(test_client__keepalive_refuses_dead_leases),
        cmocka_unit_test(test_client__no_renew_after_release),
        cmocka_unit_test(test_client__error_table),
        cmocka_unit_test(test_client__error_message_and_holder),
        cmocka_unit_test(test_client__decode_info_rejects_bad_token),
        cmocka_unit_test(test_client__options_are_checked),
        cmocka_unit_test(test_client__bad_requests_are_not_sent),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
