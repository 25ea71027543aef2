/* SPDX-License-Identifier: MIT */
/* A cache of proofs that verified: every record of one grant carries the
 * same (name, token, proof), so a consumer verifies the Ed25519 signature
 * once per grant instead of once per record.  Only exact bytes that
 * verified under the cache's key are remembered, so a hit returns what
 * tn_proof_verify would; failures are never cached.  Direct-mapped, fixed
 * size, not thread-safe. */
#include <string.h>

#include <tenure/fence.h>

#include "common/alloc.h"
#include "common/hash.h"

struct entry {
    bool used;                    /* holds a verified proof */
    size_t len;                   /* bytes of name */
    uint64_t token;               /* the grant's token */
    char name[TN_FENCE_NAME_MAX]; /* lease name */
    char proof[TN_PROOF_HEX_LEN]; /* the hex proof that verified */
};

struct tn_proof_cache {
    uint8_t pk[TN_PROOF_PK_BYTES]; /* verify key */
    struct entry *entries;         /* mask + 1 entries */
    size_t mask;                   /* power of two minus one */
    uint64_t hits;                 /* lookups answered from the cache */
    uint64_t misses;               /* signatures verified */
};

struct tn_proof_cache *tn_proof_cache_new(const uint8_t pk[32], size_t entries)
{
    size_t cap = 1;
    while (cap < entries && cap < ((size_t)1 << 20))
        cap *= 2;
    struct tn_proof_cache *c = tn_calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->entries = tn_calloc(cap, sizeof(struct entry));
    if (c->entries == NULL) {
        tn_free(c);
        return NULL;
    }
    memcpy(c->pk, pk, sizeof(c->pk));
    c->mask = cap - 1;
    return c;
}

void tn_proof_cache_free(struct tn_proof_cache *c)
{
    if (c == NULL)
        return;
    tn_free(c->entries);
    tn_free(c);
}

static size_t slot_of(const struct tn_proof_cache *c, const char *name,
                      size_t len, uint64_t token)
{
    uint64_t h = tn_hash(name, len) ^ (token * 0x9e3779b97f4a7c15ull);
    return (size_t)(h ^ (h >> 29)) & c->mask;
}

int tn_proof_cache_verify(struct tn_proof_cache *c, const char *name,
                          size_t name_len, uint64_t token,
                          const char *proof_hex, size_t proof_len)
{
    if (proof_hex == NULL || proof_len != TN_PROOF_HEX_LEN || name == NULL ||
        name_len == 0 || name_len > TN_FENCE_NAME_MAX)
        return TN_ESIGNATURE;
    struct entry *e = &c->entries[slot_of(c, name, name_len, token)];
    if (e->used && e->token == token && e->len == name_len &&
        memcmp(e->name, name, name_len) == 0 &&
        memcmp(e->proof, proof_hex, TN_PROOF_HEX_LEN) == 0) {
        c->hits++;
        return TN_OK;
    }
    c->misses++;
    int rc =
        tn_proof_verify(c->pk, name, name_len, token, proof_hex, proof_len);
    if (rc < 0)
        return rc;
    e->used = true;
    e->token = token;
    e->len = name_len;
    memcpy(e->name, name, name_len);
    memcpy(e->proof, proof_hex, TN_PROOF_HEX_LEN);
    return TN_OK;
}

void tn_proof_cache_stats(const struct tn_proof_cache *c, uint64_t *hits_out,
                          uint64_t *misses_out)
{
    *hits_out = c->hits;
    *misses_out = c->misses;
}

enum tn_fence_reason
tn_fence_record_check_cached(const struct tn_fence_record *r,
                             struct tn_proof_cache *proofs, uint64_t *token_out,
                             bool *is_claim_out)
{
    uint64_t token = 0;
    enum tn_fence_reason why =
        tn_fence_record_check(r, NULL, &token, is_claim_out);
    if (why != TN_FENCE_OK)
        return why;
    if (proofs != NULL &&
        (r->proof_count > 1 ||
         tn_proof_cache_verify(proofs, r->key, r->key_len, token, r->proof,
                               r->proof_len) < 0))
        return TN_FENCE_BAD_PROOF;
    *token_out = token;
    return TN_FENCE_OK;
}
