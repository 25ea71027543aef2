/* SPDX-License-Identifier: MIT */
/* The fence on Kafka (libtenure-kafka, which links librdkafka; pkg-config
 * tenure-kafka): stamping records with lease headers, reading them back,
 * a producer that reports where a record landed, claim-before-read, and
 * the optional broker-native layer (transactional producers). */
#ifndef TENURE_FENCE_KAFKA_H
#define TENURE_FENCE_KAFKA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/fence.h>

#ifdef __cplusplus
extern "C" {
#endif

/* librdkafka's handles, declared here so as not to pull in rdkafka.h. */
struct rd_kafka_s;         /* rd_kafka_t */
struct rd_kafka_headers_s; /* rd_kafka_headers_t */
struct rd_kafka_message_s; /* rd_kafka_message_t */

/* Fill r from a consumed Kafka message (borrowing from it). */
TN_EXTERN void tn_fence_record_from_message(const struct rd_kafka_message_s *m,
                                            struct tn_fence_record *r);

/* Add lease-token (and lease-proof when proof_hex is not NULL, and
 * lease-claim: 1 when claim) to hdrs.  0 or TN_EINVAL. */
TN_EXTERN int tn_fence_stamp_headers(struct rd_kafka_headers_s *hdrs,
                                     uint64_t token, const char *proof_hex,
                                     bool claim);

/* What to produce: a stamped record keyed by the lease name. */
struct tn_fence_write {
    const char *topic;     /* NUL-terminated */
    const char *name;      /* lease name = record key */
    size_t name_len;       /* bytes */
    uint64_t token;        /* fencing token of the grant */
    const char *proof_hex; /* grant's proof, or NULL */
    bool claim;            /* true: a claim record (value ignored) */
    const void *value;     /* payload, may be NULL */
    size_t value_len;      /* bytes */
};

/* A producer suited to stamped records: murmur2_random partitioner (so that
 * writers in other languages agree on the partition of a name),
 * idempotence on, and a delivery callback used by tn_fence_produce_sync.
 * transactional_id may be NULL.  NULL on failure (detail in em). */
TN_EXTERN struct rd_kafka_s *tn_fence_producer_new(const char *brokers,
                                                   const char *transactional_id,
                                                   struct tn_errmsg *em);

/* Produce w and wait up to timeout_ms for its delivery; the partition and
 * offset it landed at go to *partition_out / *offset_out (may be NULL).
 * rk must come from tn_fence_producer_new.  0, TN_EINVAL, TN_ETIMEDOUT,
 * TN_EIO. */
TN_EXTERN int tn_fence_produce_sync(struct rd_kafka_s *rk,
                                    const struct tn_fence_write *w,
                                    int timeout_ms, int32_t *partition_out,
                                    int64_t *offset_out, struct tn_errmsg *em);

/* Claim before read: wait until a materializer writing into the sink has
 * committed past (topic, partition, offset): tenure_offsets.next_offset >
 * offset.  Polls every 20 ms, for at most timeout_ms.  sink is "sqlite:PATH"
 * or a "postgresql://" URL (which is why libtenure-kafka links SQLite and
 * libpq too).  0, TN_ETIMEDOUT, TN_EIO, TN_EINVAL. */
TN_EXTERN int tn_fence_wait_committed(const char *sink, const char *topic,
                                      int32_t partition, int64_t offset,
                                      int timeout_ms, struct tn_errmsg *em);

/* ------------------------------------------------------------------ */
/* Broker-native layer (optional; never replaces the token check)      */

/* transactional.id for a lease name: "tenure-lease:" followed by the name.
 * 0 or TN_ETOOBIG / TN_EINVAL. */
TN_EXTERN int tn_fence_txn_id(const char *name, size_t name_len, char *out,
                              size_t out_cap);

/* A transactional producer for the lease name: transactional.id from
 * tn_fence_txn_id, init_transactions done (which fences producers that
 * initialised earlier with the same id).  NULL on failure, detail in em.
 * Ordered by init calls, not by tokens: a zombie that initialises after the
 * new holder fences the new holder.  Keep the token check at the sink. */
TN_EXTERN struct rd_kafka_s *tn_fence_txn_producer_new(const char *brokers,
                                                       const char *name,
                                                       size_t name_len,
                                                       int timeout_ms,
                                                       struct tn_errmsg *em);

/* Write w in its own Kafka transaction (begin, produce, commit) with rk
 * from tn_fence_txn_producer_new.  0 committed; TN_ELOST when the broker
 * fenced this producer (a newer one initialised): stop writing, the lease
 * is gone; TN_EIO for other failures (the transaction was aborted);
 * TN_EINVAL for a bad write. */
TN_EXTERN int tn_fence_txn_produce(struct rd_kafka_s *rk,
                                   const struct tn_fence_write *w,
                                   int timeout_ms, struct tn_errmsg *em);

#ifdef __cplusplus
}
#endif
#endif
