/* SPDX-License-Identifier: MIT */
/* The checker's rules on hand-made histories: one violation per class, the
 * passing histories next to each (including the info cases that must not
 * be reported).  test_check_random.c compares the checker with a
 * brute-force reading of the same rules on seeded random histories. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "check_hist.h"
#include "common/alloc.h"
#include "tn_test.h"

#include <cmocka.h>

static struct tn_check_report check_text(const struct hb *b)
{
    struct tn_history h;
    struct tn_check_report r;
    struct tn_errmsg em = {{0}};
    tn_history_init(&h);
    int rc = tn_history_parse(&h, b->text, b->len, &em);
    if (rc != 0)
        print_error("parse: %s\n", em.text);
    assert_int_equal(rc, 0);
    assert_int_equal(tn_check_run(&h, &r), 0);
    tn_history_release(&h);
    return r;
}

static void assert_clean(const struct hb *b)
{
    struct tn_check_report r = check_text(b);
    for (unsigned i = 0; i < TN_CHECK_N_CLASSES; i++) {
        if (r.count[i] != 0)
            print_error("unexpected %s\n", tn_check_class_name(i));
        assert_int_equal(r.count[i], 0);
    }
    assert_true(tn_check_is_clean(&r));
}

/* Exactly count violations of cls and none of any other class. */
static struct tn_check_report assert_only(const struct hb *b, unsigned cls,
                                          size_t count)
{
    struct tn_check_report r = check_text(b);
    for (unsigned i = 0; i < TN_CHECK_N_CLASSES; i++) {
        size_t want = i == cls ? count : 0;
        if (r.count[i] != want)
            print_error("%s: %zu, want %zu\n", tn_check_class_name(i),
                        r.count[i], want);
        assert_int_equal(r.count[i], want);
    }
    assert_false(tn_check_is_clean(&r));
    assert_true(r.witness[cls].n_ev > 0);
    return r;
}

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

/* ---- comparison with a brute-force reading of the rules ---- */

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
