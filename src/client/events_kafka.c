/* SPDX-License-Identifier: MIT */
/* libtenure-kafka's follower of the lease-event topic tenured --publish
 * kafka://... fills (see <tenure/events_kafka.h>).  One consumer without a
 * group: each partition is assigned at its high watermark, read when the
 * follower starts, so nothing produced after that is missed.  Records are
 * JSON objects {"id","type","name","owner_id","token","floor","at_ms"};
 * they reach the client only through libtenure's public feed calls, so
 * this library needs nothing internal of libtenure.  Values are capped;
 * a record that is not such an object is skipped. */
#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tenure/events_kafka.h>
#include <tenure/session.h>

#include "common/kafka_conf.h"
#include "common/kafka_url.h"

#define VALUE_MAX 65536
#define POLL_MS 200
#define SETUP_MS 5000
#define FETCH_WAIT_MS "10"

struct tn_kafka_follower {
    struct tn_client *c; /* fed, borrowed */
    rd_kafka_t *rk;      /* the consumer */
    char topic[256];     /* followed topic */
    pthread_t thread;    /* runs follow() */
    atomic_bool stop;    /* set by stop() */
    int n_parts;         /* partitions assigned, 0 until then */
    bool baseline;       /* the next record is the newest before the start: it
                            only sets last_id */
    unsigned long long last_id; /* last event id fed, 0 none */
};

static int configure(rd_kafka_conf_t *conf, const char *brokers,
                     const char *const *kv, size_t n, struct tn_errmsg *em)
{
    /* assign() needs a group id, but joins no group and commits nothing:
     * each follower starts at the end, as an SSE subscriber does.
     * fetch.wait.max.ms: how long a broker may hold a fetch that found
     * nothing (librdkafka's default is 500).  A broker that wakes a held
     * fetch when a record lands loses no time to it, but one that does
     * not (librdkafka's mock cluster) delays every event by up to that
     * much: 10 ms keeps the follower within the Redis follower's latency
     * (docs/PERFORMANCE.md, "Followers"), at the cost of up to 100 empty
     * fetches a second while the topic is idle; conf may set it back. */
    char group[64];
    (void)snprintf(group, sizeof(group), "tenure-follower-%p", (void *)conf);
    const char *const fixed[][2] = {{"bootstrap.servers", brokers},
                                    {"group.id", group},
                                    {"enable.auto.commit", "false"},
                                    {"enable.partition.eof", "false"},
                                    {"fetch.wait.max.ms", FETCH_WAIT_MS}};
    int rc = tn_kafka_conf_set_all(conf, fixed,
                                   sizeof(fixed) / sizeof(fixed[0]), em);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char k[256];
        const char *eq = kv[i] != NULL ? strchr(kv[i], '=') : NULL;
        if (eq == NULL || eq == kv[i] || (size_t)(eq - kv[i]) >= sizeof(k)) {
            tn_errmsg_set(em, "kafka setting \"%s\": expected key=value",
                          kv[i] != NULL ? kv[i] : "(null)");
            return TN_EINVAL;
        }
        (void)snprintf(k, sizeof(k), "%.*s", (int)(eq - kv[i]), kv[i]);
        rc = tn_kafka_conf_set(conf, k, eq + 1, em);
    }
    return rc;
}

/* Assign every partition of the topic at its high watermark; false while
 * the topic or the cluster cannot be seen yet. */
static bool assign_at_end(struct tn_kafka_follower *f, int timeout_ms)
{
    rd_kafka_topic_t *t = rd_kafka_topic_new(f->rk, f->topic, NULL);
    const struct rd_kafka_metadata *md = NULL;
    bool ok = t != NULL && rd_kafka_metadata(f->rk, 0, t, &md, timeout_ms) ==
                               RD_KAFKA_RESP_ERR_NO_ERROR;
    ok = ok && md->topic_cnt == 1 && md->topics[0].err == 0 &&
         md->topics[0].partition_cnt > 0;
    int n = ok ? md->topics[0].partition_cnt : 0;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(n);
    for (int i = 0; ok && i < n; i++) {
        int32_t p = md->topics[0].partitions[i].id;
        int64_t lo = 0, hi = 0;
        ok = rd_kafka_query_watermark_offsets(f->rk, f->topic, p, &lo, &hi,
                                              timeout_ms) == 0;
        /* One partition: from the newest record, for its id only, so
         * that a jump is seen from the first event on. */
        f->baseline = n == 1 && hi > lo;
        rd_kafka_topic_partition_list_add(l, f->topic, p)->offset =
            f->baseline ? hi - 1 : hi;
    }
    ok = ok && rd_kafka_assign(f->rk, l) == RD_KAFKA_RESP_ERR_NO_ERROR;
    if (ok)
        f->n_parts = n;
    rd_kafka_topic_partition_list_destroy(l);
    if (md != NULL)
        rd_kafka_metadata_destroy(md);
    if (t != NULL)
        rd_kafka_topic_destroy(t);
    return ok;
}

static unsigned long long num(json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) >= 0
               ? (unsigned long long)json_integer_value(v)
               : 0;
}

/* One record: dedupe and the id rule (one partition only), then feed. */
static void record(struct tn_kafka_follower *f, const rd_kafka_message_t *m)
{
    if (m->len == 0 || m->len > VALUE_MAX)
        return;
    json_t *v = json_loadb(m->payload, m->len, 0, NULL);
    const char *type = json_string_value(json_object_get(v, "type"));
    const char *name = json_string_value(json_object_get(v, "name"));
    unsigned long long id = num(json_object_get(v, "id"));
    if (type == NULL || id == 0) {
        json_decref(v);
        return;
    }
    bool ordered = f->n_parts == 1;
    if (f->baseline) {
        f->baseline = false;
        f->last_id = id;
        json_decref(v);
        return;
    }
    if (ordered && f->last_id != 0 && id <= f->last_id) {
        json_decref(v);
        return; /* delivered again */
    }
    bool gap = ordered && f->last_id != 0 && id != f->last_id + 1;
    if (ordered || id > f->last_id)
        f->last_id = id;
    bool reset = strcmp(type, "reset") == 0;
    if (gap || reset)
        tn_client_event_reset(f->c);
    const char *sid = json_string_value(json_object_get(v, "session_id"));
    if (!reset && sid != NULL)
        tn_client_session_event_feed(f->c, type, sid);
    else if (!reset && name != NULL)
        tn_client_event_feed(f->c, type, name,
                             num(json_object_get(v, "token")));
    json_decref(v);
}

static void *follow(void *arg)
{
    struct tn_kafka_follower *f = arg;
    while (!atomic_load(&f->stop)) {
        if (f->n_parts == 0) {
            if (!assign_at_end(f, POLL_MS * 5)) {
                struct timespec ts = {0, POLL_MS * 1000000L};
                (void)nanosleep(&ts, NULL);
            }
            continue;
        }
        rd_kafka_message_t *m = rd_kafka_consumer_poll(f->rk, POLL_MS);
        if (m == NULL)
            continue;
        if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR)
            record(f, m);
        else if (m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET)
            tn_client_event_reset(f->c); /* records were skipped */
        rd_kafka_message_destroy(m);
    }
    return NULL;
}

static void destroy(struct tn_kafka_follower *f)
{
    if (f->rk != NULL) {
        (void)rd_kafka_consumer_close(f->rk);
        rd_kafka_destroy(f->rk);
    }
    free(f);
}

int tn_kafka_follower_start(struct tn_client *c, const char *url,
                            const char *const *conf, size_t n_conf,
                            struct tn_kafka_follower **out,
                            struct tn_errmsg *em)
{
    struct tn_kafka_follower *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return TN_ENOMEM;
    f->c = c;
    struct tn_kafka_url ku;
    rd_kafka_conf_t *kc = NULL;
    int rc = c != NULL && url != NULL && out != NULL &&
                     tn_kafka_url_parse(url, &ku) == 0
                 ? TN_OK
                 : TN_EINVAL;
    if (rc < 0)
        tn_errmsg_set(em, "expected kafka://BROKER[,BROKER...]/TOPIC");
    if (rc == 0 && (kc = rd_kafka_conf_new()) == NULL)
        rc = TN_ENOMEM;
    if (rc == 0)
        rc = configure(kc, ku.brokers, conf, n_conf, em);
    if (rc == 0)
        memcpy(f->topic, ku.topic, sizeof(f->topic));
    char err[256];
    if (rc == 0) {
        f->rk = rd_kafka_new(RD_KAFKA_CONSUMER, kc, err, sizeof(err));
        rc = f->rk != NULL ? TN_OK : TN_EINVAL;
        if (rc < 0)
            tn_errmsg_set(em, "kafka consumer: %s", err);
        else
            kc = NULL; /* owned by rk now */
    }
    if (kc != NULL)
        rd_kafka_conf_destroy(kc);
    /* Positions fixed before returning when the topic can be seen, so
     * that events from now on reach the client; else the thread retries. */
    if (rc == 0)
        (void)assign_at_end(f, SETUP_MS);
    if (rc == 0 && pthread_create(&f->thread, NULL, follow, f) != 0)
        rc = TN_EIO;
    if (rc < 0) {
        destroy(f);
        return rc;
    }
    *out = f;
    return TN_OK;
}

void tn_kafka_follower_stop(struct tn_kafka_follower *f)
{
    if (f == NULL)
        return;
    atomic_store(&f->stop, true);
    (void)pthread_join(f->thread, NULL);
    destroy(f);
}
