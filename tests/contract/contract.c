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
#include "contract.h"

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
#include "store/pg/sql.h"
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

static void collect(void *ctx, const struct tn_event *ev)
{
    (void)ctx;
    if (EV.filter[0] != '\0' &&
        strncmp(ev->name, EV.filter, strlen(EV.filter)) == 0 &&
        EV.n < MAX_EVENTS)
        EV.ev[EV.n++] = *ev;
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

/* ---- shared cases ---- */

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
    {"retire", case_retire, false},
    {"revealed_end_stays", case_revealed_end_stays, false},
    {"pg_renew_blocked_past_expiry", case_pg_renew_blocked_past_expiry, true},
    {"pg_slow_acquirer", case_pg_slow_acquirer, true},
    {"pg_sequence_lifted", case_pg_sequence_lifted, true},
    {"pg_concurrent_migrations", case_pg_concurrent_migrations, true},
    {"pg_down", case_pg_down, true},
    {"pg_listen_first", case_pg_listen_first, true},
    {"pg_broken_in_flight", case_pg_broken_in_flight, true},
    {"pg_retire_race", case_pg_retire_race, true},
    {"pg_retire_many", case_pg_retire_many, true},
};

static int open_embedded(void)
{
    struct tn_store_config cfg = base_config();
    cfg.data_dir = E.dir;
    struct tn_errmsg em = {{0}};
    if (tn_store_embedded_open(E.loop, &cfg, &E.s, &em) < 0) {
        fprintf(stderr, "embedded open: %s\n", em.text);
        return 1;
    }
    return 0;
}

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
    return open_embedded();
}

int reopen_store(void)
{
    E.s->ops->close(E.s);
    E.s = NULL;
    int rc = E.pg ? open_pg(E.pg_url, &E.s) < 0 || !wait_ready(E.s, 15000)
                  : open_embedded();
    if (rc != 0) {
        fprintf(stderr, "cannot open the store again: giving up\n");
        exit(1); /* every later case needs it */
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
