/* SPDX-License-Identifier: MIT */
/* bench_pg_sessions: what sessions cost on PostgreSQL, measured through
 * the store itself (the statements, batches and sweep tenured runs), on a
 * real database (scripts/with-pg.sh starts a throw-away one; use a fresh
 * database per run, or earlier runs' sessions are swept meanwhile).
 *   bench_pg_sessions URL claim N ROUNDS
 *       one claim of N names under a session, against N acquires sent one
 *       after another and N acquires sent at once (the store batches them)
 *   bench_pg_sessions URL renew L COUNT
 *       COUNT session renews one after another, the session holding L leases
 *   bench_pg_sessions URL expiry L
 *   bench_pg_sessions URL end L
 *       an unrelated client acquires and releases names one after another
 *       while a session of L leases expires (or is ended by DELETE): its
 *       acquire latency before, while the session's leases are settled,
 *       and after
 * Times are wall time on the loop; latencies in microseconds.  Nothing
 * here asserts: timing is a bench's business. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/loop.h"
#include "common/rand.h"
#include "store/pg/sql.h"
#include "store/store.h"

static struct tn_loop *loop;
static struct tn_store *st;
static char run[16]; /* this run's name prefix */

struct call {
    struct tn_store_result res; /* filled by the store */
    bool done;                  /* done ran */
};

static void on_done(void *arg)
{
    ((struct call *)arg)->done = true;
    tn_loop_stop(loop);
}

static void wait_all(struct call *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        while (!c[i].done)
            (void)tn_loop_run(loop);
    }
}

static void stop_loop(void *arg)
{
    (void)arg;
    tn_loop_stop(loop);
}

static void run_for(int64_t ms)
{
    struct tn_loop_timer t = {0};
    int64_t until = tn_clock_now_ms() + ms;
    while (tn_clock_now_ms() < until) {
        tn_loop_timer_arm(loop, &t, until, stop_loop, NULL);
        (void)tn_loop_run(loop);
    }
    tn_loop_timer_disarm(loop, &t);
}

static int64_t now_us(void)
{
    return tn_clock_mono_ns() / 1000;
}

static long gauge(const char *name)
{
    struct tn_buf m;
    tn_buf_init(&m, 1 << 20);
    st->ops->metrics(st, &m);
    char key[128];
    (void)snprintf(key, sizeof(key), "\n%s ", name);
    const char *at = m.data != NULL ? strstr(m.data, key) : NULL;
    long v = at != NULL ? strtol(at + strlen(key), NULL, 10) : -1;
    tn_buf_release(&m);
    return v;
}

/* ---- sessions ---- */

struct sess {
    char id[TN_SESSION_ID_HEX + 1];
    uint8_t secret[TN_SECRET_BYTES];
};

static void die(const char *what, int rc)
{
    fprintf(stderr, "%s: %s\n", what, tn_errname(rc));
    exit(1);
}

static void open_session(struct sess *x, int64_t ttl_ms)
{
    uint8_t id[TN_SESSION_ID_BYTES];
    (void)tn_rand_bytes(id, sizeof(id));
    tn_hex_encode(id, sizeof(id), x->id);
    (void)tn_rand_bytes(x->secret, sizeof(x->secret));
    struct tn_session_open_req r = {.id = x->id,
                                    .owner_id = "bench",
                                    .ttl_ms = ttl_ms,
                                    .secret = x->secret};
    struct call c = {0};
    st->ops->session_open(st, &r, &c.res, on_done, &c);
    wait_all(&c, 1);
    if (c.res.rc != TN_OK)
        die("session open", c.res.rc);
}

static struct tn_session_req sreq(const struct sess *x)
{
    struct tn_session_req r = {.id = x->id};
    memcpy(r.secret, x->secret, TN_SECRET_BYTES);
    return r;
}

/* Names "<run>/<tag>/<i>" for i in [from, from + n). */
static char **names_of(const char *tag, size_t from, size_t n)
{
    char **v = tn_calloc(n, sizeof(*v));
    for (size_t i = 0; v != NULL && i < n; i++) {
        char b[96];
        (void)snprintf(b, sizeof(b), "%s/%s/%zu", run, tag, from + i);
        v[i] = tn_strdup(b);
        if (v[i] == NULL)
            abort();
    }
    if (v == NULL)
        abort();
    return v;
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tn_free(v[i]);
    tn_free(v);
}

/* Claim n names under x in one request; its wall time in us. */
static int64_t claim(const struct sess *x, char **names, size_t n)
{
    struct tn_name_ref *refs = tn_calloc(n, sizeof(*refs));
    uint8_t *secrets = tn_calloc(n, TN_SECRET_BYTES);
    if (refs == NULL || secrets == NULL)
        abort();
    for (size_t i = 0; i < n; i++)
        refs[i] = (struct tn_name_ref){names[i], strlen(names[i])};
    (void)tn_rand_bytes(secrets, n * TN_SECRET_BYTES);
    struct tn_claim_req r = {
        .session = sreq(x), .names = refs, .n_names = n, .secrets = secrets};
    struct call c = {0};
    int64_t t0 = now_us();
    st->ops->claim(st, &r, &c.res, on_done, &c);
    wait_all(&c, 1);
    int64_t us = now_us() - t0;
    if (c.res.rc != TN_OK)
        die("claim", c.res.rc);
    for (size_t i = 0; i < n; i++) {
        if (c.res.claims[i].outcome != TN_CLAIM_GRANTED)
            die("claim: a name not granted", TN_ECONFLICT);
    }
    tn_store_result_release(&c.res);
    tn_free(refs);
    tn_free(secrets);
    return us;
}

/* Claim n names under x, 1000 a request. */
static void fill(const struct sess *x, const char *tag, size_t n)
{
    for (size_t at = 0; at < n; at += 1000) {
        size_t k = n - at < 1000 ? n - at : 1000;
        char **v = names_of(tag, at, k);
        (void)claim(x, v, k);
        free_names(v, k);
    }
}

static void start_acquire(struct call *c, const char *name)
{
    uint8_t sec[TN_SECRET_BYTES];
    (void)tn_rand_bytes(sec, sizeof(sec));
    struct tn_acquire_req r = {.name = name,
                               .name_len = strlen(name),
                               .owner_id = "bench",
                               .ttl_ms = 60000,
                               .secret = sec};
    memset(c, 0, sizeof(*c));
    st->ops->acquire(st, &r, &c->res, on_done, c);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int64_t pct(int64_t *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), cmp_i64);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i];
}

/* ---- modes ---- */

static void bench_claim(size_t n, int rounds)
{
    struct sess x;
    open_session(&x, 600000);
    int64_t *a = tn_calloc((size_t)rounds * 3, sizeof(*a));
    struct call *cs = tn_calloc(n, sizeof(*cs));
    if (a == NULL || cs == NULL)
        abort();
    for (int r = 0; r < rounds; r++) {
        char tag[32];
        (void)snprintf(tag, sizeof(tag), "claim%d", r);
        char **v = names_of(tag, 0, n);
        a[r] = claim(&x, v, n);
        (void)snprintf(tag, sizeof(tag), "seq%d", r);
        char **w = names_of(tag, 0, n);
        int64_t t0 = now_us();
        for (size_t i = 0; i < n; i++) {
            start_acquire(&cs[0], w[i]);
            wait_all(&cs[0], 1);
        }
        a[rounds + r] = now_us() - t0;
        (void)snprintf(tag, sizeof(tag), "par%d", r);
        char **z = names_of(tag, 0, n);
        t0 = now_us();
        for (size_t i = 0; i < n; i++)
            start_acquire(&cs[i], z[i]);
        wait_all(cs, n);
        a[2 * rounds + r] = now_us() - t0;
        printf("round %d: claim of %zu: %.1f ms; %zu acquires one after "
               "another: %.1f ms; %zu acquires at once: %.1f ms\n",
               r, n, (double)a[r] / 1e3, n, (double)a[rounds + r] / 1e3, n,
               (double)a[2 * rounds + r] / 1e3);
        free_names(v, n);
        free_names(w, n);
        free_names(z, n);
    }
    printf("median: claim %.1f ms, sequential acquires %.1f ms, concurrent "
           "acquires %.1f ms\n",
           (double)pct(a, (size_t)rounds, 0.5) / 1e3,
           (double)pct(a + rounds, (size_t)rounds, 0.5) / 1e3,
           (double)pct(a + 2 * rounds, (size_t)rounds, 0.5) / 1e3);
    tn_free(a);
    tn_free(cs);
}

static void bench_renew(size_t leases, size_t count)
{
    struct sess x;
    open_session(&x, 600000);
    fill(&x, "renew", leases);
    int64_t *lat = tn_calloc(count, sizeof(*lat));
    if (lat == NULL)
        abort();
    struct tn_session_req r = sreq(&x);
    for (size_t i = 0; i < count; i++) {
        struct call c = {0};
        int64_t t0 = now_us();
        st->ops->session_renew(st, &r, &c.res, on_done, &c);
        wait_all(&c, 1);
        lat[i] = now_us() - t0;
        if (c.res.rc != TN_OK || c.res.session.n_leases != leases)
            die("renew", c.res.rc);
    }
    printf("session renew, %zu leases, %zu renews: p50 %lld us, p99 %lld "
           "us, max %lld us\n",
           leases, count, (long long)pct(lat, count, 0.5),
           (long long)pct(lat, count, 0.99), (long long)pct(lat, count, 1.0));
    tn_free(lat);
}

/* ---- an unrelated client while a session ends ---- */

/* It acquires a fresh name, releases it, and again; each acquire's
 * latency and when it was sent. */
static struct {
    struct call acq, rel; /* the cycle's two calls */
    uint64_t i;           /* names used */
    int64_t sent_us;      /* of the acquire in flight */
    int64_t *t, *lat;     /* sent, latency (us) of each acquire */
    size_t n, cap;        /* recorded, room */
    bool stop, idle;      /* stop after this cycle; stopped */
} L;

static void load_next(void);

static void load_released(void *arg)
{
    (void)arg;
    tn_store_result_release(&L.rel.res);
    if (L.stop) {
        L.idle = true;
        tn_loop_stop(loop);
    } else
        load_next();
}

static void load_acquired(void *arg)
{
    (void)arg;
    int64_t now = now_us();
    if (L.acq.res.rc != TN_OK)
        die("unrelated acquire", L.acq.res.rc);
    if (L.n < L.cap) {
        L.t[L.n] = L.sent_us;
        L.lat[L.n++] = now - L.sent_us;
    }
    const struct tn_lease_view *v = &L.acq.res.lease;
    struct tn_token_req r = {
        .name = v->name, .name_len = strlen(v->name), .token = v->token};
    memcpy(r.secret, v->secret, TN_SECRET_BYTES);
    memset(&L.rel, 0, sizeof(L.rel));
    st->ops->release(st, &r, &L.rel.res, load_released, NULL);
}

static void load_next(void)
{
    char name[96];
    uint8_t sec[TN_SECRET_BYTES];
    (void)snprintf(name, sizeof(name), "%s/other/%llu", run,
                   (unsigned long long)L.i++);
    (void)tn_rand_bytes(sec, sizeof(sec));
    struct tn_acquire_req r = {.name = name,
                               .name_len = strlen(name),
                               .owner_id = "other",
                               .ttl_ms = 60000,
                               .secret = sec};
    memset(&L.acq, 0, sizeof(L.acq));
    L.sent_us = now_us();
    st->ops->acquire(st, &r, &L.acq.res, load_acquired, NULL);
}

/* The latencies of the acquires sent in [from, to). */
static void phase(const char *what, int64_t from, int64_t to)
{
    int64_t *v = tn_calloc(L.n + 1, sizeof(*v));
    size_t k = 0;
    for (size_t i = 0; v != NULL && i < L.n; i++) {
        if (L.t[i] >= from && L.t[i] < to)
            v[k++] = L.lat[i];
    }
    printf("  %-8s %6zu acquires in %6.1f s: p50 %6lld us, p99 %7lld us, max "
           "%7lld us\n",
           what, k, (double)(to - from) / 1e6, (long long)pct(v, k, 0.5),
           (long long)pct(v, k, 0.99), (long long)pct(v, k, 1.0));
    tn_free(v);
}

static void bench_ending(size_t leases, bool end)
{
    struct sess x;
    open_session(&x, 600000);
    fill(&x, end ? "end" : "expiry", leases);
    L.cap = 1000000;
    L.t = tn_calloc(L.cap, sizeof(*L.t));
    L.lat = tn_calloc(L.cap, sizeof(*L.lat));
    if (L.t == NULL || L.lat == NULL)
        abort();
    long settled0 = gauge("tenure_session_leases_settled_total");
    int64_t t0 = now_us();
    load_next();
    int64_t t1 = 0, t2 = 0, answered = 0;
    struct call c = {0};
    struct tn_session_req r = sreq(&x);
    if (end) {
        run_for(3000);
        t1 = now_us();
        st->ops->session_end(st, &r, &c.res, on_done, &c);
        wait_all(&c, 1);
        answered = now_us() - t1;
        if (c.res.rc != TN_OK)
            die("session end", c.res.rc);
    } else {
        r.ttl_ms = 3000; /* it runs out 3 s from now */
        st->ops->session_renew(st, &r, &c.res, on_done, &c);
        wait_all(&c, 1);
        t1 = now_us() + 3000 * 1000;
    }
    /* until the sweep has written every lease's end (a DELETE of at most
     * TN_PG_END_INLINE leases did it itself) */
    while (gauge("tenure_session_leases_settled_total") - settled0 <
               (long)leases &&
           leases > TN_PG_END_INLINE && now_us() < t1 + 600 * 1000000LL)
        run_for(20);
    t2 = now_us();
    run_for(3000);
    int64_t t3 = now_us();
    L.stop = true;
    while (!L.idle)
        (void)tn_loop_run(loop);
    printf("a session of %zu leases %s: %.2f s from its end until all its "
           "leases were settled; the unrelated client's acquires (one at a "
           "time, same instance):\n",
           leases, end ? "ended by DELETE" : "expired",
           (double)(t2 - t1) / 1e6);
    if (end)
        printf("  the DELETE was answered in %.1f ms\n",
               (double)answered / 1e3);
    phase("before", t0, t1);
    phase("settling", t1, t2);
    phase("after", t2, t3);
    tn_free(L.t);
    tn_free(L.lat);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_pg_sessions URL claim N ROUNDS |"
                        " renew L COUNT | expiry L | end L\n");
        return 2;
    }
    uint8_t r[4];
    (void)tn_rand_bytes(r, sizeof(r));
    tn_hex_encode(r, sizeof(r), run);
    loop = tn_loop_new();
    struct tn_store_config cfg = {.url = argv[1],
                                  .batch_max = 512,
                                  .max_waiters = 16,
                                  .max_waiters_per_name = 4,
                                  .max_wait_ms = 60000};
    struct tn_errmsg em = {{0}};
    int rc = tn_store_open(loop, &cfg, &st, &em);
    if (rc < 0) {
        fprintf(stderr, "open: %s %s\n", tn_errname(rc), em.text);
        return 1;
    }
    for (int i = 0; i < 300 && !st->ops->is_ready(st); i++)
        run_for(50);
    size_t n = strtoul(argv[3], NULL, 10);
    if (strcmp(argv[2], "claim") == 0 && argc == 5)
        bench_claim(n, (int)strtol(argv[4], NULL, 10));
    else if (strcmp(argv[2], "renew") == 0 && argc == 5)
        bench_renew(n, strtoul(argv[4], NULL, 10));
    else if (strcmp(argv[2], "expiry") == 0 || strcmp(argv[2], "end") == 0)
        bench_ending(n, strcmp(argv[2], "end") == 0);
    else
        return 2;
    st->ops->close(st);
    tn_loop_free(loop);
    return 0;
}
