/* SPDX-License-Identifier: MIT */
/* The fence kit: what a sink needs to admit a write only if its fencing
 * token is >= the highest token it has seen for the resource (the mark), and
 * to raise the mark atomically with the write.  Equal tokens are admitted,
 * lower ones rejected, and the mark never moves down.  This header is the
 * core: tokens and lease names, Ed25519 proofs over (name, token), the
 * record check, the rule over a tn_fence_ops backend, the batch fence and
 * the proof cache.  Each backend has its own small header:
 * <tenure/fence_sqlite.h> and <tenure/fence_mem.h> (in libtenure),
 * <tenure/fence_pg.h> (libtenure-pg, links libpq), <tenure/fence_kafka.h>
 * (libtenure-kafka, links librdkafka).  Nothing here prints or keeps
 * global state; every function is thread-safe unless its handle says
 * otherwise.  See docs/FENCING.md for the safety argument and the wire
 * formats. */
#ifndef TENURE_FENCE_H
#define TENURE_FENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/err.h>

#ifdef __cplusplus
extern "C" {
#endif

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
TN_EXTERN int tn_fence_parse_token(const char *s, size_t len, uint64_t *out);

/* Format a token as decimal into out (at least 21 bytes); returns the
 * length written, excluding the NUL. */
TN_EXTERN size_t tn_fence_format_token(uint64_t token, char out[21]);

/* True iff name[0..len) is a valid lease name: 1..256 bytes of valid UTF-8
 * with no control characters (C0, DEL, C1). */
TN_EXTERN bool tn_fence_name_is_valid(const char *name, size_t len);

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
TN_EXTERN const char *tn_fence_reason_name(enum tn_fence_reason r);

/* ------------------------------------------------------------------ */
/* Proofs: Ed25519 (libsodium) over (name, token)                      */

#define TN_PROOF_SK_BYTES 64u /* libsodium secret key (seed || pk) */
#define TN_PROOF_PK_BYTES 32u /* public key */
#define TN_PROOF_HEX_LEN 128u /* hex of the 64-byte signature */

/* Sign the message "tenure-proof-v1" NUL name NUL decimal(token) and
 * write the lower-case hex signature and a NUL into out_hex.  name must be
 * a valid lease name and token <= TN_FENCE_TOKEN_MAX.  0, TN_EINVAL, or
 * TN_EINTERNAL (libsodium failed to initialise). */
TN_EXTERN int tn_proof_sign(const uint8_t sk[64], const char *name,
                            size_t name_len, uint64_t token, char out_hex[129]);

/* Verify proof_hex[0..proof_len) for (name, token) under pk.  0 when valid,
 * TN_ESIGNATURE when missing (NULL or empty), malformed or not valid. */
TN_EXTERN int tn_proof_verify(const uint8_t pk[32], const char *name,
                              size_t name_len, uint64_t token,
                              const char *proof_hex, size_t proof_len);

/* Make a new key pair.  0 or TN_EINTERNAL. */
TN_EXTERN int tn_proof_keypair(uint8_t pk_out[32], uint8_t sk_out[64]);

/* Key files hold one line of hex: 128 digits (the 64-byte secret key) for
 * the signing key, 64 digits (the 32-byte public key) for the verify key;
 * a trailing newline is allowed, nothing else.  Return 0, TN_EIO (cannot
 * read), or TN_EINVAL (wrong format; detail in em, which may be NULL). */
TN_EXTERN int tn_proof_load_signing_key(const char *path, uint8_t sk_out[64],
                                        struct tn_errmsg *em);
TN_EXTERN int tn_proof_load_verify_key(const char *path, uint8_t pk_out[32],
                                       struct tn_errmsg *em);

/* Write a key pair as two files (signing file mode 0600, created
 * exclusively: an existing file is never overwritten).  0, TN_EIO. */
TN_EXTERN int tn_proof_write_keys(const char *signing_path,
                                  const char *verify_path, const uint8_t pk[32],
                                  const uint8_t sk[64], struct tn_errmsg *em);

/* ------------------------------------------------------------------ */
/* The rule, over any place that keeps marks                           */

/* A backend keeps one mark per resource; the rule (src/fence/fence.c) is
 * the same for all of them: a token is admitted when it is >= the mark,
 * the mark is then the token, and the mark never moves down.  conn is the
 * backend's own handle (see its header: fence_sqlite.h, fence_pg.h,
 * fence_mem.h).  A new backend is one file defining one of these and a
 * header declaring it (docs/CONTRIBUTING.md). */
struct tn_fence_ops {
    const char *name; /* "sqlite", "pg", "mem", ... */
    /* 0 when conn is inside a transaction that commits together with the
     * write the check guards, else TN_EINVAL (or TN_EIO for an aborted
     * one) with detail in em.  NULL for a backend without transactions. */
    int (*in_txn)(void *conn, struct tn_errmsg *em);
    /* The stored mark of resource into *hwm_out, 0 when there is none.
     * lock: called inside an advance; the backend keeps the row locked
     * until the transaction ends (SELECT ... FOR UPDATE). */
    int (*get)(void *conn, const char *resource, size_t len, bool lock,
               uint64_t *hwm_out, struct tn_errmsg *em);
    /* Atomically: when the mark is absent or <= token, make it token and
     * return 0; otherwise return TN_ESTALE and change nothing. */
    int (*raise)(void *conn, const char *resource, size_t len, uint64_t token,
                 struct tn_errmsg *em);
};

/* Check-and-advance of resource's mark through ops: 0 when the token is
 * admitted (token >= mark; the mark is now token), TN_ESTALE when rejected
 * (mark unchanged), otherwise an infrastructure error.  *hwm_before_out
 * (may be NULL) gets the mark before the call, 0 when the resource had
 * none.  For a backend with transactions it must be called inside one the
 * caller opened and will commit together with the write it guards:
 * outside one it returns TN_EINVAL, because a check that commits
 * separately from its write does not fence anything.  TN_EINVAL also for
 * an empty resource, one over TN_FENCE_NAME_MAX bytes, or a token over
 * TN_FENCE_TOKEN_MAX. */
TN_EXTERN int tn_fence_advance(const struct tn_fence_ops *ops, void *conn,
                               const char *resource, size_t len, uint64_t token,
                               uint64_t *hwm_before_out, struct tn_errmsg *em);

/* Current mark of resource through ops (0 when none).  0 or the backend's
 * error. */
TN_EXTERN int tn_fence_get(const struct tn_fence_ops *ops, void *conn,
                           const char *resource, size_t len, uint64_t *hwm_out,
                           struct tn_errmsg *em);

/* ------------------------------------------------------------------ */
/* Records: what the fence checks before the mark                      */

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
TN_EXTERN enum tn_fence_reason
tn_fence_record_check(const struct tn_fence_record *r, const uint8_t *pk,
                      uint64_t *token_out, bool *is_claim_out);

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
TN_EXTERN struct tn_fence_batch *tn_fence_batch_new(size_t max_resources);
TN_EXTERN void tn_fence_batch_free(struct tn_fence_batch *b);
/* Start a transaction's batch: forget every mark held (they may have moved
 * since the last transaction).  fn(ctx, ...) is a check-and-advance with
 * the contract of tn_fence_advance, bound to the caller's open
 * transaction through ctx (e.g. a wrapper around tn_fence_advance);
 * it is used until the next begin. */
TN_EXTERN void tn_fence_batch_begin(struct tn_fence_batch *b,
                                    int (*fn)(void *ctx, const char *resource,
                                              size_t len, uint64_t token,
                                              uint64_t *hwm_before_out,
                                              struct tn_errmsg *em),
                                    void *ctx);
/* As tn_fence_advance, inside the transaction of begin.  resource
 * is borrowed until the next begin (the batch keeps the pointer). */
TN_EXTERN int tn_fence_batch_advance(struct tn_fence_batch *b,
                                     const char *resource, size_t len,
                                     uint64_t token, uint64_t *hwm_before_out,
                                     struct tn_errmsg *em);
/* Write every mark raised in memory since its first record through fn;
 * call it before committing.  0, TN_ECONFLICT (a mark moved under the
 * transaction: another writer), or fn's error.  On error roll back. */
TN_EXTERN int tn_fence_batch_flush(struct tn_fence_batch *b,
                                   struct tn_errmsg *em);

/* ------------------------------------------------------------------ */
/* Proof cache: verify each grant's proof once                         */

/* Remembers up to about `entries` (name, token, proof) triples that
 * verified under pk (direct-mapped: a colliding grant replaces another).
 * A hit needs the very same proof bytes, so the answer is always that of
 * tn_proof_verify.  Not thread-safe.  NULL on out of memory. */
struct tn_proof_cache;
TN_EXTERN struct tn_proof_cache *tn_proof_cache_new(const uint8_t pk[32],
                                                    size_t entries);
TN_EXTERN void tn_proof_cache_free(struct tn_proof_cache *c);
/* As tn_proof_verify with the cache's key (same return codes). */
TN_EXTERN int tn_proof_cache_verify(struct tn_proof_cache *c, const char *name,
                                    size_t name_len, uint64_t token,
                                    const char *proof_hex, size_t proof_len);
/* Lookups answered from the cache, and signatures verified. */
TN_EXTERN void tn_proof_cache_stats(const struct tn_proof_cache *c,
                                    uint64_t *hits_out, uint64_t *misses_out);
/* tn_fence_record_check with the proof verified through proofs (NULL: no
 * proof required). */
TN_EXTERN enum tn_fence_reason
tn_fence_record_check_cached(const struct tn_fence_record *r,
                             struct tn_proof_cache *proofs, uint64_t *token_out,
                             bool *is_claim_out);

#ifdef __cplusplus
}
#endif
#endif
