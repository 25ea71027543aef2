/* SPDX-License-Identifier: MIT */
/* tn-client-probe: drives libtenure's keepalive for the integration tests
 * and reports what it observed, one key=value line per event, times in
 * CLOCK_MONOTONIC milliseconds (comparable with `tn-client-probe mono` run
 * by the test script).
 *   tn-client-probe mono
 *   tn-client-probe keep URLS NAME TTL_MS HOLD_MS
 *   tn-client-probe session URLS PREFIX TTL_MS HOLD_MS N
 * keep: acquire NAME, keep it alive, and poll tn_lease_is_held every
 * millisecond.  If HOLD_MS passes while held, check it is still held,
 * release it and expect the callback with "released".  Otherwise report
 * the loss.  Afterwards wait 2 TTLs more to prove the callback ran exactly
 * once and the lease never showed as held again.  session: the same for a
 * session of TTL_MS with the N names PREFIX0.. claimed under it (ended at
 * HOLD_MS), the end line also counting the leases' callbacks (probe_s.c).
 * TN_PROBE_WATCH=1 in the environment sets watch_events;
 * TN_PROBE_EVENTS=redis://HOST:PORT/STREAM or kafka://BROKERS/TOPIC follows
 * that stream of tenured --publish instead.
 * A test helper only. */
#include "probe.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tenure/client.h>
#include <tenure/events_kafka.h>

#include "common/clock.h"

struct probe {
    atomic_int calls;        /* callbacks seen */
    atomic_int reason;       /* last reason */
    atomic_int rc;           /* last rc */
    atomic_llong at_ms;      /* when the first callback ran */
    atomic_llong safe_at_cb; /* tn_lease_safe_for_ms inside the callback */
};

static void on_end(struct tn_lease *l, enum tn_lease_end why, int rc, void *ud)
{
    struct probe *p = ud;
    if (atomic_fetch_add(&p->calls, 1) == 0) {
        atomic_store(&p->at_ms, (long long)tn_clock_mono_ms());
        atomic_store(&p->safe_at_cb, (long long)tn_lease_safe_for_ms(l));
    }
    atomic_store(&p->reason, (int)why);
    atomic_store(&p->rc, rc);
}

void probe_log(void *ud, const char *msg)
{
    (void)ud;
    (void)printf("log at=%" PRId64 " %s\n", tn_clock_mono_ms(), msg);
    (void)fflush(stdout);
}

void probe_nap_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (ms % 1000) * 1000000L};
    (void)nanosleep(&ts, NULL);
}

static int new_client(char *urls, struct tn_client **c)
{
    struct tn_client_options o;
    tn_client_options_init(&o);
    for (char *p = urls; p != NULL && o.n_urls < TN_CLIENT_MAX_URLS;) {
        char *comma = strchr(p, ',');
        if (comma != NULL)
            *comma = '\0';
        o.urls[o.n_urls++] = p;
        p = comma != NULL ? comma + 1 : NULL;
    }
    o.log = probe_log;
    /* TN_PROBE_WATCH=1: also follow the event stream (watch_events);
     * TN_PROBE_EVENTS=redis://...: that Redis stream instead. */
    const char *ev = getenv("TN_PROBE_EVENTS");
    o.watch_events = getenv("TN_PROBE_WATCH") != NULL ||
                     (ev != NULL && strncmp(ev, "redis", 5) == 0);
    if (ev != NULL && strncmp(ev, "redis", 5) == 0)
        o.events_url = ev;
    o.request_timeout_ms = 2000;
    o.connect_timeout_ms = 200;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_new(&o, c, &em);
    if (rc < 0)
        (void)printf("error=client rc=%s %s\n", tn_errname(rc), em.text);
    return rc;
}

/* Poll until the callback ran or hold_ms passed; returns the last time
 * the lease showed as held. */
static int64_t watch(struct tn_lease *l, struct probe *p, int64_t until_ms)
{
    int64_t last_held = -1;
    while (atomic_load(&p->calls) == 0 && tn_clock_mono_ms() < until_ms) {
        if (tn_lease_is_held(l))
            last_held = tn_clock_mono_ms();
        probe_nap_ms(1);
    }
    return last_held;
}

/* After the end: the lease must never show as held again. */
static int64_t after_end(struct tn_lease *l, int64_t until_ms)
{
    int64_t held_after = -1;
    while (tn_clock_mono_ms() < until_ms) {
        if (tn_lease_is_held(l))
            held_after = tn_clock_mono_ms();
        probe_nap_ms(2);
    }
    return held_after;
}

static int keep(struct tn_client *c, const char *name, int64_t ttl,
                int64_t hold)
{
    struct tn_acquire_args a = {.name = name, .ttl_ms = ttl};
    struct tn_lease *l = NULL;
    struct tn_errmsg em = {{0}};
    int64_t t0 = tn_clock_mono_ms();
    int rc = tn_client_acquire(c, &a, &l, NULL, &em);
    if (rc < 0) {
        (void)printf("error=acquire rc=%s %s\n", tn_errname(rc), em.text);
        return 1;
    }
    (void)printf("acquired token=%" PRIu64 " sent_before=%" PRId64 "\n",
                 tn_lease_token(l), t0);
    struct probe p = {0};
    rc = tn_client_keepalive_start(c, l, on_end, &p);
    if (rc < 0) {
        (void)printf("error=keepalive rc=%s\n", tn_errname(rc));
        tn_lease_free(l);
        return 1;
    }
    (void)fflush(stdout);
    int64_t last_held = watch(l, &p, t0 + hold);
    if (atomic_load(&p.calls) == 0) {
        (void)printf("held_until_hold=%d safe_for_ms=%" PRId64 "\n",
                     tn_lease_is_held(l), tn_lease_safe_for_ms(l));
        rc = tn_client_release(c, l, &em);
        (void)printf("release rc=%s\n", tn_errname(rc));
        (void)watch(l, &p, tn_clock_mono_ms() + 2000);
    }
    int64_t held_after = after_end(l, tn_clock_mono_ms() + 2 * ttl);
    (void)printf("end reason=%s rc=%s cb_at=%lld safe_at_cb=%lld "
                 "last_held_at=%" PRId64 " held_after=%" PRId64 " calls=%d\n",
                 tn_lease_end_name((enum tn_lease_end)atomic_load(&p.reason)),
                 tn_errname(atomic_load(&p.rc)), atomic_load(&p.at_ms),
                 atomic_load(&p.safe_at_cb), last_held, held_after,
                 atomic_load(&p.calls));
    tn_lease_free(l);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "mono") == 0) {
        (void)printf("%" PRId64 "\n", tn_clock_mono_ms());
        return 0;
    }
    bool session = argc == 7 && strcmp(argv[1], "session") == 0;
    if (!session && (argc != 6 || strcmp(argv[1], "keep") != 0)) {
        (void)fprintf(stderr, "usage: tn-client-probe mono | keep URLS NAME "
                              "TTL_MS HOLD_MS | session URLS PREFIX TTL_MS "
                              "HOLD_MS N\n");
        return 2;
    }
    struct tn_client *c = NULL;
    if (new_client(argv[2], &c) < 0)
        return 1;
    /* TN_PROBE_EVENTS=kafka://BROKERS/TOPIC: libtenure-kafka's follower. */
    const char *ev = getenv("TN_PROBE_EVENTS");
    struct tn_kafka_follower *kf = NULL;
    struct tn_errmsg em = {{0}};
    if (ev != NULL && strncmp(ev, "kafka://", 8) == 0 &&
        tn_kafka_follower_start(c, ev, NULL, 0, &kf, &em) < 0) {
        (void)printf("error=kafka %s\n", em.text);
        tn_client_free(c);
        return 1;
    }
    int64_t ttl = strtoll(argv[4], NULL, 10);
    int64_t hold = strtoll(argv[5], NULL, 10);
    int ex = session ? probe_session(c, argv[3], ttl, hold,
                                     strtoul(argv[6], NULL, 10))
                     : keep(c, argv[3], ttl, hold);
    tn_kafka_follower_stop(kf);
    tn_client_free(c);
    return ex;
}
