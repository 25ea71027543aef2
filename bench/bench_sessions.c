/* SPDX-License-Identifier: MIT */
/* What sessions cost in the embedded store (docs/SESSIONS.md invariant 7),
 * measured through the store vtable on a real loop and a real data dir:
 *
 *  1. a claim of one new name, and its batch release, under a session of
 *     10 leases and under one of 100,000: the loop-thread time of each
 *     call (the decision, the rows into the open batch), medians and 99th
 *     percentiles over ROUNDS claims alternated between the two sessions;
 *  2. the end of the 100,000-lease session: how long each loop turn takes
 *     while its leases are settled (with the commit on its thread, a turn
 *     is the settling slice; inline, the slice plus its commit), how many
 *     turns, and the latency of a read sent every turn meanwhile.
 *
 * Times are of the loop thread's CPU (CLOCK_THREAD_CPUTIME_ID: what the
 * loop spends, whatever else the machine runs), and for the turns also
 * wall time (what a request waiting behind one sees).
 * Usage: bench_sessions [LEASES [ROUNDS]] (defaults 100000 and 2000);
 * TENURE_COMMIT=thread puts the commit on its thread (default inline, as
 * tenured's default).  Timing is a bench's business, not a test's:
 * nothing here asserts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/loop.h"
#include "common/rand.h"
#include "store/store.h"

struct call {
    struct tn_store_result res;
    bool done;
};

static void on_done(void *arg)
{
    ((struct call *)arg)->done = true;
}

/* The loop thread's CPU time, ns. */
static int64_t cpu_ns(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct tn_loop *loop;
static struct tn_store *st;

static void wait_done(struct call *c)
{
    while (!c->done)
        (void)tn_loop_run_once(loop, 1);
}

struct sess {
    char id[TN_SESSION_ID_HEX + 1];
    uint8_t secret[TN_SECRET_BYTES];
};

static struct tn_session_req req_of(const struct sess *s)
{
    struct tn_session_req r = {.id = s->id};
    memcpy(r.secret, s->secret, TN_SECRET_BYTES);
    return r;
}

static void open_session(struct sess *s, const char *owner)
{
    uint8_t raw[TN_SESSION_ID_BYTES];
    (void)tn_rand_bytes(raw, sizeof(raw));
    tn_hex_encode(raw, sizeof(raw), s->id);
    (void)tn_rand_bytes(s->secret, sizeof(s->secret));
    struct tn_session_open_req r = {
        .id = s->id, .owner_id = owner, .ttl_ms = 3600000, .secret = s->secret};
    struct call c = {0};
    st->ops->session_open(st, &r, &c.res, on_done, &c);
    wait_done(&c);
    if (c.res.rc != TN_OK) {
        fprintf(stderr, "open: %s\n", tn_errname(c.res.rc));
        exit(1);
    }
}

/* Claim names[0..n) under s; the loop-thread time of the call, in ns. */
static int64_t claim(const struct sess *s, const char *const *names, size_t n,
                     uint64_t *tokens)
{
    static struct tn_name_ref refs[1000];
    static uint8_t secrets[1000 * TN_SECRET_BYTES];
    for (size_t i = 0; i < n; i++)
        refs[i] = (struct tn_name_ref){names[i], strlen(names[i])};
    (void)tn_rand_bytes(secrets, n * TN_SECRET_BYTES);
    struct tn_claim_req r = {
        .session = req_of(s), .names = refs, .n_names = n, .secrets = secrets};
    struct call c = {0};
    int64_t t0 = cpu_ns();
    st->ops->claim(st, &r, &c.res, on_done, &c);
    int64_t t = cpu_ns() - t0;
    wait_done(&c);
    for (size_t i = 0; c.res.rc == TN_OK && i < n; i++) {
        if (c.res.claims[i].outcome != TN_CLAIM_GRANTED)
            c.res.rc = TN_ECONFLICT;
        if (tokens != NULL)
            tokens[i] = c.res.claims[i].token;
    }
    if (c.res.rc != TN_OK) {
        fprintf(stderr, "claim: %s\n", tn_errname(c.res.rc));
        exit(1);
    }
    tn_store_result_release(&c.res);
    return t;
}

/* Release one lease of s by batch release; the call's time in ns. */
static int64_t unclaim(const struct sess *s, const char *name, uint64_t token)
{
    struct tn_name_token v = {name, strlen(name), token};
    struct tn_unclaim_req r = {
        .session = req_of(s), .leases = &v, .n_leases = 1};
    struct call c = {0};
    int64_t t0 = cpu_ns();
    st->ops->unclaim(st, &r, &c.res, on_done, &c);
    int64_t t = cpu_ns() - t0;
    wait_done(&c);
    if (c.res.rc != TN_OK || c.res.claims[0].outcome != TN_CLAIM_RELEASED) {
        fprintf(stderr, "unclaim: %s\n", tn_errname(c.res.rc));
        exit(1);
    }
    tn_store_result_release(&c.res);
    return t;
}

static void fill(struct sess *s, const char *prefix, size_t count)
{
    static char buf[1000][48];
    static const char *names[1000];
    for (size_t at = 0; at < count; at += 1000) {
        size_t n = count - at < 1000 ? count - at : 1000;
        for (size_t i = 0; i < n; i++) {
            (void)snprintf(buf[i], sizeof(buf[i]), "%s%zu", prefix, at + i);
            names[i] = buf[i];
        }
        (void)claim(s, names, n, NULL);
    }
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, int64_t *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp64);
    printf("%-44s median %7.2f us  p99 %7.2f us  max %7.2f us\n", what,
           (double)v[n / 2] / 1e3, (double)v[n * 99 / 100] / 1e3,
           (double)v[n - 1] / 1e3);
}

/* Claims and releases of one name at a time, alternated between the two
 * sessions so that both see the same machine. */
static void claim_cost(struct sess *small, struct sess *big, size_t rounds)
{
    int64_t *c[2], *u[2];
    for (int k = 0; k < 2; k++) {
        c[k] = tn_calloc(rounds, sizeof(int64_t));
        u[k] = tn_calloc(rounds, sizeof(int64_t));
    }
    char name[48];
    for (size_t i = 0; i < rounds; i++) {
        for (int k = 0; k < 2; k++) {
            (void)snprintf(name, sizeof(name), "probe-%d-%zu", k, i);
            const char *names[1] = {name};
            uint64_t token;
            c[k][i] = claim(k ? big : small, names, 1, &token);
            u[k][i] = unclaim(k ? big : small, name, token);
        }
    }
    report("claim of 1 name, session of 10 leases", c[0], rounds);
    report("claim of 1 name, session of LEASES leases", c[1], rounds);
    report("batch release of 1, session of 10 leases", u[0], rounds);
    report("batch release of 1, session of LEASES leases", u[1], rounds);
    for (int k = 0; k < 2; k++) {
        tn_free(c[k]);
        tn_free(u[k]);
    }
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

/* End big and time every loop turn until its leases are settled, with a
 * read of another name sent at each turn. */
static void end_cost(struct sess *big, size_t leases)
{
    struct tn_session_req r = req_of(big);
    struct call e = {0};
    long settled0 = gauge("tenure_session_leases_settled_total");
    int64_t t0 = tn_clock_mono_ns();
    st->ops->session_end(st, &r, &e.res, on_done, &e);
    int64_t call_ns = tn_clock_mono_ns() - t0;
    size_t cap = 1 << 16, turns = 0, reads = 0;
    int64_t *turn = tn_calloc(cap, sizeof(int64_t));
    int64_t *cpu = tn_calloc(cap, sizeof(int64_t));
    int64_t *read = tn_calloc(cap, sizeof(int64_t));
    int64_t start = tn_clock_mono_ns();
    while (turns < cap &&
           (turns % 16 != 0 ||
            gauge("tenure_session_leases_settled_total") - settled0 <
                (long)leases)) {
        struct call g = {0};
        int64_t g0 = tn_clock_mono_ns();
        st->ops->get(st, "probe-other", 11, &g.res, on_done, &g);
        int64_t a = tn_clock_mono_ns(), c0 = cpu_ns();
        (void)tn_loop_run_once(loop, 1);
        cpu[turns] = cpu_ns() - c0;
        turn[turns++] = tn_clock_mono_ns() - a;
        wait_done(&g);
        read[reads++] = tn_clock_mono_ns() - g0;
    }
    double total = (double)(tn_clock_mono_ns() - start) / 1e6;
    printf("end of a session of %zu leases: the end call %.2f us; settled "
           "in %.1f ms over %zu loop turns\n",
           leases, (double)call_ns / 1e3, total, turns);
    report("loop turn while settling, CPU", cpu, turns);
    report("loop turn while settling, wall", turn, turns);
    report("a read sent at each turn, answered (wall)", read, reads);
    tn_free(turn);
    tn_free(cpu);
    tn_free(read);
}

int main(int argc, char **argv)
{
    size_t leases = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
    size_t rounds = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000;
    const char *mode = getenv("TENURE_COMMIT");
    char dir[] = "/tmp/tn-bench-sessions.XXXXXX";
    if (mkdtemp(dir) == NULL)
        return 1;
    loop = tn_loop_new();
    struct tn_store_config cfg = {.url = "",
                                  .data_dir = dir,
                                  .batch_max = 512,
                                  .expected_leases = leases + rounds * 2,
                                  .max_waiters = 16,
                                  .max_waiters_per_name = 4,
                                  .max_wait_ms = 60000,
                                  .commit_in_loop =
                                      mode == NULL || strcmp(mode, "thread")};
    struct tn_errmsg em = {{0}};
    if (loop == NULL || tn_store_open(loop, &cfg, &st, &em) < 0) {
        fprintf(stderr, "open: %s\n", em.text);
        return 1;
    }
    printf("commit=%s leases=%zu rounds=%zu\n",
           cfg.commit_in_loop ? "inline" : "thread", leases, rounds);
    struct sess small, big;
    open_session(&small, "bench/small");
    open_session(&big, "bench/big");
    fill(&small, "small-", 10);
    fill(&big, "big-", leases);
    claim_cost(&small, &big, rounds);
    end_cost(&big, leases);
    st->ops->close(st);
    tn_loop_free(loop);
    char cmd[128];
    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
