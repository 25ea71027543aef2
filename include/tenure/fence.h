/* SPDX-License-Identifier: MIT */
/* The fence kit: what a sink needs to admit a write only if its fencing
 * token is >= the highest token it has seen for the resource (the mark), and
 * to raise the mark atomically with the write.  Equal tokens are admitted,
 * lower ones rejected, and the mark never moves down.  Also: token and lease
 * name validation, Ed25519 proofs over (name, token), Kafka record stamping
 * and claim-before-read.  Nothing here prints or keeps global state; every
 * function is thread-safe unless its handle says otherwise.  See
 * docs/FENCING.md for the safety argument and the wire formats. */
#ifndef TENURE_FENCE_H
#define TENURE_FENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/err.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Foreign handles, declared here so that including this header does not
 * pull in SQLite, libpq or librdkafka. */
struct sqlite3;            /* sqlite3 */
struct pg_conn;            /* PGconn */
struct rd_kafka_s;         /* rd_kafka_t */
struct rd_kafka_headers_s; /* rd_kafka_headers_t */
struct rd_kafka_message_s; /* rd_kafka_message_t */

/* ------------------------------------------------------------------ */
/* Tokens, names, reasons                                              */

/* Tokens are below 2^53 (they travel as JSON integers). */
#define TN_FENCE_TOKEN_MAX ((uint64_t)1 << 53)
/* A lease name is 1..256 bytes of printable UTF-8. */
#define TN_FENCE_NAME_MAX 256

/* Record header names (CONTRACT §6). */
#define TN_FENCE_HDR_TOKEN "lease-token"
#define TN_FENCE_HDR_PROOF "lease-proof"
#define TN_FENCE_HDR_CLAIM "lease-claim"
/* Added by the materializer to republished records: "topic/partition/offset"
 * of the source record, so that consumers can drop duplicates. */
#define TN_FENCE_HDR_SOURCE "tenure-source"
/* Added to dead-lettered records: the reject reason. */
#define TN_FENCE_HDR_REASON "tenure-reject-reason"

/* Parse a decimal token: digits only (no sign, no space, no leading or
 * trailing junk), no leading zero unless the token is "0", value <= 2^53.
 * s need not be NUL-terminated.  0 or TN_EINVAL. */
int tn_fence_parse_token(const char *s, size_t len, uint64_t *out);

/* Format a token as decimal into out (at least 21 bytes); returns the
 * length written, excluding the NUL. */
size_t tn_fence_format_token(uint64_t token, char out[21]);

/* True iff name[0..len) is a valid lease name: 1..256 bytes of valid UTF-8
 * with no control characters (C0, DEL, C1). */
bool tn_fence_name_is_valid(const char *name, size_t len);

/* Why a record was rejected.  TN_FENCE_OK means admitted. */
enum tn_fence_reason {
    TN_FENCE_OK = 0,
    TN_FENCE_NO_KEY,    /* "no_key": record has no key */
    TN_FENCE_BAD_KEY,   /* "bad_key": key is not a valid lease name */
    TN_FENCE_NO_TOKEN,  /* "no_token": no lease-token header */
    TN_FENCE_BAD_TOKEN, /* "bad_token": malformed or repeated lease-token */
    TN_FENCE_BAD_CLAIM, /* "bad_claim": lease-claim present but not "1" */
    TN_FENCE_BAD_PROOF, /* "bad_proof": proof required but missing/invalid */
    TN_FENCE_STALE,     /* "stale": token below the mark */
};

/* Static lower-case name of a reason ("ok", "no_key", ...). */
const char *tn_fence_reason_name(enum tn_fence_reason r);

/* ------------------------------------------------------------------ */
/* Proofs: Ed25519 (libsodium) over (name, token)                      */

#define TN_PROOF_SK_BYTES 64u /* libsodium secret key (seed || pk) */
#define TN_PROOF_PK_BYTES 32u /* public key */
#define TN_PROOF_HEX_LEN 128u /* hex of the 64-byte signature */

/* Sign the message "tenure-proof-v1" NUL name NUL decimal(token) and
 * write the lower-case hex signature and a NUL into out_hex.  name must be
 * a valid lease name and token <= TN_FENCE_TOKEN_MAX.  0, TN_EINVAL, or
 * TN_EINTERNAL (libsodium failed to initialise). */
int tn_proof_sign(const uint8_t sk[64], const char *name, size_t name_len,
                  uint64_t token, char out_hex[129]);

/* Verify proof_hex[0..proof_len) for (name, token) under pk.  0 when valid,
 * TN_ESIGNATURE when missing (NULL or empty), malformed or not valid. */
int tn_proof_verify(const uint8_t pk[32], const char *name, size_t name_len,
                    uint64_t token, const char *proof_hex, size_t proof_len);

/* Make a new key pair.  0 or TN_EINTERNAL. */
int tn_proof_keypair(uint8_t pk_out[32], uint8_t sk_out[64]);

/* Key files hold one line of hex: 128 digits (the 64-byte secret key) for
 * the signing key, 64 digits (the 32-byte public key) for the verify key;
 * a trailing newline is allowed, nothing else.  Return 0, TN_EIO (cannot
 * read), or TN_EINVAL (wrong format; detail in em, which may be NULL). */
int tn_proof_load_signing_key(const char *path, uint8_t sk_out[64],
                              struct tn_errmsg *em);
int tn_proof_load_verify_key(const char *path, uint8_t pk_out[32],
                             struct tn_errmsg *em);

/* Write a key pair as two files (signing file mode 0600, created
 * exclusively: an existing file is never overwritten).  0, TN_EIO. */
int tn_proof_write_keys(const char *signing_path, const char *verify_path,
                        const uint8_t pk[32], const uint8_t sk[64],
                        struct tn_errmsg *em);

/* ------------------------------------------------------------------ */
/* Check-and-advance of the mark inside the caller's transaction       */

/* All advance functions: 0 when the token is admitted (token >= mark; the
 * mark is now token), TN_ESTALE when rejected (mark unchanged),
 * otherwise an infrastructure error.  *hwm_before_out (may be NULL) gets
 * the mark before the call, 0 when the resource had none.  They must be
 * called inside a transaction the caller opened and will commit together
 * with the write it guards: outside one they return TN_EINVAL, because a
 * check that commits separately from its write does not fence anything. */

/* SQLite: create tenure_fence(resource TEXT PRIMARY KEY, hwm INTEGER NOT
 * NULL) if missing.  0, TN_EIO, TN_EBUSY. */
int tn_fence_sqlite_migrate(struct sqlite3 *db, struct tn_errmsg *em);
int tn_fence_sqlite_advance(struct sqlite3 *db, const char *resource,
                            size_t len, uint64_t token,
                            uint64_t *hwm_before_out, struct tn_errmsg *em);
/* Current mark (0 when none).  0, TN_EIO. */
int tn_fence_sqlite_get(struct sqlite3 *db, const char *resource, size_t len,
                        uint64_t *hwm_out, struct tn_errmsg *em);

/* SQLite, for callers that advance many marks on one connection: the
 * fence's statements prepared once (tn_fence_sqlite_migrate must have
 * run).  The handle borrows db and must be finalized before db is closed;
 * it belongs to the thread that uses db.  0, TN_ENOMEM, TN_EIO. */
struct tn_fence_sqlite;
int tn_fence_sqlite_prepare(struct sqlite3 *db, struct tn_fence_sqlite **out,
                            struct tn_errmsg *em);
void tn_fence_sqlite_finalize(struct tn_fence_sqlite *f);
/* As tn_fence_sqlite_advance, on f's connection. */
int tn_fence_sqlite_advance_prepared(struct tn_fence_sqlite *f,
                                     const char *resource, size_t len,
                                     uint64_t token, uint64_t *hwm_before_out,
                                     struct tn_errmsg *em);

/* PostgreSQL: create tenure_fence(resource text primary key, hwm bigint not
 * null) and the SQL function tenure_fence_advance(resource text, token
 * bigint) returns boolean (true = admitted), so that any SQL client can
 * fence too.  Safe to run concurrently.  0, TN_EIO, TN_ECONNECT. */
int tn_fence_pg_migrate(struct pg_conn *conn, struct tn_errmsg *em);
int tn_fence_pg_advance(struct pg_conn *conn, const char *resource, size_t len,
                        uint64_t token, uint64_t *hwm_before_out,
                        struct tn_errmsg *em);
int tn_fence_pg_get(struct pg_conn *conn, const char *resource, size_t len,
                    uint64_t *hwm_out, struct tn_errmsg *em);

/* ------------------------------------------------------------------ */
/* In-memory filter for stream processors (not thread-safe)           */

struct tn_fence_mem;

/* A filter holding at most max_resources marks; NULL on out of memory. */
struct tn_fence_mem *tn_fence_mem_new(size_t max_resources);
void tn_fence_mem_free(struct tn_fence_mem *f);
/* As the SQL variants; TN_ETOOBIG when a new resource would pass
 * max_resources, TN_ENOMEM. */
int tn_fence_mem_advance(struct tn_fence_mem *f, const char *resource,
                         size_t len, uint64_t token, uint64_t *hwm_before_out);
/* Mark of resource into *hwm_out: 0 or TN_ENOTFOUND. */
int tn_fence_mem_get(const struct tn_fence_mem *f, const char *resource,
                     size_t len, uint64_t *hwm_out);
/* Number of resources tracked. */
size_t tn_fence_mem_count(const struct tn_fence_mem *f);

/* ------------------------------------------------------------------ */
/* Records: classification and Kafka stamping                         */

/* A record as the fence sees it.  All pointers borrowed; a NULL pointer
 * means "absent".  count fields say how many headers of that name the
 * record carried (a repeated token is ambiguous and rejected). */
struct tn_fence_record {
    const char *key;      /* lease name, not NUL-terminated */
    size_t key_len;       /* bytes */
    const char *token;    /* lease-token value */
    size_t token_len;     /* bytes */
    unsigned token_count; /* lease-token headers seen */
    const char *proof;    /* lease-proof value */
    size_t proof_len;     /* bytes */
    unsigned proof_count; /* lease-proof headers seen */
    const char *claim;    /* lease-claim value */
    size_t claim_len;     /* bytes */
};

/* Validate everything but the mark: key, token, claim flag and (when pk is
 * not NULL) the proof.  On TN_FENCE_OK, *token_out and *is_claim_out are
 * set; the caller then advances the mark (and maps TN_ESTALE to
 * TN_FENCE_STALE). */
enum tn_fence_reason tn_fence_record_check(const struct tn_fence_record *r,
                                           const uint8_t *pk,
                                           uint64_t *token_out,
                                           bool *is_claim_out);

/* Fill r from a consumed Kafka message (borrowing from it). */
void tn_fence_record_from_message(const struct rd_kafka_message_s *m,
                                  struct tn_fence_record *r);

/* Add lease-token (and lease-proof when proof_hex is not NULL, and
 * lease-claim: 1 when claim) to hdrs.  0 or TN_EINVAL. */
int tn_fence_stamp_headers(struct rd_kafka_headers_s *hdrs, uint64_t token,
                           const char *proof_hex, bool claim);

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
struct rd_kafka_s *tn_fence_producer_new(const char *brokers,
                                         const char *transactional_id,
                                         struct tn_errmsg *em);

/* Produce w and wait up to timeout_ms for its delivery; the partition and
 * offset it landed at go to *partition_out / *offset_out (may be NULL).
 * rk must come from tn_fence_producer_new.  0, TN_EINVAL, TN_ETIMEDOUT,
 * TN_EIO. */
int tn_fence_produce_sync(struct rd_kafka_s *rk, const struct tn_fence_write *w,
                          int timeout_ms, int32_t *partition_out,
                          int64_t *offset_out, struct tn_errmsg *em);

/* ------------------------------------------------------------------ */
/* Claim before read                                                   */

/* Wait until a materializer writing into the sink has committed past
 * (topic, partition, offset): tenure_offsets.next_offset > offset.  Polls
 * every poll_ms, for at most timeout_ms.  sink is "sqlite:PATH" or a
 * "postgresql://" URL.  0, TN_ETIMEDOUT, TN_EIO, TN_EINVAL. */
int tn_fence_wait_committed(const char *sink, const char *topic,
                            int32_t partition, int64_t offset, int timeout_ms,
                            struct tn_errmsg *em);

/* ------------------------------------------------------------------ */
/* Broker-native layer (optional; never replaces the token check)      */

/* transactional.id for a lease name: "tenure-lease:" followed by the name.
 * 0 or TN_ETOOBIG / TN_EINVAL. */
int tn_fence_txn_id(const char *name, size_t name_len, char *out,
                    size_t out_cap);

/* A transactional producer for the lease name: transactional.id from
 * tn_fence_txn_id, init_transactions done (which fences producers that
 * initialised earlier with the same id).  NULL on failure, detail in em.
 * Ordered by init calls, not by tokens: a zombie that initialises after the
 * new holder fences the new holder.  Keep the token check at the sink. */
struct rd_kafka_s *tn_fence_txn_producer_new(const char *brokers,
                                             const char *name, size_t name_len,
                                             int timeout_ms,
                                             struct tn_errmsg *em);

/* Write w in its own Kafka transaction (begin, produce, commit) with rk
 * from tn_fence_txn_producer_new.  0 committed; TN_ELOST when the broker
 * fenced this producer (a newer one initialised): stop writing, the lease
 * is gone; TN_EIO for other failures (the transaction was aborted);
 * TN_EINVAL for a bad write. */
int tn_fence_txn_produce(struct rd_kafka_s *rk, const struct tn_fence_write *w,
                         int timeout_ms, struct tn_errmsg *em);

/* ------------------------------------------------------------------ */
/* Batch fence: one transaction's records decided in memory            */

/* Decides the records of one sink transaction as one advance per record
 * would, at a fraction of the cost: the first record of each resource goes
 * through fn (which reads the stored mark, raises it when admitted, and so
 * locks it for the rest of the transaction); later records of the same
 * resource are compared with the mark held in memory; flush writes each
 * mark that moved since once.  Up to max_resources resources are held per
 * batch; beyond that every record of a new resource goes through fn.  The
 * caller must be the only writer of the marks it touches for the length of
 * the transaction (true inside a SQLite write transaction, and in
 * PostgreSQL once fn has locked the row).  Not thread-safe.  NULL on out of
 * memory. */
struct tn_fence_batch;
struct tn_fence_batch *tn_fence_batch_new(size_t max_resources);
void tn_fence_batch_free(struct tn_fence_batch *b);
/* Start a transaction's batch: forget every mark held (they may have moved
 * since the last transaction).  fn(ctx, ...) is a check-and-advance with
 * the contract of the SQL variants above, bound to the caller's open
 * transaction through ctx (e.g. a wrapper around tn_fence_sqlite_advance);
 * it is used until the next begin. */
void tn_fence_batch_begin(struct tn_fence_batch *b,
                          int (*fn)(void *ctx, const char *resource, size_t len,
                                    uint64_t token, uint64_t *hwm_before_out,
                                    struct tn_errmsg *em),
                          void *ctx);
/* As tn_fence_sqlite_advance, inside the transaction of begin.  resource
 * is borrowed until the next begin (the batch keeps the pointer). */
int tn_fence_batch_advance(struct tn_fence_batch *b, const char *resource,
                           size_t len, uint64_t token, uint64_t *hwm_before_out,
                           struct tn_errmsg *em);
/* Write every mark raised in memory since its first record through fn;
 * call it before committing.  0, TN_ECONFLICT (a mark moved under the
 * transaction: another writer), or fn's error.  On error roll back. */
int tn_fence_batch_flush(struct tn_fence_batch *b, struct tn_errmsg *em);

/* ------------------------------------------------------------------ */
/* Proof cache: verify each grant's proof once                         */

/* Remembers up to about `entries` (name, token, proof) triples that
 * verified under pk (direct-mapped: a colliding grant replaces another).
 * A hit needs the very same proof bytes, so the answer is always that of
 * tn_proof_verify.  Not thread-safe.  NULL on out of memory. */
struct tn_proof_cache;
struct tn_proof_cache *tn_proof_cache_new(const uint8_t pk[32], size_t entries);
void tn_proof_cache_free(struct tn_proof_cache *c);
/* As tn_proof_verify with the cache's key (same return codes). */
int tn_proof_cache_verify(struct tn_proof_cache *c, const char *name,
                          size_t name_len, uint64_t token,
                          const char *proof_hex, size_t proof_len);
/* Lookups answered from the cache, and signatures verified. */
void tn_proof_cache_stats(const struct tn_proof_cache *c, uint64_t *hits_out,
                          uint64_t *misses_out);
/* tn_fence_record_check with the proof verified through proofs (NULL: no
 * proof required). */
enum tn_fence_reason
tn_fence_record_check_cached(const struct tn_fence_record *r,
                             struct tn_proof_cache *proofs, uint64_t *token_out,
                             bool *is_claim_out);

#ifdef __cplusplus
}
#endif
#endif
