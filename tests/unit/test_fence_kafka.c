/* SPDX-License-Identifier: MIT */
/* Fence kit on Kafka: stamped records written with tn_fence_produce_sync
 * to librdkafka's mock cluster over TCP, consumed back, and read with
 * tn_fence_record_from_message + tn_fence_record_check (headers, proofs,
 * claims, repeated headers); and the claim-before-read wait on a real
 * SQLite sink file. */
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tenure/fence_kafka.h>

#include "tn_test.h"

#include <cmocka.h>

struct cluster {
    rd_kafka_t *owner;           /* the mock lives as long as this */
    rd_kafka_mock_cluster_t *mc; /* the mock cluster */
    const char *brokers;         /* its bootstrap list */
};

static int setup(void **state)
{
    struct cluster *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return -1;
    *state = c;
    char err[256];
    c->owner =
        rd_kafka_new(RD_KAFKA_PRODUCER, rd_kafka_conf_new(), err, sizeof(err));
    c->mc = rd_kafka_mock_cluster_new(c->owner, 1);
    if (c->mc == NULL || rd_kafka_mock_topic_create(c->mc, "raw", 1, 1) !=
                             RD_KAFKA_RESP_ERR_NO_ERROR)
        return -1;
    c->brokers = rd_kafka_mock_cluster_bootstraps(c->mc);
    return 0;
}

static int teardown(void **state)
{
    struct cluster *c = *state;
    if (c == NULL)
        return 0;
    if (c->mc != NULL)
        rd_kafka_mock_cluster_destroy(c->mc);
    if (c->owner != NULL)
        rd_kafka_destroy(c->owner);
    free(c);
    return 0;
}

/* A record with two lease-token headers, written raw. */
static void produce_double_token(rd_kafka_t *rk)
{
    rd_kafka_headers_t *h = rd_kafka_headers_new(2);
    rd_kafka_header_add(h, TN_FENCE_HDR_TOKEN, -1, "5", 1);
    rd_kafka_header_add(h, TN_FENCE_HDR_TOKEN, -1, "6", 1);
    assert_int_equal(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC("raw"),
                                       RD_KAFKA_V_KEY("k", 1),
                                       RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_END),
                     RD_KAFKA_RESP_ERR_NO_ERROR);
    assert_int_equal(rd_kafka_flush(rk, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
}

static rd_kafka_t *consumer(const char *brokers)
{
    char err[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", brokers, err, sizeof(err));
    rd_kafka_conf_set(conf, "group.id", "test", err, sizeof(err));
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
    assert_non_null(rk);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, "raw", 0)->offset = 0;
    assert_int_equal(rd_kafka_assign(rk, l), RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_topic_partition_list_destroy(l);
    return rk;
}

static rd_kafka_message_t *next_message(rd_kafka_t *rk)
{
    for (int i = 0; i < 100; i++) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
        if (m != NULL && m->err == RD_KAFKA_RESP_ERR_NO_ERROR)
            return m;
        if (m != NULL)
            rd_kafka_message_destroy(m);
    }
    fail_msg("no message consumed");
    return NULL;
}

static enum tn_fence_reason check_next(rd_kafka_t *rk, const uint8_t *pk,
                                       uint64_t *token, bool *claim)
{
    rd_kafka_message_t *m = next_message(rk);
    struct tn_fence_record r;
    tn_fence_record_from_message(m, &r);
    enum tn_fence_reason why = tn_fence_record_check(&r, pk, token, claim);
    rd_kafka_message_destroy(m);
    return why;
}

static void test_fence_kafka__stamp_produce_consume_check(void **state)
{
    struct cluster *c = *state;
    uint8_t pk[32];
    uint8_t sk[64];
    assert_int_equal(tn_proof_keypair(pk, sk), 0);
    char proof[129];
    assert_int_equal(tn_proof_sign(sk, "shard:8841", 10, 403, proof), 0);
    struct tn_errmsg em = {{0}};
    rd_kafka_t *p = tn_fence_producer_new(c->brokers, NULL, &em);
    assert_non_null(p);
    struct tn_fence_write w = {.topic = "raw",
                               .name = "shard:8841",
                               .name_len = 10,
                               .token = 403,
                               .proof_hex = proof,
                               .claim = true,
                               .value = "ignored",
                               .value_len = 7};
    int32_t part = -1;
    int64_t off = -1;
    assert_int_equal(tn_fence_produce_sync(p, &w, 10000, &part, &off, &em), 0);
    assert_int_equal(part, 0);
    assert_int_equal(off, 0);
    w.claim = false;
    w.proof_hex = NULL;
    assert_int_equal(tn_fence_produce_sync(p, &w, 10000, &part, &off, &em), 0);
    assert_int_equal(off, 1);
    produce_double_token(p);
    w.name = "bad\nname";
    w.name_len = 8;
    assert_int_equal(tn_fence_produce_sync(p, &w, 10000, NULL, NULL, &em),
                     TN_EINVAL);
    rd_kafka_destroy(p);

    rd_kafka_t *rk = consumer(c->brokers);
    uint64_t token = 0;
    bool claim = false;
    assert_int_equal(check_next(rk, pk, &token, &claim), TN_FENCE_OK);
    assert_int_equal(token, 403);
    assert_true(claim);
    assert_int_equal(check_next(rk, pk, &token, &claim), TN_FENCE_BAD_PROOF);
    assert_int_equal(check_next(rk, NULL, &token, &claim), TN_FENCE_BAD_TOKEN);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
}

static void test_fence_kafka__wait_committed_polls_sqlite(void **state)
{
    (void)state;
    char path[] = "/tmp/tn-fence-wait-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TABLE tenure_offsets (topic TEXT,"
                                  " \"partition\" INTEGER, next_offset"
                                  " INTEGER);"
                                  "INSERT INTO tenure_offsets VALUES"
                                  " ('raw', 2, 8);",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    char sink[64];
    (void)snprintf(sink, sizeof(sink), "sqlite:%s", path);
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_fence_wait_committed(sink, "raw", 2, 7, 5000, &em), 0);
    /* Offset 8 is not committed yet: a short bounded wait times out. */
    assert_int_equal(tn_fence_wait_committed(sink, "raw", 2, 8, 30, &em),
                     TN_ETIMEDOUT);
    assert_int_equal(tn_fence_wait_committed(sink, "raw", 3, 0, 30, &em),
                     TN_ETIMEDOUT);
    assert_int_equal(tn_fence_wait_committed("mysql://x", "raw", 2, 0, 30, &em),
                     TN_EINVAL);
    sqlite3_close(db);
    unlink(path);
}

static void test_fence_kafka__stamp_headers(void **state)
{
    (void)state;
    rd_kafka_headers_t *h = rd_kafka_headers_new(3);
    assert_int_equal(
        tn_fence_stamp_headers(h, 9007199254740992ull, NULL, false), 0);
    const void *v = NULL;
    size_t n = 0;
    assert_int_equal(rd_kafka_header_get_last(h, TN_FENCE_HDR_TOKEN, &v, &n),
                     RD_KAFKA_RESP_ERR_NO_ERROR);
    assert_int_equal(n, 16);
    assert_memory_equal(v, "9007199254740992", 16);
    assert_int_not_equal(
        rd_kafka_header_get_last(h, TN_FENCE_HDR_CLAIM, &v, &n),
        RD_KAFKA_RESP_ERR_NO_ERROR);
    assert_int_equal(
        tn_fence_stamp_headers(h, TN_FENCE_TOKEN_MAX + 1, NULL, false),
        TN_EINVAL);
    rd_kafka_headers_destroy(h);
}

static void test_fence__txn_id(void **state)
{
    (void)state;
    char buf[300];
    assert_int_equal(tn_fence_txn_id("shard:8841", 10, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "tenure-lease:shard:8841");
    assert_int_equal(tn_fence_txn_id("shard:8841", 10, buf, 10), TN_ETOOBIG);
    assert_int_equal(tn_fence_txn_id("", 0, buf, sizeof(buf)), TN_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fence__txn_id),
        cmocka_unit_test(test_fence_kafka__stamp_headers),
        cmocka_unit_test(test_fence_kafka__wait_committed_polls_sqlite),
        cmocka_unit_test_setup_teardown(
            test_fence_kafka__stamp_produce_consume_check, setup, teardown),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
