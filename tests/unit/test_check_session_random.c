/* SPDX-License-Identifier: MIT */
/* The checker's validity of leases under sessions against a brute-force
 * O(N^2) reading of the same rule on seeded random histories: sessions
 * opened, renewed (ok, failed, unknown; with and without ttl_ms) and ended
 * (any outcome), claims under them and plain acquires of the same names,
 * releases of single leases.  A lease under a session is certainly valid
 * until the earliest deadline any renew of its session that may have been
 * applied last can have set (or the open's, when no ok renew can be last),
 * and at most until its session's first end invoke or its own first
 * release invoke; a grant of its name with a higher token answered before
 * that is an overlapping grant. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "check_brute.h"
#include "check_sess.h"
#include "common/alloc.h"
#include "tn_test.h"

#include <cmocka.h>

/* Validity end of the ok acquire i: its own, or under a session its
 * session's (nothing certain without the open), cut by its releases. */
static int64_t lease_end(const struct tn_history *h, size_t i)
{
    const struct tn_history_op *a = &h->ops[i];
    if (a->session == TN_HISTORY_NO_ID)
        return end_of(h, a);
    int64_t rel = TN_HISTORY_NEVER;
    for (size_t k = 0; k < h->n_ops; k++) {
        if (ends(&h->ops[k], a))
            rel = min64(rel, h->ops[k].invoke_t);
    }
    for (size_t k = 0; k < h->n_ops; k++) {
        const struct tn_history_op *o = &h->ops[k];
        if (is_ok(o, TN_HISTORY_SESSION_OPEN) && o->session == a->session &&
            first_of(h, k))
            return min64(end_of(h, o), rel);
    }
    return 0;
}

static size_t naive_overlaps(const struct tn_history *h)
{
    size_t n = 0;
    for (size_t j = 0; j < h->n_ops; j++) {
        const struct tn_history_op *b = &h->ops[j];
        bool ovl = false;
        for (size_t i = 0; i < h->n_ops && is_ok(b, TN_HISTORY_ACQUIRE); i++) {
            const struct tn_history_op *a = &h->ops[i];
            if (is_ok(a, TN_HISTORY_ACQUIRE) && a->name == b->name &&
                a->token_out < b->token_out && first_of(h, i) &&
                b->complete_t < lease_end(h, i))
                ovl = true;
        }
        n += ovl;
    }
    return n;
}

static void random_history(struct hb *b)
{
    static const char *const procs[] = {"p0", "p1", "p2", "p3"};
    static const char *const names[] = {"x", "y"};
    static const char *const ids[] = {"s0", "s1", "s2"};
    static const char *const phases[] = {"ok", "ok", "fail", "info"};
    long long t = 0;
    long long next_token = 1;
    for (int s = 0; s < 3; s++)
        sopen(b, (long long)(rng() % 10), 10 + (long long)(rng() % 5), ids[s],
              ids[s], (long long)(rng() % 40) + 1);
    for (int n = 0; n < 40; n++) {
        const char *proc = procs[rng() % 4];
        const char *name = names[rng() % 2];
        const char *id = ids[rng() % 3];
        const char *phase = phases[rng() % 4];
        long long ttl = (long long)(rng() % 30) + 1;
        long long start = t;
        t += (long long)(rng() % 5);
        long long end = t + (long long)(rng() % 5);
        long long token = next_token - (long long)(rng() % 3);
        token = token < 1 ? 1 : token;
        bool ok = phase[0] == 'o';
        switch (rng() % 8) {
        case 0: /* a claim under a session */
            if (ok && rng() % 4 != 0)
                token = next_token++;
            sacq(b, start, end, proc, name, id, phase, ok ? token : NONE, NULL);
            break;
        case 1: /* a plain acquire */
            acq(b, start, proc, name, ttl);
            if (ok && rng() % 4 != 0)
                token = next_token++;
            done(b, end, proc, "acquire", phase, ok ? token : NONE);
            break;
        case 2:
        case 4:
        case 5:
            sop(b, start, end, proc, "session_renew", id,
                rng() % 4 == 0 ? NONE : ttl, phase, NULL);
            break;
        case 3:
            sop(b, start, end, proc, "session_end", id, NONE, phase, NULL);
            break;
        default:
            inv(b, start, proc, "release", name, token, NONE);
            done(b, end, proc, "release", phase, NONE);
            break;
        }
    }
}

static void test_check_session__matches_brute_force(void **s)
{
    (void)s;
    rng_state = 20260517;
    size_t seen = 0;
    for (int round = 0; round < 400; round++) {
        struct hb *b = tn_calloc(1, sizeof(*b));
        assert_non_null(b);
        random_history(b);
        struct tn_history h;
        struct tn_check_report r = check_parsed(b, &h);
        size_t overlap = naive_overlaps(&h);
        if (r.count[TN_CHECK_OVERLAPPING_GRANT] != overlap)
            print_error("round %d:\n%s", round, b->text);
        assert_int_equal(r.count[TN_CHECK_OVERLAPPING_GRANT], overlap);
        seen += overlap;
        tn_history_release(&h);
        tn_free(b);
    }
    /* The histories do exercise the rule. */
    assert_true(seen > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_session__matches_brute_force),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
