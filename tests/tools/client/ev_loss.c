/* SPDX-License-Identifier: MIT */
/* tn-ev-loss URL NAME TTL_MS WATCH(0|1|redis://...): acquire NAME, keep it
 * alive, print "acquired TOKEN", then wait (at most 2*TTL) for the
 * keepalive to report the loss and print "lost MS REASON AT", MS counted
 * from "acquired", AT the wall clock then (ms since the epoch, as the
 * at_ms of published events).
 * With WATCH=1 the client follows the event stream; with a redis:// or
 * rediss:// URL, that Redis stream (tenured --publish); with a kafka://
 * URL, that Kafka topic through libtenure-kafka's follower, with the
 * librdkafka settings of $TN_KAFKA_CONF ("key=value,key=value", for
 * bench/follower-latency.sh to try one against the built-in ones).  A
 * test helper only. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/client.h>
#include <tenure/err.h>
#include <tenure/events_kafka.h>

#include "common/clock.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ended;
static enum tn_lease_end why;

static void on_end(struct tn_lease *l, enum tn_lease_end reason, int rc,
                   void *ud)
{
    (void)l, (void)rc, (void)ud;
    pthread_mutex_lock(&mu);
    ended = 1;
    why = reason;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

/* $TN_KAFKA_CONF split at commas into kv (the string is the process's
 * own, kept until exit); the count. */
static size_t kafka_conf(const char **kv, size_t cap)
{
    char *s = getenv("TN_KAFKA_CONF");
    size_t n = 0;
    char *save = NULL;
    for (char *t = s != NULL ? strtok_r(s, ",", &save) : NULL;
         t != NULL && n < cap; t = strtok_r(NULL, ",", &save))
        kv[n++] = t;
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        (void)fprintf(stderr, "usage: tn-ev-loss URL NAME TTL_MS WATCH\n");
        return 2;
    }
    struct tn_client_options o;
    tn_client_options_init(&o);
    o.urls[0] = argv[1];
    o.n_urls = 1;
    bool kafka = strncmp(argv[4], "kafka://", 8) == 0;
    o.watch_events = strcmp(argv[4], "0") != 0 && !kafka;
    if (strncmp(argv[4], "redis", 5) == 0)
        o.events_url = argv[4];
    struct tn_client *c = NULL;
    struct tn_errmsg em = {{0}};
    if (tn_client_new(&o, &c, &em) < 0) {
        (void)fprintf(stderr, "new: %s\n", em.text);
        return 1;
    }
    struct tn_kafka_follower *kf = NULL;
    const char *kv[16];
    size_t n_kv = kafka ? kafka_conf(kv, 16) : 0;
    if (kafka && tn_kafka_follower_start(c, argv[4], kv, n_kv, &kf, &em) < 0) {
        (void)fprintf(stderr, "kafka follower: %s\n", em.text);
        return 1;
    }
    int64_t ttl = strtoll(argv[3], NULL, 10);
    struct tn_acquire_args a = {.name = argv[2], .ttl_ms = ttl};
    struct tn_lease *l = NULL;
    if (tn_client_acquire(c, &a, &l, NULL, &em) < 0 ||
        tn_client_keepalive_start(c, l, on_end, NULL) < 0) {
        (void)fprintf(stderr, "acquire: %s\n", em.text);
        return 1;
    }
    int64_t t0 = tn_clock_mono_ms();
    (void)printf("acquired %" PRIu64 "\n", tn_lease_token(l));
    (void)fflush(stdout);
    pthread_mutex_lock(&mu);
    while (!ended && tn_clock_mono_ms() - t0 < 2 * ttl) {
        struct timespec ts;
        (void)clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        (void)pthread_cond_timedwait(&cv, &mu, &ts);
    }
    int got = ended;
    pthread_mutex_unlock(&mu);
    if (got) {
        (void)printf("lost %" PRId64 " %s %" PRId64 "\n",
                     tn_clock_mono_ms() - t0, tn_lease_end_name(why),
                     tn_clock_wall_ms());
    } else
        (void)printf("held\n");
    (void)fflush(stdout);
    tn_lease_free(l);
    tn_kafka_follower_stop(kf);
    tn_client_free(c);
    return 0;
}
