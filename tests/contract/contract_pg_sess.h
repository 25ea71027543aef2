/* SPDX-License-Identifier: MIT */
/* Sessions driven through the store vtable, for the PostgreSQL session
 * cases (contract_pg_sess.c, contract_pg_sess_race.c). */
#ifndef TN_CONTRACT_PG_SESS_H
#define TN_CONTRACT_PG_SESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract.h"

/* A session as its opener knows it. */
struct sess {
    char id[TN_SESSION_ID_HEX + 1];  /* random hex, as the API draws it */
    uint8_t secret[TN_SECRET_BYTES]; /* its credential */
};

/* Each runs the loop until s answers and returns its rc (c keeps the
 * result; c must be initialised, a result it holds is released first).
 * ttl_ms 0 on renew keeps the TTL. */
int s_open(struct tn_store *s, const char *owner, int64_t ttl_ms,
           struct sess *out, struct call *c);
int s_renew(struct tn_store *s, const struct sess *x, int64_t ttl_ms,
            struct call *c);
int s_end(struct tn_store *s, const struct sess *x, bool force, struct call *c);
int s_get(struct tn_store *s, const char *id, struct call *c);
int s_list(struct tn_store *s, const char *prefix, const char *after,
           size_t limit, struct call *c);
/* An acquire of name under x (no TTL of its own); the start_ variant
 * returns at once (wait_calls). */
void s_start_acquire(struct tn_store *s, struct call *c, const struct sess *x,
                     const char *name, const char *owner, int64_t wait_ms);
int s_acquire(struct tn_store *s, struct call *c, const struct sess *x,
              const char *name, const char *owner);
/* A claim of n names under x (owner NULL: the session's). */
void s_start_claim(struct tn_store *s, struct call *c, const struct sess *x,
                   const char *const *names, size_t n, const char *owner);
int s_claim(struct tn_store *s, struct call *c, const struct sess *x,
            const char *const *names, size_t n, const char *owner);
/* A batch release of n leases under x. */
int s_unclaim(struct tn_store *s, const struct sess *x,
              const struct tn_name_token *leases, size_t n, struct call *c);
/* A get of name on store s. */
int get_on(struct tn_store *s, const char *name, struct call *c);

/* The cases (contract.c lists them). */
void case_pg_sess_basics(void);
void case_pg_sess_claims(void);
void case_pg_sess_events(void);
void case_pg_sess_capacity(void);
void case_pg_sess_two_instances(void);
void case_pg_sess_expiry(void);
void case_pg_sess_claim_race(void);
void case_pg_sess_end_one_txn(void);
void case_pg_sess_end_large(void);
void case_pg_sess_claim_1000(void);
void case_pg_sess_renew_in_flight(void);
void case_pg_sess_slow_claimer(void);
void case_pg_sess_restart(void);
void case_pg_replay_with_waiters(void);

#endif
