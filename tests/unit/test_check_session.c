/* SPDX-License-Identifier: MIT */
/* The checker's session rules (docs/safety/sessions.md) on hand-made
 * histories: a lease under a session is valid while its session is (open
 * and renews, read as a lease's), ends with it, and an ended session stays
 * ended with all its leases; the passing histories next to each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "check_sess.h"
#include "tn_test.h"

#include <cmocka.h>

#define OK "ok"

/* ---- passing histories ---- */

static void test_check_session__renew_keeps_then_expiry_pass(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 100);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    sop(&b, 50, 51, "w1", "session_renew", "s1", 100, OK, NULL);
    /* Valid until 50 + 100: a grant answered exactly then is not
     * certainly inside it. */
    sopen(&b, 140, 141, "w2", "s2", 1000);
    sacq(&b, 142, 150, "w2/a", "a", "s2", OK, 2, NULL);
    assert_clean(&b);
}

static void test_check_session__idempotent_claim_pass(void **state)
{
    (void)state;
    /* A claim of a name the session holds answers the same grant: not a
     * duplicate, and no new grant that token order would judge. */
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 1000);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    grant(&b, 4, 5, "w2", "b", 1000, 2);
    sacq(&b, 10, 11, "w1/a", "a", "s1", OK, 1, NULL);
    assert_clean(&b);
}

static void test_check_session__unknown_renew_may_shorten(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 1000);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    sop(&b, 20, 21, "w1", "session_renew", "s1", 5000, "fail", "forbidden");
    sop(&b, 50, 60, "w1", "session_renew", "s1", 100, "info", NULL);
    sopen(&b, 190, 191, "w2", "s2", 1000);
    sacq(&b, 192, 200, "w2/a", "a", "s2", OK, 2, NULL);
    assert_clean(&b);
}

static void test_check_session__end_of_any_outcome_may_end(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 1000);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    sop(&b, 100, 200, "w1", "session_end", "s1", NONE, "info", NULL);
    sopen(&b, 140, 141, "w2", "s2", 1000);
    sacq(&b, 142, 151, "w2/a", "a", "s2", OK, 2, NULL);
    assert_clean(&b);
}

static void test_check_session__release_alone_then_regrant_pass(void **state)
{
    (void)state;
    /* a released alone: its next holder proves nothing about s1. */
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 1000);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    sacq(&b, 2, 3, "w1/b", "b", "s1", OK, 2, NULL);
    inv(&b, 100, "w1/a", "release", "a", 1, NONE);
    done(&b, 101, "w1/a", "release", OK, NONE);
    chk(&b, 110, 111, "c1", "a", 1, false);
    sopen(&b, 102, 103, "w2", "s2", 1000);
    sacq(&b, 104, 105, "w2/a", "a", "s2", OK, 3, NULL);
    sop(&b, 200, 201, "w1", "session_renew", "s1", 1000, OK, NULL);
    sacq(&b, 210, 211, "w1/c", "c", "s1", OK, 4, NULL);
    chk(&b, 220, 221, "c1", "b", 2, true);
    assert_clean(&b);
}

static void test_check_session__session_not_in_history(void **state)
{
    (void)state;
    /* Without its open nothing about the session is certain. */
    struct hb b = {.len = 0};
    sacq(&b, 2, 3, "w9/a", "a", "sx", OK, 1, NULL);
    sop(&b, 4, 5, "w9", "session_renew", "sx", 1000, OK, NULL);
    grant(&b, 6, 7, "w2", "a", 1000, 2);
    assert_clean(&b);
}

static void test_check_session__concurrent_end_and_check_pass(void **state)
{
    (void)state;
    /* Answers of operations that overlap the end prove nothing. */
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 1000);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    sop(&b, 100, 110, "w1", "session_end", "s1", NONE, OK, NULL);
    chk(&b, 105, 112, "c1", "a", 1, true);
    sop(&b, 109, 120, "w2", "session_renew", "s1", 1000, OK, NULL);
    assert_clean(&b);
}

/* ---- violations ---- */

static void test_check_session__overlap_within_open(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 1000);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    grant(&b, 100, 101, "w2", "a", 1000, 2);
    struct tn_check_report r = assert_only(&b, TN_CHECK_OVERLAPPING_GRANT, 1);
    const struct tn_check_witness *w = &r.witness[TN_CHECK_OVERLAPPING_GRANT];
    assert_int_equal(w->n_ev, 3);
    assert_int_equal(w->ev[0].idx, 1); /* the claim */
    assert_int_equal(w->ev[1].idx, 2); /* the other grant */
    assert_int_equal(w->ev[2].idx, 0); /* the open that bounds it */
    assert_int_equal(w->bound, 1000 * MS);
}

static void test_check_session__overlap_within_renew(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 100);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    sop(&b, 50, 51, "w1", "session_renew", "s1", 1000, OK, NULL);
    sopen(&b, 500, 501, "w2", "s2", 1000);
    sacq(&b, 502, 503, "w2/a", "a", "s2", OK, 2, NULL);
    struct tn_check_report r = assert_only(&b, TN_CHECK_OVERLAPPING_GRANT, 1);
    const struct tn_check_witness *w = &r.witness[TN_CHECK_OVERLAPPING_GRANT];
    assert_int_equal(w->ev[2].idx, 2); /* the session renew */
    assert_int_equal(w->bound, 1050 * MS);
}

static void test_check_session__grant_one_ms_inside(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 100);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    sop(&b, 50, 51, "w1", "session_renew", "s1", 100, OK, NULL);
    sopen(&b, 140, 141, "w2", "s2", 1000);
    sacq(&b, 142, 149, "w2/a", "a", "s2", OK, 2, NULL);
    assert_only(&b, TN_CHECK_OVERLAPPING_GRANT, 1);
}

static void test_check_session__renew_after_superseded(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 100);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    sopen(&b, 200, 201, "w2", "s2", 1000);
    sacq(&b, 202, 203, "w2/a", "a", "s2", OK, 2, NULL);
    sop(&b, 300, 301, "w1", "session_renew", "s1", 100, OK, NULL);
    struct tn_check_report r = check_text(&b);
    assert_int_equal(r.count[TN_CHECK_SUPERSEDED_SUCCESS], 1);
    /* The renew, applied after 300, says a was valid past 203 too (as a
     * lease renew that succeeded late would). */
    assert_int_equal(r.count[TN_CHECK_OVERLAPPING_GRANT], 1);
    const struct tn_check_witness *w = &r.witness[TN_CHECK_SUPERSEDED_SUCCESS];
    assert_int_equal(w->n_ev, 3);
    assert_int_equal(w->ev[0].idx, 1); /* s1's lease of a */
    assert_int_equal(w->ev[1].idx, 3); /* s2's grant of a */
    assert_int_equal(w->ev[2].idx, 4); /* the renew */
}

static void test_check_session__claim_after_superseded(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 100);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    sopen(&b, 200, 201, "w2", "s2", 1000);
    sacq(&b, 202, 203, "w2/a", "a", "s2", OK, 2, NULL);
    sacq(&b, 300, 301, "w1/b", "b", "s1", OK, 3, NULL);
    assert_only(&b, TN_CHECK_SUPERSEDED_SUCCESS, 1);
}

static void test_check_session__revived_after_end(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 1000);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    sop(&b, 100, 101, "w1", "session_end", "s1", NONE, OK, NULL);
    sop(&b, 200, 201, "w1", "session_renew", "s1", 1000, OK, NULL);
    sop(&b, 210, 211, "w1", "session_end", "s1", NONE, OK, NULL);
    sacq(&b, 220, 221, "w1/b", "b", "s1", OK, 2, NULL);
    struct tn_check_report r = assert_only(&b, TN_CHECK_RENEW_AFTER_LOST, 3);
    const struct tn_check_witness *w = &r.witness[TN_CHECK_RENEW_AFTER_LOST];
    assert_int_equal(w->ev[0].idx, 0); /* the open */
    assert_int_equal(w->ev[1].idx, 2); /* the end */
    assert_int_equal(w->ev[2].idx, 3); /* the renew */
}

static void test_check_session__lost_answers_reveal_the_end(void **state)
{
    (void)state;
    /* A claim answered lost, and a check of a lease of it answering
     * current:false (no release alone): the session had ended. */
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 1000);
    sacq(&b, 100, 101, "w1/x", "x", "s1", "fail", NONE, "lost");
    sop(&b, 200, 201, "w1", "session_renew", "s1", 1000, OK, NULL);
    sopen(&b, 0, 1, "w2", "s2", 1000);
    sacq(&b, 2, 3, "w2/a", "a", "s2", OK, 1, NULL);
    chk(&b, 100, 101, "c1", "a", 1, false);
    sop(&b, 200, 201, "w2", "session_renew", "s2", 1000, OK, NULL);
    assert_only(&b, TN_CHECK_RENEW_AFTER_LOST, 2);
}

static void test_check_session__check_after_end(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 1000);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    sacq(&b, 2, 3, "w1/b", "b", "s1", OK, 2, NULL);
    sop(&b, 100, 101, "w1", "session_end", "s1", NONE, OK, NULL);
    chk(&b, 200, 201, "c1", "b", 2, true);
    struct tn_check_report r = assert_only(&b, TN_CHECK_CHECK_REVIVED, 1);
    assert_int_equal(r.witness[TN_CHECK_CHECK_REVIVED].n_ev, 3);
}

static void test_check_session__one_instant(void **state)
{
    (void)state;
    /* a of s1 answered current:false and was never released alone: s1
     * ended, and b with it. */
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 1000);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    sacq(&b, 2, 3, "w1/b", "b", "s1", OK, 2, NULL);
    chk(&b, 100, 101, "c1", "a", 1, false);
    chk(&b, 200, 201, "c1", "b", 2, true);
    assert_only(&b, TN_CHECK_CHECK_REVIVED, 1);
}

static void test_check_session__one_instant_by_supersession(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 100);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    sacq(&b, 2, 3, "w1/b", "b", "s1", OK, 2, NULL);
    grant(&b, 200, 201, "w2", "a", 1000, 3);
    chk(&b, 300, 301, "c1", "b", 2, true);
    struct tn_check_report r = assert_only(&b, TN_CHECK_CHECK_REVIVED, 1);
    const struct tn_check_witness *w = &r.witness[TN_CHECK_CHECK_REVIVED];
    assert_int_equal(w->n_ev, 4);
    assert_int_equal(w->ev[0].idx, 2); /* the checked lease b */
    assert_int_equal(w->ev[1].idx, 1); /* a, superseded */
    assert_int_equal(w->ev[2].idx, 3); /* by w2's grant */
    assert_int_equal(w->ev[3].idx, 4); /* the check */
}

static void test_check_session__same_lease_counted_once(void **state)
{
    (void)state;
    /* A check after a check of the same lease is rule 11's alone. */
    struct hb b = {.len = 0};
    sopen(&b, 0, 1, "w1", "s1", 1000);
    sacq(&b, 2, 3, "w1/a", "a", "s1", OK, 1, NULL);
    chk(&b, 100, 101, "c1", "a", 1, false);
    chk(&b, 200, 201, "c1", "a", 1, true);
    assert_only(&b, TN_CHECK_CHECK_REVIVED, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_session__renew_keeps_then_expiry_pass),
        cmocka_unit_test(test_check_session__idempotent_claim_pass),
        cmocka_unit_test(test_check_session__unknown_renew_may_shorten),
        cmocka_unit_test(test_check_session__end_of_any_outcome_may_end),
        cmocka_unit_test(test_check_session__release_alone_then_regrant_pass),
        cmocka_unit_test(test_check_session__session_not_in_history),
        cmocka_unit_test(test_check_session__concurrent_end_and_check_pass),
        cmocka_unit_test(test_check_session__overlap_within_open),
        cmocka_unit_test(test_check_session__overlap_within_renew),
        cmocka_unit_test(test_check_session__grant_one_ms_inside),
        cmocka_unit_test(test_check_session__renew_after_superseded),
        cmocka_unit_test(test_check_session__claim_after_superseded),
        cmocka_unit_test(test_check_session__revived_after_end),
        cmocka_unit_test(test_check_session__lost_answers_reveal_the_end),
        cmocka_unit_test(test_check_session__check_after_end),
        cmocka_unit_test(test_check_session__one_instant),
        cmocka_unit_test(test_check_session__one_instant_by_supersession),
        cmocka_unit_test(test_check_session__same_lease_counted_once),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
