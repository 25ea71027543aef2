/* SPDX-License-Identifier: MIT */
/* Kafka side of the fence kit: stamping records with lease headers,
 * reading them back from consumed messages, and a producer that reports
 * where each record landed (claim-before-read needs the claim's offset).
 * librdkafka codes are translated here and never passed upward. */
#include <librdkafka/rdkafka.h>
#include <string.h>

#include <tenure/fence_kafka.h>

#include "common/clock.h"
#include "common/kafka_conf.h"

/* Delivery result of one tn_fence_produce_sync call. */
struct delivery {
    int done;                /* set by the delivery callback */
    rd_kafka_resp_err_t err; /* delivery error */
    int32_t partition;       /* where it landed */
    int64_t offset;          /* its offset */
};

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m,
                        void *opaque)
{
    (void)rk;
    (void)opaque;
    struct delivery *d = m->_private;
    if (d == NULL)
        return;
    d->err = m->err;
    d->partition = m->partition;
    d->offset = m->offset;
    d->done = 1;
}

int tn_fence_stamp_headers(rd_kafka_headers_t *hdrs, uint64_t token,
                           const char *proof_hex, bool claim)
{
    if (token > TN_FENCE_TOKEN_MAX)
        return TN_EINVAL;
    char digits[21];
    size_t n = tn_fence_format_token(token, digits);
    if (rd_kafka_header_add(hdrs, TN_FENCE_HDR_TOKEN, -1, digits, (ssize_t)n) !=
        RD_KAFKA_RESP_ERR_NO_ERROR)
        return TN_EINVAL;
    if (proof_hex != NULL &&
        rd_kafka_header_add(hdrs, TN_FENCE_HDR_PROOF, -1, proof_hex, -1) !=
            RD_KAFKA_RESP_ERR_NO_ERROR)
        return TN_EINVAL;
    if (claim && rd_kafka_header_add(hdrs, TN_FENCE_HDR_CLAIM, -1, "1", 1) !=
                     RD_KAFKA_RESP_ERR_NO_ERROR)
        return TN_EINVAL;
    return TN_OK;
}

/* Count a header of one of the names: keep the first value.  A header
 * with a null value is present but empty. */
static void header_take(const void *v, size_t sz, const char **val, size_t *len,
                        unsigned *count)
{
    if (*count == 0) {
        *val = v != NULL ? v : "";
        *len = v != NULL ? sz : 0;
    }
    (*count)++;
}

void tn_fence_record_from_message(const rd_kafka_message_t *m,
                                  struct tn_fence_record *r)
{
    memset(r, 0, sizeof(*r));
    r->key = m->key;
    r->key_len = m->key != NULL ? m->key_len : 0;
    rd_kafka_headers_t *hdrs = NULL;
    if (rd_kafka_message_headers(m, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return;
    /* One pass over the headers (the record's own order), not one lookup
     * per name. */
    unsigned claims = 0;
    const char *name = NULL;
    const void *v = NULL;
    size_t sz = 0;
    for (size_t idx = 0; rd_kafka_header_get_all(hdrs, idx, &name, &v, &sz) ==
                         RD_KAFKA_RESP_ERR_NO_ERROR;
         idx++) {
        if (strcmp(name, TN_FENCE_HDR_TOKEN) == 0)
            header_take(v, sz, &r->token, &r->token_len, &r->token_count);
        else if (strcmp(name, TN_FENCE_HDR_PROOF) == 0)
            header_take(v, sz, &r->proof, &r->proof_len, &r->proof_count);
        else if (strcmp(name, TN_FENCE_HDR_CLAIM) == 0)
            header_take(v, sz, &r->claim, &r->claim_len, &claims);
    }
    if (claims > 1) {
        /* Repeated claim flags are malformed: make the check say so. */
        r->claim_len = 0;
    }
}

rd_kafka_t *tn_fence_producer_new(const char *brokers,
                                  const char *transactional_id,
                                  struct tn_errmsg *em)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (conf == NULL)
        return NULL;
    const char *const kv[][2] = {{"bootstrap.servers", brokers},
                                 {"partitioner", "murmur2_random"},
                                 {"enable.idempotence", "true"},
                                 {"linger.ms", "0"}};
    int rc = tn_kafka_conf_set_all(conf, kv, sizeof(kv) / sizeof(kv[0]), em);
    if (rc == 0 && transactional_id != NULL)
        rc = tn_kafka_conf_set(conf, "transactional.id", transactional_id, em);
    if (rc < 0) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    char err[256];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    if (rk == NULL) {
        tn_errmsg_set(em, "kafka producer: %s", err);
        rd_kafka_conf_destroy(conf);
    }
    return rk;
}

static int enqueue(rd_kafka_t *rk, const struct tn_fence_write *w,
                   struct delivery *d, struct tn_errmsg *em)
{
    rd_kafka_headers_t *hdrs = rd_kafka_headers_new(3);
    int rc = tn_fence_stamp_headers(hdrs, w->token, w->proof_hex, w->claim);
    if (rc < 0) {
        rd_kafka_headers_destroy(hdrs);
        return rc;
    }
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(w->topic), RD_KAFKA_V_KEY(w->name, w->name_len),
        RD_KAFKA_V_VALUE((void *)(uintptr_t)w->value, w->value_len),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(hdrs),
        RD_KAFKA_V_OPAQUE(d), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        /* On failure the headers stay ours. */
        rd_kafka_headers_destroy(hdrs);
        tn_errmsg_set(em, "produce to \"%s\": %s", w->topic,
                      rd_kafka_err2str(err));
        return TN_EIO;
    }
    return TN_OK;
}

int tn_fence_produce_sync(rd_kafka_t *rk, const struct tn_fence_write *w,
                          int timeout_ms, int32_t *partition_out,
                          int64_t *offset_out, struct tn_errmsg *em)
{
    if (!tn_fence_name_is_valid(w->name, w->name_len) || w->topic == NULL)
        return TN_EINVAL;
    struct delivery d = {0};
    int rc = enqueue(rk, w, &d, em);
    if (rc < 0)
        return rc;
    int64_t deadline = tn_clock_mono_ms() + timeout_ms;
    while (!d.done && tn_clock_mono_ms() < deadline)
        rd_kafka_poll(rk, 10);
    if (!d.done) {
        /* d lives on this stack: the record must be gone before we return,
         * so purge it and serve its (failed) delivery report now. */
        rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        while (!d.done)
            rd_kafka_poll(rk, 10);
        tn_errmsg_set(em, "produce to \"%s\" timed out", w->topic);
        return TN_ETIMEDOUT;
    }
    if (d.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        tn_errmsg_set(em, "produce to \"%s\": %s", w->topic,
                      rd_kafka_err2str(d.err));
        return TN_EIO;
    }
    if (partition_out != NULL)
        *partition_out = d.partition;
    if (offset_out != NULL)
        *offset_out = d.offset;
    return TN_OK;
}
