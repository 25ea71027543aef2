/* SPDX-License-Identifier: MIT */
/* Sessions (docs/SESSIONS.md) through the store vtable, on every store
 * that declares caps.sessions: open, renew, end, get and list; acquires
 * and claims under a session, idempotent claims, claims that meet held,
 * queued and delayed names, batch releases; the end of a session (DELETE,
 * force, expiry) ending every lease at once, floors kept, lock delays
 * after an expiry only, events in order; the principal binding; waits
 * under a session; one write per renew; capacity.  Restarts and crashes
 * are in contract_sessions_durable.c. */
#include "contract_sessions.h"

#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/rand.h"

/* ---- requests ---- */

const char *nm_in(char *buf, size_t cap, const char *suffix)
{
    (void)snprintf(buf, cap, "%s%s", E.prefix, suffix);
    return buf;
}

bool sessions_here(const char *case_name)
{
    return has_cap(E.b->caps.sessions, case_name, "sessions");
}

int sess_open(struct sess *s, const char *owner, const char *principal,
              int64_t ttl_ms, struct call *c)
{
    uint8_t raw[TN_SESSION_ID_BYTES];
    (void)tn_rand_bytes(raw, sizeof(raw));
    tn_hex_encode(raw, sizeof(raw), s->id);
    (void)tn_rand_bytes(s->secret, sizeof(s->secret));
    struct tn_session_open_req r = {.id = s->id,
                                    .owner_id = owner,
                                    .principal = principal,
                                    .ttl_ms = ttl_ms,
                                    .secret = s->secret};
    memset(c, 0, sizeof(*c));
    E.s->ops->session_open(E.s, &r, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

static struct tn_session_req req_of(const struct sess *s)
{
    struct tn_session_req r = {.id = s->id};
    memcpy(r.secret, s->secret, TN_SECRET_BYTES);
    return r;
}

int sess_renew(const struct sess *s, int64_t ttl_ms, const char *principal,
               struct call *c)
{
    struct tn_session_req r = req_of(s);
    r.ttl_ms = ttl_ms;
    r.principal = principal;
    memset(c, 0, sizeof(*c));
    E.s->ops->session_renew(E.s, &r, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

int sess_end(const struct sess *s, bool force, struct call *c)
{
    struct tn_session_req r = req_of(s);
    r.force = force;
    if (force)
        memset(r.secret, 0, sizeof(r.secret));
    memset(c, 0, sizeof(*c));
    E.s->ops->session_end(E.s, &r, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

int sess_get(const char *id, struct call *c)
{
    memset(c, 0, sizeof(*c));
    E.s->ops->session_get(E.s, id, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

int sess_list(const char *prefix, const char *after, size_t limit,
              struct call *c)
{
    struct tn_list_req r = {.prefix = prefix,
                            .prefix_len = strlen(prefix),
                            .after = after,
                            .after_len = after != NULL ? strlen(after) : 0,
                            .limit = limit};
    memset(c, 0, sizeof(*c));
    E.s->ops->session_list(E.s, &r, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

void sess_start_acquire(const struct sess *s, struct call *c, const char *name,
                        const char *owner, const char *rid, int64_t wait_ms,
                        int64_t delay_ms)
{
    static uint8_t secret[TN_SECRET_BYTES]; /* borrowed for the call only */
    (void)tn_rand_bytes(secret, sizeof(secret));
    struct tn_acquire_req r = {.name = name,
                               .name_len = strlen(name),
                               .owner_id = owner,
                               .request_id = rid,
                               .lock_delay_ms = delay_ms,
                               .secret = secret,
                               .session_id = s->id,
                               .session_secret = s->secret,
                               .wait_ms = wait_ms};
    memset(c, 0, sizeof(*c));
    E.s->ops->acquire(E.s, &r, &c->res, on_done, c);
}

int sess_acquire(const struct sess *s, struct call *c, const char *name,
                 const char *owner, const char *rid, int64_t delay_ms)
{
    sess_start_acquire(s, c, name, owner, rid, 0, delay_ms);
    wait_calls(c, 1);
    return c->n_done == 1 ? c->res.rc : TN_EINTERNAL;
}

int sess_claim(const struct sess *s, const char *const *names, size_t n,
               const char *owner, int64_t delay_ms, struct call *c)
{
    struct tn_name_ref *refs = tn_calloc(n, sizeof(*refs));
    uint8_t *secrets = tn_calloc(n, TN_SECRET_BYTES);
    memset(c, 0, sizeof(*c));
    if (refs == NULL || secrets == NULL) {
        tn_free(refs);
        tn_free(secrets);
        return TN_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        refs[i] = (struct tn_name_ref){names[i], strlen(names[i])};
    (void)tn_rand_bytes(secrets, n * TN_SECRET_BYTES);
    struct tn_claim_req r = {.session = req_of(s),
                             .owner_id = owner,
                             .lock_delay_ms = delay_ms,
                             .names = refs,
                             .n_names = n,
                             .secrets = secrets};
    E.s->ops->claim(E.s, &r, &c->res, on_done, c);
    wait_calls(c, 1);
    tn_free(refs);
    tn_free(secrets);
    return c->res.rc;
}

int sess_unclaim(const struct sess *s, const char *const *names,
                 const uint64_t *tokens, size_t n, struct call *c)
{
    struct tn_name_token *v = tn_calloc(n, sizeof(*v));
    memset(c, 0, sizeof(*c));
    if (v == NULL)
        return TN_ENOMEM;
    for (size_t i = 0; i < n; i++)
        v[i] = (struct tn_name_token){names[i], strlen(names[i]), tokens[i]};
    struct tn_unclaim_req r = {
        .session = req_of(s), .leases = v, .n_leases = n};
    E.s->ops->unclaim(E.s, &r, &c->res, on_done, c);
    wait_calls(c, 1);
    tn_free(v);
    return c->res.rc;
}

int sess_claim_many(const struct sess *s, const char *prefix, size_t count)
{
    enum { BATCH = 1000 };
    static char buf[BATCH][64];
    static const char *names[BATCH];
    for (size_t at = 0; at < count; at += BATCH) {
        size_t n = count - at < BATCH ? count - at : BATCH;
        for (size_t i = 0; i < n; i++) {
            (void)snprintf(buf[i], sizeof(buf[i]), "%s-%zu", prefix, at + i);
            names[i] = buf[i];
        }
        struct call c;
        int rc = sess_claim(s, names, n, NULL, 0, &c);
        bool ok = rc == TN_OK && c.res.n_claims == n;
        for (size_t i = 0; ok && i < n; i++)
            ok = c.res.claims[i].outcome == TN_CLAIM_GRANTED;
        tn_store_result_release(&c.res);
        if (!ok) {
            fprintf(stderr, "claim of %s-%zu..: %s\n", prefix, at,
                    tn_errname(rc));
            return -1;
        }
    }
    return 0;
}

/* ---- the cases ---- */

void case_session_open_renew_get(void)
{
    struct sess s;
    struct call c;
    if (!sessions_here("session_open_renew_get"))
        return;
    CHECK_RC(sess_open(&s, nm("org/a"), NULL, 3000, &c), TN_OK);
    CHECK(strcmp(c.res.session.id, s.id) == 0);
    CHECK(strcmp(c.res.session.owner_id, nm("org/a")) == 0);
    CHECK(c.res.session.ttl_ms == 3000);
    CHECK(c.res.session.expires_in_ms > 2000 &&
          c.res.session.expires_in_ms <= 3000);
    CHECK(memcmp(c.res.session.secret, s.secret, TN_SECRET_BYTES) == 0);
    CHECK_RC(sess_get(s.id, &c), TN_OK);
    static const uint8_t zero[TN_SECRET_BYTES];
    CHECK(memcmp(c.res.session.secret, zero, TN_SECRET_BYTES) == 0);
    CHECK(c.res.session.n_leases == 0 && c.res.session.ttl_ms == 3000);
    CHECK_RC(sess_renew(&s, 6000, NULL, &c), TN_OK);
    CHECK(c.res.session.ttl_ms == 6000 && c.res.session.expires_in_ms > 5000);
    CHECK_RC(sess_renew(&s, 0, NULL, &c), TN_OK); /* keeps the TTL */
    CHECK(c.res.session.ttl_ms == 6000);
    struct sess bad = s;
    bad.secret[5] ^= 1;
    CHECK_RC(sess_renew(&bad, 0, NULL, &c), TN_EFORBIDDEN);
    CHECK_RC(sess_end(&bad, false, &c), TN_EFORBIDDEN);
    memcpy(bad.id, "0123456789abcdef0123456789abcdef", TN_SESSION_ID_HEX);
    CHECK_RC(sess_renew(&bad, 0, NULL, &c), TN_ELOST);
    CHECK(c.res.reason != NULL);
    CHECK_RC(sess_get(bad.id, &c), TN_ENOTFOUND);
    CHECK_RC(sess_get("not-an-id", &c), TN_ENOTFOUND);
    CHECK_RC(sess_end(&s, false, &c), TN_OK);
    CHECK_RC(sess_get(s.id, &c), TN_ENOTFOUND);
    CHECK_RC(sess_renew(&s, 0, NULL, &c), TN_ELOST); /* never revived */
    CHECK_RC(sess_end(&s, false, &c), TN_ELOST);
}

void case_session_acquire(void)
{
    struct sess s;
    struct call a, c;
    if (!sessions_here("session_acquire"))
        return;
    NM(n, "s-acq");
    CHECK_RC(sess_open(&s, nm("acq"), NULL, 4000, &c), TN_OK);
    CHECK_RC(sess_acquire(&s, &a, n, "w1", NULL, 0), TN_OK);
    CHECK(!a.res.replayed && a.res.lease.token > 0);
    CHECK(strcmp(a.res.lease.session_id, s.id) == 0);
    CHECK(a.res.lease.ttl_ms == 4000);
    CHECK(a.res.lease.expires_in_ms > 3000 &&
          a.res.lease.expires_in_ms <= 4000);
    CHECK_RC(get(n, &c), TN_OK);
    CHECK(strcmp(c.res.lease.session_id, s.id) == 0);
    CHECK(strcmp(c.res.lease.owner_id, "w1") == 0);
    CHECK_RC(check(n, a.res.lease.token, &c), TN_OK);
    CHECK(c.res.current && c.res.floor == a.res.lease.token);
    CHECK_RC(sess_get(s.id, &c), TN_OK);
    CHECK(c.res.session.n_leases == 1);
    /* Renewed only through its session; released alone it leaves it. */
    CHECK_RC(renew(&a, 0, &c), TN_EINVAL);
    CHECK(c.res.reason != NULL);
    CHECK_RC(acquire(&c, n, "other", 5000, NULL, 0), TN_ECONFLICT);
    CHECK(strcmp(c.res.lease.owner_id, "w1") == 0);
    CHECK_RC(release(&a, &c), TN_OK);
    CHECK_RC(sess_get(s.id, &c), TN_OK);
    CHECK(c.res.session.n_leases == 0 && c.res.session.expires_in_ms > 0);
    CHECK_RC(get(n, &c), TN_ENOTFOUND);
    /* A wrong secret, an unknown or ended session: nothing granted. */
    struct sess bad = s;
    bad.secret[0] ^= 0x80;
    CHECK_RC(sess_acquire(&bad, &c, n, "w1", NULL, 0), TN_EFORBIDDEN);
    CHECK_RC(get(n, &c), TN_ENOTFOUND);
    CHECK_RC(sess_end(&s, false, &c), TN_OK);
    CHECK_RC(sess_acquire(&s, &c, n, "w1", NULL, 0), TN_ELOST);
    CHECK(c.res.reason != NULL);
    CHECK_RC(get(n, &c), TN_ENOTFOUND);
}

/* A lost answer to a claim: the same claim again gets the same grants. */
void case_session_idempotent_claims(void)
{
    struct sess s;
    struct call a, b, c;
    if (!sessions_here("session_idempotent_claims"))
        return;
    NM(n1, "idem-1");
    NM(n2, "idem-2");
    const char *names[] = {n1, n2};
    CHECK_RC(sess_open(&s, nm("idem"), NULL, 5000, &c), TN_OK);
    CHECK_RC(sess_acquire(&s, &a, names[0], "w", NULL, 0), TN_OK);
    CHECK_RC(sess_acquire(&s, &b, names[0], "w", NULL, 0), TN_OK);
    CHECK(b.res.replayed && b.res.lease.token == a.res.lease.token);
    CHECK(memcmp(b.res.lease.secret, a.res.lease.secret, TN_SECRET_BYTES) == 0);
    CHECK_RC(sess_claim(&s, names, 2, "w", 0, &c), TN_OK);
    CHECK(c.res.n_claims == 2);
    CHECK(c.res.claims[0].outcome == TN_CLAIM_GRANTED &&
          c.res.claims[0].token == a.res.lease.token &&
          memcmp(c.res.claims[0].secret, a.res.lease.secret, TN_SECRET_BYTES) ==
              0);
    CHECK(c.res.claims[1].outcome == TN_CLAIM_GRANTED);
    uint64_t t2 = c.res.claims[1].token;
    tn_store_result_release(&c.res);
    CHECK_RC(sess_claim(&s, names, 2, "w", 0, &c), TN_OK);
    CHECK(c.res.claims[0].token == a.res.lease.token &&
          c.res.claims[1].token == t2);
    tn_store_result_release(&c.res);
    /* Another owner of the same session is another holder. */
    CHECK_RC(sess_acquire(&s, &c, names[1], "v", NULL, 0), TN_ECONFLICT);
    CHECK_RC(sess_claim(&s, names, 1, "v", 0, &c), TN_OK);
    CHECK(c.res.claims[0].outcome == TN_CLAIM_HELD &&
          strcmp(c.res.claims[0].holder, "w") == 0);
    tn_store_result_release(&c.res);
    CHECK_RC(sess_end(&s, false, &c), TN_OK);
}

/* Every name decided on its own, answered in request order. */
void case_session_claim_batch(void)
{
    struct sess s;
    struct call h, d, c;
    if (!sessions_here("session_claim_batch"))
        return;
    NM(n0, "cb-free");
    NM(n1, "cb-held");
    NM(n2, "cb-delay");
    NM(n3, "cb-free2");
    const char *names[] = {n0, n1, n2, n3};
    CHECK_RC(acquire(&h, names[1], "other", 5000, NULL, 0), TN_OK);
    CHECK_RC(acquire(&d, names[2], "gone", 50, NULL, 5000), TN_OK);
    run_for(100); /* names[2] ran out: in its lock delay */
    CHECK_RC(sess_open(&s, nm("cb"), NULL, 5000, &c), TN_OK);
    CHECK_RC(sess_claim(&s, names, 4, NULL, 0, &c), TN_OK);
    const struct tn_claim_item *it = c.res.claims;
    CHECK(c.res.n_claims == 4);
    CHECK(c.res.session.expires_in_ms > 4000);
    for (size_t i = 0; i < 4; i++)
        CHECK(it[i].index == i);
    CHECK(it[0].outcome == TN_CLAIM_GRANTED && it[3].outcome == it[0].outcome);
    CHECK(it[3].token > it[0].token && it[0].token > d.res.lease.token);
    CHECK(it[1].outcome == TN_CLAIM_HELD && it[1].token == h.res.lease.token &&
          strcmp(it[1].holder, "other") == 0 && it[1].expires_in_ms > 0);
    CHECK(it[2].outcome == TN_CLAIM_LOCK_DELAY && it[2].retry_after_ms > 0 &&
          it[2].retry_after_ms <= 5000);
    uint64_t t0 = it[0].token;
    uint8_t s0[TN_SECRET_BYTES];
    memcpy(s0, it[0].secret, sizeof(s0));
    tn_store_result_release(&c.res);
    /* A claimed lease is an ordinary lease under the session. */
    CHECK_RC(get(names[0], &c), TN_OK);
    CHECK(c.res.lease.token == t0 && strcmp(c.res.lease.session_id, s.id) == 0);
    CHECK(strcmp(c.res.lease.owner_id, nm("cb")) == 0); /* the session's */
    CHECK_RC(token_op(false, names[0], t0, s0, 0, false, &c), TN_OK);
    CHECK_RC(sess_get(s.id, &c), TN_OK);
    CHECK(c.res.session.n_leases == 1);
    CHECK_RC(release(&h, &c), TN_OK);
    CHECK_RC(sess_end(&s, false, &c), TN_OK);
}

/* A name with queued waiters is never granted to a claim: a batch never
 * jumps a queue. */
void case_session_claim_queued(void)
{
    struct sess s;
    struct call h, w, c;
    if (!sessions_here("session_claim_queued") ||
        !has_cap(E.b->caps.waits, "session_claim_queued", "waits"))
        return;
    NM(n, "cq");
    CHECK_RC(acquire(&h, n, "holder", 80, NULL, 300), TN_OK);
    start_wait(&w, n, "waiter", 8000, false);
    run_for(150); /* the holder ran out: lock delay, the waiter in line */
    CHECK(!w.done);
    CHECK_RC(sess_open(&s, nm("cq"), NULL, 5000, &c), TN_OK);
    const char *names[] = {n};
    CHECK_RC(sess_claim(&s, names, 1, NULL, 0, &c), TN_OK);
    CHECK(c.res.claims[0].outcome != TN_CLAIM_GRANTED);
    tn_store_result_release(&c.res);
    wait_calls(&w, 1); /* the waiter's turn comes after the delay */
    CHECK_RC(w.res.rc, TN_OK);
    CHECK_RC(sess_claim(&s, names, 1, NULL, 0, &c), TN_OK);
    CHECK(c.res.claims[0].outcome == TN_CLAIM_HELD &&
          strcmp(c.res.claims[0].holder, "waiter") == 0);
    tn_store_result_release(&c.res);
    CHECK_RC(release(&w, &c), TN_OK);
    CHECK_RC(sess_end(&s, false, &c), TN_OK);
}

/* A batch release: this session's live leases with their tokens go; any
 * other is lost, and changes nothing. */
void case_session_unclaim(void)
{
    struct sess s, t;
    struct call c, g, o;
    if (!sessions_here("session_unclaim"))
        return;
    NM(n0, "uc-a");
    NM(n1, "uc-b");
    NM(n2, "uc-c");
    NM(n3, "uc-x");
    NM(n4, "uc-o");
    const char *names[] = {n0, n1, n2, n3, n4};
    CHECK_RC(sess_open(&s, nm("uc"), NULL, 5000, &c), TN_OK);
    CHECK_RC(sess_open(&t, nm("uc2"), NULL, 5000, &o), TN_OK);
    CHECK_RC(sess_claim(&s, names, 3, NULL, 0, &g), TN_OK);
    CHECK_RC(sess_acquire(&t, &o, names[4], "w", NULL, 0), TN_OK);
    uint64_t tok[5] = {g.res.claims[0].token, g.res.claims[1].token + 1000,
                       g.res.claims[2].token, 1, o.res.lease.token};
    CHECK_RC(
        token_op(false, names[0], tok[0], g.res.claims[0].secret, 0, false, &c),
        TN_OK); /* released alone first */
    CHECK_RC(sess_unclaim(&s, names, tok, 5, &c), TN_OK);
    static const enum tn_claim_outcome want[] = {TN_CLAIM_LOST, TN_CLAIM_LOST,
                                                 TN_CLAIM_RELEASED,
                                                 TN_CLAIM_LOST, TN_CLAIM_LOST};
    CHECK(c.res.n_claims == 5);
    for (size_t i = 0; i < 5; i++)
        CHECK(c.res.claims[i].outcome == want[i] &&
              c.res.claims[i].token == tok[i] && c.res.claims[i].index == i);
    tn_store_result_release(&c.res);
    CHECK_RC(get(names[1], &c), TN_OK); /* a wrong token touches nothing */
    CHECK_RC(get(names[2], &c), TN_ENOTFOUND);
    CHECK_RC(check(names[2], tok[2], &c), TN_OK);
    CHECK(!c.res.current && c.res.floor == tok[2]);
    CHECK_RC(get(names[4], &c), TN_OK); /* another session's */
    CHECK_RC(sess_get(s.id, &c), TN_OK);
    CHECK(c.res.session.n_leases == 1);
    tn_store_result_release(&g.res);
    CHECK_RC(sess_end(&s, false, &c), TN_OK);
    CHECK_RC(sess_end(&t, false, &c), TN_OK);
}

/* Live sessions by owner prefix, in id order, in pages. */
void case_session_list(void)
{
    struct sess s[4];
    struct call c;
    if (!sessions_here("session_list"))
        return;
    NM(o0, "ls/g/1");
    NM(o1, "ls/g/2");
    NM(o2, "ls/h/1");
    NM(o3, "ls/g/3");
    const char *owners[] = {o0, o1, o2, o3};
    for (int i = 0; i < 4; i++)
        CHECK_RC(sess_open(&s[i], owners[i], NULL, 5000, &c), TN_OK);
    CHECK_RC(sess_end(&s[3], false, &c), TN_OK); /* not listed */
    /* The two live ones of the g/ group, in id order. */
    bool swap = strcmp(s[0].id, s[1].id) > 0;
    const char *ids[2] = {swap ? s[1].id : s[0].id, swap ? s[0].id : s[1].id};
    CHECK_RC(sess_list(nm("ls/g/"), NULL, 10, &c), TN_OK);
    CHECK(c.res.n_sessions == 2 && !c.res.more);
    CHECK(strcmp(c.res.sessions[0].id, ids[0]) == 0 &&
          strcmp(c.res.sessions[1].id, ids[1]) == 0);
    CHECK(c.res.sessions[0].expires_in_ms > 0);
    tn_store_result_release(&c.res);
    CHECK_RC(sess_list(nm("ls/g/"), NULL, 1, &c), TN_OK);
    CHECK(c.res.n_sessions == 1 && c.res.more);
    CHECK(strcmp(c.res.sessions[0].id, ids[0]) == 0);
    tn_store_result_release(&c.res);
    CHECK_RC(sess_list(nm("ls/g/"), ids[0], 10, &c), TN_OK);
    CHECK(c.res.n_sessions == 1 && !c.res.more);
    CHECK(strcmp(c.res.sessions[0].id, ids[1]) == 0);
    tn_store_result_release(&c.res);
    CHECK_RC(sess_list(nm("ls/"), NULL, 10, &c), TN_OK);
    CHECK(c.res.n_sessions == 3);
    tn_store_result_release(&c.res);
    for (int i = 0; i < 3; i++)
        CHECK_RC(sess_end(&s[i], false, &c), TN_OK);
}

/* With auth on, a session is bound to the principal that opened it. */
void case_session_principal(void)
{
    struct sess s;
    struct call a, c;
    if (!sessions_here("session_principal") ||
        !has_cap(E.b->caps.binds_principal, "session_principal",
                 "binds_principal"))
        return;
    CHECK_RC(sess_open(&s, nm("who"), "alice", 5000, &c), TN_OK);
    CHECK_RC(sess_renew(&s, 0, "bob", &c), TN_EFORBIDDEN);
    CHECK_RC(sess_renew(&s, 0, "alice", &c), TN_OK);
    CHECK_RC(sess_renew(&s, 0, NULL, &c), TN_OK); /* admin, or auth off */
    NM(n, "who-lease");
    uint8_t sec[TN_SECRET_BYTES];
    (void)tn_rand_bytes(sec, sizeof(sec));
    struct tn_acquire_req r = {.name = n,
                               .name_len = strlen(n),
                               .owner_id = "w",
                               .principal = "bob",
                               .secret = sec,
                               .session_id = s.id,
                               .session_secret = s.secret};
    memset(&a, 0, sizeof(a));
    E.s->ops->acquire(E.s, &r, &a.res, on_done, &a);
    wait_calls(&a, 1);
    CHECK_RC(a.res.rc, TN_EFORBIDDEN);
    r.principal = "alice";
    memset(&a, 0, sizeof(a));
    E.s->ops->acquire(E.s, &r, &a.res, on_done, &a);
    wait_calls(&a, 1);
    CHECK_RC(a.res.rc, TN_OK);
    struct tn_session_req e = {.id = s.id, .principal = "bob"};
    memcpy(e.secret, s.secret, TN_SECRET_BYTES);
    memset(&c, 0, sizeof(c));
    E.s->ops->session_end(E.s, &e, &c.res, on_done, &c);
    wait_calls(&c, 1);
    CHECK_RC(c.res.rc, TN_EFORBIDDEN);
    CHECK_RC(get(n, &c), TN_OK); /* untouched */
    CHECK_RC(sess_end(&s, false, &c), TN_OK);
}

/* A waiting acquire under a session is granted under it when the name is
 * free; one whose session ended meanwhile gets nothing (lost). */
void case_session_wait(void)
{
    struct sess s, t;
    struct call h, w, v, c;
    if (!sessions_here("session_wait") ||
        !has_cap(E.b->caps.waits, "session_wait", "waits"))
        return;
    NM(n, "sw");
    CHECK_RC(sess_open(&s, nm("sw1"), NULL, 5000, &c), TN_OK);
    CHECK_RC(sess_open(&t, nm("sw2"), NULL, 5000, &c), TN_OK);
    CHECK_RC(acquire(&h, n, "holder", 5000, NULL, 0), TN_OK);
    sess_start_acquire(&s, &w, n, "w", NULL, 8000, 0);
    sess_start_acquire(&t, &v, n, "v", NULL, 8000, 0);
    run_for(50);
    CHECK(!w.done && !v.done);
    CHECK_RC(sess_end(&t, false, &c), TN_OK); /* v's session ends */
    CHECK_RC(release(&h, &c), TN_OK);
    wait_calls(&w, 1);
    CHECK_RC(w.res.rc, TN_OK);
    CHECK(strcmp(w.res.lease.session_id, s.id) == 0);
    CHECK(w.res.lease.token > h.res.lease.token);
    CHECK_RC(sess_end(&s, false, &c), TN_OK); /* w's lease ends with it */
    wait_calls(&v, 1);
    CHECK_RC(v.res.rc, TN_ELOST);
    CHECK_RC(get(n, &c), TN_ENOTFOUND);
}
