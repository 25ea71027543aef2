/* SPDX-License-Identifier: MIT */
/* The checker's rules on hand-made histories: one violation per class, the
 * passing histories next to each (including the info cases that must not
 * be reported).  test_check_renew.c holds the renews that shorten a lease;
 * test_check_random.c compares the checker with a brute-force reading of
 * the same rules on seeded random histories. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "check_hist.h"
#include "common/alloc.h"
#include "tn_test.h"

#include <cmocka.h>

/* ---- passing histories ---- */

static void test_check__sequential_grants_after_expiry_pass(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 100, 1);
    grant(&b, 150, 151, "w2", "a", 100, 2);
    sink(&b, 152, "a", 1, true, NONE);
    sink(&b, 153, "a", 2, true, 1);
    sink(&b, 154, "a", 1, false, 2);
    sink(&b, 155, "a", 2, true, 2);
    assert_clean(&b);
}

static void test_check__grant_after_release_pass(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 10000, 7);
    inv(&b, 2, "w1", "release", "a", 7, NONE);
    done(&b, 3, "w1", "release", "ok", NONE);
    grant(&b, 4, 5, "w2", "a", 10000, 8);
    assert_clean(&b);
}

static void test_check__info_acquire_is_not_a_lease(void **state)
{
    (void)state;
    /* w1's acquire timed out: it may have been granted a token, but which
     * one is unknown, so nothing it might hold can overlap. */
    struct hb b = {.len = 0};
    acq(&b, 0, "w1", "a", 10000);
    done(&b, 50, "w1", "acquire", "info", NONE);
    grant(&b, 60, 61, "w2", "a", 10000, 2);
    acq(&b, 70, "w3", "a", 10000);
    assert_clean(&b);
}

static void test_check__info_or_failed_release_may_have_ended_lease(void **s)
{
    (void)s;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 10000, 1);
    inv(&b, 10, "w1", "release", "a", 1, NONE);
    done(&b, 500, "w1", "release", "info", NONE);
    grant(&b, 20, 21, "w2", "a", 10000, 2);
    grant(&b, 30, 31, "w3", "b", 10000, 3);
    inv(&b, 32, "w3", "release", "b", 3, NONE);
    done(&b, 33, "w3", "release", "fail", NONE);
    grant(&b, 40, 41, "w4", "b", 10000, 4);
    assert_clean(&b);
}

static void test_check__info_renew_does_not_extend(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 100, 1);
    inv(&b, 50, "w1", "renew", "a", 1, 100);
    done(&b, 60, "w1", "renew", "info", NONE);
    inv(&b, 61, "w1", "renew", "a", 1, 100);
    done(&b, 62, "w1", "renew", "fail", NONE);
    grant(&b, 120, 121, "w2", "a", 100, 2);
    assert_clean(&b);
}

static void test_check__open_operation_at_end_is_unknown(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 100, 1);
    inv(&b, 50, "w1", "renew", "a", 1, 100000);
    grant(&b, 120, 121, "w2", "a", 100, 2);
    assert_clean(&b);
}

static void test_check__renew_extends_then_expires_pass(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 100, 1);
    inv(&b, 80, "w1", "renew", "a", 1, 100);
    done(&b, 81, "w1", "renew", "ok", 1);
    grant(&b, 181, 182, "w2", "a", 100, 2);
    assert_clean(&b);
}

static void test_check__concurrent_grants_any_order_pass(void **state)
{
    (void)state;
    /* Overlapping in time on different names: no real-time order. */
    struct hb b = {.len = 0};
    acq(&b, 0, "w1", "a", 100);
    acq(&b, 1, "w2", "b", 100);
    done(&b, 2, "w2", "acquire", "ok", 1);
    done(&b, 3, "w1", "acquire", "ok", 2);
    assert_clean(&b);
}

static void test_check__boundaries_are_not_certain(void **state)
{
    (void)state;
    /* B invoked at the very instant A completed, and a grant at exactly
     * the end of the earlier lease: neither is certainly wrong. */
    struct hb b = {.len = 0};
    grant(&b, 0, 10, "w1", "a", 100, 5);
    grant(&b, 10, 11, "w2", "b", 100, 4);
    grant(&b, 90, 100, "w3", "a", 100, 6);
    assert_clean(&b);
}

static void test_check__request_id_retry_same_grant_pass(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    hb_add(&b, "{\"t\":0,\"proc\":\"w1\",\"op\":\"acquire\",\"phase\":"
               "\"invoke\",\"name\":\"a\",\"ttl_ms\":100,"
               "\"request_id\":\"r1\"}\n");
    done(&b, 1, "w1", "acquire", "ok", 3);
    hb_add(&b, "{\"t\":2000000,\"proc\":\"w1\",\"op\":\"acquire\",\"phase\":"
               "\"invoke\",\"name\":\"a\",\"ttl_ms\":100,"
               "\"request_id\":\"r1\"}\n");
    done(&b, 3, "w1", "acquire", "ok", 3);
    assert_clean(&b);
}

static void test_check__request_id_retry_after_another_grant_pass(void **s)
{
    (void)s;
    /* The retry answers the grant of token 3 again, after token 4 of
     * another name was granted: the same grant, not a new one that token
     * order would judge. */
    struct hb b = {.len = 0};
    hb_add(&b, "{\"t\":0,\"proc\":\"w1\",\"op\":\"acquire\",\"phase\":"
               "\"invoke\",\"name\":\"a\",\"ttl_ms\":100,"
               "\"request_id\":\"r1\"}\n");
    done(&b, 1, "w1", "acquire", "ok", 3);
    grant(&b, 1, 1, "w2", "b", 100, 4);
    hb_add(&b, "{\"t\":2000000,\"proc\":\"w1\",\"op\":\"acquire\",\"phase\":"
               "\"invoke\",\"name\":\"a\",\"ttl_ms\":100,"
               "\"request_id\":\"r1\"}\n");
    done(&b, 3, "w1", "acquire", "ok", 3);
    assert_clean(&b);
}

static void test_check__concurrent_renew_with_new_grant_pass(void **state)
{
    (void)state;
    /* The renew was invoked before the newer grant completed: the server
     * may have served it first, and its validity (to t=21) may have ended
     * before the grant.  A failed release later is fine too. */
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 10, 1);
    inv(&b, 20, "w1", "renew", "a", 1, 1);
    grant(&b, 19, 25, "w2", "a", 10, 2);
    done(&b, 26, "w1", "renew", "ok", 1);
    inv(&b, 27, "w1", "release", "a", 1, NONE);
    done(&b, 28, "w1", "release", "fail", NONE);
    assert_clean(&b);
}

static void test_check__nemesis_lines_and_blank_lines_ignored(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 10, 1);
    hb_add(&b, "\n   \n{\"t\":5,\"src\":\"nemesis\",\"fault\":\"kill\"}\n");
    grant(&b, 20, 21, "w2", "a", 10, 2);
    assert_clean(&b);
}

static void test_check__sink_first_mark_adopted_from_hwm(void **state)
{
    (void)state;
    /* The history starts with a sink that already held mark 4. */
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 10, 5);
    sink(&b, 2, "a", 5, true, 4);
    sink(&b, 3, "a", 5, true, 5);
    assert_clean(&b);
}

/* ---- one violation per class ---- */

static void test_check__duplicate_token_same_name(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 10, 3);
    grant(&b, 20, 21, "w2", "a", 10, 3);
    struct tn_check_report r = assert_only(&b, TN_CHECK_DUPLICATE_TOKEN, 1);
    assert_int_equal(r.witness[TN_CHECK_DUPLICATE_TOKEN].n_ev, 2);
    assert_int_equal(r.witness[TN_CHECK_DUPLICATE_TOKEN].bound, 3);
}

static void test_check__duplicate_token_across_names(void **state)
{
    (void)state;
    /* One global counter: the same token on two names is a duplicate,
     * even for concurrent acquires. */
    struct hb b = {.len = 0};
    acq(&b, 0, "w1", "a", 10);
    acq(&b, 0, "w2", "b", 10);
    done(&b, 1, "w1", "acquire", "ok", 9);
    done(&b, 1, "w2", "acquire", "ok", 9);
    assert_only(&b, TN_CHECK_DUPLICATE_TOKEN, 1);
}

static void test_check__token_order_across_names(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 10, "w1", "a", 10, 5);
    grant(&b, 11, 12, "w2", "b", 10, 4);
    struct tn_check_report r = assert_only(&b, TN_CHECK_TOKEN_ORDER, 1);
    const struct tn_check_witness *w = &r.witness[TN_CHECK_TOKEN_ORDER];
    assert_int_equal(w->n_ev, 2);
    assert_int_equal(w->ev[0].idx, 0);
    assert_int_equal(w->ev[1].idx, 1);
}

static void test_check__token_reuse_after_restart(void **state)
{
    (void)state;
    /* After a restart the counter went back: token 1 again, later. */
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 10, 1);
    grant(&b, 50, 51, "w2", "a", 10, 2);
    grant(&b, 100, 101, "w3", "a", 10, 1);
    struct tn_check_report r = check_text(&b);
    assert_int_equal(r.count[TN_CHECK_DUPLICATE_TOKEN], 1);
    assert_int_equal(r.count[TN_CHECK_TOKEN_ORDER], 1);
    assert_int_equal(r.count[TN_CHECK_OVERLAPPING_GRANT], 0);
}

static void test_check__overlapping_grant(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 100, 1);
    grant(&b, 50, 60, "w2", "a", 100, 2);
    struct tn_check_report r = assert_only(&b, TN_CHECK_OVERLAPPING_GRANT, 1);
    assert_int_equal(r.witness[TN_CHECK_OVERLAPPING_GRANT].bound, 100 * MS);
    assert_int_equal(r.witness[TN_CHECK_OVERLAPPING_GRANT].n_ev, 2);
}

static void test_check__overlapping_grant_within_renewed_validity(void **s)
{
    (void)s;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 100, 1);
    inv(&b, 90, "w1", "renew", "a", 1, 100);
    done(&b, 91, "w1", "renew", "ok", 1);
    grant(&b, 150, 160, "w2", "a", 100, 2);
    struct tn_check_report r = assert_only(&b, TN_CHECK_OVERLAPPING_GRANT, 1);
    const struct tn_check_witness *w = &r.witness[TN_CHECK_OVERLAPPING_GRANT];
    assert_int_equal(w->n_ev, 3);
    assert_int_equal(w->ev[2].idx, 1); /* the renew */
    assert_int_equal(w->bound, 190 * MS);
}

static void test_check__release_invoked_after_the_new_grant(void **state)
{
    (void)state;
    /* The release started only after the new grant had completed. */
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 100, 1);
    grant(&b, 10, 20, "w2", "a", 100, 2);
    inv(&b, 21, "w1", "release", "a", 1, NONE);
    done(&b, 22, "w1", "release", "fail", NONE);
    assert_only(&b, TN_CHECK_OVERLAPPING_GRANT, 1);
}

static void test_check__overlap_grant_completing_before_earlier(void **s)
{
    (void)s;
    /* The lower token's acquire completed last, but it was granted first:
     * the higher token was granted while it was valid. */
    struct hb b = {.len = 0};
    acq(&b, 0, "w1", "a", 100);
    acq(&b, 1, "w2", "a", 100);
    done(&b, 2, "w2", "acquire", "ok", 6);
    done(&b, 3, "w1", "acquire", "ok", 5);
    assert_only(&b, TN_CHECK_OVERLAPPING_GRANT, 1);
}

static void test_check__superseded_renew_and_release(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 10, 1);
    grant(&b, 20, 21, "w2", "a", 10, 2);
    inv(&b, 22, "w1", "renew", "a", 1, 10);
    done(&b, 23, "w1", "renew", "ok", 1);
    inv(&b, 24, "w1", "release", "a", 1, NONE);
    done(&b, 25, "w1", "release", "ok", NONE);
    struct tn_check_report r = check_text(&b);
    assert_int_equal(r.count[TN_CHECK_SUPERSEDED_SUCCESS], 2);
    /* The renew also made the lease valid when token 2 was granted. */
    assert_int_equal(r.count[TN_CHECK_OVERLAPPING_GRANT], 1);
    const struct tn_check_witness *w = &r.witness[TN_CHECK_SUPERSEDED_SUCCESS];
    assert_int_equal(w->n_ev, 2);
    assert_int_equal(w->ev[0].idx, 1); /* token 2's acquire */
    assert_int_equal(w->ev[1].idx, 2); /* the renew */
}

static void test_check__superseded_release_only(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 10, 1);
    grant(&b, 20, 21, "w2", "a", 10, 2);
    inv(&b, 24, "w1", "release", "a", 1, NONE);
    done(&b, 25, "w1", "release", "ok", NONE);
    assert_only(&b, TN_CHECK_SUPERSEDED_SUCCESS, 1);
}

static void test_check__renew_token_changed(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 10, 1);
    inv(&b, 2, "w1", "renew", "a", 1, 10);
    done(&b, 3, "w1", "renew", "ok", 1);
    inv(&b, 4, "w1", "renew", "a", 1, 10);
    done(&b, 5, "w1", "renew", "ok", 4);
    struct tn_check_report r = assert_only(&b, TN_CHECK_RENEW_TOKEN_CHANGED, 1);
    assert_int_equal(r.witness[TN_CHECK_RENEW_TOKEN_CHANGED].ev[0].idx, 2);
}

static void test_check__sink_admits_below_mark(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 10, 1);
    grant(&b, 20, 21, "w2", "a", 10, 2);
    sink(&b, 22, "a", 2, true, NONE);
    sink(&b, 23, "b", 1, true, NONE); /* another resource: its own mark */
    sink(&b, 24, "a", 1, false, NONE);
    sink(&b, 25, "a", 1, true, NONE);
    struct tn_check_report r = assert_only(&b, TN_CHECK_SINK_BELOW_MARK, 1);
    const struct tn_check_witness *w = &r.witness[TN_CHECK_SINK_BELOW_MARK];
    assert_true(w->ev[0].sink && w->ev[1].sink);
    assert_int_equal(w->ev[0].idx, 0);
    assert_int_equal(w->ev[1].idx, 3);
    assert_int_equal(w->bound, 2);
}

static void test_check__sink_admits_token_never_granted(void **state)
{
    (void)state;
    /* Token 9 may be what the info acquire got, but a token is known only
     * from an ok completion (CONTRACT §8). */
    struct hb b = {.len = 0};
    acq(&b, 0, "w1", "a", 10);
    done(&b, 1, "w1", "acquire", "info", NONE);
    sink(&b, 2, "a", 9, true, NONE);
    sink(&b, 3, "a", 10, false, NONE);
    assert_only(&b, TN_CHECK_SINK_NEVER_GRANTED, 1);
}

static void test_check__sink_mark_moved_down(void **state)
{
    (void)state;
    /* A materializer restart came back with an older mark; it rejected
     * nothing wrongly yet, but its mark went down. */
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 10, 3);
    sink(&b, 2, "a", 3, true, 2);
    sink(&b, 3, "a", 3, true, 2);
    assert_only(&b, TN_CHECK_SINK_MARK_MOVED_DOWN, 1);
}

static void test_check__sink_mark_mismatch(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 10, 3);
    sink(&b, 2, "a", 3, true, NONE);
    sink(&b, 3, "a", 3, false, 7);
    assert_only(&b, TN_CHECK_SINK_MARK_MISMATCH, 1);
}

static void test_check__counts_every_violating_operation(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 1000, 1);
    grant(&b, 2, 3, "w2", "a", 1000, 2);
    grant(&b, 4, 5, "w3", "a", 1000, 3);
    struct tn_check_report r = assert_only(&b, TN_CHECK_OVERLAPPING_GRANT, 2);
    /* The first witness is the lowest pair. */
    assert_int_equal(r.witness[TN_CHECK_OVERLAPPING_GRANT].ev[0].idx, 0);
    assert_int_equal(r.witness[TN_CHECK_OVERLAPPING_GRANT].ev[1].idx, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check__sequential_grants_after_expiry_pass),
        cmocka_unit_test(test_check__grant_after_release_pass),
        cmocka_unit_test(test_check__info_acquire_is_not_a_lease),
        cmocka_unit_test(
            test_check__info_or_failed_release_may_have_ended_lease),
        cmocka_unit_test(test_check__info_renew_does_not_extend),
        cmocka_unit_test(test_check__open_operation_at_end_is_unknown),
        cmocka_unit_test(test_check__renew_extends_then_expires_pass),
        cmocka_unit_test(test_check__concurrent_grants_any_order_pass),
        cmocka_unit_test(test_check__boundaries_are_not_certain),
        cmocka_unit_test(test_check__request_id_retry_same_grant_pass),
        cmocka_unit_test(test_check__request_id_retry_after_another_grant_pass),
        cmocka_unit_test(test_check__concurrent_renew_with_new_grant_pass),
        cmocka_unit_test(test_check__nemesis_lines_and_blank_lines_ignored),
        cmocka_unit_test(test_check__sink_first_mark_adopted_from_hwm),
        cmocka_unit_test(test_check__duplicate_token_same_name),
        cmocka_unit_test(test_check__duplicate_token_across_names),
        cmocka_unit_test(test_check__token_order_across_names),
        cmocka_unit_test(test_check__token_reuse_after_restart),
        cmocka_unit_test(test_check__overlapping_grant),
        cmocka_unit_test(test_check__overlapping_grant_within_renewed_validity),
        cmocka_unit_test(test_check__release_invoked_after_the_new_grant),
        cmocka_unit_test(test_check__overlap_grant_completing_before_earlier),
        cmocka_unit_test(test_check__superseded_renew_and_release),
        cmocka_unit_test(test_check__superseded_release_only),
        cmocka_unit_test(test_check__renew_token_changed),
        cmocka_unit_test(test_check__sink_admits_below_mark),
        cmocka_unit_test(test_check__sink_admits_token_never_granted),
        cmocka_unit_test(test_check__sink_mark_moved_down),
        cmocka_unit_test(test_check__sink_mark_mismatch),
        cmocka_unit_test(test_check__counts_every_violating_operation),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
