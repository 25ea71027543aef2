/* SPDX-License-Identifier: MIT */
/* What the parts of the store contract suite share: the environment, the
 * checks, and the helpers that drive a store through its vtable on a real
 * tn_loop (contract.c); the shared cases are in contract_cases.c, the
 * PostgreSQL-only ones in contract_pg.c.  The backends come from the store
 * registry (src/store/store.c). */
#ifndef TN_CONTRACT_H
#define TN_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "common/loop.h"
#include "store/store.h"

/* The backend under test is the one called name. */
#define BACKEND_IS(n) (strcmp(E.b->name, (n)) == 0)

struct env {
    struct tn_loop *loop;             /* the loop all stores run on */
    struct tn_store *s;               /* store under test */
    const struct tn_store_backend *b; /* its registry line */
    const char *url;                  /* its --store URL ("" default) */
    char dir[64];                     /* its data dir (fresh, removed) */
    char prefix[40];                  /* per-run name prefix */
    int failures;                     /* failed checks */
};

extern struct env E;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
            E.failures++;                                                      \
            return;                                                            \
        }                                                                      \
    } while (0)

#define CHECK_RC(got, want)                                                    \
    do {                                                                       \
        int got_ = (got);                                                      \
        if (got_ != (want)) {                                                  \
            fprintf(stderr, "%s:%d: rc %s, want %s\n", __FILE__, __LINE__,     \
                    tn_errname(got_), tn_errname(want));                       \
            E.failures++;                                                      \
            return;                                                            \
        }                                                                      \
    } while (0)

/* One store call: its result and how often done ran. */
struct call {
    struct tn_store_result res; /* filled by the store */
    bool done;                  /* done ran */
    int n_done;                 /* times done ran (must be 1) */
};

/* The done of every call: marks c (a struct call) done. */
void on_done(void *arg);

/* Run the loop until the n calls at c are done. */
void wait_calls(struct call *c, size_t n);

/* False, after saying that the case is skipped, when the backend does
 * not declare the capability cap (its name). */
bool has_cap(bool cap, const char *case_name, const char *cap_name);

/* Run the loop for ms milliseconds (lets time pass on the loop). */
void run_for(int64_t ms);

/* The value of gauge name in s's metrics, or -1 if s has none. */
long store_gauge(struct tn_store *s, const char *name);
/* Run the loop until s is ready, and its LISTEN connection up when it has
 * one (true), or ms pass (false). */
bool wait_ready(struct tn_store *s, int64_t ms);

/* suffix behind this run's name prefix; one of 8 rotating buffers. */
char *nm(const char *suffix);

/* Start an acquire on s (done by wait_calls); the blocking variants below
 * run the loop until the store answers and return its rc. */
void start_acquire(struct tn_store *s, struct call *c, const char *name,
                   const char *owner, int64_t ttl_ms, const char *rid,
                   int64_t delay_ms, uint8_t secret[TN_SECRET_BYTES]);

int acquire(struct call *c, const char *name, const char *owner, int64_t ttl_ms,
            const char *rid, int64_t delay_ms);

/* Renew (renew true) or release r, and wait for the answer. */
int token_req(bool renew, const struct tn_token_req *r, struct call *c);

/* Renew or release by name and token (force: an admin's release). */
int token_op(bool renew, const char *name, uint64_t token,
             const uint8_t *secret, int64_t ttl_ms, bool force, struct call *c);

/* Renew or release the grant g made. */
int renew(const struct call *g, int64_t ttl_ms, struct call *c);

int release(const struct call *g, struct call *c);

/* Reads. */
int get(const char *name, struct call *c);

int check(const char *name, uint64_t token, struct call *c);

int list(const char *prefix, const char *after, size_t limit, struct call *c);

/* The config every store of the suite opens with. */
struct tn_store_config base_config(void);

/* Events announced so far for name, copied to out (at most cap). */
size_t events_of(const char *name, struct tn_event *out, size_t cap);

/* Run the loop until name has n events, or ms pass. */
size_t await_events(const char *name, size_t n, int64_t ms,
                    struct tn_event *out);

/* A blocking acquire; gone: its client has already left. */
void start_wait(struct call *c, const char *name, const char *owner,
                int64_t wait_ms, bool gone);

/* Record from now on the events of the names that start with filter (and
 * the session events of owners that do). */
void events_watch(const char *filter);

/* Every event recorded since events_watch, in order, copied to out (at
 * most cap). */
size_t events_all(struct tn_event *out, size_t cap);

/* Run what follows on a store of the case's own, empty (a fresh data dir,
 * or on PostgreSQL a private schema tag_<pid>), opened with cfg; E.s is
 * it.  private_store_end goes back to the suite's store.  0 or -1. */
int private_store_begin(const char *tag, const struct tn_store_config *cfg);
void private_store_end(void);

/* Close E.s and open it again on the same data (embedded: the same data
 * dir, whose journal a clean close leaves complete; PostgreSQL: the same
 * database).  0 or 1. */
int reopen_store(void);

/* Open the store at url (through the registry) with cfg, or with the
 * suite's config when cfg is NULL; 0 or an error, said on stderr. */
int open_url(const char *url, const struct tn_store_config *cfg,
             struct tn_store **out);

/* Open the PostgreSQL store at url with the suite's config (contract_pg.c). */
int open_pg(const char *url, struct tn_store **out);

/* Move E.pg_url into a new private schema tag_<pid> (contract_retire.c),
 * and back (E.s is closed and opened again outside it; the schema goes).
 * 0 or -1. */
int pg_private_schema_begin(const char *tag);
void pg_private_schema_end(void);

/* The cases (contract_cases.c; case_pg_* in contract_pg.c, and
 * case_pg_retire_* in contract_retire.c). */
void case_grant_fields(void);
void case_held(void);
void case_replay(void);
void case_renew(void);
void case_release(void);
void case_check_floor(void);
void case_expiry(void);
void case_lock_delay(void);
void case_get(void);
void case_list(void);
void case_tokens_increase(void);
void case_concurrent(void);
void case_history(void);
void case_events(void);
void case_wait_fifo(void);
void case_principal(void);
void case_wait_principal(void);
void case_retire(void);
void case_revealed_end_stays(void);
void case_replay_with_waiters(void);
/* Sessions (contract_sessions.c, contract_sessions_durable.c). */
void case_session_open_renew_get(void);
void case_session_acquire(void);
void case_session_idempotent_claims(void);
void case_session_claim_batch(void);
void case_session_claim_queued(void);
void case_session_unclaim(void);
void case_session_end_releases_all(void);
void case_session_expiry_lock_delay(void);
void case_session_force_end(void);
void case_session_list(void);
void case_session_events(void);
void case_session_principal(void);
void case_session_wait(void);
void case_session_renew_one_write(void);
void case_session_capacity(void);
void case_session_restart(void);
void case_session_end_then_crash(void);
void case_session_revealed_end_stays(void);
void case_pg_renew_blocked_past_expiry(void);
void case_pg_read_waits_for_writer(void);
void case_pg_change_behind_writer(void);
void case_pg_sequence_lifted(void);
void case_pg_concurrent_migrations(void);
void case_pg_down(void);
void case_pg_listen_first(void);
void case_pg_broken_in_flight(void);
void case_pg_slow_acquirer(void);
void case_pg_retire_race(void);
void case_pg_retire_many(void);
/* The order of one name's events, its two connections racing. */
void case_pg_events_order(void);

#endif
