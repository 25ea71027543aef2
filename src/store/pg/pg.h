/* SPDX-License-Identifier: MIT */
/* Internals shared by the PostgreSQL store's parts: src/store/pg/conn.c (each
 * libpq connection on the loop thread: connect, migrate, prepare, reconnect
 * with backoff), src/store/pg/store.c (operations, batched into pipelined
 * transactions spread over the connections), src/store/pg/result.c (rows and
 * SQLSTATEs into results), src/store/pg/events.c (the LISTEN connection, the
 * expiry sweep and the ledger prune) and src/store/pg/wait.c (blocking
 * acquire).  Loop thread only; no other thread ever touches a struct tn_pg. */
#ifndef TN_STORE_PG_STORE_H
#define TN_STORE_PG_STORE_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/loop.h"
#include "lease/lease.h"
#include "store/pg/sql.h"
#include "store/store.h"

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
struct tn_pg_op;
struct tn_pg_batch;
struct tn_pg_waitq;
struct tn_pg_retire;

/* Buckets of the table of names with waiters (src/store/pg/wait.c). */
#define TN_PG_WAIT_BUCKETS 1024

/* The dedicated LISTEN connection (src/store/pg/events.c). */
struct tn_pg_listen {
    PGconn *conn;                     /* NULL while down */
    int fd;                           /* watched socket, -1 if none */
    uint32_t fd_events;               /* events it is watched for */
    enum tn_pg_state state;           /* READY once LISTEN is done */
    int64_t backoff_ms;               /* next reconnect delay */
    struct tn_loop_timer retry_timer; /* reconnect */
};

struct tn_pg_conn {
    struct tn_pg *store;                   /* owner */
    PGconn *conn;                          /* NULL while down */
    int fd;                                /* watched socket, -1 if none */
    uint32_t fd_events;                    /* events it is watched for */
    enum tn_pg_state state;                /* see above */
    int setup_step;                        /* index of the running setup step */
    int setup_rc;                          /* first error of the running step */
    int schema_version;                    /* read by the version step */
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

struct tn_pg {
    struct tn_store base;                 /* vtable; first */
    struct tn_loop *loop;                 /* the loop thread's loop */
    char *conninfo;                       /* owned libpq connection string */
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
    struct tn_pg_waitq **wait_buckets;    /* TN_PG_WAIT_BUCKETS chains */
    size_t n_waiters;                     /* blocked acquires, all names */
    size_t max_waiters;                   /* cap on n_waiters */
    size_t max_waiters_per_name;          /* cap per name */
    int64_t max_wait_ms;                  /* wait_ms is capped to this */
    uint64_t waits_granted;               /* waiters that got the lease */
    uint64_t waits_timed_out;             /* answered at their deadline */
    uint64_t waits_dropped;               /* gone before their turn */
    struct tn_pg_retire *retire;          /* name retirement, or NULL */
};

struct tn_pg_op {
    struct tn_pg_op *next;                    /* pending list link */
    enum tn_pg_stmt stmt;                     /* what to run */
    struct tn_store_result *out;              /* caller's result */
    tn_store_done_fn done;                    /* called once */
    void *arg;                                /* for done */
    char *name;                               /* owned: name or list prefix */
    char *s2;                                 /* owned: owner_id (acquire) */
    char *s3;                                 /* owned: request_id/after,
                                                 or principal (renew,
                                                 release) */
    char *s4;                                 /* owned: principal
                                                 (acquire) */
    char secret_hex[3 + 2 * TN_SECRET_BYTES]; /* "\x..." bytea text */
    char n1[24];                              /* decimal parameter */
    char n2[24];                              /* decimal parameter */
    const char *values[TN_PG_MAX_PARAMS];     /* parameters, text */
    uint8_t secret[TN_SECRET_BYTES];          /* acquire: the new secret */
    uint64_t token;                           /* check: asked token */
    size_t limit;                             /* list: items wanted */
    unsigned tries;                           /* times sent */
    bool again;                               /* acquire saw no row */
    bool counted;                             /* in conns[conn].changing */
    uint8_t conn;                             /* connection it is in
                                                 flight on, if counted */
    uint32_t hash;                            /* of name (changes) */
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
    bool settled;             /* answered; only the trailer is left */
    struct tn_pg_op **held;   /* committed changes, answered, kept until
                                 the trailer's Sync (they pin their
                                 names, src/store/pg/store.c) */
    size_t n_held;            /* length of held */
    int64_t sent_ms;          /* server clock */
};

/* src/store/pg/conn.c */
/* Start connecting now (state DOWN -> CONNECTING). */
void tn_pg_conn_start(struct tn_pg_conn *c);
/* Forget the connection (every op in flight on it is answered
 * TN_EUNAVAIL) and reconnect after the backoff.  why is logged. */
void tn_pg_conn_drop(struct tn_pg_conn *c, const char *why);
/* Watch the connection's socket for events (re-registers if libpq changed
 * the socket). */
void tn_pg_conn_watch(struct tn_pg_conn *c, uint32_t events);
/* Stop watching the socket (before anything that may close it). */
void tn_pg_conn_unwatch(struct tn_pg_conn *c);

/* src/store/pg/store.c */
/* A connection is ready: send what is pending. */
void tn_pg_on_ready(struct tn_pg_conn *c);
/* Socket events while ready. */
void tn_pg_on_io(struct tn_pg_conn *c, uint32_t events);
/* Answer every op in flight on c with TN_EUNAVAIL; and the pending ones
 * too when no connection is ready any more. */
void tn_pg_fail_conn(struct tn_pg_conn *c);

/* Build the op of an acquire / renew or release / other statement (name
 * is the name, list prefix, or "" for the sweep and prune); NULL when out
 * of memory. */
struct tn_pg_op *tn_pg_op_acquire(const struct tn_acquire_req *r,
                                  struct tn_store_result *out);
struct tn_pg_op *tn_pg_op_token(enum tn_pg_stmt stmt,
                                const struct tn_token_req *r,
                                struct tn_store_result *out);
struct tn_pg_op *tn_pg_op_new(enum tn_pg_stmt stmt, const char *name,
                              size_t name_len, struct tn_store_result *out);
/* Queue op (NULL: answer TN_ENOMEM) for the next batch; done(arg) runs
 * exactly once, possibly before this returns (store not ready). */
void tn_pg_submit(struct tn_pg *p, struct tn_pg_op *op,
                  struct tn_store_result *out, tn_store_done_fn done,
                  void *arg);
/* c's last libpq error on one line, without quotes, for the log. */
void tn_pg_message(PGconn *c, char *out, size_t cap);
/* Takes requests: a statement connection is ready, and the LISTEN
 * connection has been ready once since the start. */
bool tn_pg_is_up(const struct tn_pg *p);

/* src/store/pg/events.c */
/* Start the LISTEN connection, the sweep and the prune timers. */
void tn_pg_events_start(struct tn_pg *p);
/* Stop them and close the LISTEN connection. */
void tn_pg_events_stop(struct tn_pg *p);
/* Parse one NOTIFY payload (src/store/pg/sql.h) and deliver its events in
 * order: to on_event, and released/expired/revoked wake the name's waiters.
 * Malformed lines are skipped. */
void tn_pg_events_deliver(struct tn_pg *p, const char *payload);
void tn_pg_events_metrics(struct tn_pg *p, struct tn_buf *out);

/* src/store/pg/wait.c: blocking acquire, FIFO per name within this instance. */
int tn_pg_wait_init(struct tn_pg *p, const struct tn_store_config *cfg);
/* Take r if waiting is involved: r waits (wait_ms > 0), or the name has
 * local waiters and r must not jump them.  Returns true when taken (done
 * runs later, or already ran), false when r is a plain acquire. */
bool tn_pg_wait_acquire(struct tn_pg *p, const struct tn_acquire_req *r,
                        struct tn_store_result *out, tn_store_done_fn done,
                        void *arg);
/* The name may have become free (an event said so): try its first
 * waiter. */
void tn_pg_wait_wake(struct tn_pg *p, const char *name);
/* Try the first waiter of every name (events may have been missed). */
void tn_pg_wait_wake_all(struct tn_pg *p);
/* Answer every waiter with rc (shutdown), then free the table. */
void tn_pg_wait_fail_all(struct tn_pg *p, int rc);
void tn_pg_wait_free(struct tn_pg *p);
/* Drop and answer (TN_ECANCELED) the waiter whose wanted_ctx is ctx. */
void tn_pg_wait_cancel(struct tn_pg *p, void *ctx);
void tn_pg_wait_metrics(struct tn_pg *p, struct tn_buf *out);

/* src/store/pg/retire.c: retiring names (docs/SAFETY.md section 9.3). */
/* Start the periodic retirement (retain_ms 0: none, p->retire NULL). */
int tn_pg_retire_start(struct tn_pg *p, int64_t retain_ms);
/* Stop it and close its connection. */
void tn_pg_retire_stop(struct tn_pg *p);
void tn_pg_retire_metrics(struct tn_pg *p, struct tn_buf *out);

/* src/store/pg/result.c */
/* The next result of batch b (for b->ops[b->idx]): parse its rows into the
 * op's result, or record the failure in b. */
void tn_pg_take_result(struct tn_pg_batch *b, PGresult *r);

#endif
