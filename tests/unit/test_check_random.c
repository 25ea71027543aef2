/* SPDX-License-Identifier: MIT */
/* The checker against a brute-force O(N^2) reading of the same rules
 * (token order, overlapping grants, superseded successes) on seeded random
 * histories, renews with and without ttl_ms and info outcomes included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "check_hist.h"
#include "common/alloc.h"
#include "tn_test.h"

#include <cmocka.h>

static uint64_t rng_state;

static uint64_t rng(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return rng_state >> 33;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static bool renews(const struct tn_history_op *o, const struct tn_history_op *a)
{
    return o->kind == TN_HISTORY_RENEW && o->name == a->name &&
           o->token_in == a->token_out;
}

/* Brute force of the validity end of ok acquire i: try every operation as
 * the one the server applied last (the grant, an ok renew, or an info or
 * unfinished renew) and take the earliest deadline it can have set; a
 * release invoke of any outcome may end it sooner. */
static int64_t end_of(const struct tn_history *h, size_t i)
{
    const struct tn_history_op *a = &h->ops[i];
    int64_t rel = TN_HISTORY_NEVER;
    int64_t min_ttl = a->ttl_ms;
    for (size_t k = 0; k < h->n_ops; k++) {
        const struct tn_history_op *o = &h->ops[k];
        if (o->kind == TN_HISTORY_RELEASE && o->name == a->name &&
            o->token_in == a->token_out)
            rel = min64(rel, o->invoke_t);
        if (renews(o, a) && o->outcome != TN_HISTORY_FAIL &&
            o->ttl_ms != TN_HISTORY_NONE)
            min_ttl = min64(min_ttl, o->ttl_ms);
    }
    int64_t best = TN_HISTORY_NEVER;
    bool ok_can_be_last = false;
    for (size_t x = 0; x < h->n_ops; x++) {
        const struct tn_history_op *o = &h->ops[x];
        if (!renews(o, a) || o->outcome == TN_HISTORY_FAIL)
            continue;
        /* Applied last: after its own invoke, the grant's, and the invoke
         * of every renew that certainly was applied. */
        int64_t at = max64(o->invoke_t, a->invoke_t);
        for (size_t y = 0; y < h->n_ops; y++) {
            if (renews(&h->ops[y], a) && h->ops[y].outcome == TN_HISTORY_OK)
                at = max64(at, h->ops[y].invoke_t);
        }
        if (o->outcome == TN_HISTORY_OK && at > o->complete_t)
            continue;
        ok_can_be_last |= o->outcome == TN_HISTORY_OK;
        int64_t ttl = o->ttl_ms != TN_HISTORY_NONE ? o->ttl_ms : min_ttl;
        best = min64(best, at + ttl * MS);
    }
    if (!ok_can_be_last)
        best = min64(best, a->invoke_t + a->ttl_ms * MS);
    return min64(best, rel);
}

static bool ok_acq(const struct tn_history_op *o)
{
    return o->kind == TN_HISTORY_ACQUIRE && o->outcome == TN_HISTORY_OK;
}

/* Facts of a (name, token) seen on several ok acquires count once, on the
 * one invoked first (the rest are retries or already duplicates). */
static bool first_of_token(const struct tn_history *h, size_t i)
{
    const struct tn_history_op *a = &h->ops[i];
    for (size_t k = 0; k < h->n_ops; k++) {
        const struct tn_history_op *o = &h->ops[k];
        if (k == i || !ok_acq(o) || o->name != a->name ||
            o->token_out != a->token_out)
            continue;
        if (o->invoke_t < a->invoke_t || (o->invoke_t == a->invoke_t && k < i))
            return false;
    }
    return true;
}

static void naive(const struct tn_history *h, size_t *order, size_t *overlap,
                  size_t *superseded)
{
    *order = *overlap = *superseded = 0;
    for (size_t j = 0; j < h->n_ops; j++) {
        const struct tn_history_op *b = &h->ops[j];
        bool ord = false;
        bool ovl = false;
        bool sup = false;
        for (size_t i = 0; i < h->n_ops; i++) {
            const struct tn_history_op *a = &h->ops[i];
            if (!ok_acq(a))
                continue;
            if (ok_acq(b) && a->complete_t < b->invoke_t &&
                a->token_out > b->token_out)
                ord = true;
            if (ok_acq(b) && a->name == b->name &&
                a->token_out < b->token_out && first_of_token(h, i) &&
                b->complete_t < end_of(h, i))
                ovl = true;
            if (b->kind != TN_HISTORY_ACQUIRE && b->outcome == TN_HISTORY_OK &&
                a->name == b->name && a->token_out > b->token_in &&
                a->complete_t < b->invoke_t)
                sup = true;
        }
        *order += ord;
        *overlap += ovl;
        *superseded += sup;
    }
}

static void random_history(struct hb *b)
{
    static const char *const procs[] = {"p0", "p1", "p2", "p3"};
    static const char *const names[] = {"x", "y"};
    static const char *const phases[] = {"ok", "ok", "fail", "info"};
    long long t = 0;
    long long next_token = 1;
    for (int n = 0; n < 40; n++) {
        const char *proc = procs[rng() % 4];
        const char *name = names[rng() % 2];
        const char *phase = phases[rng() % 4];
        long long ttl = (long long)(rng() % 30) + 1;
        long long start = t;
        t += (long long)(rng() % 5);
        long long end = t + (long long)(rng() % 5);
        unsigned kind = (unsigned)(rng() % 3);
        long long token = next_token - (long long)(rng() % 3);
        if (kind == 0) {
            acq(b, start, proc, name, ttl);
            token = (rng() % 4 == 0) ? token : next_token++;
            done(b, end, proc, "acquire", phase,
                 phase[0] == 'o' ? (token < 1 ? 1 : token) : NONE);
        } else {
            const char *op = kind == 1 ? "renew" : "release";
            bool no_ttl = kind != 1 || rng() % 4 == 0;
            inv(b, start, proc, op, name, token < 1 ? 1 : token,
                no_ttl ? NONE : ttl);
            done(b, end, proc, op, phase, NONE);
        }
    }
}

static void test_check__matches_brute_force_on_random_histories(void **s)
{
    (void)s;
    rng_state = 20260101;
    for (int round = 0; round < 300; round++) {
        struct hb *b = tn_calloc(1, sizeof(*b));
        assert_non_null(b);
        random_history(b);
        struct tn_history h;
        struct tn_check_report r;
        struct tn_errmsg em = {{0}};
        tn_history_init(&h);
        assert_int_equal(tn_history_parse(&h, b->text, b->len, &em), 0);
        assert_int_equal(tn_check_run(&h, &r), 0);
        size_t order = 0;
        size_t overlap = 0;
        size_t superseded = 0;
        naive(&h, &order, &overlap, &superseded);
        if (r.count[TN_CHECK_TOKEN_ORDER] != order ||
            r.count[TN_CHECK_OVERLAPPING_GRANT] != overlap ||
            r.count[TN_CHECK_SUPERSEDED_SUCCESS] != superseded)
            print_error("round %d:\n%s", round, b->text);
        assert_int_equal(r.count[TN_CHECK_TOKEN_ORDER], order);
        assert_int_equal(r.count[TN_CHECK_OVERLAPPING_GRANT], overlap);
        assert_int_equal(r.count[TN_CHECK_SUPERSEDED_SUCCESS], superseded);
        tn_history_release(&h);
        tn_free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check__matches_brute_force_on_random_histories),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
