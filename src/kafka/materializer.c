/* SPDX-License-Identifier: MIT */
/* tenure-materializer: consumes a raw topic (untrusted ingress), applies the
 * fence to every record, and commits admitted rows, rejected rows, marks and
 * next offsets in one sink transaction per batch.  It assigns partitions
 * itself and resumes from the sink's offsets: there is no consumer group
 * and no offset stored in Kafka. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/kafka_conf.h"
#include "common/log.h"
#include "common/opt.h"
#include "kafka/mat.h"

volatile sig_atomic_t tn_mat_stop = 0;

static void on_signal(int sig)
{
    (void)sig;
    tn_mat_stop = 1;
}

/* The kinds of options.def: how a value is read, and its field. */
#define TEXT(f, fl)                                                            \
    .type = TN_OPT_STR, .flags = (fl), TN_OPT_AT(struct tn_mat_config, f)
#define INT(f, lo, hi)                                                         \
    .type = TN_OPT_INT, .min = (lo), .max = (hi),                              \
    TN_OPT_AT(struct tn_mat_config, f)
#define FLAG(f) .type = TN_OPT_BOOL, TN_OPT_AT(struct tn_mat_config, f)

#define TN_MAT_OPTION(name_, kind, def_, arg_, help_)                          \
    {.name = name_, kind, .def = def_, .arg = arg_, .help = help_},
static const struct tn_opt options[] = {
#include "kafka/options.def"
    {.name = "help", .type = TN_OPT_ACTION, .help = "this text"},
};
#undef TN_MAT_OPTION

static void usage(FILE *out)
{
    char sinks[128];
    char footer[320];
    tn_sink_spellings(sinks, sizeof(sinks));
    (void)snprintf(footer, sizeof(footer),
                   "SPEC: %s\n"
                   "exit: 0 done, 1 error, 2 usage, 3 another materializer "
                   "moved the offsets\n",
                   sinks);
    const struct tn_opt_help h = {
        "usage: tenure-materializer --brokers LIST --topic T [options]\n", NULL,
        footer};
    const struct tn_opt_table t = TN_OPT_TABLE(options, NULL);
    tn_opt_help(out, &h, &t);
}

/* 0 to run, 1 after --help, or TN_EINVAL (said on stderr).  An empty
 * value is a mistake (an unset variable), never a default: librdkafka
 * would wait for brokers that do not exist, and an empty topic or sink
 * names nothing (TN_OPT_NONEMPTY in options.def). */
static int parse_args(int argc, char **argv, struct tn_mat_config *c)
{
    const struct tn_opt_table t = TN_OPT_TABLE(options, c);
    struct tn_opt_parser p;
    struct tn_errmsg em = {{0}};
    memset(c, 0, sizeof(*c));
    tn_opt_parser_init(&p, TN_OPT_NO_OPERANDS);
    tn_opt_parser_add(&p, &t);
    int rc = tn_opt_defaults(&t, &em);
    if (rc == 0)
        rc = tn_opt_parse(&p, argc, argv, &em);
    if (rc < 0) {
        (void)fprintf(stderr, "tenure-materializer: %s\n", em.text);
        return rc;
    }
    if (p.action != NULL) {
        usage(stdout);
        return 1;
    }
    return TN_OK;
}

static rd_kafka_t *make_consumer(const struct tn_mat_config *c,
                                 struct tn_errmsg *em)
{
    /* Prefetch: librdkafka stops fetching once the consumer queue holds
     * queued.min.messages and looks again only about a second later; at
     * the materializer's speed the default 100000 drains before that, and
     * consumption stalls.  200000 keeps it fed (about 90 MB resident at
     * the peak with small records); queued.max.messages.kbytes (64 MiB of
     * payload) still caps large records. */
    static const char *const kv[][2] = {
        /* Offsets live in the sink only; never reset silently. */
        {"group.id", "tenure-materializer"},
        {"enable.auto.commit", "false"},
        {"enable.auto.offset.store", "false"},
        {"auto.offset.reset", "error"},
        {"enable.partition.eof", "true"},
        {"fetch.wait.max.ms", "100"},
        {"isolation.level", "read_uncommitted"},
        {"queued.min.messages", "200000"},
    };
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    int rc = tn_kafka_conf_set(conf, "bootstrap.servers", c->brokers, em);
    if (rc == 0)
        rc = tn_kafka_conf_set_all(conf, kv, sizeof(kv) / sizeof(kv[0]), em);
    char err[256];
    rd_kafka_t *rk =
        rc == 0 ? rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err))
                : NULL;
    if (rk == NULL) {
        if (rc == 0)
            tn_errmsg_set(em, "kafka consumer: %s", err);
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_poll_set_consumer(rk);
    return rk;
}

static void on_republished(rd_kafka_t *rk, const rd_kafka_message_t *msg,
                           void *opaque)
{
    (void)rk;
    struct tn_mat *m = opaque;
    if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR)
        m->republish_failed++;
}

static rd_kafka_t *make_producer(struct tn_mat *m, struct tn_errmsg *em)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    const char *const kv[][2] = {{"bootstrap.servers", m->cfg->brokers},
                                 {"enable.idempotence", "true"},
                                 {"partitioner", "murmur2_random"},
                                 {"linger.ms", "5"}};
    int rc = tn_kafka_conf_set_all(conf, kv, sizeof(kv) / sizeof(kv[0]), em);
    rd_kafka_conf_set_dr_msg_cb(conf, on_republished);
    rd_kafka_conf_set_opaque(conf, m);
    char err[256];
    rd_kafka_t *rk =
        rc == 0 ? rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err))
                : NULL;
    if (rk == NULL) {
        if (rc == 0)
            tn_errmsg_set(em, "kafka producer: %s", err);
        rd_kafka_conf_destroy(conf);
    }
    return rk;
}

/* Partition count of the topic, waiting (bounded) for it to exist. */
static int partition_count(rd_kafka_t *rk, const char *topic, int32_t *out,
                           struct tn_errmsg *em)
{
    rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
    if (t == NULL)
        return TN_ENOMEM;
    int rc = TN_ETIMEDOUT;
    int64_t deadline = tn_clock_mono_ms() + 30000;
    while (rc == TN_ETIMEDOUT && !tn_mat_stop &&
           tn_clock_mono_ms() < deadline) {
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, t, &md, 5000);
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR && md->topic_cnt == 1 &&
            md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
            md->topics[0].partition_cnt > 0) {
            *out = md->topics[0].partition_cnt;
            rc = TN_OK;
        }
        if (md != NULL)
            rd_kafka_metadata_destroy(md);
        if (rc != TN_OK)
            rd_kafka_poll(rk, 200);
    }
    rd_kafka_topic_destroy(t);
    if (rc < 0)
        tn_errmsg_set(em, "topic \"%s\" not found", topic);
    return rc;
}

static int assign_all(struct tn_mat *m, struct tn_errmsg *em)
{
    rd_kafka_topic_partition_list_t *l =
        rd_kafka_topic_partition_list_new(m->nparts);
    for (int32_t p = 0; p < m->nparts; p++)
        rd_kafka_topic_partition_list_add(l, m->cfg->topic, p)->offset =
            m->next[p];
    rd_kafka_resp_err_t err = rd_kafka_assign(m->consumer, l);
    rd_kafka_topic_partition_list_destroy(l);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        tn_errmsg_set(em, "assign: %s", rd_kafka_err2str(err));
        return TN_EIO;
    }
    return TN_OK;
}

static int setup(struct tn_mat *m, struct tn_errmsg *em)
{
    const struct tn_mat_config *c = m->cfg;
    int rc = TN_OK;
    if (c->verify_key != NULL) {
        rc = tn_proof_load_verify_key(c->verify_key, m->pk, em);
        if (rc < 0)
            return rc;
        m->has_pk = true;
        /* Every record of a grant carries the same proof: verify it once. */
        m->proofs = tn_proof_cache_new(m->pk, 4096);
        if (m->proofs == NULL)
            return TN_ENOMEM;
    }
    m->marks = tn_fence_batch_new((size_t)c->batch_max);
    if (m->marks == NULL)
        return TN_ENOMEM;
    tn_buf_init(&m->hist, 64u << 20);
    if (c->history != NULL) {
        m->history = fopen(c->history, "a");
        if (m->history == NULL) {
            tn_errmsg_set(em, "cannot open history \"%s\"", c->history);
            return TN_EIO;
        }
    }
    rc = tn_sink_open(c->sink, &m->sink, em);
    if (rc < 0)
        return rc;
    m->consumer = make_consumer(c, em);
    if (m->consumer == NULL)
        return TN_EINVAL;
    m->queue = rd_kafka_queue_get_consumer(m->consumer);
    if (m->queue == NULL) {
        tn_errmsg_set(em, "kafka consumer has no queue");
        return TN_EINVAL;
    }
    if (c->dlq_topic != NULL || c->clean_topic != NULL) {
        m->producer = make_producer(m, em);
        if (m->producer == NULL)
            return TN_EINVAL;
    }
    rc = partition_count(m->consumer, c->topic, &m->nparts, em);
    if (rc < 0)
        return rc;
    m->next = tn_calloc((size_t)m->nparts, sizeof(int64_t));
    m->eof_at = tn_calloc((size_t)m->nparts, sizeof(int64_t));
    if (m->next == NULL || m->eof_at == NULL)
        return TN_ENOMEM;
    for (int32_t p = 0; p < m->nparts; p++)
        m->eof_at[p] = -1;
    rc = m->sink->ops->load_offsets(m->sink, c->topic, m->nparts, m->next, em);
    if (rc < 0)
        return rc;
    return assign_all(m, em);
}

static bool all_at_end(const struct tn_mat *m)
{
    for (int32_t p = 0; p < m->nparts; p++) {
        if (m->eof_at[p] < 0 || m->eof_at[p] != m->next[p])
            return false;
    }
    return true;
}

/* An error event from the consumer: EOF is bookkeeping, a lost offset is
 * fatal (never skip data silently), the rest is transient. */
static int on_consumer_event(struct tn_mat *m, const rd_kafka_message_t *msg,
                             struct tn_errmsg *em)
{
    if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        if (msg->partition >= 0 && msg->partition < m->nparts)
            m->eof_at[msg->partition] = msg->offset;
        return TN_OK;
    }
    if (msg->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
        msg->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE ||
        msg->err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
        msg->err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC) {
        tn_errmsg_set(em, "consumer: %s (partition %d)",
                      rd_kafka_message_errstr(msg), (int)msg->partition);
        return TN_EIO;
    }
    tn_log(TN_LOG_WARN, "materializer", "\"consumer error\" err=\"%s\"",
           rd_kafka_message_errstr(msg));
    return TN_OK;
}

/* Sort a chunk of consumed messages: records stay in msgs (compacted to
 * *n), events are handled and destroyed.  Every message is consumed, even
 * after an error. */
static int sort_chunk(struct tn_mat *m, rd_kafka_message_t **msgs, size_t got,
                      size_t *n, struct tn_errmsg *em)
{
    int rc = TN_OK;
    rd_kafka_message_t **chunk = msgs + *n;
    for (size_t i = 0; i < got; i++) {
        rd_kafka_message_t *msg = chunk[i];
        if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR && msg->partition >= 0 &&
            msg->partition < m->nparts) {
            m->eof_at[msg->partition] = -1;
            msgs[(*n)++] = msg;
            continue;
        }
        if (rc == 0)
            rc = on_consumer_event(m, msg, em);
        rd_kafka_message_destroy(msg);
    }
    return rc;
}

/* Collect up to batch_max records into msgs (*n of them): wait up to 200 ms
 * for the first, then up to batch_wait_ms for the rest of the batch, taken
 * from the consumer's queue in chunks (one lock and wake-up per chunk, not
 * per record). */
static int collect(struct tn_mat *m, rd_kafka_message_t **msgs, size_t *n,
                   struct tn_errmsg *em)
{
    size_t max = (size_t)m->cfg->batch_max;
    *n = 0;
    int64_t deadline = tn_clock_mono_ms() + m->cfg->batch_wait_ms;
    while (*n < max && !tn_mat_stop) {
        int64_t left = deadline - tn_clock_mono_ms();
        ssize_t got = 0;
        if (*n == 0) {
            msgs[0] = rd_kafka_consumer_poll(m->consumer, 200);
            got = msgs[0] != NULL ? 1 : 0;
        } else {
            got = rd_kafka_consume_batch_queue(
                m->queue, left > 0 ? (int)left : 0, msgs + *n, max - *n);
        }
        if (got <= 0)
            break;
        int rc = sort_chunk(m, msgs, (size_t)got, n, em);
        if (rc < 0)
            return rc;
        if (*n == 0 && m->cfg->exit_at_end && all_at_end(m))
            break;
    }
    return TN_OK;
}

static int run(struct tn_mat *m, struct tn_errmsg *em)
{
    rd_kafka_message_t **msgs =
        tn_calloc((size_t)m->cfg->batch_max, sizeof(rd_kafka_message_t *));
    if (msgs == NULL)
        return TN_ENOMEM;
    int rc = TN_OK;
    int64_t last_metrics = 0;
    bool dirty = false; /* batches committed since the last metrics write */
    while (rc == 0 && !tn_mat_stop) {
        size_t n = 0;
        rc = collect(m, msgs, &n, em);
        if (rc == 0 && n > 0)
            rc = tn_mat_process_batch(m, msgs, n, em);
        for (size_t i = 0; i < n; i++)
            rd_kafka_message_destroy(msgs[i]);
        if (m->producer != NULL)
            rd_kafka_poll(m->producer, 0);
        /* The metrics file is replaced (a rename each time): at most every
         * 100 ms while batches flow, at once when the topic runs dry, and
         * every second anyway for the lag. */
        dirty = dirty || n > 0;
        int64_t since = tn_clock_mono_ms() - last_metrics;
        if (rc == 0 && ((dirty && (n == 0 || since >= 100)) || since > 1000)) {
            (void)tn_mat_write_metrics(m);
            last_metrics = tn_clock_mono_ms();
            dirty = false;
        }
        if (rc == 0 && m->cfg->exit_at_end && all_at_end(m))
            break;
    }
    tn_free(msgs);
    return rc;
}

static void teardown(struct tn_mat *m)
{
    if (m->queue != NULL)
        rd_kafka_queue_destroy(m->queue);
    if (m->consumer != NULL) {
        (void)rd_kafka_assign(m->consumer, NULL);
        rd_kafka_consumer_close(m->consumer);
        rd_kafka_destroy(m->consumer);
    }
    if (m->producer != NULL) {
        (void)rd_kafka_flush(m->producer, 5000);
        rd_kafka_destroy(m->producer);
    }
    if (m->sink != NULL)
        m->sink->ops->close(m->sink);
    tn_free(m->next);
    tn_free(m->eof_at);
    tn_proof_cache_free(m->proofs);
    tn_fence_batch_free(m->marks);
    if (m->history != NULL)
        (void)fclose(m->history);
    tn_buf_release(&m->hist);
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

int main(int argc, char **argv)
{
    struct tn_mat_config cfg;
    int parsed = parse_args(argc, argv, &cfg);
    if (parsed != 0)
        return parsed < 0 ? TN_MAT_EXIT_USAGE : TN_MAT_EXIT_OK;
    install_signals();
    struct tn_mat m = {.cfg = &cfg};
    struct tn_errmsg em = {{0}};
    int rc = setup(&m, &em);
    if (rc == 0) {
        tn_log(TN_LOG_INFO, "materializer",
               "\"started\" topic=\"%s\" partitions=%d sink=\"%s\" fence=%s"
               " proofs=%s",
               cfg.topic, (int)m.nparts, cfg.sink, cfg.no_fence ? "off" : "on",
               m.has_pk ? "required" : "off");
        rc = run(&m, &em);
    }
    if (rc == 0)
        (void)tn_mat_write_metrics(&m);
    if (rc < 0)
        tn_log(TN_LOG_ERROR, "materializer", "\"stopped\" err=%s detail=\"%s\"",
               tn_errname(rc), em.text);
    else
        tn_log(TN_LOG_INFO, "materializer",
               "\"stopped\" admitted=%llu rejected_stale=%llu batches=%llu",
               (unsigned long long)m.admitted,
               (unsigned long long)m.rejected[TN_FENCE_STALE],
               (unsigned long long)m.batches);
    teardown(&m);
    if (rc == TN_ECONFLICT)
        return TN_MAT_EXIT_CONFLICT;
    return rc < 0 ? TN_MAT_EXIT_ERROR : TN_MAT_EXIT_OK;
}
