/* SPDX-License-Identifier: MIT */
/* One batch = one sink transaction: every record decided (admitted with the
 * mark raised, or rejected with a reason), the next offset of each touched
 * partition compare-and-set, and the republishing flushed before the
 * commit.  The decision of a record depends only on the sink's state and
 * the record, so any batching and any crash point give the same tables. */
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/log.h"
#include "kafka/mat.h"

static void fill_row(const rd_kafka_message_t *msg, const char *topic,
                     const struct tn_fence_record *r, struct tn_sink_row *row)
{
    memset(row, 0, sizeof(*row));
    row->topic = topic;
    row->partition = msg->partition;
    row->offset = msg->offset;
    if (r->key != NULL && tn_fence_name_is_valid(r->key, r->key_len)) {
        row->resource = r->key;
        row->resource_len = r->key_len;
    }
    uint64_t token = 0;
    if (r->token_count == 1 &&
        tn_fence_parse_token(r->token, r->token_len, &token) == 0) {
        row->has_token = true;
        row->token = token;
    }
    row->key = msg->key;
    row->key_len = msg->key != NULL ? msg->key_len : 0;
    row->value = msg->payload;
    row->value_len = msg->payload != NULL ? msg->len : 0;
}

/* Republish msg to topic with its headers plus the source (and reason). */
static int republish(struct tn_mat *m, const rd_kafka_message_t *msg,
                     const char *topic, const char *reason,
                     struct tn_errmsg *em)
{
    rd_kafka_headers_t *src = NULL;
    rd_kafka_headers_t *hdrs = NULL;
    if (rd_kafka_message_headers(msg, &src) == RD_KAFKA_RESP_ERR_NO_ERROR)
        hdrs = rd_kafka_headers_copy(src);
    else
        hdrs = rd_kafka_headers_new(2);
    char where[512];
    int n = snprintf(where, sizeof(where), "%s/%d/%lld", m->cfg->topic,
                     (int)msg->partition, (long long)msg->offset);
    rd_kafka_header_add(hdrs, TN_FENCE_HDR_SOURCE, -1, where, n);
    if (reason != NULL)
        rd_kafka_header_add(hdrs, TN_FENCE_HDR_REASON, -1, reason, -1);
    const void *key = msg->key;
    size_t key_len = key != NULL ? msg->key_len : 0;
    void *value = msg->payload;
    size_t value_len = value != NULL ? msg->len : 0;
    rd_kafka_resp_err_t err = rd_kafka_producev(
        m->producer, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, key_len),
        RD_KAFKA_V_VALUE(value, value_len),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(hdrs),
        RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        rd_kafka_headers_destroy(hdrs);
        tn_errmsg_set(em, "republish to \"%s\": %s", topic,
                      rd_kafka_err2str(err));
        return TN_EIO;
    }
    return TN_OK;
}

/* One sink decision in the history format of tenure-check (CONTRACT §8),
 * buffered until the batch commits.  hwm NULL omits hwm_before. */
static int history_add(struct tn_mat *m, const char *name, size_t len,
                       uint64_t token, bool admit, const uint64_t *hwm)
{
    json_t *o =
        json_pack("{s:I,s:s,s:s%,s:I,s:s}", "t", (json_int_t)tn_clock_mono_ns(),
                  "src", "sink", "resource", name, len, "token",
                  (json_int_t)token, "decision", admit ? "admit" : "reject");
    if (o == NULL)
        return TN_ENOMEM;
    int rc = TN_OK;
    if (hwm != NULL &&
        json_object_set_new(o, "hwm_before", json_integer((json_int_t)*hwm)))
        rc = TN_ENOMEM;
    size_t n = 0;
    char *line = rc == 0 ? tn_json_dump(o, &n) : NULL;
    if (line == NULL)
        rc = TN_ENOMEM;
    if (rc == 0)
        rc = tn_buf_append(&m->hist, line, n);
    if (rc == 0)
        rc = tn_buf_append(&m->hist, "\n", 1);
    tn_free(line);
    json_decref(o);
    return rc;
}

/* The sink's check-and-advance, as the batch fence calls it. */
static int sink_advance(void *ctx, const char *resource, size_t len,
                        uint64_t token, uint64_t *hwm_before_out,
                        struct tn_errmsg *em)
{
    struct tn_sink *sink = ctx;
    return sink->ops->advance(sink, resource, len, token, hwm_before_out, em);
}

/* The fence decision for one record: TN_FENCE_OK or the reason. */
static int decide(struct tn_mat *m, const struct tn_fence_record *r,
                  enum tn_fence_reason *why, bool *claim, struct tn_errmsg *em)
{
    uint64_t token = 0;
    *why = tn_fence_record_check_cached(r, m->proofs, &token, claim);
    if (*why != TN_FENCE_OK)
        return TN_OK;
    uint64_t hwm = 0;
    int rc =
        tn_fence_batch_advance(m->marks, r->key, r->key_len, token, &hwm, em);
    if (rc == TN_ESTALE)
        *why = TN_FENCE_STALE;
    else if (rc < 0)
        return rc;
    if (m->history != NULL)
        return history_add(m, r->key, r->key_len, token, rc == 0, &hwm);
    return TN_OK;
}

/* A plain consumer (fence off) admits everything: its history shows what
 * it admitted, with no mark of its own. */
static int decide_unfenced(struct tn_mat *m, const struct tn_sink_row *row)
{
    if (m->history == NULL || row->resource == NULL || !row->has_token)
        return TN_OK;
    return history_add(m, row->resource, row->resource_len, row->token, true,
                       NULL);
}

struct tally {
    uint64_t admitted;                 /* this batch */
    uint64_t claims;                   /* this batch */
    uint64_t rejected[TN_MAT_REASONS]; /* this batch */
};

static void log_decision(const rd_kafka_message_t *msg,
                         const struct tn_sink_row *row,
                         enum tn_fence_reason why)
{
    int name_len = row->resource != NULL ? (int)row->resource_len : 1;
    const char *name = row->resource != NULL ? row->resource : "-";
    tn_log(TN_LOG_INFO, "materializer",
           "\"%s\" partition=%d offset=%lld lease=\"%.*s\" token=%llu"
           " claim=%d",
           why == TN_FENCE_OK ? "admit" : tn_fence_reason_name(why),
           (int)msg->partition, (long long)msg->offset, name_len, name,
           (unsigned long long)row->token, row->claim ? 1 : 0);
}

static int one_record(struct tn_mat *m, const rd_kafka_message_t *msg,
                      struct tally *t, struct tn_errmsg *em)
{
    struct tn_fence_record r;
    tn_fence_record_from_message(msg, &r);
    struct tn_sink_row row;
    fill_row(msg, m->cfg->topic, &r, &row);
    enum tn_fence_reason why = TN_FENCE_OK;
    bool claim = false;
    int rc = m->cfg->no_fence ? decide_unfenced(m, &row)
                              : decide(m, &r, &why, &claim, em);
    if (rc < 0)
        return rc;
    row.claim = claim;
    const char *reason = tn_fence_reason_name(why);
    if (m->cfg->verbose)
        log_decision(msg, &row, why);
    if (why == TN_FENCE_OK) {
        t->admitted++;
        t->claims += claim ? 1u : 0u;
        rc = m->sink->ops->admit(m->sink, &row, em);
        if (rc == 0 && m->cfg->clean_topic != NULL)
            rc = republish(m, msg, m->cfg->clean_topic, NULL, em);
    } else {
        t->rejected[why]++;
        rc = m->sink->ops->reject(m->sink, &row, reason, em);
        if (rc == 0 && m->cfg->dlq_topic != NULL)
            rc = republish(m, msg, m->cfg->dlq_topic, reason, em);
    }
    return rc;
}

/* Next offsets after this batch: new_next[p] = last offset + 1. */
static int commit_offsets(struct tn_mat *m, const int64_t *new_next,
                          struct tn_errmsg *em)
{
    for (int32_t p = 0; p < m->nparts; p++) {
        if (new_next[p] == m->next[p])
            continue;
        int rc = m->sink->ops->cas_offset(m->sink, m->cfg->topic, p, m->next[p],
                                          new_next[p], em);
        if (rc < 0)
            return rc;
    }
    return TN_OK;
}

static int flush_republished(struct tn_mat *m, struct tn_errmsg *em)
{
    if (m->producer == NULL)
        return TN_OK;
    /* Delivered before the commit: a crash in between republishes again
     * (at least once; consumers dedupe by the tenure-source header). */
    uint64_t failed_before = m->republish_failed;
    rd_kafka_resp_err_t err = rd_kafka_flush(m->producer, 30000);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR ||
        m->republish_failed != failed_before) {
        tn_errmsg_set(em, "republishing did not complete");
        return TN_EIO;
    }
    return TN_OK;
}

/* A consumer refetch may repeat offsets already decided (in an earlier
 * batch or earlier in this one): those are skipped.  cur[] is the next
 * undecided offset per partition. */
static bool take(const struct tn_mat *m, const rd_kafka_message_t *msg,
                 int64_t *cur)
{
    if (msg->partition < 0 || msg->partition >= m->nparts ||
        msg->offset < cur[msg->partition])
        return false;
    cur[msg->partition] = msg->offset + 1;
    return true;
}

static int run_batch(struct tn_mat *m, rd_kafka_message_t **msgs, size_t n,
                     int64_t *cur, struct tally *t, struct tn_errmsg *em)
{
    size_t np = (size_t)m->nparts;
    int64_t *new_next = cur + np;
    memcpy(new_next, m->next, np * sizeof(int64_t));
    for (size_t i = 0; i < n; i++)
        (void)take(m, msgs[i], new_next);
    int rc = m->sink->ops->begin(m->sink, em);
    tn_fence_batch_begin(m->marks, sink_advance, m->sink);
    /* Offsets first: a second materializer on this sink fails here, before
     * it has written anything. */
    if (rc == 0)
        rc = commit_offsets(m, new_next, em);
    memcpy(cur, m->next, np * sizeof(int64_t));
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (take(m, msgs[i], cur))
            rc = one_record(m, msgs[i], t, em);
    }
    if (rc == 0)
        rc = tn_fence_batch_flush(m->marks, em);
    if (rc == 0)
        rc = flush_republished(m, em);
    if (rc == 0)
        rc = m->sink->ops->commit(m->sink, em);
    if (rc < 0)
        m->sink->ops->rollback(m->sink);
    return rc;
}

/* History lines are written after the commit: a crash in between loses
 * them (the checker then sees fewer decisions), never adds a decision the
 * sink did not keep. */
static void write_history(struct tn_mat *m)
{
    if (m->history == NULL || m->hist.len == 0)
        return;
    if (fwrite(m->hist.data, 1, m->hist.len, m->history) != m->hist.len ||
        fflush(m->history) != 0)
        tn_log(TN_LOG_WARN, "materializer", "\"cannot write history\"");
}

int tn_mat_process_batch(struct tn_mat *m, rd_kafka_message_t **msgs, size_t n,
                         struct tn_errmsg *em)
{
    size_t np = (size_t)m->nparts;
    int64_t *cur = tn_calloc(2 * np, sizeof(int64_t));
    if (cur == NULL)
        return TN_ENOMEM;
    struct tally t = {0};
    tn_buf_reset(&m->hist);
    int rc = run_batch(m, msgs, n, cur, &t, em);
    if (rc == 0) {
        write_history(m);
        memcpy(m->next, cur + np, np * sizeof(int64_t));
        m->batches++;
        m->admitted += t.admitted;
        m->claims += t.claims;
        for (int i = 0; i < TN_MAT_REASONS; i++)
            m->rejected[i] += t.rejected[i];
    }
    tn_free(cur);
    return rc;
}
