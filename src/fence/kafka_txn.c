/* SPDX-License-Identifier: MIT */
/* The optional broker-native layer: a transactional producer per lease
 * name, so the broker refuses a producer once a newer one initialised with
 * the same transactional.id.  It is ordered by init calls, not by tokens,
 * so it only shortens how long a zombie writes; the sink's token check
 * stays the safety. */
#include <librdkafka/rdkafka.h>
#include <string.h>

#include <tenure/fence_kafka.h>

static int take_error(rd_kafka_error_t *err, const char *what,
                      struct tn_errmsg *em)
{
    if (err == NULL)
        return TN_OK;
    tn_errmsg_set(em, "%s: %s", what, rd_kafka_error_string(err));
    rd_kafka_resp_err_t code = rd_kafka_error_code(err);
    int fenced = code == RD_KAFKA_RESP_ERR__FENCED ||
                 code == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
                 code == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH ||
                 rd_kafka_error_is_fatal(err);
    rd_kafka_error_destroy(err);
    return fenced ? TN_ELOST : TN_EIO;
}

int tn_fence_txn_id(const char *name, size_t name_len, char *out,
                    size_t out_cap)
{
    static const char prefix[] = "tenure-lease:";
    if (!tn_fence_name_is_valid(name, name_len))
        return TN_EINVAL;
    size_t need = sizeof(prefix) - 1 + name_len + 1;
    if (out_cap < need)
        return TN_ETOOBIG;
    memcpy(out, prefix, sizeof(prefix) - 1);
    memcpy(out + sizeof(prefix) - 1, name, name_len);
    out[need - 1] = '\0';
    return TN_OK;
}

rd_kafka_t *tn_fence_txn_producer_new(const char *brokers, const char *name,
                                      size_t name_len, int timeout_ms,
                                      struct tn_errmsg *em)
{
    char id[TN_FENCE_NAME_MAX + 32];
    if (tn_fence_txn_id(name, name_len, id, sizeof(id)) < 0) {
        tn_errmsg_set(em, "not a lease name");
        return NULL;
    }
    rd_kafka_t *rk = tn_fence_producer_new(brokers, id, em);
    if (rk == NULL)
        return NULL;
    if (take_error(rd_kafka_init_transactions(rk, timeout_ms),
                   "init transactions", em) < 0) {
        rd_kafka_destroy(rk);
        return NULL;
    }
    return rk;
}

static int produce_in_txn(rd_kafka_t *rk, const struct tn_fence_write *w,
                          struct tn_errmsg *em)
{
    rd_kafka_headers_t *hdrs = rd_kafka_headers_new(3);
    int rc = tn_fence_stamp_headers(hdrs, w->token, w->proof_hex, w->claim);
    if (rc < 0) {
        rd_kafka_headers_destroy(hdrs);
        return rc;
    }
    const char *key = w->name;
    size_t key_len = w->name_len;
    void *value = (void *)(uintptr_t)w->value;
    size_t value_len = w->value_len;
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(w->topic), RD_KAFKA_V_KEY(key, key_len),
        RD_KAFKA_V_VALUE(value, value_len),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(hdrs),
        RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        rd_kafka_headers_destroy(hdrs);
        tn_errmsg_set(em, "produce: %s", rd_kafka_err2str(err));
        return err == RD_KAFKA_RESP_ERR__FENCED ||
                       err == RD_KAFKA_RESP_ERR__FATAL
                   ? TN_ELOST
                   : TN_EIO;
    }
    return TN_OK;
}

int tn_fence_txn_produce(rd_kafka_t *rk, const struct tn_fence_write *w,
                         int timeout_ms, struct tn_errmsg *em)
{
    if (!tn_fence_name_is_valid(w->name, w->name_len) || w->topic == NULL)
        return TN_EINVAL;
    int rc = take_error(rd_kafka_begin_transaction(rk), "begin", em);
    if (rc == 0)
        rc = produce_in_txn(rk, w, em);
    if (rc == 0)
        rc = take_error(rd_kafka_commit_transaction(rk, timeout_ms), "commit",
                        em);
    if (rc == TN_EIO) {
        /* Abortable: leave the producer usable for the next write. */
        rd_kafka_error_t *e = rd_kafka_abort_transaction(rk, timeout_ms);
        if (e != NULL)
            rd_kafka_error_destroy(e);
    }
    return rc;
}
