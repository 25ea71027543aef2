/* SPDX-License-Identifier: MIT */
/* The store contract suite: the same cases driven through the tn_store
 * vtable on a real tn_loop, against the embedded store (a temp dir) or
 * PostgreSQL (TENURE_TEST_PG_URL).  Usage: tn-store-contract embedded |
 * pg.  Exit 0 pass, 1 fail, 77 skip (pg only, and only when the URL is
 * unset).  Names carry a per-run prefix, so runs share a database safely.
 * The shared cases include history, events, blocking acquire and the
 * principal binding.  PostgreSQL-only cases follow the shared ones:
 * sequence lifted above a stored token on start, concurrent migrations,
 * down and broken connections. */
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/loop.h"
#include "common/rand.h"
#include "store/pg_sql.h"
#include "store/store.h"

struct env {
    struct tn_loop *loop; /* the loop all stores run on */
    struct tn_store *s;   /* store under test */
    bool pg;              /* backend */
    const char *pg_url;   /* TENURE_TEST_PG_URL */
    char dir[64];         /* embedded data dir */
    char prefix[40];      /* per-run name prefix */
    int failures;         /* failed checks */
};

static struct env E;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
            E.failures++;                                                      \
            return;                                                            \
        }                                                                      \
    } while (0)

#define CHECK_RC(got, want)                                                    \
    do {                                                                       \
        int got_ = (got);                                                      \
        if (got_ != (want)) {                                                  \
            fprintf(stderr, "%s:%d: rc %s, want %s\n", __FILE__, __LINE__,     \
                    tn_errname(got_), tn_errname(want));                       \
            E.failures++;                                                      \
            return;                                                            \
        }                                                                      \
    } while (0)

/* ---- driving the loop ---- */

struct call {
    struct tn_store_result res; /* filled by the store */
    bool done;                  /* done ran */
    int n_done;                 /* times done ran (must be 1) */
};

static void on_done(void *arg)
{
    struct call *c = arg;
    c->done = true;
    c->n_done++;
    tn_loop_stop(E.loop);
}

static void wait_calls(struct call *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        while (!c[i].done)
            (void)tn_loop_run(E.loop);
    }
}

static void stop_loop(void *arg)
{
    (void)arg;
    tn_loop_stop(E.loop);
}

/* Run the loop for ms milliseconds (lets time pass on the loop). */
static void run_for(int64_t ms)
{
    struct tn_loop_timer t = {0};
    int64_t until = tn_clock_now_ms() + ms;
    while (tn_clock_now_ms() < until) {
        tn_loop_timer_arm(E.loop, &t, until, stop_loop, NULL);
        (void)tn_loop_run(E.loop);
    }
    tn_loop_timer_disarm(E.loop, &t);
}

static bool wait_ready(struct tn_store *s, int64_t ms)
{
    int64_t until = tn_clock_now_ms() + ms;
    while (!s->ops->is_ready(s) && tn_clock_now_ms() < until)
        run_for(10);
    return s->ops->is_ready(s);
}

/* ---- requests ---- */

static char *nm(const char *suffix)
{
    static char buf[8][200];
    static int i;
    char *b = buf[i++ % 8];
    (void)snprintf(b, sizeof(buf[0]), "%s%s", E.prefix, suffix);
    return b;
}

static void start_acquire(struct tn_store *s, struct call *c, const char *name,
                          const char *owner, int64_t ttl_ms, const char *rid,
                          int64_t delay_ms, uint8_t secret[TN_SECRET_BYTES])
{
    memset(c, 0, sizeof(*c));
    uint8_t local[TN_SECRET_BYTES];
    uint8_t *sec = secret != NULL ? secret : local;
    (void)tn_rand_bytes(sec, TN_SECRET_BYTES);
    struct tn_acquire_req r = {.name = name,
                               .name_len = strlen(name),
                               .owner_id = owner,
                               .request_id = rid,
                               .ttl_ms = ttl_ms,
                               .lock_delay_ms = delay_ms,
                               .secret = sec};
    s->ops->acquire(s, &r, &c->res, on_done, c);
}

static int acquire(struct call *c, const char *name, const char *owner,
                   int64_t ttl_ms, const char *rid, int64_t delay_ms)
{
    uint8_t sec[TN_SECRET_BYTES];
    start_acquire(E.s, c, name, owner, ttl_ms, rid, delay_ms, sec);
    wait_calls(c, 1);
    if (c->res.rc == TN_OK && !c->res.replayed &&
        memcmp(c->res.lease.secret, sec, TN_SECRET_BYTES) != 0)
        return TN_EINTERNAL; /* a grant returns the request's secret */
    return c->n_done == 1 ? c->res.rc : TN_EINTERNAL;
}

static int token_op(bool renew, const char *name, uint64_t token,
                    const uint8_t *secret, int64_t ttl_ms, bool force,
                    struct call *c)
{
    memset(c, 0, sizeof(*c));
    struct tn_token_req r = {.name = name,
                             .name_len = strlen(name),
                             .token = token,
                             .ttl_ms = ttl_ms,
                             .force = force};
    memcpy(r.secret, secret, TN_SECRET_BYTES);
    if (renew)
        E.s->ops->renew(E.s, &r, &c->res, on_done, c);
    else
        E.s->ops->release(E.s, &r, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

static int renew(const struct call *g, int64_t ttl_ms, struct call *c)
{
    return token_op(true, g->res.lease.name, g->res.lease.token,
                    g->res.lease.secret, ttl_ms, false, c);
}

static int release(const struct call *g, struct call *c)
{
    return token_op(false, g->res.lease.name, g->res.lease.token,
                    g->res.lease.secret, 0, false, c);
}

static int get(const char *name, struct call *c)
{
    memset(c, 0, sizeof(*c));
    E.s->ops->get(E.s, name, strlen(name), &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

static int check(const char *name, uint64_t token, struct call *c)
{
    memset(c, 0, sizeof(*c));
    E.s->ops->check(E.s, name, strlen(name), token, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

static int list(const char *prefix, const char *after, size_t limit,
                struct call *c)
{
    memset(c, 0, sizeof(*c));
    struct tn_list_req r = {.prefix = prefix,
                            .prefix_len = strlen(prefix),
                            .after = after,
                            .after_len = after != NULL ? strlen(after) : 0,
                            .limit = limit};
    E.s->ops->list(E.s, &r, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

/* ---- events and waiting ---- */

#define MAX_EVENTS 64

/* Events of the names that start with filter, as the store announced
 * them (other cases' leases expire meanwhile). */
static struct {
    struct tn_event ev[MAX_EVENTS]; /* in order */
    size_t n;                       /* used */
    char filter[200];               /* name prefix; "" records nothing */
} EV;

static void collect(void *ctx, const struct tn_event *ev)
{
    (void)ctx;
    if (EV.filter[0] != '\0' &&
        strncmp(ev->name, EV.filter, strlen(EV.filter)) == 0 &&
        EV.n < MAX_EVENTS)
        EV.ev[EV.n++] = *ev;
}

/* The config every store of the suite opens with. */
static struct tn_store_config base_config(void)
{
    struct tn_store_config cfg = {.batch_max = 512,
                                  .expected_leases = 64,
                                  .max_waiters = 16,
                                  .max_waiters_per_name = 3,
                                  .max_wait_ms = 60000,
                                  .on_event = collect};
    return cfg;
}

/* Events announced so far for name, copied to out (at most cap). */
static size_t events_of(const char *name, struct tn_event *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < EV.n && n < cap; i++) {
        if (strcmp(EV.ev[i].name, name) == 0)
            out[n++] = EV.ev[i];
    }
    return n;
}

/* Run the loop until name has n events, or ms pass. */
static size_t await_events(const char *name, size_t n, int64_t ms,
                           struct tn_event *out)
{
    int64_t until = tn_clock_now_ms() + ms;
    size_t got = events_of(name, out, n);
    while (got < n && tn_clock_now_ms() < until) {
        run_for(10);
        got = events_of(name, out, n);
    }
    return got;
}

static bool client_gone(void *ctx)
{
    (void)ctx;
    return false;
}

/* A blocking acquire; gone: its client has already left. */
static void start_wait(struct call *c, const char *name, const char *owner,
                       int64_t wait_ms, bool gone)
{
    memset(c, 0, sizeof(*c));
    uint8_t sec[TN_SECRET_BYTES];
    (void)tn_rand_bytes(sec, sizeof(sec));
    struct tn_acquire_req r = {.name = name,
                               .name_len = strlen(name),
                               .owner_id = owner,
                               .ttl_ms = 5000,
                               .secret = sec,
                               .wait_ms = wait_ms,
                               .wanted = gone ? client_gone : NULL};
    E.s->ops->acquire(E.s, &r, &c->res, on_done, c);
}

/* ---- shared cases ---- */

static void case_grant_fields(void)
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

static void case_held(void)
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

static void case_replay(void)
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

static void case_renew(void)
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

static void case_release(void)
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

static void case_check_floor(void)
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

static void case_expiry(void)
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

static void case_lock_delay(void)
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

static void case_get(void)
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

static void case_list(void)
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

static void case_tokens_increase(void)
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
static void case_concurrent(void)
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
static void case_history(void)
{
    struct call a;
    struct call b;
    struct call c;
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
 * PostgreSQL they come back through LISTEN, so first make sure it hears. */
static void case_events(void)
{
    struct call a;
    struct call b;
    struct call c;
    struct tn_event ev[4];
    CHECK(E.s->ops->has_events);
    (void)snprintf(EV.filter, sizeof(EV.filter), "%s", nm("ev"));
    EV.n = 0;
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
static void case_wait_fifo(void)
{
    struct call h;
    struct call w[4];
    struct call c;
    CHECK(E.s->ops->can_wait);
    CHECK_RC(acquire(&h, nm("wait"), "holder", 5000, NULL, 0), TN_OK);
    start_wait(&w[0], nm("wait"), "w1", 8000, false);
    start_wait(&w[1], nm("wait"), "gone", 8000, true);
    start_wait(&w[2], nm("wait"), "w2", 8000, false);
    run_for(50);
    start_wait(&w[3], nm("wait"), "extra", 8000, false);
    wait_calls(&w[3], 1);
    CHECK_RC(w[3].res.rc, TN_ETOOMANY);
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
    memset(c, 0, sizeof(*c));
    struct tn_token_req r = {.name = g->res.lease.name,
                             .name_len = strlen(g->res.lease.name),
                             .token = g->res.lease.token,
                             .principal = who};
    memcpy(r.secret, g->res.lease.secret, TN_SECRET_BYTES);
    if (renew)
        E.s->ops->renew(E.s, &r, &c->res, on_done, c);
    else
        E.s->ops->release(E.s, &r, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

/* With auth on, renew and release are bound to the acquiring principal. */
static void case_principal(void)
{
    struct call a;
    struct call c;
    CHECK(E.s->ops->binds_principal);
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

/* ---- PostgreSQL-only cases ---- */

static void quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static PGconn *admin(void)
{
    PGconn *c = PQconnectdb(E.pg_url);
    PQsetNoticeProcessor(c, quiet, NULL);
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "admin connection: %s", PQerrorMessage(c));
        PQfinish(c);
        return NULL;
    }
    return c;
}

static bool exec_ok(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK ||
              PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok)
        fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    return ok;
}

static int open_pg(const char *url, struct tn_store **out)
{
    struct tn_store_config cfg = base_config();
    cfg.pg_url = url;
    struct tn_errmsg em = {{0}};
    int rc = tn_store_open_url(E.loop, &cfg, out, &em);
    if (rc < 0)
        fprintf(stderr, "open: %s\n", em.text);
    return rc;
}

/* A URL for the same database with search_path set to schema. */
static void url_with_schema(const char *schema, char *out, size_t cap)
{
    (void)snprintf(out, cap, "%s%coptions=-csearch_path%%3D%s", E.pg_url,
                   strchr(E.pg_url, '?') != NULL ? '&' : '?', schema);
}

/* Restarting over a row whose token is above the sequence (restored from
 * a backup, migrated) lifts the sequence above it. */
static void case_pg_sequence_lifted(void)
{
    struct call a;
    CHECK_RC(acquire(&a, nm("seq"), "o1", 60000, NULL, 0), TN_OK);
    PGconn *db = admin();
    CHECK(db != NULL);
    char sql[512];
    uint64_t high = a.res.lease.token + 100000;
    (void)snprintf(sql, sizeof(sql),
                   "UPDATE leases SET fencing_token = %llu, released = true"
                   " WHERE name = '%s'",
                   (unsigned long long)high, nm("seq"));
    bool ok = exec_ok(db, sql);
    PQfinish(db);
    CHECK(ok);
    E.s->ops->close(E.s);
    CHECK_RC(open_pg(E.pg_url, &E.s), TN_OK);
    CHECK(wait_ready(E.s, 10000));
    CHECK_RC(acquire(&a, nm("seq2"), "o1", 5000, NULL, 0), TN_OK);
    CHECK(a.res.lease.token > high);
}

/* Three stores migrating a fresh schema at once: the advisory lock makes
 * them take turns; all end ready on version 2. */
static void case_pg_concurrent_migrations(void)
{
    char schema[64];
    (void)snprintf(schema, sizeof(schema), "ct_%d", (int)getpid());
    PGconn *db = admin();
    CHECK(db != NULL);
    char sql[256];
    (void)snprintf(sql, sizeof(sql),
                   "DROP SCHEMA IF EXISTS %s CASCADE;"
                   " CREATE SCHEMA %s",
                   schema, schema);
    bool ok = exec_ok(db, sql);
    char url[1024];
    url_with_schema(schema, url, sizeof(url));
    struct tn_store *s[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3 && ok; i++)
        ok = open_pg(url, &s[i]) == TN_OK;
    for (int i = 0; i < 3 && ok; i++)
        ok = wait_ready(s[i], 15000);
    struct call c[3];
    for (int i = 0; i < 3 && ok; i++)
        start_acquire(s[i], &c[i], "m", "o", 5000, NULL, 0, NULL);
    if (ok)
        wait_calls(c, 3);
    int granted = 0;
    for (int i = 0; i < 3 && ok; i++)
        granted += c[i].res.rc == TN_OK;
    PGresult *r = PQexec(db, "SELECT 1");
    PQclear(r);
    (void)snprintf(sql, sizeof(sql),
                   "SELECT count(*) FROM %s.tenure_schema_version", schema);
    r = PQexec(db, sql);
    bool versions =
        PQresultStatus(r) == PGRES_TUPLES_OK &&
        strtoul(PQgetvalue(r, 0, 0), NULL, 10) == tn_pg_n_migrations;
    PQclear(r);
    for (int i = 0; i < 3; i++) {
        if (s[i] != NULL)
            s[i]->ops->close(s[i]);
    }
    (void)snprintf(sql, sizeof(sql), "DROP SCHEMA %s CASCADE", schema);
    (void)exec_ok(db, sql);
    PQfinish(db);
    CHECK(ok);
    CHECK(granted == 1);
    CHECK(versions);
}

/* PostgreSQL unreachable: not ready, every op TN_EUNAVAIL with a retry. */
static void case_pg_down(void)
{
    struct tn_store *s = NULL;
    CHECK_RC(open_pg("postgresql://postgres@127.0.0.1:1/postgres", &s), TN_OK);
    run_for(200);
    bool ready = s->ops->is_ready(s);
    struct call c;
    start_acquire(s, &c, "x", "o", 5000, NULL, 0, NULL);
    wait_calls(&c, 1);
    struct call g;
    memset(&g, 0, sizeof(g));
    s->ops->get(s, "x", 1, &g.res, on_done, &g);
    wait_calls(&g, 1);
    s->ops->close(s);
    CHECK(!ready);
    CHECK_RC(c.res.rc, TN_EUNAVAIL);
    CHECK(c.res.retry_after_ms > 0);
    CHECK_RC(g.res.rc, TN_EUNAVAIL);
}

/* The connection dies while a statement is in flight: its outcome is
 * unknown, so it is answered TN_EUNAVAIL; the store reconnects. */
static void case_pg_broken_in_flight(void)
{
    struct call a;
    CHECK_RC(acquire(&a, nm("brk"), "o1", 100, NULL, 0), TN_OK);
    PGconn *db = admin();
    CHECK(db != NULL);
    char sql[512];
    (void)snprintf(sql, sizeof(sql),
                   "BEGIN; SELECT 1 FROM leases WHERE name = '%s' FOR UPDATE",
                   nm("brk"));
    bool ok = exec_ok(db, sql);
    struct call b;
    start_acquire(E.s, &b, nm("brk"), "o2", 5000, NULL, 0, NULL);
    run_for(100); /* the statement now waits for the row lock */
    ok = ok && !b.done &&
         exec_ok(db, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                     " WHERE application_name = 'tenured'"
                     " AND wait_event_type = 'Lock'");
    wait_calls(&b, 1);
    (void)exec_ok(db, "ROLLBACK");
    PQfinish(db);
    CHECK(ok);
    CHECK_RC(b.res.rc, TN_EUNAVAIL);
    CHECK(wait_ready(E.s, 10000));
    CHECK_RC(acquire(&b, nm("brk"), "o2", 5000, NULL, 0), TN_OK);
    CHECK(b.res.lease.token > a.res.lease.token);
}

/* The slow acquirer: an acquire that has started (and drawn its VALUES
 * nextval) but waits for the row lock while another transaction grants a
 * newer token, which then expires.  The acquire must install a token above
 * that newer one: the token is taken only once the row is locked. */
static void case_pg_slow_acquirer(void)
{
    struct call a;
    CHECK_RC(acquire(&a, nm("slow"), "o1", 1, NULL, 0), TN_OK);
    run_for(5);
    PGconn *db = admin();
    CHECK(db != NULL);
    char sql[512];
    (void)snprintf(sql, sizeof(sql),
                   "BEGIN; SELECT 1 FROM leases WHERE name = '%s' FOR UPDATE",
                   nm("slow"));
    bool ok = exec_ok(db, sql);
    struct call b;
    start_acquire(E.s, &b, nm("slow"), "o2", 5000, NULL, 0, NULL);
    run_for(100); /* b now waits for the row lock */
    PGresult *r = NULL;
    uint64_t newer = 0;
    if (ok && !b.done) {
        (void)snprintf(sql, sizeof(sql),
                       "UPDATE leases SET fencing_token ="
                       " nextval('lease_token_seq'),"
                       " expires_at = now() - interval '1 second',"
                       " released = false WHERE name = '%s'"
                       " RETURNING fencing_token",
                       nm("slow"));
        r = PQexec(db, sql);
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
            newer = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
        PQclear(r);
    }
    ok = ok && newer > 0 && exec_ok(db, "COMMIT");
    wait_calls(&b, 1);
    PQfinish(db);
    CHECK(ok);
    CHECK_RC(b.res.rc, TN_OK);
    CHECK(b.res.lease.token > newer);
}

/* ---- main ---- */

struct tcase {
    const char *name; /* printed */
    void (*fn)(void); /* the case */
    bool pg_only;     /* PostgreSQL only */
};

static const struct tcase cases[] = {
    {"grant_fields", case_grant_fields, false},
    {"held", case_held, false},
    {"replay", case_replay, false},
    {"renew", case_renew, false},
    {"release", case_release, false},
    {"check_floor", case_check_floor, false},
    {"expiry", case_expiry, false},
    {"lock_delay", case_lock_delay, false},
    {"get", case_get, false},
    {"list", case_list, false},
    {"tokens_increase", case_tokens_increase, false},
    {"concurrent", case_concurrent, false},
    {"history", case_history, false},
    {"events", case_events, false},
    {"wait_fifo", case_wait_fifo, false},
    {"principal", case_principal, false},
    {"pg_slow_acquirer", case_pg_slow_acquirer, true},
    {"pg_sequence_lifted", case_pg_sequence_lifted, true},
    {"pg_concurrent_migrations", case_pg_concurrent_migrations, true},
    {"pg_down", case_pg_down, true},
    {"pg_broken_in_flight", case_pg_broken_in_flight, true},
};

static int open_store(void)
{
    if (E.pg) {
        if (open_pg(E.pg_url, &E.s) < 0)
            return 1;
        if (!wait_ready(E.s, 15000)) {
            fprintf(stderr, "PostgreSQL store not ready within 15 s (%s)\n",
                    E.pg_url);
            return 1;
        }
        return 0;
    }
    (void)snprintf(E.dir, sizeof(E.dir), "/tmp/tn-contract.XXXXXX");
    if (mkdtemp(E.dir) == NULL)
        return 1;
    struct tn_store_config cfg = base_config();
    cfg.data_dir = E.dir;
    struct tn_errmsg em = {{0}};
    if (tn_store_embedded_open(E.loop, &cfg, &E.s, &em) < 0) {
        fprintf(stderr, "embedded open: %s\n", em.text);
        return 1;
    }
    return 0;
}

static void remove_dir(void)
{
    static const char *const files[] = {"tenure.db", "tenure.db-wal",
                                        "tenure.db-shm", "tenure.db-journal"};
    char path[128];
    for (size_t i = 0; i < 4; i++) {
        (void)snprintf(path, sizeof(path), "%s/%s", E.dir, files[i]);
        (void)unlink(path);
    }
    (void)rmdir(E.dir);
}

int main(int argc, char **argv)
{
    if (argc != 2 ||
        (strcmp(argv[1], "embedded") != 0 && strcmp(argv[1], "pg") != 0)) {
        fprintf(stderr, "usage: tn-store-contract embedded|pg\n");
        return 2;
    }
    E.pg = strcmp(argv[1], "pg") == 0;
    E.pg_url = getenv("TENURE_TEST_PG_URL");
    if (E.pg && (E.pg_url == NULL || E.pg_url[0] == '\0')) {
        fprintf(stderr, "TENURE_TEST_PG_URL is not set: skipping\n");
        return 77;
    }
    uint8_t r[4];
    char hex[9];
    (void)tn_rand_bytes(r, sizeof(r));
    tn_hex_encode(r, sizeof(r), hex);
    (void)snprintf(E.prefix, sizeof(E.prefix), "ct-%s/", hex);
    E.loop = tn_loop_new();
    if (E.loop == NULL || open_store() != 0)
        return 1;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (cases[i].pg_only && !E.pg)
            continue;
        int before = E.failures;
        cases[i].fn();
        printf("%s %s/%s\n", E.failures == before ? "ok  " : "FAIL", argv[1],
               cases[i].name);
    }
    E.s->ops->close(E.s);
    if (!E.pg)
        remove_dir();
    tn_loop_free(E.loop);
    printf("%s: %d failure(s)\n", argv[1], E.failures);
    return E.failures == 0 ? 0 : 1;
}
