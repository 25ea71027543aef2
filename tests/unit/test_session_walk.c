/* SPDX-License-Identifier: MIT */
/* Sessions in the lease table under a seeded random walk against a shadow
 * model (TN_SEED picks the seed; the failure message prints it): sessions
 * opened, renewed, ended (expiry, release, revoke), leases acquired under
 * them and alone, released, renewed, settled, sessions freed.  After every
 * step: a lease of a session is live iff it is held and its session is
 * live; every session's list is whole and counts its leases; tokens only
 * grow; a session renew changes no token; ending a session ends all of
 * its leases at that instant.  The clock is the test's. */
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
#include "lease/session.h"
#include "lease_fixture.h"
#include "tn_test.h"

#include <cmocka.h>

#define SLOTS 3       /* sessions open at once, at most */
#define NAMES 6       /* names the walk plays with */
#define MAX_GEN 40000 /* sessions opened over the walk, at most */
#define STEPS 100000

/* A session as the model sees it. */
struct msess {
    char id[TN_SESSION_ID_LEN + 1];
    int64_t expires_at; /* while not ended */
    int end;            /* enum tn_session_end; LIVE until ended */
    int64_t ended_at;   /* once ended (an expiry: expires_at) */
    bool freed;         /* the walk freed it from the table */
};

/* A name as the model sees it. */
struct mname {
    uint64_t token;     /* of the last grant; 0 none */
    bool held;          /* granted, not released alone */
    int sess;           /* index into W.s of its session, or -1 */
    int64_t expires_at; /* without a session */
    int64_t delay;      /* lock delay of the last grant */
    const char *owner;  /* of the last grant */
    uint8_t secret[TN_SECRET_BYTES];
};

static struct {
    uint64_t rng;
    uint64_t seed;
    int64_t now;
    struct msess s[MAX_GEN];
    int n_sess;
    int slot[SLOTS];   /* index into s of each slot's newest session, or -1 */
    size_t unfreed;    /* sessions opened and not freed */
    int open[MAX_GEN]; /* their indices, unfreed of them */
    size_t settled;    /* leases the walk settled */
    size_t ended;      /* sessions it ended */
    struct mname n[NAMES];
    uint64_t last_token;
} W;

static const char *const names[NAMES] = {"n0", "n1", "n2", "n3", "n4", "n5"};
static const char *const owners[] = {"w1", "w2"};

static uint64_t rnd(void)
{
    W.rng ^= W.rng << 13;
    W.rng ^= W.rng >> 7;
    W.rng ^= W.rng << 17;
    return W.rng;
}

#define FAIL(...)                                                              \
    fail_msg("seed %llu step at %lld: %s", (unsigned long long)W.seed,         \
             (long long)W.now, (snprintf(msg, sizeof(msg), __VA_ARGS__), msg))
static char msg[256];

/* Has model session k ended by now (recorded, or run out)?  Sets the end
 * as the state machine will see it. */
static bool m_live(int k)
{
    struct msess *m = &W.s[k];
    if (m->end == TN_SESSION_LIVE && W.now >= m->expires_at) {
        m->end = TN_SESSION_EXPIRED;
        m->ended_at = m->expires_at;
    }
    return m->end == TN_SESSION_LIVE;
}

static bool name_live(const struct mname *x)
{
    if (!x->held)
        return false;
    return x->sess >= 0 ? m_live(x->sess) : W.now < x->expires_at;
}

/* The model's view of a name whose session ended: settled. */
static void m_settle(struct mname *x)
{
    if (x->sess < 0 || m_live(x->sess))
        return;
    const struct msess *m = &W.s[x->sess];
    x->expires_at = m->ended_at;
    x->held = m->end == TN_SESSION_EXPIRED;
    x->sess = -1;
}

static void op_open(struct tn_lease_table *t, int slot)
{
    if (W.slot[slot] >= 0 && m_live(W.slot[slot]))
        return;
    if (W.n_sess == MAX_GEN)
        return;
    int k = W.n_sess++;
    struct msess *m = &W.s[k];
    (void)snprintf(m->id, sizeof(m->id), "%032x", k);
    int64_t ttl = 5 + (int64_t)(rnd() % 40);
    struct tn_session_spec r = {
        .id = m->id, .owner_id = "fleet", .ttl_ms = ttl, .secret = secret_a};
    struct tn_session *s = NULL;
    if (tn_session_open(t, &r, W.now, &s) != TN_OK)
        FAIL("open failed");
    m->expires_at = W.now + ttl + 1;
    W.slot[slot] = k;
    W.open[W.unfreed++] = k;
}

static void op_renew_session(struct tn_lease_table *t, int slot)
{
    int k = W.slot[slot];
    if (k < 0)
        return;
    bool good = rnd() % 4 != 0;
    uint64_t tokens[NAMES];
    for (int i = 0; i < NAMES; i++) {
        const struct tn_lease_entry *l = tn_lease_find(t, names[i], 2);
        tokens[i] = l != NULL ? l->token : 0;
    }
    struct tn_session *s = tn_session_find(t, W.s[k].id);
    int64_t ttl = 5 + (int64_t)(rnd() % 40);
    int rc =
        tn_session_renew(t, s, good ? secret_a : secret_b, NULL, ttl, W.now);
    int want = !m_live(k) ? TN_ELOST : good ? TN_OK : TN_EFORBIDDEN;
    if (rc != want)
        FAIL("session renew %s, model %s", tn_errname(rc), tn_errname(want));
    if (rc == TN_OK)
        W.s[k].expires_at = W.now + ttl + 1;
    for (int i = 0; i < NAMES; i++) {
        const struct tn_lease_entry *l = tn_lease_find(t, names[i], 2);
        if ((l != NULL ? l->token : 0) != tokens[i])
            FAIL("a session renew changed the token of %s", names[i]);
    }
}

static void op_end_session(struct tn_lease_table *t, int slot)
{
    int k = W.slot[slot];
    if (k < 0 || !m_live(k))
        return;
    struct tn_session *s = tn_session_find(t, W.s[k].id);
    int end = rnd() % 2 ? TN_SESSION_RELEASED : TN_SESSION_REVOKED;
    tn_session_end(t, s, (enum tn_session_end)end, W.now);
    W.s[k].end = end;
    W.s[k].ended_at = W.now;
    W.ended++;
    /* One instant: none of its leases is live any more. */
    for (const struct tn_lease_entry *l = s->leases; l != NULL;
         l = l->sess_next)
        if (tn_lease_is_live(l, W.now))
            FAIL("%s outlived its session's end", l->name);
}

/* What an acquire of x by owner under session k (-1: none) must return. */
static int m_acquire_rc(struct mname *x, int k, const char *owner)
{
    if (k >= 0 && !m_live(k))
        return TN_ELOST;
    if (name_live(x))
        return k >= 0 && x->sess == k && strcmp(x->owner, owner) == 0
                   ? 1 /* replayed */
                   : TN_ECONFLICT;
    m_settle(x);
    if (x->held && x->delay > 0 && W.now < x->expires_at + x->delay)
        return TN_ELOCKDELAY;
    return TN_OK;
}

static void op_acquire(struct tn_lease_table *t, int i, int slot)
{
    struct mname *x = &W.n[i];
    int k = slot >= 0 ? W.slot[slot] : -1;
    if (slot >= 0 && k < 0)
        return;
    const char *owner = owners[rnd() % 2];
    uint8_t sec[TN_SECRET_BYTES];
    for (size_t b = 0; b < sizeof(sec); b++)
        sec[b] = (uint8_t)rnd();
    struct tn_acquire_req r =
        acq(names[i], owner, k >= 0 ? 0 : 1 + (int64_t)(rnd() % 30), sec);
    r.lock_delay_ms = rnd() % 3 == 0 ? 15 : 0;
    r.session_id = k >= 0 ? W.s[k].id : NULL;
    r.session_secret = secret_a;
    int want = m_acquire_rc(x, k, owner);
    struct tn_lease_entry *l = NULL;
    bool rp = false;
    int64_t retry = 0;
    int rc = tn_lease_acquire(t, &r, W.now, &l, &rp, &retry);
    if (rc != (want == 1 ? TN_OK : want) || rp != (want == 1))
        FAIL("acquire %s: %s (replayed %d), model %d", names[i], tn_errname(rc),
             rp, want);
    if (want != TN_OK)
        return;
    if (l->token <= W.last_token || l->token <= x->token)
        FAIL("token did not increase");
    W.last_token = l->token;
    *x = (struct mname){.token = l->token,
                        .held = true,
                        .sess = k,
                        .expires_at = W.now + r.ttl_ms + 1,
                        .delay = r.lock_delay_ms,
                        .owner = owner};
    memcpy(x->secret, sec, sizeof(sec));
}

/* Renew (which a session's lease refuses) or release of name i. */
static void op_token(struct tn_lease_table *t, int i, bool renew)
{
    struct mname *x = &W.n[i];
    struct tn_token_req r = tok(names[i], x->token, x->secret);
    struct tn_lease_entry *l = NULL;
    int want = !name_live(x)  ? TN_ELOST
               : !renew       ? TN_OK
               : x->sess >= 0 ? TN_EINVAL
                              : TN_OK;
    int rc = renew ? tn_lease_renew(t, &r, W.now, &l)
                   : tn_lease_release(t, &r, W.now, &l);
    if (rc != want)
        FAIL("%s %s: %s, model %s", renew ? "renew" : "release", names[i],
             tn_errname(rc), tn_errname(want));
    if (rc != TN_OK)
        return;
    if (renew) {
        x->expires_at = W.now + l->ttl_ms + 1;
    } else {
        x->held = false;
        x->sess = -1;
    }
}

/* The store's part: settle a lease of a session that is not live, and
 * free a session that ended with nothing left on its list. */
static void op_settle(struct tn_lease_table *t, int i)
{
    struct tn_lease_entry *l = tn_lease_find(t, names[i], 2);
    struct mname *x = &W.n[i];
    if (l != NULL && l->session != NULL && !m_live(x->sess)) {
        (void)tn_lease_settle(t, l, W.now);
        m_settle(x);
        W.settled++;
    }
}

/* The store's part too: a session that is not live and has nothing left
 * on its list leaves the table. */
static void op_free(struct tn_lease_table *t)
{
    size_t j = 0;
    while (j < W.unfreed) {
        int k = W.open[j];
        struct tn_session *s = tn_session_find(t, W.s[k].id);
        if (m_live(k) || s->n_leases > 0) {
            j++;
            continue;
        }
        W.s[k].freed = true;
        W.open[j] = W.open[--W.unfreed];
        tn_session_free(t, s);
    }
}

/* One session of the table against the model. */
static bool check_session(struct tn_session *s, void *ctx)
{
    (void)ctx;
    long k = strtol(s->id, NULL, 16);
    if (k < 0 || k >= W.n_sess || W.s[k].freed)
        FAIL("session %s should not be in the table", s->id);
    size_t attached = 0;
    for (int i = 0; i < NAMES; i++)
        attached += W.n[i].sess == k;
    size_t n = 0;
    for (const struct tn_lease_entry *l = s->leases; l != NULL;
         l = l->sess_next, n++)
        if (l->session != s ||
            (l->sess_next != NULL && l->sess_next->sess_prev != l))
            FAIL("the list of session %ld is broken", k);
    if (n != s->n_leases || n != attached)
        FAIL("session %ld: %zu on its list, n_leases %zu, model %zu", k, n,
             s->n_leases, attached);
    if (tn_session_is_live(s, W.now) != m_live((int)k))
        FAIL("session %ld: liveness", k);
    return true;
}

static void check(struct tn_lease_table *t)
{
    for (int i = 0; i < NAMES; i++) {
        const struct tn_lease_entry *l = tn_lease_find(t, names[i], 2);
        struct mname *x = &W.n[i];
        if ((l != NULL ? l->token : 0) != x->token)
            FAIL("floor of %s", names[i]);
        if (tn_lease_is_live(l, W.now) != name_live(x))
            FAIL("liveness of %s: table %d, model %d", names[i],
                 tn_lease_is_live(l, W.now), name_live(x));
        if (l != NULL && (l->session != NULL) != (x->sess >= 0))
            FAIL("%s: on a session's list %d, model %d", names[i],
                 l->session != NULL, x->sess >= 0);
    }
    if (tn_session_count(t) != W.unfreed)
        FAIL("%zu sessions in the table, model %zu", tn_session_count(t),
             W.unfreed);
    tn_session_each(t, check_session, NULL);
}

static void step(struct tn_lease_table *t)
{
    W.now += (int64_t)(rnd() % 6);
    int slot = (int)(rnd() % SLOTS);
    int i = (int)(rnd() % NAMES);
    switch (rnd() % 9) {
    case 0:
        op_open(t, slot);
        break;
    case 1:
        op_renew_session(t, slot);
        break;
    case 2:
        if (rnd() % 4 == 0)
            op_end_session(t, slot);
        break;
    case 3:
    case 4:
        op_acquire(t, i, slot);
        break;
    case 5:
        op_acquire(t, i, -1);
        break;
    case 6:
        op_token(t, i, rnd() % 2 == 0);
        break;
    default:
        op_settle(t, i);
        break;
    }
    if (rnd() % 8 == 0)
        op_free(t);
    check(t);
}

static void test_session__random_walk_keeps_invariants(void **state)
{
    struct fixture *f = *state;
    const char *env = getenv("TN_SEED");
    W.seed = env != NULL ? strtoull(env, NULL, 10)
                         : (uint64_t)time(NULL) * 2654435761u;
    if (W.seed == 0)
        W.seed = 1;
    W.rng = W.seed;
    print_message("session walk seed %llu (TN_SEED to replay)\n",
                  (unsigned long long)W.seed);
    for (int k = 0; k < SLOTS; k++)
        W.slot[k] = -1;
    for (int i = 0; i < NAMES; i++)
        W.n[i].sess = -1;
    int n = 0;
    for (; n < STEPS && W.n_sess < MAX_GEN; n++)
        step(&f->t);
    print_message("%d steps, %d sessions opened, %zu ended, %zu leases "
                  "settled, %llu tokens\n",
                  n, W.n_sess, W.ended, W.settled,
                  (unsigned long long)W.last_token);
    /* The walk went through every kind of step. */
    assert_true(n == STEPS && W.ended > 100 && W.settled > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_session__random_walk_keeps_invariants, setup, teardown),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
