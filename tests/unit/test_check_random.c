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

#include "check_brute.h"
#include "check_hist.h"
#include "common/alloc.h"
#include "tn_test.h"

#include <cmocka.h>

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
            if (!is_ok(a, TN_HISTORY_ACQUIRE))
                continue;
            if (is_ok(b, TN_HISTORY_ACQUIRE) && a->complete_t < b->invoke_t &&
                a->token_out > b->token_out)
                ord = true;
            if (is_ok(b, TN_HISTORY_ACQUIRE) && a->name == b->name &&
                a->token_out < b->token_out && first_of(h, i) &&
                b->complete_t < end_of(h, a))
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
        struct tn_check_report r = check_parsed(b, &h);
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
