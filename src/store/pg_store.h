/* SPDX-License-Identifier: MIT */
/* Internals shared by the PostgreSQL store's two halves: pg_conn.c (each
 * libpq connection on the loop thread: connect, migrate, prepare,
 * reconnect with backoff) and store_pg.c (operations, batched into
 * pipelined transactions spread over the connections).  Loop thread only;
 * no other thread ever touches a struct tn_pg. */
#ifndef TN_STORE_PG_STORE_H
#define TN_STORE_PG_STORE_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/loop.h"
#include "store.h"

#define TN_PG_RETRY_AFTER_MS 1000
/* Connections per instance: each is one PostgreSQL backend, so batches on
 * different connections run on different cores. */
#define TN_PG_CONNS 2

enum tn_pg_state {
    TN_PG_DOWN = 0,   /* no connection; a retry timer is armed */
    TN_PG_CONNECTING, /* PQconnectPoll in progress */
    TN_PG_SETUP,      /* session settings, migrations, sequence, prepare */
    TN_PG_READY       /* pipeline mode, statements prepared */
};

struct tn_pg;
struct tn_pg_op;
struct tn_pg_batch;

struct tn_pg_conn {
    struct tn_pg *store;               /* owner */
    PGconn *conn;                      /* NULL while down */
    int fd;                            /* watched socket, -1 if none */
    uint32_t fd_events;                /* events it is watched for */
    enum tn_pg_state state;            /* see above */
    int setup_step;                    /* index of the running setup step */
    int setup_rc;                      /* first error of the running step */
    int schema_version;                /* read by the version step */
    int64_t backoff_ms;                /* next reconnect delay */
    struct tn_loop_timer retry_timer;  /* reconnect */
    struct tn_loop_timer conn_timer;   /* connect + setup deadline */
    struct tn_loop_timer watchdog;     /* oldest batch in flight too old */
    struct tn_pg_batch *inflight;      /* sent, oldest first */
    struct tn_pg_batch *inflight_tail; /* newest */
    unsigned n_inflight;               /* batches in flight */
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
};

/* pg_conn.c */
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

/* store_pg.c */
/* A connection is ready: send what is pending. */
void tn_pg_on_ready(struct tn_pg_conn *c);
/* Socket events while ready. */
void tn_pg_on_io(struct tn_pg_conn *c, uint32_t events);
/* Answer every op in flight on c with TN_EUNAVAIL; and the pending ones
 * too when no connection is ready any more. */
void tn_pg_fail_conn(struct tn_pg_conn *c);

#endif
