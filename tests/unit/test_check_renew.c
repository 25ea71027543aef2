/* SPDX-License-Identifier: MIT */
/* The checker's rules for renews that shorten a lease: a renew replaces
 * the deadline, so a grant after the shorter one is no overlap; with
 * overlapping or unacknowledged renews the earliest possible deadline
 * counts.  The other rules are in test_check.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "check_hist.h"
#include "common/alloc.h"
#include "tn_test.h"

#include <cmocka.h>

/* ---- renews that shorten a lease (the renew replaces the deadline) ---- */

static void test_check__shortened_renew_then_grant_after_pass(void **state)
{
    (void)state;
    /* Granted for 1 s, renewed at t=10 for 50 ms: the lease ended by
     * t=61 at the latest, so a grant at t=70 is fine. */
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 1000, 1);
    inv(&b, 10, "w1", "renew", "a", 1, 50);
    done(&b, 11, "w1", "renew", "ok", 1);
    grant(&b, 69, 70, "w2", "a", 1000, 2);
    assert_clean(&b);
}

static void test_check__shortened_renew_then_grant_before(void **state)
{
    (void)state;
    /* The same, but the new grant completed at t=40, before t=10+50. */
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 1000, 1);
    inv(&b, 10, "w1", "renew", "a", 1, 50);
    done(&b, 11, "w1", "renew", "ok", 1);
    grant(&b, 39, 40, "w2", "a", 1000, 2);
    struct tn_check_report r = assert_only(&b, TN_CHECK_OVERLAPPING_GRANT, 1);
    const struct tn_check_witness *w = &r.witness[TN_CHECK_OVERLAPPING_GRANT];
    assert_int_equal(w->bound, 60 * MS);
    assert_int_equal(w->n_ev, 3);
    assert_int_equal(w->ev[2].idx, 1); /* the shortening renew */
}

static void test_check__sequential_renews_last_one_counts(void **state)
{
    (void)state;
    /* Long then short, one after the other: the short one was applied
     * last, the lease ended by t=31. */
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 100, 1);
    inv(&b, 10, "w1", "renew", "a", 1, 1000);
    done(&b, 11, "w1", "renew", "ok", 1);
    inv(&b, 20, "w1", "renew", "a", 1, 10);
    done(&b, 21, "w1", "renew", "ok", 1);
    grant(&b, 35, 36, "w2", "a", 100, 2);
    assert_clean(&b);

    /* Short then long: the long one was certainly applied last, valid
     * until t=1020; a grant at t=500 overlaps it. */
    struct hb c = {.len = 0};
    grant(&c, 0, 1, "w1", "a", 100, 1);
    inv(&c, 10, "w1", "renew", "a", 1, 10);
    done(&c, 11, "w1", "renew", "ok", 1);
    inv(&c, 20, "w1", "renew", "a", 1, 1000);
    done(&c, 21, "w1", "renew", "ok", 1);
    grant(&c, 499, 500, "w2", "a", 100, 2);
    struct tn_check_report r = assert_only(&c, TN_CHECK_OVERLAPPING_GRANT, 1);
    assert_int_equal(r.witness[TN_CHECK_OVERLAPPING_GRANT].bound, 1020 * MS);
    assert_int_equal(r.witness[TN_CHECK_OVERLAPPING_GRANT].ev[2].idx, 2);
}

static void test_check__overlapping_renews_take_earliest(void **state)
{
    (void)state;
    /* Two renews in flight at once, by two clients: a long one (10..30)
     * and a short one (20..25).  Either may have been applied last; the
     * short one no earlier than t=20 (it was invoked then), so the lease
     * certainly lasted until t=40 and no later for sure. */
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 100, 1);
    inv(&b, 10, "w1", "renew", "a", 1, 500);
    inv(&b, 20, "w3", "renew", "a", 1, 20);
    done(&b, 25, "w3", "renew", "ok", 1);
    done(&b, 30, "w1", "renew", "ok", 1);
    grant(&b, 44, 45, "w2", "a", 100, 2);
    assert_clean(&b);

    /* A grant by t=35 is inside every reading. */
    struct hb c = {.len = 0};
    grant(&c, 0, 1, "w1", "a", 100, 1);
    inv(&c, 10, "w1", "renew", "a", 1, 500);
    inv(&c, 20, "w3", "renew", "a", 1, 20);
    done(&c, 25, "w3", "renew", "ok", 1);
    done(&c, 30, "w1", "renew", "ok", 1);
    grant(&c, 34, 35, "w2", "a", 100, 2);
    struct tn_check_report r = assert_only(&c, TN_CHECK_OVERLAPPING_GRANT, 1);
    assert_int_equal(r.witness[TN_CHECK_OVERLAPPING_GRANT].bound, 40 * MS);

    /* The short renew (10..12) certainly before the long one's invoke
     * (15): the long one was applied last, at or after t=15. */
    struct hb d = {.len = 0};
    grant(&d, 0, 1, "w1", "a", 100, 1);
    inv(&d, 10, "w3", "renew", "a", 1, 20);
    done(&d, 12, "w3", "renew", "ok", 1);
    inv(&d, 15, "w1", "renew", "a", 1, 500);
    done(&d, 30, "w1", "renew", "ok", 1);
    grant(&d, 400, 401, "w2", "a", 100, 2);
    r = assert_only(&d, TN_CHECK_OVERLAPPING_GRANT, 1);
    assert_int_equal(r.witness[TN_CHECK_OVERLAPPING_GRANT].bound, 515 * MS);
}

static void test_check__overlapping_renew_counted_from_the_later(void **s)
{
    (void)s;
    /* A renew (5..50, 100 ms) overlapping a later one (40..45, 100 ms):
     * whichever was applied last, it was after t=40, so the lease lasted
     * until t=140; the witness shows both renews. */
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 20, 1);
    inv(&b, 5, "w1", "renew", "a", 1, 100);
    inv(&b, 40, "w3", "renew", "a", 1, 100);
    done(&b, 45, "w3", "renew", "ok", 1);
    done(&b, 50, "w1", "renew", "ok", 1);
    grant(&b, 120, 130, "w2", "a", 20, 2);
    struct tn_check_report r = assert_only(&b, TN_CHECK_OVERLAPPING_GRANT, 1);
    const struct tn_check_witness *w = &r.witness[TN_CHECK_OVERLAPPING_GRANT];
    assert_int_equal(w->bound, 140 * MS);
    assert_int_equal(w->n_ev, 3); /* the later renew both sets and shows */
    assert_int_equal(w->ev[2].idx, 2);

    /* With the ttls the other way round (the early one short), the early
     * one may be last but no earlier than t=40: 40 + 60 = 100. */
    struct hb c = {.len = 0};
    grant(&c, 0, 1, "w1", "a", 20, 1);
    inv(&c, 5, "w1", "renew", "a", 1, 60);
    inv(&c, 40, "w3", "renew", "a", 1, 100);
    done(&c, 45, "w3", "renew", "ok", 1);
    done(&c, 50, "w1", "renew", "ok", 1);
    grant(&c, 90, 95, "w2", "a", 20, 2);
    r = assert_only(&c, TN_CHECK_OVERLAPPING_GRANT, 1);
    w = &r.witness[TN_CHECK_OVERLAPPING_GRANT];
    assert_int_equal(w->bound, 100 * MS);
    assert_int_equal(w->n_ev, 4);
    assert_int_equal(w->ev[2].idx, 1); /* the short renew, applied last */
    assert_int_equal(w->ev[3].idx, 2); /* invoked at t=40: not before */

    /* A grant exactly at t=100 is not certainly inside. */
    struct hb d = {.len = 0};
    grant(&d, 0, 1, "w1", "a", 20, 1);
    inv(&d, 5, "w1", "renew", "a", 1, 60);
    inv(&d, 40, "w3", "renew", "a", 1, 100);
    done(&d, 45, "w3", "renew", "ok", 1);
    done(&d, 50, "w1", "renew", "ok", 1);
    grant(&d, 90, 100, "w2", "a", 20, 2);
    assert_clean(&d);
}

static void test_check__info_renews_may_shorten(void **state)
{
    (void)state;
    /* An ok renew to t=1010, then a renew of 10 ms that timed out: it may
     * have been applied, ending the lease at t=30.  No certain overlap. */
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 1000, 1);
    inv(&b, 10, "w1", "renew", "a", 1, 1000);
    done(&b, 11, "w1", "renew", "ok", 1);
    inv(&b, 20, "w1", "renew", "a", 1, 10);
    done(&b, 200, "w1", "renew", "info", NONE);
    grant(&b, 49, 50, "w2", "a", 1000, 2);
    assert_clean(&b);

    /* An unfinished one (no completion) reads the same. */
    struct hb c = {.len = 0};
    grant(&c, 0, 1, "w1", "a", 1000, 1);
    inv(&c, 20, "w1", "renew", "a", 1, 10);
    grant(&c, 49, 50, "w2", "a", 1000, 2);
    assert_clean(&c);

    /* An info renew invoked before the ok one may still have been applied
     * after it (a request in flight): not before t=10 + 10. */
    for (int late = 0; late < 2; late++) {
        struct hb d = {.len = 0};
        grant(&d, 0, 1, "w1", "a", 1000, 1);
        inv(&d, 5, "w3", "renew", "a", 1, 10);
        inv(&d, 10, "w1", "renew", "a", 1, 1000);
        done(&d, 11, "w1", "renew", "ok", 1);
        done(&d, 12, "w3", "renew", "info", NONE);
        if (late) {
            grant(&d, 24, 25, "w2", "a", 1000, 2);
            assert_clean(&d);
        } else {
            grant(&d, 15, 19, "w2", "a", 1000, 2);
            struct tn_check_report r =
                assert_only(&d, TN_CHECK_OVERLAPPING_GRANT, 1);
            assert_int_equal(r.witness[TN_CHECK_OVERLAPPING_GRANT].bound,
                             20 * MS);
        }
    }

    /* A failed short renew was not applied: the lease lasted to 1000. */
    struct hb e = {.len = 0};
    grant(&e, 0, 1, "w1", "a", 1000, 1);
    inv(&e, 20, "w1", "renew", "a", 1, 10);
    done(&e, 21, "w1", "renew", "fail", NONE);
    grant(&e, 49, 50, "w2", "a", 1000, 2);
    assert_only(&e, TN_CHECK_OVERLAPPING_GRANT, 1);
}

static void test_check__renew_without_ttl_keeps_smallest_ttl(void **state)
{
    (void)state;
    /* A renew without ttl_ms re-arms the lease's own TTL (100 ms here):
     * the lease certainly lasted until t=150. */
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 100, 1);
    inv(&b, 50, "w1", "renew", "a", 1, NONE);
    done(&b, 51, "w1", "renew", "ok", 1);
    grant(&b, 119, 120, "w2", "a", 100, 2);
    struct tn_check_report r = assert_only(&b, TN_CHECK_OVERLAPPING_GRANT, 1);
    assert_int_equal(r.witness[TN_CHECK_OVERLAPPING_GRANT].bound, 150 * MS);

    /* A renew of 10 ms that timed out may have set the TTL first. */
    struct hb c = {.len = 0};
    grant(&c, 0, 1, "w1", "a", 100, 1);
    inv(&c, 20, "w3", "renew", "a", 1, 10);
    done(&c, 30, "w3", "renew", "info", NONE);
    inv(&c, 50, "w1", "renew", "a", 1, NONE);
    done(&c, 51, "w1", "renew", "ok", 1);
    grant(&c, 69, 70, "w2", "a", 100, 2);
    assert_clean(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check__shortened_renew_then_grant_after_pass),
        cmocka_unit_test(test_check__shortened_renew_then_grant_before),
        cmocka_unit_test(test_check__sequential_renews_last_one_counts),
        cmocka_unit_test(test_check__overlapping_renews_take_earliest),
        cmocka_unit_test(test_check__overlapping_renew_counted_from_the_later),
        cmocka_unit_test(test_check__info_renews_may_shorten),
        cmocka_unit_test(test_check__renew_without_ttl_keeps_smallest_ttl),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
