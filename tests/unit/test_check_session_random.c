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

#include "check_sess.h"
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

static bool is_ok(const struct tn_history_op *o, unsigned kind)
{
    return o->kind == kind && o->outcome == TN_HISTORY_OK;
}

/* Does o act on the validity of g (an ok acquire, or an ok open)? */
static bool renews(const struct tn_history_op *o, const struct tn_history_op *g)
{
    if (g->kind == TN_HISTORY_SESSION_OPEN)
        return o->kind == TN_HISTORY_SESSION_RENEW && o->session == g->session;
    return o->kind == TN_HISTORY_RENEW && o->name == g->name &&
           o->token_in == g->token_out;
}

static bool ends(const struct tn_history_op *o, const struct tn_history_op *g)
{
    if (g->kind == TN_HISTORY_SESSION_OPEN)
        return o->kind == TN_HISTORY_SESSION_END && o->session == g->session;
    return o->kind == TN_HISTORY_RELEASE && o->name == g->name &&
           o->token_in == g->token_out;
}

/* The certain validity end of grant g (ok acquire or open): every
 * operation tried as the one applied last, the earliest deadline it can
 * have set; an end or release invoke of any outcome may end it sooner. */
static int64_t end_of(const struct tn_history *h, const struct tn_history_op *g)
{
    int64_t rel = TN_HISTORY_NEVER;
    int64_t min_ttl = g->ttl_ms;
    for (size_t k = 0; k < h->n_ops; k++) {
        const struct tn_history_op *o = &h->ops[k];
        if (ends(o, g))
            rel = min64(rel, o->invoke_t);
        if (renews(o, g) && o->outcome != TN_HISTORY_FAIL &&
            o->ttl_ms != TN_HISTORY_NONE)
            min_ttl = min64(min_ttl, o->ttl_ms);
    }
    int64_t best = TN_HISTORY_NEVER;
    bool ok_can_be_last = false;
    for (size_t x = 0; x < h->n_ops; x++) {
        const struct tn_history_op *o = &h->ops[x];
        if (!renews(o, g) || o->outcome == TN_HISTORY_FAIL)
            continue;
        int64_t at = max64(o->invoke_t, g->invoke_t);
        for (size_t y = 0; y < h->n_ops; y++) {
            if (renews(&h->ops[y], g) && h->ops[y].outcome == TN_HISTORY_OK)
                at = max64(at, h->ops[y].invoke_t);
        }
        if (o->outcome == TN_HISTORY_OK && at > o->complete_t)
            continue;
        ok_can_be_last |= o->outcome == TN_HISTORY_OK;
        int64_t ttl = o->ttl_ms != TN_HISTORY_NONE ? o->ttl_ms : min_ttl;
        best = min64(best, at + ttl * MS);
    }
    if (!ok_can_be_last)
        best = min64(best, g->invoke_t + g->ttl_ms * MS);
    return min64(best, rel);
}

/* The first of several ok completions of one grant or one open. */
static bool first_of(const struct tn_history *h, size_t i)
{
    const struct tn_history_op *a = &h->ops[i];
    for (size_t k = 0; k < h->n_ops; k++) {
        const struct tn_history_op *o = &h->ops[k];
        bool same = a->kind == TN_HISTORY_SESSION_OPEN
                        ? is_ok(o, a->kind) && o->session == a->session
                        : is_ok(o, a->kind) && o->name == a->name &&
                              o->token_out == a->token_out;
        if (k == i || !same)
            continue;
        if (o->invoke_t < a->invoke_t || (o->invoke_t == a->invoke_t && k < i))
            return false;
    }
    return true;
}

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
        struct tn_check_report r;
        struct tn_errmsg em = {{0}};
        tn_history_init(&h);
        if (tn_history_parse(&h, b->text, b->len, &em) != 0)
            print_error("round %d: %s\n%s", round, em.text, b->text);
        assert_int_equal(tn_check_run(&h, &r), 0);
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
