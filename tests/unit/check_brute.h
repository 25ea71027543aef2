/* SPDX-License-Identifier: MIT */
/* The brute-force O(N^2) reading of lease validity that the random-history
 * tests hold the checker against, on top of check_hist.h: a seeded
 * generator, and the certain validity end of a grant (an ok acquire, or an
 * ok session open) tried against every operation that may have been
 * applied last. */
#ifndef TN_TEST_CHECK_BRUTE_H
#define TN_TEST_CHECK_BRUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check_hist.h"

/* One generator per test program; each test seeds it before its rounds. */
static uint64_t rng_state;

static inline uint64_t rng(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return rng_state >> 33;
}

static inline int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static inline int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static inline bool is_ok(const struct tn_history_op *o, unsigned kind)
{
    return o->kind == kind && o->outcome == TN_HISTORY_OK;
}

/* Does o act on the validity of g (an ok acquire, or an ok open)? */
static inline bool renews(const struct tn_history_op *o,
                          const struct tn_history_op *g)
{
    if (g->kind == TN_HISTORY_SESSION_OPEN)
        return o->kind == TN_HISTORY_SESSION_RENEW && o->session == g->session;
    return o->kind == TN_HISTORY_RENEW && o->name == g->name &&
           o->token_in == g->token_out;
}

static inline bool ends(const struct tn_history_op *o,
                        const struct tn_history_op *g)
{
    if (g->kind == TN_HISTORY_SESSION_OPEN)
        return o->kind == TN_HISTORY_SESSION_END && o->session == g->session;
    return o->kind == TN_HISTORY_RELEASE && o->name == g->name &&
           o->token_in == g->token_out;
}

/* The certain validity end of grant g (ok acquire or open): every
 * operation tried as the one the server applied last (the grant, an ok
 * renew, or an info or unfinished renew), the earliest deadline it can
 * have set; an end or release invoke of any outcome may end it sooner. */
static inline int64_t end_of(const struct tn_history *h,
                             const struct tn_history_op *g)
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
        /* Applied last: after its own invoke, the grant's, and the invoke
         * of every renew that certainly was applied. */
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

/* The first of several ok completions of one grant (same name and token)
 * or one open (same session): facts seen on several count once, on the one
 * invoked first (the rest are retries or already duplicates). */
static inline bool first_of(const struct tn_history *h, size_t i)
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

#endif
