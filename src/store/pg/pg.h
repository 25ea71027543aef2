/* SPDX-License-Identifier: MIT */
/* The types the PostgreSQL store's parts share, and nothing else: each part
 * declares its functions in its own header, and includes only the parts
 * below it.  From the bottom: hosts.c (the connection string's hosts and
 * what is known of each), link.c (one bounded connect to one host after
 * another, for every connection), conn.c (each libpq connection on the loop
 * thread: connect, migrate, prepare, reconnect with backoff; it tells the
 * batches above of its state through struct tn_pg's conn_* hooks), op.c
 * (a statement and its parameters), result.c (rows and SQLSTATEs into
 * results), batch.c (ops batched into pipelined transactions spread over
 * the connections), wait.c (blocking acquire), events.c (the LISTEN
 * connection, the expiry sweep and the ledger prune; events_payload.c
 * reads its notifications), session.c (the
 * session ops and their sweep), store.c (the vtable, open and close).  Loop
 * thread only; no other thread ever touches a struct tn_pg. */
#ifndef TN_STORE_PG_STORE_H
#define TN_STORE_PG_STORE_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/loop.h"
#include "lease/lease.h"
#include "store/backend.h"
#include "store/pg/floor.h"
#include "store/pg/link.h"
#include "store/pg/sql.h"
#include "store/waitq.h"

#define TN_PG_RETRY_AFTER_MS 1000
/* Connections per instance: each is one PostgreSQL backend, so batches on
 * different connections run on different cores. */
#define TN_PG_CONNS 2
/* Counters of the changes in flight on a connection, by name hash. */
#define TN_PG_CHANGE_SLOTS 1024

enum tn_pg_state {
    TN_PG_DOWN = 0,   /* no connection; a retry timer is armed */
    TN_PG_CONNECTING, /* PQconnectPoll in progress */
    TN_PG_SETUP,      /* session settings, migrations, sequence, prepare */
    TN_PG_READY       /* pipeline mode, statements prepared */
};

struct tn_pg;
struct tn_pg_retire;
struct tn_pg_op;
struct tn_pg_batch;

/* The dedicated LISTEN connection (src/store/pg/events.c). */
struct tn_pg_listen {
    struct tn_pg_link link;           /* the connection */
    enum tn_pg_state state;           /* READY once LISTEN is done */
    int64_t backoff_ms;               /* next reconnect delay */
    bool beating;                     /* a heartbeat query is in flight */
    bool recovery;                    /* its answer: the node is a standby */
    struct tn_loop_timer retry_timer; /* reconnect */
    struct tn_loop_timer beat_timer;  /* next heartbeat */
};

struct tn_pg_conn {
    struct tn_pg *store;                   /* owner */
    struct tn_pg_link link;                /* the connection (link.c) */
    PGconn *conn;                          /* link.conn once connected
                                              (SETUP, READY), else NULL */
    enum tn_pg_state state;                /* see above */
    int setup_step;                        /* index of the running setup step */
    int setup_rc;                          /* first error of the running step */
    int schema_version;                    /* read by the version step */
    bool lock_busy;                        /* the running step timed out
                                              waiting for a table lock */
    unsigned lock_retries;                 /* such timeouts this setup */
    int64_t backoff_ms;                    /* next reconnect delay */
    struct tn_loop_timer retry_timer;      /* reconnect */
    struct tn_loop_timer conn_timer;       /* connect + setup deadline */
    struct tn_loop_timer watchdog;         /* oldest batch in flight too old */
    struct tn_pg_batch *inflight;          /* sent, oldest first */
    struct tn_pg_batch *inflight_tail;     /* newest */
    unsigned n_inflight;                   /* batches in flight */
    uint16_t changing[TN_PG_CHANGE_SLOTS]; /* changes (acquire, release)
                                              in flight, by name hash,
                                              until their trailer ends */
};

/* --max-leases, --max-names and --max-sessions (src/store/pg/limits.c):
 * a count of the whole database, taken every so often, plus what this
 * instance changed since. */
struct tn_pg_limits {
    int64_t max_leases;            /* live leases; 0 = no cap */
    int64_t max_names;             /* rows of leases; 0 = no cap */
    int64_t max_sessions;          /* live sessions; 0 = no cap */
    int64_t live;                  /* live leases at the last count */
    int64_t names;                 /* names (rows) at the last count */
    int64_t sessions;              /* live sessions at the last count */
    int64_t d_live;                /* this instance's grants minus its
                                      releases since that count was sent */
    int64_t d_names;               /* names this instance added since */
    int64_t d_sessions;            /* sessions it opened minus those it
                                      ended since */
    int64_t d_live_sent;           /* d_live when the count was sent */
    int64_t d_names_sent;          /* d_names when the count was sent */
    int64_t d_sessions_sent;       /* d_sessions when it was sent */
    int64_t inflight;              /* grants asked for, not answered yet
                                      (an acquire 1, a claim its names) */
    int64_t sessions_inflight;     /* session opens sent, not answered */
    int64_t sent_ms;               /* when the running count was sent */
    bool counting;                 /* a count is in flight */
    bool parked;                   /* due while down: waits for the
                                      store to be up (events_up) */
    uint64_t n_counts;             /* counts that came back */
    uint64_t n_attempts;           /* times a count came due */
    struct tn_loop_timer timer;    /* next count */
    struct tn_store_result result; /* the count's result */
};

/* The session sweep (src/store/pg/session.c). */
struct tn_pg_sessions {
    struct tn_loop_timer timer;       /* next sweep */
    bool sweeping;                    /* a sweep is in flight */
    struct tn_store_result sweep_res; /* its result */
    uint64_t n_opened;                /* sessions this instance opened */
    uint64_t n_expired;               /* session expiries its sweep
                                         recorded */
    uint64_t n_released;              /* sessions it ended (DELETE) */
    uint64_t n_revoked;               /* sessions it ended by force */
    uint64_t n_settled;               /* leases of ended sessions its
                                         sweep settled */
};

/* The synchronous standby check (src/store/pg/sync.c). */
struct tn_pg_sync {
    bool require;                  /* --require-sync-standby */
    bool gate;                     /* refuse every op but the check
                                      (batch.c): required, and no check
                                      answered "sync" since the last new
                                      connection */
    bool checking;                 /* a check is in flight */
    bool again;                    /* a connection came up meanwhile */
    int state;                     /* enum tn_pg_sync_state, last answer */
    int logged;                    /* the state last logged */
    int64_t standbys;              /* standbys connected, last answer */
    int64_t bad_since_ms;          /* since when the answers say "no
                                      synchronous standby", 0 if not */
    uint64_t n_checks;             /* checks answered */
    struct tn_loop_timer timer;    /* next check */
    struct tn_loop_timer rotate;   /* drop the connections (maybe_rotate),
                                      outside the check's callback */
    struct tn_store_result result; /* the running check's */
};

struct tn_pg {
    struct tn_store base;                 /* vtable; first */
    struct tn_loop *loop;                 /* the loop thread's loop */
    struct tn_pg_hosts hosts;             /* its hosts, shared by links */
    struct tn_pg_conn conns[TN_PG_CONNS]; /* the connections */
    struct tn_loop_timer flush_timer;     /* send pending, same iteration */
    struct tn_pg_op *pending;             /* not yet sent, FIFO */
    struct tn_pg_op *pending_tail;        /* last of pending */
    size_t n_pending;                     /* length of pending */
    uint64_t op_seq;                      /* arrival counter */
    uint64_t n_batches;                   /* committed or failed batches */
    uint64_t n_statements;                /* statements sent */
    uint64_t n_retries;                   /* statements sent again */
    uint64_t n_failures;                  /* batches that failed */
    uint64_t n_connects;                  /* successful setups */
    uint64_t n_unavailable;               /* ops answered TN_EUNAVAIL */
    uint64_t n_setup_lock_timeouts;       /* setup steps that gave up
                                             waiting for a table lock */
    tn_store_event_fn on_event;           /* events, or NULL */
    void *event_ctx;                      /* its argument */
    tn_store_watched_fn watched;          /* or NULL */
    struct tn_pg_listen listen;           /* LISTEN connection */
    struct tn_loop_timer sweep_timer;     /* next expiry sweep */
    struct tn_loop_timer prune_timer;     /* next ledger prune */
    bool sweeping;                        /* a sweep is in flight */
    bool pruning;                         /* a prune is in flight */
    bool closing;                         /* pg_close is running */
    struct tn_store_result sweep_res;     /* the sweep's result */
    struct tn_store_result prune_res;     /* the prune's result */
    uint64_t n_events;                    /* events heard on LISTEN */
    uint64_t n_expiries;                  /* expiries this instance swept */
    uint64_t n_listen_connects;           /* LISTEN ups; 0: never up */
    struct tn_waitq_set waits;            /* blocked acquires (wait.c) */
    /* What a connection tells the batches above it (batch.c), set at
     * open: it is ready, its socket has events, it failed. */
    void (*conn_ready)(struct tn_pg_conn *c);
    void (*conn_io)(struct tn_pg_conn *c, uint32_t events);
    void (*conn_failed)(struct tn_pg_conn *c);
    struct tn_pg_retire *retire;    /* name retirement (retire.c), or NULL */
    struct tn_pg_limits limits;     /* capacity limits (limits.c) */
    struct tn_pg_sync sync;         /* synchronous standby (sync.c) */
    struct tn_pg_floor floor;       /* token floor (floor.c) */
    struct tn_pg_sessions sessions; /* the session sweep (session.c) */
};

struct tn_pg_op {
    struct tn_pg_op *next;                    /* pending list link */
    enum tn_pg_stmt stmt;                     /* what to run */
    struct tn_store_result *out;              /* caller's result */
    tn_store_done_fn done;                    /* called once */
    void *arg;                                /* for done */
    char *name;                               /* owned: name or list prefix
                                                 (session ops: the
                                                 session id) */
    char *s2;                                 /* owned: owner_id (acquire,
                                                 session open, claim) */
    char *s3;                                 /* owned: request_id/after,
                                                 or principal (renew,
                                                 release, session ops) */
    char *s4;                                 /* owned: principal
                                                 (acquire) */
    char *sess;                               /* owned: the session (session
                                                 ops, an acquire under
                                                 one), or NULL */
    char *arrays[3];                          /* owned: array parameters
                                                 (claim, unclaim) */
    char *names;                              /* owned: claim, unclaim: the
                                                 names, NUL-separated */
    size_t n_names;                           /* how many */
    char secret_hex[3 + 2 * TN_SECRET_BYTES]; /* "\x..." bytea text */
    char sess_hex[3 + 2 * TN_SECRET_BYTES];   /* the session's secret */
    char n1[24];                              /* decimal parameter */
    char n2[24];                              /* decimal parameter */
    char n3[24];                              /* decimal parameter */
    char n4[24];                              /* decimal parameter */
    const char *values[TN_PG_MAX_PARAMS];     /* parameters, text */
    uint8_t secret[TN_SECRET_BYTES];          /* acquire, session open: the
                                                 new secret */
    uint64_t token;                           /* check: asked token */
    int64_t ttl_ms;                           /* session open: its TTL */
    size_t limit;                             /* list: items wanted */
    size_t granted;                           /* claim: new grants;
                                                 unclaim, session end:
                                                 leases released */
    size_t inserted;                          /* acquire, claim: grants of
                                                 names without a row */
    unsigned tries;                           /* times sent */
    bool again;                               /* saw no row: run again */
    bool reserved;                            /* counted in limits while in
                                                 flight (limits.c) */
    bool no_grant;                            /* acquire: grant nothing (the
                                                 name is promised to a
                                                 waiter, wait.c) */
    bool counted;                             /* in conns[conn].changing */
    uint8_t conn;                             /* connection it is in
                                                 flight on, if counted */
    uint32_t hash;                            /* of name (changes) */
    uint32_t sess_hash;                       /* of sess (changes) */
    uint64_t seq;                             /* arrival order */
};

struct tn_pg_batch {
    struct tn_pg_batch *next; /* in flight list link */
    struct tn_pg_op **ops;    /* n of them, in the order sent */
    size_t n;                 /* statements */
    size_t idx;               /* statement whose result comes next */
    bool got;                 /* idx has had its result */
    int err_rc;               /* first failure, 0 if none */
    size_t err_idx;           /* statement that failed */
    bool retry_all;           /* serialization failure: send all again */
    bool drop;                /* the connection is unusable */
    bool trailer;             /* NOTIFY_SQL follows the Sync */
    bool notify_in;           /* the notify runs before the Sync, inside
                                 the transaction (batches that sweep) */
    bool sweeps;              /* a sweep, alone in its batch: nothing is
                                 pipelined behind it while another
                                 connection can take it (batch.c) */
    bool settled;             /* answered; only the trailer is left */
    struct tn_pg_op **held;   /* committed changes, answered, kept until
                                 the trailer's Sync (they pin their
                                 names, src/store/pg/store.c) */
    size_t n_held;            /* length of held */
    int64_t sent_ms;          /* server clock */
};

#endif
