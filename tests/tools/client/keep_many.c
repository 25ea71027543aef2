/* SPDX-License-Identifier: MIT */
/* tn-keep-many: how many leases one client keeps alive.
 *   tn-keep-many URL N TTL_MS HOLD_MS CONNS [session]
 * Acquires N leases (keep-many-PID/0..N-1) of TTL_MS one after the other,
 * each handed to the keepalive at once (with CONNS renews at a time), or,
 * with "session", opens one session of TTL_MS and claims the N names
 * under it in batches of 1000; then holds them all for HOLD_MS while
 * sampling every lease's safe time every 100 ms, and prints one line:
 *   leases= ttl_ms= conns= hold_ms= lost= renews= renew_failures=
 *   renews_per_s= min_safe_ms= cpu_ms=
 * lost counts keepalive callbacks before the end (each a lease the client
 * could not keep), min_safe_ms the least safe time any lease had at a
 * sample (how close the keepalive came to losing one).  Exit 0 when
 * nothing was lost, 1 otherwise, 2 on a setup error.  bench/keepalive.sh
 * runs it; a bench tool, not a test. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <tenure/client.h>
#include <tenure/session.h>

#include "common/clock.h"

static atomic_long lost;
static atomic_long renews;
static atomic_long failures;

static void on_end(struct tn_lease *l, enum tn_lease_end why, int rc, void *ud)
{
    (void)l, (void)rc, (void)ud;
    if (why != TN_LEASE_END_RELEASED && why != TN_LEASE_END_STOPPED)
        atomic_fetch_add(&lost, 1);
}

static void on_session_end(struct tn_session *s, enum tn_lease_end why, int rc,
                           void *ud)
{
    (void)s, (void)why, (void)rc, (void)ud;
}

static void on_log(void *ud, const char *msg)
{
    (void)ud;
    if (strncmp(msg, "renewed ", 8) == 0)
        atomic_fetch_add(&renews, 1);
    else if (strstr(msg, "failed") != NULL)
        atomic_fetch_add(&failures, 1);
}

static void nap_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (ms % 1000) * 1000000L};
    (void)nanosleep(&ts, NULL);
}

static int64_t cpu_ms(void)
{
    struct rusage ru;
    (void)getrusage(RUSAGE_SELF, &ru);
    return (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
}

struct run {
    struct tn_client *c;
    struct tn_lease **leases;
    size_t n;
    int64_t ttl_ms;
    char prefix[64];
};

static int take_leases(struct run *r)
{
    for (size_t i = 0; i < r->n; i++) {
        char name[96];
        (void)snprintf(name, sizeof(name), "%s%zu", r->prefix, i);
        struct tn_acquire_args a = {.name = name, .ttl_ms = r->ttl_ms};
        struct tn_errmsg em = {{0}};
        int rc = tn_client_acquire(r->c, &a, &r->leases[i], NULL, &em);
        if (rc == 0)
            rc = tn_client_keepalive_start(r->c, r->leases[i], on_end, NULL);
        if (rc < 0) {
            fprintf(stderr, "lease %zu: %s %s\n", i, tn_strerror(rc), em.text);
            return -1;
        }
    }
    return 0;
}

static int claim_batch(struct run *r, struct tn_session *s, size_t from,
                       size_t n)
{
    char(*names)[96] = calloc(n, sizeof(*names));
    const char **ptrs = calloc(n, sizeof(*ptrs));
    struct tn_claim_result *res = NULL;
    struct tn_errmsg em = {{0}};
    int rc = names != NULL && ptrs != NULL ? 0 : TN_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        (void)snprintf(names[i], sizeof(names[i]), "%s%zu", r->prefix,
                       from + i);
        ptrs[i] = names[i];
    }
    struct tn_claim_args a = {.names = ptrs, .n_names = n};
    if (rc == 0)
        rc = tn_client_session_claim(s, &a, &res, &em);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        r->leases[from + i] = res->items[i].lease;
        res->items[i].lease = NULL;
        if (r->leases[from + i] == NULL)
            rc = TN_ECONFLICT;
    }
    if (rc < 0)
        fprintf(stderr, "claim: %s %s\n", tn_strerror(rc), em.text);
    tn_claim_result_free(res);
    free(names);
    free(ptrs);
    return rc < 0 ? -1 : 0;
}

static int take_session(struct run *r, struct tn_session **s)
{
    struct tn_session_args sa = {.ttl_ms = r->ttl_ms};
    struct tn_errmsg em = {{0}};
    int rc = tn_client_session_open(r->c, &sa, s, &em);
    if (rc == 0)
        rc =
            tn_client_session_keepalive_start(*s, on_session_end, on_end, NULL);
    if (rc < 0) {
        fprintf(stderr, "session: %s %s\n", tn_strerror(rc), em.text);
        return -1;
    }
    for (size_t i = 0; i < r->n; i += 1000) {
        size_t k = r->n - i < 1000 ? r->n - i : 1000;
        if (claim_batch(r, *s, i, k) < 0)
            return -1;
    }
    return 0;
}

/* Hold for hold_ms, sampling; the least safe time seen. */
static int64_t hold(const struct run *r, int64_t hold_ms)
{
    int64_t min_safe = INT64_MAX;
    int64_t until = tn_clock_mono_ms() + hold_ms;
    while (tn_clock_mono_ms() < until) {
        nap_ms(100);
        for (size_t i = 0; i < r->n; i++) {
            int64_t s = tn_lease_safe_for_ms(r->leases[i]);
            if (s < min_safe)
                min_safe = s;
        }
    }
    return min_safe;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: tn-keep-many URL N TTL_MS HOLD_MS CONNS "
                        "[session]\n");
        return 2;
    }
    struct tn_client_options o;
    tn_client_options_init(&o);
    o.urls[0] = argv[1];
    o.n_urls = 1;
    o.log = on_log;
    o.keepalive_connections = strtoul(argv[5], NULL, 10);
    struct run r = {.n = strtoul(argv[2], NULL, 10),
                    .ttl_ms = strtoll(argv[3], NULL, 10)};
    int64_t hold_ms = strtoll(argv[4], NULL, 10);
    bool session = argc > 6 && strcmp(argv[6], "session") == 0;
    (void)snprintf(r.prefix, sizeof(r.prefix), "keep-many-%ld/",
                   (long)getpid());
    struct tn_errmsg em = {{0}};
    r.leases = calloc(r.n, sizeof(*r.leases));
    if (r.leases == NULL || tn_client_new(&o, &r.c, &em) < 0) {
        fprintf(stderr, "client: %s\n", em.text);
        return 2;
    }
    struct tn_session *s = NULL;
    int rc = session ? take_session(&r, &s) : take_leases(&r);
    if (rc < 0)
        return 2;
    long renews0 = atomic_load(&renews);
    int64_t cpu0 = cpu_ms();
    int64_t min_safe = hold(&r, hold_ms);
    long n_renews = atomic_load(&renews) - renews0;
    long n_lost = atomic_load(&lost);
    printf("leases=%zu ttl_ms=%" PRId64 " conns=%zu hold_ms=%" PRId64
           " lost=%ld renews=%ld renew_failures=%ld renews_per_s=%.0f "
           "min_safe_ms=%" PRId64 " cpu_ms=%" PRId64 "%s\n",
           r.n, r.ttl_ms, o.keepalive_connections, hold_ms, n_lost, n_renews,
           atomic_load(&failures), 1000.0 * (double)n_renews / (double)hold_ms,
           min_safe, cpu_ms() - cpu0, session ? " session=1" : "");
    for (size_t i = 0; i < r.n; i++)
        tn_lease_free(r.leases[i]);
    if (s != NULL)
        (void)tn_client_session_end(s, NULL);
    tn_client_session_free(s);
    tn_client_free(r.c);
    free(r.leases);
    return n_lost == 0 ? 0 : 1;
}
