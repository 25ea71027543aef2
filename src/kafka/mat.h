/* SPDX-License-Identifier: MIT */
/* tenure-materializer internals: the configuration, the run state, and the
 * batch step that turns consumed records into one sink transaction.  One
 * thread; no globals except the stop flag set by the signal handler. */
#ifndef TN_KAFKA_MAT_H
#define TN_KAFKA_MAT_H

#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <tenure/fence_kafka.h>

#include "common/buf.h"
#include "kafka/sink.h"

/* Exit codes of tenure-materializer. */
enum {
    TN_MAT_EXIT_OK = 0,
    TN_MAT_EXIT_ERROR = 1,
    TN_MAT_EXIT_USAGE = 2,
    TN_MAT_EXIT_CONFLICT = 3, /* another materializer moved the offsets */
};

/* Reasons counted in the metrics: the fence reasons, indexed by enum. */
#define TN_MAT_REASONS (TN_FENCE_STALE + 1)

struct tn_mat_config {
    const char *brokers;      /* bootstrap list */
    const char *topic;        /* raw topic */
    const char *sink;         /* "sqlite:PATH" or postgresql:// URL */
    const char *verify_key;   /* public key file, or NULL */
    const char *dlq_topic;    /* rejected records go here, or NULL */
    const char *clean_topic;  /* admitted records go here, or NULL */
    const char *metrics_file; /* Prometheus text file, or NULL */
    const char *history;      /* sink decisions as JSON lines, or NULL */
    int batch_max;            /* records per transaction, >= 1 */
    int batch_wait_ms;        /* how long to wait to fill a batch */
    bool exit_at_end;         /* stop once every partition is committed */
    bool no_fence;            /* plain consumer: admit everything */
    bool verbose;             /* log every decision */
};

struct tn_mat {
    const struct tn_mat_config *cfg;   /* borrowed */
    struct tn_sink *sink;              /* owned */
    rd_kafka_t *consumer;              /* owned */
    rd_kafka_queue_t *queue;           /* owned, the consumer's queue */
    rd_kafka_t *producer;              /* owned, NULL without dlq/clean */
    bool has_pk;                       /* pk is valid */
    uint8_t pk[TN_PROOF_PK_BYTES];     /* verify key */
    struct tn_proof_cache *proofs;     /* owned, NULL when !has_pk */
    struct tn_fence_batch *marks;      /* owned, one batch's marks */
    int32_t nparts;                    /* partitions of the topic */
    int64_t *next;                     /* committed next offset, [nparts] */
    int64_t *eof_at;                   /* EOF offset seen, -1 none, [nparts] */
    uint64_t admitted;                 /* records admitted, total */
    uint64_t claims;                   /* of which claim records */
    uint64_t rejected[TN_MAT_REASONS]; /* records rejected, by reason */
    uint64_t batches;                  /* transactions committed */
    uint64_t republish_failed;         /* delivery failures seen */
    FILE *history;                     /* owned, NULL without --history */
    struct tn_buf hist;                /* this batch's history lines */
};

/* Set by SIGTERM/SIGINT: finish the batch in hand, commit, exit. */
extern volatile sig_atomic_t tn_mat_stop;

/* Decide msgs[0..n) and commit them in one sink transaction (with the
 * republishing, when configured, flushed before the commit).  0,
 * TN_ECONFLICT (offsets moved by another writer), or an error; on error
 * nothing of the batch is committed. */
int tn_mat_process_batch(struct tn_mat *m, rd_kafka_message_t **msgs, size_t n,
                         struct tn_errmsg *em);

/* Write the metrics file (atomically), when configured.  0 or TN_EIO. */
int tn_mat_write_metrics(const struct tn_mat *m);

#endif
