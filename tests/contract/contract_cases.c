/* SPDX-License-Identifier: MIT */
/* The store contract's shared cases: run against every backend. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/rand.h"
#include "contract.h"

void case_grant_fields(void)
{
    struct call a;
    CHECK_RC(acquire(&a, nm("grant"), "o1", 5000, NULL, 0), TN_OK);
    CHECK(!a.res.replayed);
    CHECK(a.res.lease.token > 0);
    CHECK(strcmp(a.res.lease.owner_id, "o1") == 0);
    CHECK(strcmp(a.res.lease.name, nm("grant")) == 0);
    CHECK(a.res.lease.ttl_ms == 5000);
    CHECK(a.res.lease.expires_in_ms > 4000 &&
          a.res.lease.expires_in_ms <= 5000);
}

void case_held(void)
{
    struct call a;
    struct call b;
    CHECK_RC(acquire(&a, nm("held"), "o1", 5000, NULL, 0), TN_OK);
    CHECK_RC(acquire(&b, nm("held"), "o2", 5000, NULL, 0), TN_ECONFLICT);
    CHECK(strcmp(b.res.lease.owner_id, "o1") == 0);
    CHECK(b.res.lease.token == a.res.lease.token);
    CHECK(b.res.lease.expires_in_ms > 0 && b.res.lease.expires_in_ms <= 5000);
    /* the same owner without a request id is not a replay */
    CHECK_RC(acquire(&b, nm("held"), "o1", 5000, NULL, 0), TN_ECONFLICT);
}

void case_replay(void)
{
    struct call a;
    struct call b;
    CHECK_RC(acquire(&a, nm("replay"), "o1", 5000, "rq-1", 0), TN_OK);
    CHECK_RC(acquire(&b, nm("replay"), "o1", 5000, "rq-1", 0), TN_OK);
    CHECK(b.res.replayed);
    CHECK(b.res.lease.token == a.res.lease.token);
    CHECK(memcmp(b.res.lease.secret, a.res.lease.secret, TN_SECRET_BYTES) == 0);
    CHECK_RC(acquire(&b, nm("replay"), "o2", 5000, "rq-1", 0), TN_ECONFLICT);
    CHECK_RC(acquire(&b, nm("replay"), "o1", 5000, "rq-2", 0), TN_ECONFLICT);
    /* after the grant ended, the same request id is a new acquire */
    CHECK_RC(release(&a, &b), TN_OK);
    CHECK_RC(acquire(&b, nm("replay"), "o1", 5000, "rq-1", 0), TN_OK);
    CHECK(!b.res.replayed);
    CHECK(b.res.lease.token > a.res.lease.token);
}

void case_renew(void)
{
    struct call a;
    struct call c;
    CHECK_RC(acquire(&a, nm("renew"), "o1", 5000, NULL, 0), TN_OK);
    CHECK_RC(renew(&a, 8000, &c), TN_OK);
    CHECK(c.res.lease.token == a.res.lease.token);
    CHECK(c.res.lease.ttl_ms == 8000);
    CHECK(c.res.lease.expires_in_ms > 7000);
    CHECK_RC(renew(&a, 0, &c), TN_OK); /* keeps the ttl */
    CHECK(c.res.lease.ttl_ms == 8000);
    struct call bad = a;
    bad.res.lease.secret[0] ^= 1;
    CHECK_RC(renew(&bad, 0, &c), TN_EFORBIDDEN);
    bad = a;
    bad.res.lease.token += 1000;
    CHECK_RC(renew(&bad, 0, &c), TN_ELOST);
    CHECK_RC(
        token_op(true, nm("renew-none"), 1, a.res.lease.secret, 0, false, &c),
        TN_ELOST);
}

void case_release(void)
{
    struct call a;
    struct call c;
    CHECK_RC(acquire(&a, nm("rel"), "o1", 5000, NULL, 0), TN_OK);
    struct call bad = a;
    bad.res.lease.secret[3] ^= 0x40;
    CHECK_RC(release(&bad, &c), TN_EFORBIDDEN);
    CHECK_RC(get(nm("rel"), &c), TN_OK); /* untouched */
    CHECK_RC(release(&a, &c), TN_OK);
    CHECK_RC(release(&a, &c), TN_ELOST);
    CHECK_RC(renew(&a, 0, &c), TN_ELOST);
    CHECK_RC(get(nm("rel"), &c), TN_ENOTFOUND);
    /* a late release never touches the newer grant */
    struct call b;
    CHECK_RC(acquire(&b, nm("rel"), "o2", 5000, NULL, 0), TN_OK);
    CHECK(b.res.lease.token > a.res.lease.token);
    CHECK_RC(release(&a, &c), TN_ELOST);
    CHECK_RC(get(nm("rel"), &c), TN_OK);
    CHECK(c.res.lease.token == b.res.lease.token);
    /* force releases whatever is live */
    CHECK_RC(token_op(false, nm("rel"), 0, a.res.lease.secret, 0, true, &c),
             TN_OK);
    CHECK_RC(get(nm("rel"), &c), TN_ENOTFOUND);
}

void case_check_floor(void)
{
    struct call a;
    struct call c;
    CHECK_RC(check(nm("floor"), 1, &c), TN_OK);
    CHECK(c.res.floor == 0 && !c.res.has_live && !c.res.current);
    CHECK_RC(acquire(&a, nm("floor"), "o1", 5000, NULL, 0), TN_OK);
    uint64_t t1 = a.res.lease.token;
    CHECK_RC(check(nm("floor"), t1, &c), TN_OK);
    CHECK(c.res.floor == t1 && c.res.has_live && c.res.current);
    CHECK(c.res.lease.token == t1);
    CHECK_RC(check(nm("floor"), t1 - 1, &c), TN_OK);
    CHECK(!c.res.current && c.res.has_live);
    CHECK_RC(release(&a, &c), TN_OK);
    CHECK_RC(check(nm("floor"), t1, &c), TN_OK);
    CHECK(c.res.floor == t1 && !c.res.has_live && !c.res.current);
    CHECK_RC(acquire(&a, nm("floor"), "o2", 5000, NULL, 0), TN_OK);
    CHECK_RC(check(nm("floor"), t1, &c), TN_OK);
    CHECK(c.res.floor == a.res.lease.token && c.res.floor > t1);
    CHECK(!c.res.current);
}

void case_expiry(void)
{
    struct call a;
    struct call b;
    struct call c;
    CHECK_RC(acquire(&a, nm("exp"), "o1", 60, NULL, 0), TN_OK);
    CHECK_RC(acquire(&b, nm("exp"), "o2", 60, NULL, 0), TN_ECONFLICT);
    run_for(120);
    CHECK_RC(get(nm("exp"), &c), TN_ENOTFOUND);
    CHECK_RC(renew(&a, 0, &c), TN_ELOST); /* never revived */
    CHECK_RC(check(nm("exp"), a.res.lease.token, &c), TN_OK);
    CHECK(c.res.floor == a.res.lease.token && !c.res.has_live);
    CHECK_RC(acquire(&b, nm("exp"), "o2", 5000, NULL, 0), TN_OK);
    CHECK(b.res.lease.token > a.res.lease.token);
    CHECK_RC(renew(&a, 0, &c), TN_ELOST);
}

void case_lock_delay(void)
{
    struct call a;
    struct call b;
    struct call c;
    CHECK_RC(acquire(&a, nm("delay"), "o1", 50, NULL, 400), TN_OK);
    run_for(100);
    CHECK_RC(acquire(&b, nm("delay"), "o2", 5000, NULL, 0), TN_ELOCKDELAY);
    CHECK(b.res.retry_after_ms > 0 && b.res.retry_after_ms <= 400);
    run_for(b.res.retry_after_ms + 20);
    CHECK_RC(acquire(&b, nm("delay"), "o2", 5000, NULL, 400), TN_OK);
    /* after a release (not an expiry) there is no delay */
    CHECK_RC(release(&b, &c), TN_OK);
    CHECK_RC(acquire(&a, nm("delay"), "o3", 5000, NULL, 0), TN_OK);
}

void case_get(void)
{
    struct call a;
    struct call c;
    CHECK_RC(get(nm("get-none"), &c), TN_ENOTFOUND);
    CHECK_RC(acquire(&a, nm("get"), "o1", 5000, NULL, 0), TN_OK);
    CHECK_RC(get(nm("get"), &c), TN_OK);
    CHECK(strcmp(c.res.lease.owner_id, "o1") == 0);
    CHECK(c.res.lease.token == a.res.lease.token);
    CHECK(c.res.lease.expires_in_ms > 0 && c.res.lease.expires_in_ms <= 5000);
}

void case_list(void)
{
    static const char *const sub[] = {"l/d", "l/b", "l/a", "l/c", "lx", "l/e"};
    struct call a;
    struct call c;
    for (size_t i = 0; i < 6; i++)
        CHECK_RC(acquire(&a, nm(sub[i]), "o1", 5000, NULL, 0), TN_OK);
    CHECK_RC(release(&a, &c), TN_OK); /* l/e: released is not listed */
    CHECK_RC(list(nm("l/"), NULL, 2, &c), TN_OK);
    CHECK(c.res.n_items == 2 && c.res.more);
    CHECK(strcmp(c.res.items[0].name, nm("l/a")) == 0);
    CHECK(strcmp(c.res.items[1].name, nm("l/b")) == 0);
    CHECK(c.res.items[0].expires_in_ms > 0);
    tn_store_result_release(&c.res);
    CHECK_RC(list(nm("l/"), nm("l/b"), 10, &c), TN_OK);
    CHECK(c.res.n_items == 2 && !c.res.more);
    CHECK(strcmp(c.res.items[0].name, nm("l/c")) == 0);
    CHECK(strcmp(c.res.items[1].name, nm("l/d")) == 0);
    tn_store_result_release(&c.res);
    CHECK_RC(list(nm("l"), NULL, 10, &c), TN_OK);
    CHECK(c.res.n_items == 5 && !c.res.more);
    CHECK(strcmp(c.res.items[4].name, nm("lx")) == 0);
    tn_store_result_release(&c.res);
}

void case_tokens_increase(void)
{
    uint64_t last = 0;
    for (int i = 0; i < 20; i++) {
        struct call a;
        char name[32];
        (void)snprintf(name, sizeof(name), "inc/%d", i % 3);
        CHECK_RC(acquire(&a, nm(name), "o", 5000, NULL, 0), TN_OK);
        CHECK(a.res.lease.token > last);
        last = a.res.lease.token;
        struct call c;
        CHECK_RC(release(&a, &c), TN_OK);
    }
}

/* Many requests in flight at once: one winner per name, distinct tokens. */
void case_concurrent(void)
{
    enum { N = 64 };
    struct call *c = tn_calloc(N, sizeof(*c));
    CHECK(c != NULL);
    char names[N][64];
    for (int i = 0; i < N; i++) {
        (void)snprintf(names[i], sizeof(names[i]), "%sconc/%d", E.prefix,
                       i < N / 2 ? 0 : i);
        start_acquire(E.s, &c[i], names[i], i % 2 ? "odd" : "even", 5000, NULL,
                      0, NULL);
    }
    wait_calls(c, N);
    int winners0 = 0;
    int ok = 0;
    for (int i = 0; i < N; i++) {
        if (c[i].n_done != 1 ||
            (c[i].res.rc != TN_OK && c[i].res.rc != TN_ECONFLICT))
            ok = -1;
        if (i < N / 2 && c[i].res.rc == TN_OK)
            winners0++;
        if (i >= N / 2 && c[i].res.rc != TN_OK)
            ok = -1;
        for (int j = 0; j < i; j++) {
            if (c[i].res.rc == TN_OK && c[j].res.rc == TN_OK &&
                c[i].res.lease.token == c[j].res.lease.token)
                ok = -1;
        }
    }
    tn_free(c);
    CHECK(ok == 0);
    CHECK(winners0 == 1);
}

/* Past grants, newest first, with how each ended. */
void case_history(void)
{
    struct call a;
    struct call b;
    struct call c;
    if (!has_cap(E.b->caps.history, "history", "history"))
        return;
    CHECK(E.s->ops->history != NULL);
    CHECK_RC(acquire(&a, nm("hist"), "o1", 60, NULL, 0), TN_OK);
    run_for(120);
    CHECK_RC(acquire(&b, nm("hist"), "o2", 5000, NULL, 0), TN_OK);
    CHECK_RC(release(&b, &c), TN_OK);
    CHECK_RC(acquire(&b, nm("hist"), "o3", 5000, NULL, 0), TN_OK);
    memset(&c, 0, sizeof(c));
    E.s->ops->history(E.s, nm("hist"), strlen(nm("hist")), 10, &c.res, on_done,
                      &c);
    wait_calls(&c, 1);
    CHECK_RC(c.res.rc, TN_OK);
    const struct tn_grant_record *g = c.res.history;
    bool ok = c.res.n_history == 3 && g[0].token == b.res.lease.token &&
              g[0].end == TN_GRANT_LIVE && g[0].ended_ms_ago == -1 &&
              strcmp(g[1].owner_id, "o2") == 0 &&
              g[1].end == TN_GRANT_RELEASED &&
              g[2].token == a.res.lease.token && g[2].end == TN_GRANT_EXPIRED &&
              g[2].granted_ms_ago >= 100 && g[2].ended_ms_ago >= 0 &&
              g[2].ended_ms_ago < g[2].granted_ms_ago;
    tn_store_result_release(&c.res);
    CHECK(ok);
}

/* acquired, expired, acquired, released: in order, with floors.  On
 * PostgreSQL they come back through LISTEN, so first make sure it hears;
 * then the PostgreSQL order cases. */
void case_events(void)
{
    struct call a;
    struct call b;
    struct call c;
    struct tn_event ev[4];
    if (!has_cap(E.b->caps.events, "events", "events"))
        return;
    events_watch(nm("ev"));
    for (int i = 0; i < 50 && events_of(nm("ev-probe"), ev, 1) == 0; i++) {
        CHECK_RC(acquire(&a, nm("ev-probe"), "p", 5000, NULL, 0), TN_OK);
        CHECK_RC(release(&a, &c), TN_OK);
        run_for(100);
    }
    CHECK(events_of(nm("ev-probe"), ev, 1) == 1);
    CHECK_RC(acquire(&a, nm("ev"), "o1", 60, NULL, 0), TN_OK);
    run_for(400); /* expires; announced by the store */
    CHECK_RC(acquire(&b, nm("ev"), "o2", 5000, NULL, 0), TN_OK);
    CHECK_RC(release(&b, &c), TN_OK);
    CHECK(await_events(nm("ev"), 4, 3000, ev) == 4);
    uint64_t t1 = a.res.lease.token;
    uint64_t t2 = b.res.lease.token;
    CHECK(ev[0].type == TN_EVENT_ACQUIRED && ev[0].token == t1 &&
          ev[0].floor == t1 && strcmp(ev[0].owner_id, "o1") == 0);
    CHECK(ev[1].type == TN_EVENT_EXPIRED && ev[1].token == t1 &&
          ev[1].floor == t1);
    CHECK(ev[2].type == TN_EVENT_ACQUIRED && ev[2].token == t2 &&
          ev[2].floor == t2 && strcmp(ev[2].owner_id, "o2") == 0);
    CHECK(ev[3].type == TN_EVENT_RELEASED && ev[3].token == t2 &&
          ev[3].floor == t2);
    run_for(300);
    CHECK(events_of(nm("ev"), ev, 4) == 4); /* each change once */
}

/* Waiters are granted in arrival order; one whose client left never gets
 * the lease; the queue is bounded; nobody jumps it. */
void case_wait_fifo(void)
{
    struct call h;
    struct call w[4];
    struct call c;
    if (!has_cap(E.b->caps.waits, "wait_fifo", "waits"))
        return;
    CHECK_RC(acquire(&h, nm("wait"), "holder", 5000, NULL, 0), TN_OK);
    start_wait(&w[0], nm("wait"), "w1", 8000, false);
    start_wait(&w[1], nm("wait"), "gone", 8000, true);
    start_wait(&w[2], nm("wait"), "w2", 8000, false);
    run_for(50);
    start_wait(&w[3], nm("wait"), "extra", 8000, false);
    wait_calls(&w[3], 1);
    CHECK_RC(w[3].res.rc, TN_ECAPACITY);
    CHECK(w[3].res.capacity != NULL && w[3].res.retry_after_ms > 0);
    CHECK_RC(acquire(&c, nm("wait"), "rude", 5000, NULL, 0), TN_ECONFLICT);
    CHECK(!w[0].done && !w[2].done);
    CHECK_RC(release(&h, &c), TN_OK);
    wait_calls(&w[0], 1);
    CHECK_RC(w[0].res.rc, TN_OK);
    CHECK(strcmp(w[0].res.lease.owner_id, "w1") == 0);
    CHECK(w[0].res.lease.token > h.res.lease.token);
    CHECK_RC(release(&w[0], &c), TN_OK);
    wait_calls(&w[2], 1);
    wait_calls(&w[1], 1);
    CHECK_RC(w[2].res.rc, TN_OK);
    CHECK(w[2].res.lease.token > w[0].res.lease.token);
    CHECK(w[1].res.rc != TN_OK && w[1].n_done == 1);
    CHECK_RC(get(nm("wait"), &c), TN_OK);
    CHECK(strcmp(c.res.lease.owner_id, "w2") == 0);
}

static int principal_op(bool renew, const struct call *g, const char *who,
                        struct call *c)
{
    struct tn_token_req r = {.name = g->res.lease.name,
                             .name_len = strlen(g->res.lease.name),
                             .token = g->res.lease.token,
                             .principal = who};
    memcpy(r.secret, g->res.lease.secret, TN_SECRET_BYTES);
    return token_req(renew, &r, c);
}

/* With auth on, renew and release are bound to the acquiring principal. */
void case_principal(void)
{
    struct call a;
    struct call c;
    if (!has_cap(E.b->caps.binds_principal, "principal", "binds_principal"))
        return;
    memset(&a, 0, sizeof(a));
    uint8_t sec[TN_SECRET_BYTES];
    (void)tn_rand_bytes(sec, sizeof(sec));
    struct tn_acquire_req r = {.name = nm("who"),
                               .name_len = strlen(nm("who")),
                               .owner_id = "o1",
                               .principal = "alice",
                               .ttl_ms = 5000,
                               .secret = sec};
    E.s->ops->acquire(E.s, &r, &a.res, on_done, &a);
    wait_calls(&a, 1);
    CHECK_RC(a.res.rc, TN_OK);
    CHECK_RC(principal_op(true, &a, "bob", &c), TN_EFORBIDDEN);
    CHECK_RC(principal_op(false, &a, "bob", &c), TN_EFORBIDDEN);
    CHECK_RC(principal_op(true, &a, "alice", &c), TN_OK);
    CHECK_RC(principal_op(true, &a, NULL, &c), TN_OK); /* admin / auth off */
    CHECK_RC(principal_op(false, &a, "alice", &c), TN_OK);
}

/* A blocking acquire is bound to its own principal too: the grant a
 * waiter gets once the name is free is renewed by that principal, and by
 * nobody else, as a grant to a non-waiting acquire is. */
void case_wait_principal(void)
{
    struct call h, w, c;
    if (!has_cap(E.b->caps.waits && E.b->caps.binds_principal, "wait_principal",
                 "waits and caps.binds_principal"))
        return;
    const char *n = nm("who-waits");
    uint8_t sec[TN_SECRET_BYTES];
    (void)tn_rand_bytes(sec, sizeof(sec));
    struct tn_acquire_req r = {.name = n,
                               .name_len = strlen(n),
                               .owner_id = "o1",
                               .principal = "alice",
                               .ttl_ms = 5000,
                               .secret = sec};
    memset(&h, 0, sizeof(h));
    E.s->ops->acquire(E.s, &r, &h.res, on_done, &h);
    wait_calls(&h, 1);
    CHECK_RC(h.res.rc, TN_OK);
    uint8_t sec2[TN_SECRET_BYTES];
    (void)tn_rand_bytes(sec2, sizeof(sec2));
    r.owner_id = "o2";
    r.principal = "bob";
    r.secret = sec2;
    r.wait_ms = 5000;
    memset(&w, 0, sizeof(w));
    E.s->ops->acquire(E.s, &r, &w.res, on_done, &w);
    run_for(50);
    CHECK(!w.done);
    CHECK_RC(principal_op(false, &h, "alice", &c), TN_OK);
    wait_calls(&w, 1);
    CHECK_RC(w.res.rc, TN_OK);
    CHECK_RC(principal_op(true, &w, "alice", &c), TN_EFORBIDDEN);
    CHECK_RC(principal_op(true, &w, "bob", &c), TN_OK);
    CHECK_RC(principal_op(false, &w, "bob", &c), TN_OK);
}

/* docs/safety/revealed-end.md: once the store said that a grant ended (here
 * check current:false after its expiry), no restart brings it back: after
 * a close and an open on the same data the check still answers false, the
 * holder's renew is lost, and GET finds nothing.  (Before the embedded
 * store recorded expiries, the restart rule held the lease again for its
 * TTL from the open.) */
void case_revealed_end_stays(void)
{
    struct call g, c;
    const char *n = nm("revealed");
    /* 1.5 s: a store that revives the lease holds it for that long from
     * the open, long enough for the check after a slow open to see it;
     * and the expiry falls between two idle heartbeats (1 s apart). */
    CHECK_RC(acquire(&g, n, "o1", 1500, NULL, 0), TN_OK);
    run_for(1550);
    CHECK_RC(check(n, g.res.lease.token, &c), TN_OK);
    CHECK(!c.res.current);
    CHECK(reopen_store() == 0);
    CHECK_RC(check(n, g.res.lease.token, &c), TN_OK);
    CHECK(!c.res.current);
    CHECK_RC(renew(&g, 0, &c), TN_ELOST);
    CHECK_RC(get(n, &c), TN_ENOTFOUND);
    CHECK_RC(check(n, g.res.lease.token, &c), TN_OK);
    CHECK(!c.res.current);
}

/* ---- retiring names ---- */

/* Reopen the suite's store with retain_ms (0: the suite's own config). */
static int reopen(int64_t retain_ms)
{
    if (E.s != NULL)
        E.s->ops->close(E.s);
    E.s = NULL;
    struct tn_store_config cfg = base_config();
    cfg.retain_ms = retain_ms;
    int rc = open_url(E.url, &cfg, &E.s);
    if (rc == 0 && !wait_ready(E.s, 15000))
        rc = TN_EUNAVAIL;
    if (rc < 0)
        fprintf(stderr, "reopen: %s\n", tn_errname(rc));
    return rc;
}

/* Run the loop until name is retired (check answers from the retired
 * floor: no live lease and a floor above `above`), or ms pass. */
static bool await_retired(const char *name, uint64_t above, int64_t ms)
{
    int64_t until = tn_clock_now_ms() + ms;
    struct call c;
    while (tn_clock_now_ms() < until) {
        if (check(name, 1, &c) == TN_OK && c.res.floor > above)
            return true;
        run_for(50);
    }
    return false;
}

/* Retiring names (docs/safety/retired-names.md): a name whose last lease
 * ended more than retain_ms ago is forgotten; check answers the retired
 * floor, at least every token the name had; no old token is current or
 * renewable again; live names stay; all of it across a restart; a new
 * grant gets a token above the floor. */
static void retire_body(void)
{
    struct call a, b, live, c, x;
    CHECK_RC(reopen(300), TN_OK);
    CHECK_RC(acquire(&a, nm("ret-rel"), "o1", 5000, NULL, 0), TN_OK);
    CHECK_RC(acquire(&b, nm("ret-exp"), "o2", 100, NULL, 0), TN_OK);
    CHECK_RC(acquire(&live, nm("ret-live"), "o3", 60000, NULL, 0), TN_OK);
    CHECK_RC(release(&a, &c), TN_OK);
    uint64_t ta = a.res.lease.token, tb = b.res.lease.token;
    /* Before retain_ms passed, the floor is the name's own token. */
    CHECK_RC(check(nm("ret-rel"), ta, &c), TN_OK);
    CHECK(c.res.floor == ta && !c.res.current);
    /* The released name's floor then rises to the retired floor, which
     * covers the other name's token too. */
    CHECK(await_retired(nm("ret-rel"), ta, 5000));
    CHECK(await_retired(nm("ret-exp"), tb, 5000));
    CHECK_RC(check(nm("ret-rel"), ta, &c), TN_OK);
    uint64_t floor = c.res.floor;
    CHECK(floor >= tb && floor >= ta && !c.res.current && !c.res.has_live);
    CHECK_RC(check(nm("ret-exp"), tb, &c), TN_OK);
    CHECK(c.res.floor == floor && !c.res.current);
    CHECK_RC(get(nm("ret-rel"), &c), TN_ENOTFOUND);
    CHECK_RC(renew(&b, 0, &c), TN_ELOST);
    CHECK_RC(release(&a, &c), TN_ELOST);
    /* A live lease is never retired, whatever its age. */
    CHECK_RC(check(nm("ret-live"), live.res.lease.token, &c), TN_OK);
    CHECK(c.res.current && c.res.floor == live.res.lease.token);
    CHECK(store_gauge(E.s, "tenure_names_retired_total") >= 2);
    /* After a restart: the same floor, the live lease still current. */
    CHECK_RC(reopen(300), TN_OK);
    CHECK_RC(check(nm("ret-rel"), ta, &c), TN_OK);
    CHECK(c.res.floor >= floor && !c.res.current);
    CHECK_RC(check(nm("ret-exp"), tb, &c), TN_OK);
    CHECK(c.res.floor >= floor && !c.res.current);
    CHECK_RC(renew(&b, 0, &c), TN_ELOST);
    CHECK_RC(check(nm("ret-live"), live.res.lease.token, &c), TN_OK);
    CHECK(c.res.current);
    /* A new grant of a retired name: a token above the floor, and the
     * floor is the new token again. */
    CHECK_RC(acquire(&x, nm("ret-rel"), "o4", 5000, NULL, 0), TN_OK);
    CHECK(x.res.lease.token > floor);
    CHECK_RC(check(nm("ret-rel"), x.res.lease.token, &c), TN_OK);
    CHECK(c.res.current && c.res.floor == x.res.lease.token);
    CHECK_RC(release(&live, &c), TN_OK);
    CHECK_RC(release(&x, &c), TN_OK);
}

void case_retire(void)
{
    if (!has_cap(E.b->caps.retires_names, "retire", "retires_names"))
        return; /* it keeps its rows: docs/safety/retired-names.md */
    /* PostgreSQL: in a schema of its own, since a retirement forgets every
     * old name of its schema, those of other runs too. */
    if (BACKEND_IS("pg") && pg_private_schema_begin("ret") < 0) {
        E.failures++;
        return;
    }
    retire_body();
    if (reopen(0) < 0)
        E.failures++;
    if (BACKEND_IS("pg"))
        pg_private_schema_end();
}
