/* SPDX-License-Identifier: MIT */
/* The store contract's PostgreSQL session cases, part one (docs/
 * SESSIONS.md): the session ops through the vtable, their events and
 * capacity; the helpers every session case uses (contract_pg_sess.h).
 * The concurrent and crash cases are in contract_pg_sess_race.c. */
#include "contract_pg_sess.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/rand.h"
#include "contract_pg.h"

/* ---- helpers ---- */

static void reset(struct call *c)
{
    tn_store_result_release(&c->res);
    memset(c, 0, sizeof(*c));
}

int s_open(struct tn_store *s, const char *owner, int64_t ttl_ms,
           struct sess *out, struct call *c)
{
    uint8_t id[TN_SESSION_ID_BYTES];
    (void)tn_rand_bytes(id, sizeof(id));
    tn_hex_encode(id, sizeof(id), out->id);
    (void)tn_rand_bytes(out->secret, sizeof(out->secret));
    struct tn_session_open_req r = {.id = out->id,
                                    .owner_id = owner,
                                    .ttl_ms = ttl_ms,
                                    .secret = out->secret};
    reset(c);
    s->ops->session_open(s, &r, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->n_done == 1 ? c->res.rc : TN_EINTERNAL;
}

static struct tn_session_req req_of(const struct sess *x)
{
    struct tn_session_req r = {.id = x->id};
    memcpy(r.secret, x->secret, TN_SECRET_BYTES);
    return r;
}

int s_renew(struct tn_store *s, const struct sess *x, int64_t ttl_ms,
            struct call *c)
{
    struct tn_session_req r = req_of(x);
    r.ttl_ms = ttl_ms;
    reset(c);
    s->ops->session_renew(s, &r, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

int s_end(struct tn_store *s, const struct sess *x, bool force, struct call *c)
{
    struct tn_session_req r = req_of(x);
    r.force = force;
    reset(c);
    s->ops->session_end(s, &r, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

int s_get(struct tn_store *s, const char *id, struct call *c)
{
    reset(c);
    s->ops->session_get(s, id, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

int s_list(struct tn_store *s, const char *prefix, const char *after,
           size_t limit, struct call *c)
{
    struct tn_list_req r = {.prefix = prefix,
                            .prefix_len = strlen(prefix),
                            .after = after,
                            .after_len = after != NULL ? strlen(after) : 0,
                            .limit = limit};
    reset(c);
    s->ops->session_list(s, &r, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

void s_start_acquire(struct tn_store *s, struct call *c, const struct sess *x,
                     const char *name, const char *owner, int64_t wait_ms)
{
    uint8_t sec[TN_SECRET_BYTES];
    (void)tn_rand_bytes(sec, sizeof(sec));
    struct tn_acquire_req r = {.name = name,
                               .name_len = strlen(name),
                               .owner_id = owner,
                               .secret = sec,
                               .session_id = x->id,
                               .session_secret = x->secret,
                               .wait_ms = wait_ms};
    reset(c);
    s->ops->acquire(s, &r, &c->res, on_done, c);
}

int s_acquire(struct tn_store *s, struct call *c, const struct sess *x,
              const char *name, const char *owner)
{
    s_start_acquire(s, c, x, name, owner, 0);
    wait_calls(c, 1);
    return c->res.rc;
}

void s_start_claim(struct tn_store *s, struct call *c, const struct sess *x,
                   const char *const *names, size_t n, const char *owner)
{
    struct tn_name_ref *refs = calloc(n, sizeof(*refs));
    uint8_t *secrets = calloc(n, TN_SECRET_BYTES);
    if (refs == NULL || secrets == NULL)
        abort();
    for (size_t i = 0; i < n; i++)
        refs[i] =
            (struct tn_name_ref){.name = names[i], .len = strlen(names[i])};
    (void)tn_rand_bytes(secrets, n * TN_SECRET_BYTES);
    struct tn_claim_req r = {.session = req_of(x),
                             .owner_id = owner,
                             .names = refs,
                             .n_names = n,
                             .secrets = secrets};
    reset(c);
    s->ops->claim(s, &r, &c->res, on_done, c);
    free(refs); /* borrowed for the call only */
    free(secrets);
}

int s_claim(struct tn_store *s, struct call *c, const struct sess *x,
            const char *const *names, size_t n, const char *owner)
{
    s_start_claim(s, c, x, names, n, owner);
    wait_calls(c, 1);
    return c->res.rc;
}

int s_unclaim(struct tn_store *s, const struct sess *x,
              const struct tn_name_token *leases, size_t n, struct call *c)
{
    struct tn_unclaim_req r = {
        .session = req_of(x), .leases = leases, .n_leases = n};
    reset(c);
    s->ops->unclaim(s, &r, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

int get_on(struct tn_store *s, const char *name, struct call *c)
{
    reset(c);
    s->ops->get(s, name, strlen(name), &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

/* ---- cases ---- */

/* Open, read, renew, list; a lease under the session lives as the session
 * says (its TTL and time left are the session's); renewing it alone is
 * refused and changes nothing; a wrong secret is forbidden; the end
 * releases every lease of it, and the session is then lost for good. */
void case_pg_sess_basics(void)
{
    struct sess x;
    struct call c = {0}, g = {0}, r = {0};
    memset(&c, 0, sizeof(c));
    CHECK_RC(s_open(E.s, nm("worker"), 60000, &x, &c), TN_OK);
    CHECK(strcmp(c.res.session.id, x.id) == 0);
    CHECK(c.res.session.expires_in_ms == 60000);
    CHECK_RC(s_acquire(E.s, &g, &x, nm("b1"), "w"), TN_OK);
    CHECK(strcmp(g.res.lease.session_id, x.id) == 0);
    CHECK(g.res.lease.ttl_ms == 60000);
    CHECK(g.res.lease.expires_in_ms > 50000);
    /* the same acquire again: the same grant (the session proves it) */
    CHECK_RC(s_acquire(E.s, &r, &x, nm("b1"), "w"), TN_OK);
    CHECK(r.res.replayed && r.res.lease.token == g.res.lease.token);
    CHECK(memcmp(r.res.lease.secret, g.res.lease.secret, TN_SECRET_BYTES) == 0);
    CHECK_RC(renew(&g, 0, &r), TN_EINVAL);
    CHECK(r.res.reason != NULL);
    CHECK_RC(get(nm("b1"), &r), TN_OK);
    CHECK(strcmp(r.res.lease.session_id, x.id) == 0);
    CHECK(r.res.lease.token == g.res.lease.token);
    CHECK_RC(s_renew(E.s, &x, 90000, &c), TN_OK);
    CHECK(c.res.session.ttl_ms == 90000 && c.res.session.n_leases == 1);
    CHECK_RC(get(nm("b1"), &r), TN_OK);
    CHECK(r.res.lease.ttl_ms == 90000 && r.res.lease.expires_in_ms > 80000);
    CHECK_RC(s_get(E.s, x.id, &c), TN_OK);
    CHECK(c.res.session.n_leases == 1);
    CHECK_RC(s_list(E.s, nm("work"), NULL, 10, &c), TN_OK);
    CHECK(c.res.n_sessions == 1 && strcmp(c.res.sessions[0].id, x.id) == 0);
    struct sess bad = x;
    bad.secret[0] ^= 1;
    CHECK_RC(s_renew(E.s, &bad, 0, &c), TN_EFORBIDDEN);
    CHECK_RC(s_end(E.s, &bad, false, &c), TN_EFORBIDDEN);
    CHECK_RC(s_acquire(E.s, &r, &bad, nm("b2"), "w"), TN_EFORBIDDEN);
    CHECK_RC(s_end(E.s, &x, false, &c), TN_OK);
    CHECK_RC(get(nm("b1"), &r), TN_ENOTFOUND);
    CHECK_RC(check(nm("b1"), g.res.lease.token, &r), TN_OK);
    CHECK(!r.res.current && r.res.floor == g.res.lease.token);
    CHECK_RC(s_renew(E.s, &x, 0, &c), TN_ELOST);
    CHECK_RC(s_get(E.s, x.id, &c), TN_ENOTFOUND);
    CHECK_RC(s_acquire(E.s, &r, &x, nm("b2"), "w"), TN_ELOST);
    CHECK(r.res.reason != NULL);
    /* released, not expired: no lock delay for the next holder */
    CHECK_RC(acquire(&r, nm("b1"), "next", 5000, NULL, 0), TN_OK);
    CHECK(r.res.lease.token > g.res.lease.token);
}

/* Claims: every name decided on its own (granted, held by another, in
 * lock delay), idempotent for the session's own names; a batch release
 * releases this session's leases with the right token and answers the
 * others lost; releasing one lease alone keeps the session. */
void case_pg_sess_claims(void)
{
    struct sess x;
    struct call c = {0}, h = {0}, d = {0};
    CHECK_RC(s_open(E.s, nm("claimer"), 60000, &x, &c), TN_OK);
    CHECK_RC(acquire(&h, nm("c-held"), "other", 60000, NULL, 0), TN_OK);
    CHECK_RC(acquire(&d, nm("c-delay"), "other", 100, NULL, 60000), TN_OK);
    run_for(200); /* c-delay ran out: in lock delay */
    const char *names[4] = {nm("c-1"), nm("c-2"), nm("c-held"), nm("c-delay")};
    CHECK_RC(s_claim(E.s, &c, &x, names, 4, NULL), TN_OK);
    CHECK(c.res.n_claims == 4);
    CHECK(c.res.claims[0].outcome == TN_CLAIM_GRANTED);
    CHECK(c.res.claims[1].outcome == TN_CLAIM_GRANTED);
    CHECK(c.res.claims[1].token > c.res.claims[0].token);
    CHECK(c.res.claims[2].outcome == TN_CLAIM_HELD);
    CHECK(strcmp(c.res.claims[2].holder, "other") == 0);
    CHECK(c.res.claims[2].token == h.res.lease.token);
    CHECK(c.res.claims[3].outcome == TN_CLAIM_LOCK_DELAY);
    CHECK(c.res.claims[3].retry_after_ms > 50000);
    CHECK(c.res.session.expires_in_ms > 50000);
    struct tn_claim_item first = c.res.claims[0];
    struct call again = {0};
    CHECK_RC(s_claim(E.s, &again, &x, names, 2, NULL), TN_OK);
    CHECK(again.res.claims[0].outcome == TN_CLAIM_GRANTED);
    CHECK(again.res.claims[0].token == first.token);
    CHECK(memcmp(again.res.claims[0].secret, first.secret, TN_SECRET_BYTES) ==
          0);
    CHECK_RC(s_get(E.s, x.id, &h), TN_OK);
    CHECK(h.res.session.n_leases == 2);
    /* c-1 alone, by its lease secret: the session goes on */
    CHECK_RC(token_op(false, names[0], first.token, first.secret, 0, false, &h),
             TN_OK);
    struct tn_name_token rel[2] = {
        {.name = names[1],
         .len = strlen(names[1]),
         .token = again.res.claims[1].token},
        {.name = names[0], .len = strlen(names[0]), .token = first.token}};
    CHECK_RC(s_unclaim(E.s, &x, rel, 2, &h), TN_OK);
    CHECK(h.res.n_claims == 2);
    CHECK(h.res.claims[0].outcome == TN_CLAIM_RELEASED);
    CHECK(h.res.claims[1].outcome == TN_CLAIM_LOST);
    CHECK_RC(s_get(E.s, x.id, &h), TN_OK);
    CHECK(h.res.session.n_leases == 0);
    CHECK_RC(get(names[1], &h), TN_ENOTFOUND);
    CHECK_RC(s_end(E.s, &x, false, &h), TN_OK);
    tn_store_result_release(&again.res);
    tn_store_result_release(&c.res);
}

/* ---- events ---- */

#define SEV_MAX 64

/* Session events of this case's owners, and lease events of its names
 * (those that start with SEV.prefix: other cases' leases expire
 * meanwhile). */
static struct {
    struct tn_event ev[SEV_MAX]; /* in order */
    size_t n;                    /* used */
    char prefix[64];             /* of the owners and names recorded */
} SEV;

static void collect_sess(void *ctx, const struct tn_event *ev)
{
    (void)ctx;
    size_t len = strlen(SEV.prefix);
    bool mine = strncmp(ev->owner_id, SEV.prefix, len) == 0 ||
                strncmp(ev->name, SEV.prefix, len) == 0;
    if (mine && SEV.n < SEV_MAX)
        SEV.ev[SEV.n++] = *ev;
}

/* Run the loop until n events are in, or ms pass. */
static bool await_sev(size_t n, int64_t ms)
{
    int64_t until = tn_clock_now_ms() + ms;
    while (SEV.n < n && tn_clock_now_ms() < until)
        run_for(10);
    return SEV.n >= n;
}

/* session_opened, then the leases' acquired; at a forced end,
 * session_ended (revoked) first, then each lease's revoked event; at an
 * expiry, session_ended (expired) and then each lease's expired event, by
 * the sweep. */
void case_pg_sess_events(void)
{
    struct tn_store_config cfg = base_config();
    cfg.on_event = collect_sess;
    struct tn_store *s = NULL;
    CHECK_RC(open_url(E.url, &cfg, &s), TN_OK);
    bool ready = wait_ready(s, 15000);
    struct sess x, y;
    struct call c = {0}, g = {0};
    memset(&SEV, 0, sizeof(SEV));
    (void)snprintf(SEV.prefix, sizeof(SEV.prefix), "%s", nm("ev-"));
    int rc = ready ? s_open(s, nm("ev-worker"), 60000, &x, &c) : TN_EUNAVAIL;
    if (rc == TN_OK)
        rc = s_acquire(s, &g, &x, nm("ev-1"), "w");
    if (rc == TN_OK)
        rc = s_end(s, &x, true, &c);
    bool got = rc == TN_OK && await_sev(4, 5000);
    struct tn_event e1[4];
    memcpy(e1, SEV.ev, sizeof(e1));
    SEV.n = 0;
    if (got)
        rc = s_open(s, nm("ev-short"), 300, &y, &c);
    if (got && rc == TN_OK)
        rc = s_acquire(s, &g, &y, nm("ev-2"), "w");
    bool got2 = got && rc == TN_OK && await_sev(4, 5000);
    s->ops->close(s);
    CHECK(ready);
    CHECK_RC(rc, TN_OK);
    CHECK(got && got2);
    CHECK(e1[0].type == TN_EVENT_SESSION_OPENED);
    CHECK(strcmp(e1[0].session_id, x.id) == 0);
    CHECK(strcmp(e1[0].owner_id, nm("ev-worker")) == 0);
    CHECK(e1[1].type == TN_EVENT_ACQUIRED);
    CHECK(e1[2].type == TN_EVENT_SESSION_ENDED);
    CHECK(e1[2].end == TN_GRANT_REVOKED);
    CHECK(strcmp(e1[2].session_id, x.id) == 0);
    CHECK(e1[3].type == TN_EVENT_REVOKED);
    CHECK(strcmp(e1[3].name, nm("ev-1")) == 0);
    CHECK(SEV.ev[2].type == TN_EVENT_SESSION_ENDED);
    CHECK(SEV.ev[2].end == TN_GRANT_EXPIRED);
    CHECK(strcmp(SEV.ev[2].session_id, y.id) == 0);
    CHECK(SEV.ev[3].type == TN_EVENT_EXPIRED);
    CHECK(strcmp(SEV.ev[3].name, nm("ev-2")) == 0);
}

/* --max-sessions counts the database's live sessions: a full store
 * refuses an open (TN_ECAPACITY "sessions") and opens nothing.  A claim
 * whose grants would pass --max-leases is refused whole and changes
 * nothing. */
void case_pg_sess_capacity(void)
{
    CHECK(pg_private_schema_begin("sesscap") == 0);
    struct tn_store_config cfg = base_config();
    cfg.max_sessions = 2;
    cfg.max_leases = 3;
    struct tn_store *s = NULL;
    int rc = open_url(E.url, &cfg, &s);
    bool ready = rc == TN_OK && wait_ready(s, 15000);
    struct sess x[3];
    struct call c[3] = {0}, k = {0}, g = {0};
    memset(c, 0, sizeof(c));
    for (int i = 0; i < 3 && ready; i++)
        (void)s_open(s, nm("cap"), 60000, &x[i], &c[i]);
    const char *names[4] = {nm("k1"), nm("k2"), nm("k3"), nm("k4")};
    memset(&k, 0, sizeof(k));
    memset(&g, 0, sizeof(g));
    if (ready) {
        (void)s_claim(s, &k, &x[0], names, 4, NULL);
        (void)get_on(s, names[0], &g);
    }
    if (s != NULL)
        s->ops->close(s);
    pg_private_schema_end();
    CHECK(ready);
    CHECK_RC(c[0].res.rc, TN_OK);
    CHECK_RC(c[1].res.rc, TN_OK);
    CHECK_RC(c[2].res.rc, TN_ECAPACITY);
    CHECK(c[2].res.capacity != NULL &&
          strcmp(c[2].res.capacity, "sessions") == 0);
    CHECK_RC(k.res.rc, TN_ECAPACITY);
    CHECK(strcmp(k.res.capacity, "leases") == 0);
    CHECK_RC(g.res.rc, TN_ENOTFOUND);
}
