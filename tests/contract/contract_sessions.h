/* SPDX-License-Identifier: MIT */
/* What the session cases of the contract suite share (contract_sessions.c
 * and contract_sessions_durable.c): requests through the store's session
 * ops (backend.h), each run on the loop until the store answers. */
#ifndef TN_CONTRACT_SESSIONS_H
#define TN_CONTRACT_SESSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract.h"

/* A session opened by a case: its id and secret. */
struct sess {
    char id[TN_SESSION_ID_HEX + 1];
    uint8_t secret[TN_SECRET_BYTES];
};

/* A name of this run (the prefix, then suffix) kept in buf: nm()'s
 * buffers rotate after eight calls. */
const char *nm_in(char *buf, size_t cap, const char *suffix);
#define NM(var, suffix)                                                        \
    char var##_buf[200];                                                       \
    const char *var = nm_in(var##_buf, sizeof(var##_buf), suffix)

/* False (said once, as skipped) unless the store implements sessions. */
bool sessions_here(const char *case_name);

/* Open a session of owner (principal: NULL) for ttl_ms; its rc. */
int sess_open(struct sess *s, const char *owner, const char *principal,
              int64_t ttl_ms, struct call *c);
/* Renew s (ttl_ms 0 keeps it), presenting its secret and principal. */
int sess_renew(const struct sess *s, int64_t ttl_ms, const char *principal,
               struct call *c);
/* End s (force: an admin's end, no secret). */
int sess_end(const struct sess *s, bool force, struct call *c);
int sess_get(const char *id, struct call *c);
int sess_list(const char *prefix, const char *after, size_t limit,
              struct call *c);
/* An acquire of name by owner under s (a request id rid, wait_ms,
 * lock_delay_ms as an acquire takes them); the secret it sent in sec. */
void sess_start_acquire(const struct sess *s, struct call *c, const char *name,
                        const char *owner, const char *rid, int64_t wait_ms,
                        int64_t delay_ms);
int sess_acquire(const struct sess *s, struct call *c, const char *name,
                 const char *owner, const char *rid, int64_t delay_ms);
/* Claim names[0..n) under s for owner (NULL: the session's). */
int sess_claim(const struct sess *s, const char *const *names, size_t n,
               const char *owner, int64_t delay_ms, struct call *c);
/* Release leases[0..n) of s: (name, token) pairs. */
int sess_unclaim(const struct sess *s, const char *const *names,
                 const uint64_t *tokens, size_t n, struct call *c);

/* A claim of `count` names prefix-0 .. prefix-(count-1), in batches of
 * at most 1000; all must be granted.  0 or -1. */
int sess_claim_many(const struct sess *s, const char *prefix, size_t count);

#endif
