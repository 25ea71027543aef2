/* SPDX-License-Identifier: MIT */
/* The Kafka target: kafka://BROKER[,BROKER...]/TOPIC (common/kafka_url.h,
 * as the followers read it).  Each record is
 * produced keyed by the lease name (a session's by its id, a reset has no
 * key), its value the record as JSON, by an idempotent producer
 * (enable.idempotence=true: acks=all, no duplicates or reordering from
 * librdkafka's own retries).
 * A record counts as taken when its delivery report says so.  Every
 * --publish-opt kafka.KEY=VALUE is handed to librdkafka as KEY=VALUE
 * (security.protocol, ssl.*, sasl.* ...).  Order holds per partition,
 * so per lease name; a topic of one partition keeps the whole id order. */
#include <assert.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "common/kafka_conf.h"
#include "common/kafka_url.h"
#include "target.h"

#define FLUSH_SLICE_MS 100
#define TN_PUB_KAFKA_OPTS 32

struct kafka_target {
    char brokers[1024];            /* bootstrap.servers */
    char topic[256];               /* where to produce */
    char *opts[TN_PUB_KAFKA_OPTS]; /* owned "KEY=VALUE" for librdkafka */
    size_t n_opts;                 /* count */
    rd_kafka_t *rk;                /* producer or NULL */
    int *status;                   /* per record of the batch */
    size_t cap;                    /* its size */
    struct tn_buf value;           /* JSON of one record */
};

enum { PENDING = 0, DELIVERED = 1, FAILED = 2 };

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *op)
{
    (void)rk;
    (void)op;
    int *st = m->_private;
    if (st != NULL)
        *st = m->err == RD_KAFKA_RESP_ERR_NO_ERROR ? DELIVERED : FAILED;
}

/* A producer configured from the URL and the kafka.* options. */
static int make_producer(struct kafka_target *k, rd_kafka_t **out,
                         struct tn_errmsg *em)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    /* message.timeout.ms: fail a delivery in seconds, not the default
     * five minutes: the record stays in the event log and is sent again. */
    const char *const fixed[][2] = {{"bootstrap.servers", k->brokers},
                                    {"enable.idempotence", "true"},
                                    {"linger.ms", "5"},
                                    {"message.timeout.ms", "10000"}};
    int rc = tn_kafka_conf_set_all(conf, fixed,
                                   sizeof(fixed) / sizeof(fixed[0]), em);
    for (size_t i = 0; rc == 0 && i < k->n_opts; i++) {
        char *kv = k->opts[i];
        char *eq = strchr(kv, '=');
        *eq = '\0'; /* checked at open */
        rc = tn_kafka_conf_set(conf, kv, eq + 1, em);
        *eq = '=';
    }
    if (rc < 0) {
        rd_kafka_conf_destroy(conf);
        return rc;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    char err[256];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
        tn_errmsg_set(em, "kafka producer: %s", err);
        return TN_EINVAL;
    }
    *out = rk;
    return TN_OK;
}

static void kafka_close(void *arg);

/* Keep our own copies of the kafka.* options (without the prefix). */
static int copy_opts(struct kafka_target *k, const struct tn_pub_target_opts *o,
                     struct tn_errmsg *em)
{
    for (size_t i = 0; i < o->n_kv; i++) {
        const char *kv = o->kv[i];
        if (strncmp(kv, "kafka.", 6) != 0)
            continue;
        const char *eq = strchr(kv, '=');
        if (eq == NULL || eq == kv + 6 || k->n_opts == TN_PUB_KAFKA_OPTS) {
            tn_errmsg_set(em, "--publish-opt \"%s\": expected kafka.KEY=VALUE",
                          kv);
            return TN_EINVAL;
        }
        if ((size_t)(eq - kv) == 6 + strlen("enable.idempotence") &&
            strncmp(kv + 6, "enable.idempotence", (size_t)(eq - kv - 6)) == 0) {
            tn_errmsg_set(em, "--publish-opt: enable.idempotence stays true");
            return TN_EINVAL;
        }
        if ((k->opts[k->n_opts] = tn_strdup(kv + 6)) == NULL)
            return TN_ENOMEM;
        k->n_opts++;
    }
    return TN_OK;
}

static int kafka_open(const char *url, const struct tn_pub_target_opts *o,
                      void **out, struct tn_errmsg *em)
{
    struct tn_kafka_url ku;
    if (tn_kafka_url_parse(url, &ku) < 0) {
        tn_errmsg_set(em, "--publish: expected kafka://BROKER[,BROKER]/TOPIC");
        return TN_EINVAL;
    }
    struct kafka_target *k = tn_calloc(1, sizeof(*k));
    if (k == NULL)
        return TN_ENOMEM;
    tn_buf_init(&k->value, 4096);
    static_assert(sizeof(k->brokers) == sizeof(ku.brokers) &&
                      sizeof(k->topic) == sizeof(ku.topic),
                  "kafka_target holds what the URL gives");
    memcpy(k->brokers, ku.brokers, sizeof(k->brokers));
    memcpy(k->topic, ku.topic, sizeof(k->topic));
    int rc = copy_opts(k, o, em);
    if (rc < 0) {
        kafka_close(k);
        return rc;
    }
    /* Check the options now, so that a typo fails at start. */
    rd_kafka_t *rk = NULL;
    rc = make_producer(k, &rk, em);
    if (rc < 0) {
        kafka_close(k);
        return rc;
    }
    k->rk = rk;
    *out = k;
    return TN_OK;
}

static int kafka_send(void *arg, const struct tn_pub_record *recs, size_t n,
                      size_t *acked, struct tn_errmsg *em)
{
    struct kafka_target *k = arg;
    *acked = 0;
    if (k->rk == NULL) {
        int rc = make_producer(k, &k->rk, em);
        if (rc < 0)
            return TN_EUNAVAIL;
    }
    if (n > k->cap) {
        int *st = tn_reallocarray(k->status, n, sizeof(*st));
        if (st == NULL)
            return TN_ENOMEM;
        k->status = st;
        k->cap = n;
    }
    size_t produced = 0;
    for (size_t i = 0; i < n; i++) {
        const struct tn_pub_record *r = &recs[i];
        k->status[i] = PENDING;
        tn_buf_reset(&k->value);
        tn_pub_json_record(&k->value, r);
        /* A session's records are keyed by its id, so that its opening
         * and its end keep their order. */
        const char *key = tn_pub_is_session(r->type) ? r->session_id : r->name;
        size_t klen = r->type == TN_EVENT_RESET ? 0 : strlen(key);
        if (klen == 0)
            key = NULL;
        rd_kafka_resp_err_t err;
        for (;;) {
            err = rd_kafka_producev(
                k->rk, RD_KAFKA_V_TOPIC(k->topic), RD_KAFKA_V_KEY(key, klen),
                RD_KAFKA_V_VALUE(k->value.data, k->value.len),
                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                RD_KAFKA_V_OPAQUE(&k->status[i]), RD_KAFKA_V_END);
            if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                break;
            (void)rd_kafka_poll(k->rk, FLUSH_SLICE_MS);
        }
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            tn_errmsg_set(em, "produce: %s", rd_kafka_err2str(err));
            break;
        }
        produced++;
    }
    /* Wait for every report (message.timeout.ms bounds it). */
    for (;;) {
        size_t pending = 0;
        for (size_t i = 0; i < produced; i++)
            pending += k->status[i] == PENDING;
        if (pending == 0)
            break;
        (void)rd_kafka_poll(k->rk, FLUSH_SLICE_MS);
    }
    while (*acked < produced && k->status[*acked] == DELIVERED)
        (*acked)++;
    char fatal[256];
    if (rd_kafka_fatal_error(k->rk, fatal, sizeof(fatal)) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
        /* The idempotent producer is done for; a new one starts over. */
        tn_errmsg_set(em, "fatal: %s", fatal);
        rd_kafka_destroy(k->rk);
        k->rk = NULL;
        return TN_EUNAVAIL;
    }
    if (*acked < n) {
        if (em->text[0] == '\0')
            tn_errmsg_set(em, "delivery failed (broker down or timed out)");
        return TN_EUNAVAIL;
    }
    return TN_OK;
}

static void kafka_close(void *arg)
{
    struct kafka_target *k = arg;
    if (k == NULL)
        return;
    if (k->rk != NULL) {
        (void)rd_kafka_flush(k->rk, 1000);
        rd_kafka_destroy(k->rk);
    }
    for (size_t i = 0; i < k->n_opts; i++)
        tn_free(k->opts[i]);
    tn_free(k->status);
    tn_buf_release(&k->value);
    tn_free(k);
}

const struct tn_pub_target_ops tn_pub_kafka_ops = {
    .scheme = "kafka",
    .open = kafka_open,
    .send = kafka_send,
    .close = kafka_close,
};
