/* SPDX-License-Identifier: MIT */
/* The store contract suite: the same cases driven through the tn_store
 * vtable on a real tn_loop, against any backend of the store registry
 * (src/store/store.c): one that keeps its data in a directory gets a temp
 * dir, one that needs a server gets its URL from the environment variable
 * its registry line names (TENURE_TEST_PG_URL).  Usage: tn-store-contract
 * NAME (a backend), or --list (every backend, one a line: how ctest finds
 * them).  Exit 0 pass, 1 fail, 77 skip (only when the backend's variable
 * is unset outside CI).  Names carry a per-run prefix, so runs share a
 * database safely.
 * The shared cases include history, events, blocking acquire and the
 * principal binding.  PostgreSQL-only cases follow the shared ones:
 * sequence lifted above a stored token on start, concurrent migrations,
 * down and broken connections. */
#include "contract.h"

#include <fnmatch.h>
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
#include "contract_pg_sess.h"
#include "store/store.h"

struct env E;

/* ---- driving the loop ---- */

void on_done(void *arg)
{
    struct call *c = arg;
    c->done = true;
    c->n_done++;
    tn_loop_stop(E.loop);
}

void wait_calls(struct call *c, size_t n)
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
void run_for(int64_t ms)
{
    struct tn_loop_timer t = {0};
    int64_t until = tn_clock_now_ms() + ms;
    while (tn_clock_now_ms() < until) {
        tn_loop_timer_arm(E.loop, &t, until, stop_loop, NULL);
        (void)tn_loop_run(E.loop);
    }
    tn_loop_timer_disarm(E.loop, &t);
}

/* Ready, and (PostgreSQL) listening now: a store is ready only once its
 * LISTEN connection has been up (case_pg_listen_first), but one lost
 * later leaves it ready, and cases that await events would race with the
 * reconnection. */
long store_gauge(struct tn_store *s, const char *name)
{
    struct tn_buf m;
    tn_buf_init(&m, 1 << 20);
    s->ops->metrics(s, &m);
    char key[128];
    (void)snprintf(key, sizeof(key), "\n%s ", name);
    const char *at = m.data != NULL ? strstr(m.data, key) : NULL;
    long v = at != NULL ? strtol(at + strlen(key), NULL, 10) : -1;
    tn_buf_release(&m);
    return v;
}

static bool ready_and_listening(struct tn_store *s)
{
    return s->ops->is_ready(s) && store_gauge(s, "tenure_pg_listen_ready") != 0;
}

bool wait_ready(struct tn_store *s, int64_t ms)
{
    int64_t until = tn_clock_now_ms() + ms;
    while (!ready_and_listening(s) && tn_clock_now_ms() < until)
        run_for(10);
    return ready_and_listening(s);
}

bool has_cap(bool cap, const char *case_name, const char *cap_name)
{
    if (!cap)
        printf("skip %s/%s: the store does not declare caps.%s\n", E.b->name,
               case_name, cap_name);
    return cap;
}

/* ---- requests ---- */

char *nm(const char *suffix)
{
    static char buf[8][200];
    static int i;
    char *b = buf[i++ % 8];
    (void)snprintf(b, sizeof(buf[0]), "%s%s", E.prefix, suffix);
    return b;
}

void start_acquire(struct tn_store *s, struct call *c, const char *name,
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

int acquire(struct call *c, const char *name, const char *owner, int64_t ttl_ms,
            const char *rid, int64_t delay_ms)
{
    uint8_t sec[TN_SECRET_BYTES];
    start_acquire(E.s, c, name, owner, ttl_ms, rid, delay_ms, sec);
    wait_calls(c, 1);
    if (c->res.rc == TN_OK && !c->res.replayed &&
        memcmp(c->res.lease.secret, sec, TN_SECRET_BYTES) != 0)
        return TN_EINTERNAL; /* a grant returns the request's secret */
    return c->n_done == 1 ? c->res.rc : TN_EINTERNAL;
}

int token_req(bool renew, const struct tn_token_req *r, struct call *c)
{
    memset(c, 0, sizeof(*c));
    if (renew)
        E.s->ops->renew(E.s, r, &c->res, on_done, c);
    else
        E.s->ops->release(E.s, r, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

int token_op(bool renew, const char *name, uint64_t token,
             const uint8_t *secret, int64_t ttl_ms, bool force, struct call *c)
{
    struct tn_token_req r = {.name = name,
                             .name_len = strlen(name),
                             .token = token,
                             .ttl_ms = ttl_ms,
                             .force = force};
    memcpy(r.secret, secret, TN_SECRET_BYTES);
    return token_req(renew, &r, c);
}

int renew(const struct call *g, int64_t ttl_ms, struct call *c)
{
    return token_op(true, g->res.lease.name, g->res.lease.token,
                    g->res.lease.secret, ttl_ms, false, c);
}

int release(const struct call *g, struct call *c)
{
    return token_op(false, g->res.lease.name, g->res.lease.token,
                    g->res.lease.secret, 0, false, c);
}

int get(const char *name, struct call *c)
{
    memset(c, 0, sizeof(*c));
    E.s->ops->get(E.s, name, strlen(name), &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

int check(const char *name, uint64_t token, struct call *c)
{
    memset(c, 0, sizeof(*c));
    E.s->ops->check(E.s, name, strlen(name), token, &c->res, on_done, c);
    wait_calls(c, 1);
    return c->res.rc;
}

int list(const char *prefix, const char *after, size_t limit, struct call *c)
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

/* A session event has no name: it is recorded when its owner_id starts
 * with the filter (the session cases' owners carry the run's prefix). */
static void collect(void *ctx, const struct tn_event *ev)
{
    (void)ctx;
    bool session = ev->type == TN_EVENT_SESSION_OPENED ||
                   ev->type == TN_EVENT_SESSION_ENDED;
    const char *key = session ? ev->owner_id : ev->name;
    if (EV.filter[0] != '\0' &&
        strncmp(key, EV.filter, strlen(EV.filter)) == 0 && EV.n < MAX_EVENTS)
        EV.ev[EV.n++] = *ev;
}

size_t events_all(struct tn_event *out, size_t cap)
{
    size_t n = EV.n < cap ? EV.n : cap;
    memcpy(out, EV.ev, n * sizeof(*out));
    return n;
}

/* Record from now on the events of the names that start with filter. */
void events_watch(const char *filter)
{
    (void)snprintf(EV.filter, sizeof(EV.filter), "%s", filter);
    EV.n = 0;
}

/* The config every store of the suite opens with. */
struct tn_store_config base_config(void)
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
size_t events_of(const char *name, struct tn_event *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < EV.n && n < cap; i++) {
        if (strcmp(EV.ev[i].name, name) == 0)
            out[n++] = EV.ev[i];
    }
    return n;
}

/* Run the loop until name has n events, or ms pass. */
size_t await_events(const char *name, size_t n, int64_t ms,
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
void start_wait(struct call *c, const char *name, const char *owner,
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

/* ---- the cases ---- */

struct tcase {
    const char *name; /* printed */
    void (*fn)(void); /* the case */
    const char *only; /* the one backend it is for, or NULL: every one */
};

static const struct tcase cases[] = {
    {"grant_fields", case_grant_fields, NULL},
    {"held", case_held, NULL},
    {"replay", case_replay, NULL},
    {"renew", case_renew, NULL},
    {"release", case_release, NULL},
    {"check_floor", case_check_floor, NULL},
    {"expiry", case_expiry, NULL},
    {"lock_delay", case_lock_delay, NULL},
    {"get", case_get, NULL},
    {"list", case_list, NULL},
    {"tokens_increase", case_tokens_increase, NULL},
    {"concurrent", case_concurrent, NULL},
    {"history", case_history, NULL},
    {"events", case_events, NULL},
    {"pg_events_order", case_pg_events_order, "pg"},
    {"wait_fifo", case_wait_fifo, NULL},
    {"principal", case_principal, NULL},
    {"wait_principal", case_wait_principal, NULL},
    {"retire", case_retire, NULL},
    {"revealed_end_stays", case_revealed_end_stays, NULL},
    {"replay_with_waiters", case_replay_with_waiters, NULL},
    {"session_open_renew_get", case_session_open_renew_get, NULL},
    {"session_acquire", case_session_acquire, NULL},
    {"session_idempotent_claims", case_session_idempotent_claims, NULL},
    {"session_claim_batch", case_session_claim_batch, NULL},
    {"session_claim_queued", case_session_claim_queued, NULL},
    {"session_unclaim", case_session_unclaim, NULL},
    {"session_end_releases_all", case_session_end_releases_all, NULL},
    {"session_expiry_lock_delay", case_session_expiry_lock_delay, NULL},
    {"session_force_end", case_session_force_end, NULL},
    {"session_list", case_session_list, NULL},
    {"session_events", case_session_events, NULL},
    {"session_principal", case_session_principal, NULL},
    {"session_wait", case_session_wait, NULL},
    {"session_renew_one_write", case_session_renew_one_write, NULL},
    {"session_capacity", case_session_capacity, NULL},
    {"session_restart", case_session_restart, NULL},
    {"session_end_then_crash", case_session_end_then_crash, NULL},
    {"session_revealed_end_stays", case_session_revealed_end_stays, NULL},
    {"pg_renew_blocked_past_expiry", case_pg_renew_blocked_past_expiry, "pg"},
    {"pg_read_waits_for_writer", case_pg_read_waits_for_writer, "pg"},
    {"pg_change_behind_writer", case_pg_change_behind_writer, "pg"},
    {"pg_slow_acquirer", case_pg_slow_acquirer, "pg"},
    {"pg_sequence_lifted", case_pg_sequence_lifted, "pg"},
    {"pg_concurrent_migrations", case_pg_concurrent_migrations, "pg"},
    {"pg_down", case_pg_down, "pg"},
    {"pg_listen_first", case_pg_listen_first, "pg"},
    {"pg_broken_in_flight", case_pg_broken_in_flight, "pg"},
    {"pg_retire_race", case_pg_retire_race, "pg"},
    {"pg_retire_many", case_pg_retire_many, "pg"},
    {"pg_replay_with_waiters", case_pg_replay_with_waiters, "pg"},
    {"pg_sess_basics", case_pg_sess_basics, "pg"},
    {"pg_sess_claims", case_pg_sess_claims, "pg"},
    {"pg_sess_events", case_pg_sess_events, "pg"},
    {"pg_sess_capacity", case_pg_sess_capacity, "pg"},
    {"pg_sess_two_instances", case_pg_sess_two_instances, "pg"},
    {"pg_sess_expiry", case_pg_sess_expiry, "pg"},
    {"pg_sess_claim_race", case_pg_sess_claim_race, "pg"},
    {"pg_sess_end_one_txn", case_pg_sess_end_one_txn, "pg"},
    {"pg_sess_end_large", case_pg_sess_end_large, "pg"},
    {"pg_sess_claim_1000", case_pg_sess_claim_1000, "pg"},
    {"pg_sess_renew_in_flight", case_pg_sess_renew_in_flight, "pg"},
    {"pg_sess_slow_claimer", case_pg_sess_slow_claimer, "pg"},
    {"pg_sess_restart", case_pg_sess_restart, "pg"},
};

int open_url(const char *url, const struct tn_store_config *cfg,
             struct tn_store **out)
{
    struct tn_store_config c = cfg != NULL ? *cfg : base_config();
    c.url = url;
    c.data_dir = E.dir;
    struct tn_errmsg em = {{0}};
    int rc = tn_store_open_with(E.b, E.loop, &c, out, &em);
    if (rc < 0)
        fprintf(stderr, "open %s: %s %s\n", url, tn_errname(rc), em.text);
    return rc;
}

/* Open E.s on the backend's data, ready (a store with a server may take a
 * while to connect).  0 or 1. */
static int open_store(void)
{
    if (open_url(E.url, NULL, &E.s) < 0)
        return 1;
    if (!wait_ready(E.s, 15000)) {
        fprintf(stderr, "%s store not ready within 15 s (%s)\n", E.b->name,
                E.url);
        return 1;
    }
    return 0;
}

int reopen_store(void)
{
    E.s->ops->close(E.s);
    E.s = NULL;
    if (open_store() != 0) {
        fprintf(stderr, "cannot open the store again: giving up\n");
        exit(1); /* every later case needs it */
    }
    return 0;
}

static void remove_dir(void)
{
    static const char *const files[] = {"tenure.db",     "tenure.db-wal",
                                        "tenure.db-shm", "tenure.db-journal",
                                        "journal-0",     "journal-1"};
    char path[128];
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        (void)snprintf(path, sizeof(path), "%s/%s", E.dir, files[i]);
        (void)unlink(path);
    }
    (void)rmdir(E.dir);
}

/* The suite's own store, kept while a case runs on a private one. */
static struct {
    char dir[sizeof(E.dir)]; /* E.dir outside */
    bool active;             /* a private store is open */
} PRIV;

int private_store_begin(const char *tag, const struct tn_store_config *cfg)
{
    if (BACKEND_IS("pg") && pg_private_schema_begin(tag) < 0)
        return -1;
    E.s->ops->close(E.s);
    E.s = NULL;
    if (!BACKEND_IS("pg")) {
        memcpy(PRIV.dir, E.dir, sizeof(E.dir));
        (void)snprintf(E.dir, sizeof(E.dir), "/tmp/tn-contract.XXXXXX");
        if (mkdtemp(E.dir) == NULL) {
            memcpy(E.dir, PRIV.dir, sizeof(E.dir));
            PRIV.active = true;
            private_store_end();
            return -1;
        }
    }
    PRIV.active = true;
    if (open_url(E.url, cfg, &E.s) < 0 || !wait_ready(E.s, 15000)) {
        private_store_end();
        return -1;
    }
    return 0;
}

void private_store_end(void)
{
    if (!PRIV.active)
        return;
    PRIV.active = false;
    if (BACKEND_IS("pg")) {
        pg_private_schema_end(); /* closes E.s, opens the suite's again */
        return;
    }
    if (E.s != NULL)
        E.s->ops->close(E.s);
    E.s = NULL;
    if (strcmp(E.dir, PRIV.dir) != 0)
        remove_dir();
    memcpy(E.dir, PRIV.dir, sizeof(E.dir));
    if (open_store() != 0) {
        fprintf(stderr, "cannot open the store again: giving up\n");
        exit(1); /* every later case needs it */
    }
}

static int usage(void)
{
    size_t n = 0;
    const struct tn_store_backend *b = tn_store_backends(&n);
    fprintf(stderr, "usage: tn-store-contract --list | NAME, NAME one of:");
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, " %s", b[i].name);
    fprintf(stderr, "\n");
    return 2;
}

/* Every backend of the registry, one a line. */
static int list_backends(void)
{
    size_t n = 0;
    const struct tn_store_backend *b = tn_store_backends(&n);
    for (size_t i = 0; i < n; i++)
        printf("%s\n", b[i].name);
    return 0;
}

/* E.url from the backend's variable: 0, 77 (unset: skip, said on stderr)
 * or 1 (unset in CI, where every backend must be tested).  A backend that
 * needs no server is opened at its first spelling, with a fresh data dir. */
static int find_url(void)
{
    E.url = E.b->schemes[0];
    if (E.b->test_env == NULL)
        return 0;
    E.url = getenv(E.b->test_env);
    if (E.url != NULL && E.url[0] != '\0')
        return 0;
    const char *ci = getenv("CI");
    if (ci != NULL && ci[0] != '\0') {
        fprintf(stderr,
                "%s is not set, but CI is: the %s store must be "
                "tested there (scripts/with-pg.sh)\n",
                E.b->test_env, E.b->name);
        return 1;
    }
    fprintf(stderr, "%s is not set: skipping the %s store\n", E.b->test_env,
            E.b->name);
    return 77;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0)
        return list_backends();
    E.b = argc == 2 ? tn_store_backend_named(argv[1]) : NULL;
    if (E.b == NULL)
        return usage();
    int rc = find_url();
    if (rc != 0)
        return rc;
    uint8_t r[4];
    char hex[9];
    (void)tn_rand_bytes(r, sizeof(r));
    tn_hex_encode(r, sizeof(r), hex);
    (void)snprintf(E.prefix, sizeof(E.prefix), "ct-%s/", hex);
    (void)snprintf(E.dir, sizeof(E.dir), "/tmp/tn-contract.XXXXXX");
    if (mkdtemp(E.dir) == NULL)
        return 1;
    E.loop = tn_loop_new();
    if (E.loop == NULL || open_store() != 0)
        return 1;
    /* TN_TEST_FILTER, as in the unit programs: a glob of case names. */
    const char *filter = getenv("TN_TEST_FILTER");
    size_t ran = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (cases[i].only != NULL && !BACKEND_IS(cases[i].only))
            continue;
        if (filter != NULL && filter[0] != '\0' &&
            fnmatch(filter, cases[i].name, 0) != 0)
            continue;
        ran++;
        int before = E.failures;
        cases[i].fn();
        printf("%s %s/%s\n", E.failures == before ? "ok  " : "FAIL", argv[1],
               cases[i].name);
    }
    E.s->ops->close(E.s);
    remove_dir();
    tn_loop_free(E.loop);
    if (ran == 0) {
        fprintf(stderr, "TN_TEST_FILTER=%s matches no case\n", filter);
        E.failures++;
    }
    printf("%s: %d failure(s)\n", argv[1], E.failures);
    return E.failures == 0 ? 0 : 1;
}
