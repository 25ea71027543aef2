/* SPDX-License-Identifier: MIT */
/* The lease table under long runs: a seeded random walk against a shadow
 * model that checks the token contract (CONTRACT §4) after every step
 * (TN_SEED picks the seed; scripts/soak.sh runs it with many), and
 * retirement under churn.  The clock is the test's: now_ms is passed in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tenure/err.h>

#include "lease/lease.h"
#include "lease_fixture.h"
#include "tn_test.h"

#include <cmocka.h>

/* ---- seeded random walk against a shadow model ---- */

#define WALK_NAMES 4
#define WALK_STEPS 200000

/* Owners of different lengths, so that a name's grants move between the
 * room inside its entry and a block of their own. */
static const char *const walk_owners[] = {
    "w", "worker-7",
    "a-long-owner-id-that-does-not-fit-in-the-room-of-a-short-one-"
    "0123456789012345678901234567890123456789012345678901234567890"};
static const char *const walk_rids[] = {NULL, "r", "request-id-0123456789"};

struct shadow {
    const char *owner;  /* of the last grant, NULL = none ever */
    const char *rid;    /* its request id; NULL after a release */
    uint64_t token;     /* live grant's token, 0 = none ever */
    uint64_t floor;     /* highest token granted */
    int64_t expires_at; /* of the live grant */
    bool held;          /* not released */
    uint8_t secret[TN_SECRET_BYTES];
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static bool shadow_live(const struct shadow *s, int64_t now)
{
    return s->held && now < s->expires_at;
}

static bool same_or_null(const char *a, const char *b)
{
    return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

static void walk_step(struct tn_lease_table *t, struct shadow *sh, int64_t now,
                      uint64_t *last_token, uint64_t seed)
{
    static const char *const names[WALK_NAMES] = {"n0", "n1", "n2", "n3"};
    size_t k = rnd() % WALK_NAMES;
    struct shadow *s = &sh[k];
    struct tn_lease_entry *l = NULL;
    uint8_t secret[TN_SECRET_BYTES];
    for (size_t i = 0; i < sizeof(secret); i++)
        secret[i] = (uint8_t)rnd();
    unsigned op = (unsigned)(rnd() % 4);
    if (op == 0) {
        const char *owner = walk_owners[rnd() % 3];
        const char *rid = walk_rids[rnd() % 3];
        struct tn_acquire_req r =
            acq(names[k], owner, (int64_t)(1 + rnd() % 50), secret);
        r.request_id = rid;
        bool rp;
        int64_t retry;
        int rc = tn_lease_acquire(t, &r, now, &l, &rp, &retry);
        if (shadow_live(s, now)) {
            /* the same owner's retry of the live grant gets it back */
            bool retry_of_live = rid != NULL && same_or_null(rid, s->rid) &&
                                 strcmp(owner, s->owner) == 0;
            if (retry_of_live ? rc != TN_OK || !rp || l->token != s->token
                              : rc != TN_ECONFLICT)
                fail_msg("seed %llu: grant while live",
                         (unsigned long long)seed);
            return;
        }
        if (rc != TN_OK || l->token <= *last_token || l->token <= s->floor)
            fail_msg("seed %llu: token did not increase (rc %d)",
                     (unsigned long long)seed, rc);
        *last_token = l->token;
        *s = (struct shadow){.owner = owner,
                             .rid = rid,
                             .token = l->token,
                             .floor = l->token,
                             .expires_at = now + r.ttl_ms + 1,
                             .held = true};
        memcpy(s->secret, secret, sizeof(secret));
        return;
    }
    /* renew or release, with a right or a stale token and secret */
    uint64_t token = s->token - (rnd() % 3 == 0 && s->token > 0 ? 1 : 0);
    bool good_secret = rnd() % 4 != 0;
    struct tn_token_req r =
        tok(names[k], token, good_secret ? s->secret : secret);
    bool expect_ok = shadow_live(s, now) && token == s->token && good_secret;
    int rc = op == 1 ? tn_lease_renew(t, &r, now, &l)
                     : tn_lease_release(t, &r, now, &l);
    if ((rc == TN_OK) != expect_ok)
        fail_msg("seed %llu: %s returned %s, model says %s",
                 (unsigned long long)seed, op == 1 ? "renew" : "release",
                 tn_errname(rc), expect_ok ? "ok" : "refuse");
    if (rc == TN_OK && l->token != token)
        fail_msg("seed %llu: token changed", (unsigned long long)seed);
    if (rc == TN_OK && op == 1)
        s->expires_at = now + l->ttl_ms + 1;
    if (rc == TN_OK && op != 1) {
        s->held = false;
        s->rid = NULL;
    }
}

static void check_invariants(const struct tn_lease_table *t,
                             const struct shadow *sh, int64_t now,
                             uint64_t seed)
{
    static const char *const names[WALK_NAMES] = {"n0", "n1", "n2", "n3"};
    for (size_t k = 0; k < WALK_NAMES; k++) {
        const struct tn_lease_entry *l = tn_lease_find(t, names[k], 2);
        uint64_t floor = l != NULL ? l->token : 0;
        if (floor != sh[k].floor)
            fail_msg("seed %llu: floor of %s is %llu, model %llu",
                     (unsigned long long)seed, names[k],
                     (unsigned long long)floor,
                     (unsigned long long)sh[k].floor);
        if (tn_lease_is_live(l, now) != shadow_live(&sh[k], now))
            fail_msg("seed %llu: liveness of %s differs",
                     (unsigned long long)seed, names[k]);
        if (l != NULL && l->token > t->last_token)
            fail_msg("seed %llu: token above the counter",
                     (unsigned long long)seed);
        if (l != NULL &&
            (!same_or_null(sh[k].owner, l->owner_id) ||
             !same_or_null(sh[k].rid, l->request_id) || l->principal != NULL ||
             strcmp(l->name, names[k]) != 0))
            fail_msg("seed %llu: strings of %s differ from the model",
                     (unsigned long long)seed, names[k]);
    }
}

static void test_lease__random_walk_keeps_token_contract(void **state)
{
    struct fixture *f = *state;
    const char *env = getenv("TN_SEED");
    uint64_t seed = env != NULL ? strtoull(env, NULL, 10)
                                : (uint64_t)time(NULL) * 2654435761u;
    if (seed == 0)
        seed = 1;
    rng_state = seed;
    print_message("random walk seed %llu (TN_SEED to replay)\n",
                  (unsigned long long)seed);
    struct shadow sh[WALK_NAMES] = {{0}};
    uint64_t last_token = 0;
    int64_t now = 0;
    for (int i = 0; i < WALK_STEPS; i++) {
        now += (int64_t)(rnd() % 8);
        walk_step(&f->t, sh, now, &last_token, seed);
        check_invariants(&f->t, sh, now, seed);
    }
}

/* Sweep visitor: remove every entry that is not live at *now. */
static void remove_ended(struct tn_lease_entry *l, void *ctx)
{
    struct tn_lease_table *t = ((void **)ctx)[0];
    int64_t now = *(int64_t *)((void **)ctx)[1];
    if (!tn_lease_is_live(l, now))
        tn_lease_remove(t, l);
}

/* Retirement (tn_lease_remove, tn_lease_scan): churn through many unique
 * names while sweeping, also mid-rehash.  Removed names are gone, their
 * memory is reused (the slabs stop growing), live ones stay findable with
 * their strings; the absent floor covers every removed token and only
 * grows; tokens keep rising; a removed name granted again gets a token
 * above the floor. */
static void test_lease__remove_and_reuse_under_churn(void **state)
{
    struct fixture *f = *state;
    char name[300];
    int64_t now = 0;
    size_t cursor = 0;
    uint64_t floor_before = 0, last = 0;
    size_t slabs_at_half = 0;
    enum { N = 20000 };
    for (int i = 0; i < N; i++) {
        int n = snprintf(name, sizeof(name), "job:%d-", i);
        size_t len = (size_t)n + (size_t)(i % 200);
        memset(name + n, 'x', len - (size_t)n);
        name[len] = '\0';
        struct tn_acquire_req r = acq(name, "owner", 10, secret_a);
        struct tn_lease_entry *l;
        bool replayed;
        int64_t retry;
        assert_int_equal(
            tn_lease_acquire(&f->t, &r, now, &l, &replayed, &retry), TN_OK);
        assert_true(l->token > last);
        assert_true(l->token > tn_lease_floor_of_absent(&f->t));
        last = l->token;
        now++;
        void *ctx[2] = {&f->t, &now};
        (void)tn_lease_scan(&f->t, &cursor, 8, remove_ended, ctx);
        uint64_t fl = tn_lease_floor_of_absent(&f->t);
        assert_true(fl >= floor_before);
        floor_before = fl;
        if (i == N / 2) {
            slabs_at_half = 0;
            for (void **s = f->t.slabs; s != NULL; s = *s)
                slabs_at_half++;
        }
    }
    /* Only the names of the last few ms (and those the sweep has not
     * reached yet) are left. */
    assert_true(f->t.map.count < N / 4);
    assert_true(f->t.removed > N / 2);
    size_t slabs_end = 0;
    for (void **s = f->t.slabs; s != NULL; s = *s)
        slabs_end++;
    assert_true(slabs_end <= slabs_at_half + 1); /* memory is reused */
    /* Every remaining entry is findable with its strings; every removed
     * name is absent, its token below the floor. */
    size_t found = 0;
    for (int i = 0; i < N; i++) {
        int n = snprintf(name, sizeof(name), "job:%d-", i);
        size_t len = (size_t)n + (size_t)(i % 200);
        memset(name + n, 'x', len - (size_t)n);
        name[len] = '\0';
        struct tn_lease_entry *l = tn_lease_find(&f->t, name, len);
        if (l == NULL) {
            assert_true((uint64_t)i + 1 <= tn_lease_floor_of_absent(&f->t));
            continue;
        }
        found++;
        assert_string_equal(l->name, name);
        assert_string_equal(l->owner_id, "owner");
        assert_int_equal(l->token, (uint64_t)i + 1);
    }
    assert_int_equal(found, f->t.map.count);
    /* A removed name granted again: a fresh entry, a token above the
     * floor. */
    struct tn_acquire_req r = acq("job:0-", "again", 10, secret_a);
    struct tn_lease_entry *l;
    bool replayed;
    int64_t retry;
    assert_null(tn_lease_find(&f->t, "job:0-", 6));
    assert_int_equal(tn_lease_acquire(&f->t, &r, now, &l, &replayed, &retry),
                     TN_OK);
    assert_true(l->token > tn_lease_floor_of_absent(&f->t));
    assert_string_equal(l->owner_id, "again");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_lease__random_walk_keeps_token_contract, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_lease__remove_and_reuse_under_churn, setup, teardown),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
