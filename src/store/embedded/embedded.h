/* SPDX-License-Identifier: MIT */
/* The state of the embedded store that its parts share, and nothing else:
 * each part declares its functions in its own header and includes only
 * the parts below it.  From the bottom: history.c (the grant ledger),
 * events.c (expiries and durable events), retire.c (retiring names),
 * change.c (a change into the open batch, answered after its commit),
 * wait.c (blocking acquire), session.c (the session operations), claim.c
 * (claims and batch releases under a session), read.c (get, check, list,
 * history), store.c (the vtable, acquire, renew, release, open and
 * close).  events.c also keeps the sessions' expiries and settles the
 * leases of ended sessions.  Loop thread only, except where a field says
 * otherwise. */
#ifndef TN_STORE_EMBEDDED_H
#define TN_STORE_EMBEDDED_H

#include "common/heap.h"
#include "common/loop.h"
#include "lease/lease.h"
#include "store/backend.h"
#include "store/embedded/commit.h"
#include "store/waitq.h"

struct tn_disk;

#define RETRY_AFTER_MS 1000

/* result.reason of a TN_ELOST about a session (docs/SESSIONS.md). */
#define TN_EMBEDDED_SESSION_LOST "the session has ended or does not exist"
#define N_BATCH_BUCKETS 12
#define N_LAT_BUCKETS 12

struct pending_event;

struct embedded {
    struct tn_store base;           /* vtable; first */
    struct tn_loop *loop;           /* the loop thread's loop */
    struct tn_lease_table table;    /* loop thread only */
    struct tn_disk *disk;           /* commit.c's writer after open */
    struct tn_commit *commit;       /* group commit */
    uint64_t durable_seq;           /* changes <= this are on disk */
    int degraded_rc;                /* 0, TN_ENOSPC, or TN_EIO (for good) */
    struct tn_lease_table reloaded; /* built by recover, swapped on loop */
    uint64_t commits;               /* batches written */
    uint64_t rows;                  /* rows written */
    uint64_t failures;              /* failed batches */
    uint64_t batch_hist[N_BATCH_BUCKETS + 1]; /* rows per batch, log2 */
    uint64_t lat_hist[N_LAT_BUCKETS + 1];     /* write us, log2 from 64us */
    double write_seconds;                     /* sum */
    uint64_t sync_hist[N_LAT_BUCKETS + 1]; /* COMMIT (WAL write + fsync) us */
    double sync_seconds;                   /* sum */
    struct tn_waitq_set waits;             /* blocked acquires (wait.c) */
    tn_store_event_fn on_event;            /* events, or NULL */
    void *event_ctx;                       /* its argument */
    struct tn_heap expiries;               /* min-heap of struct tn_expiry */
    struct tn_loop_timer expiry_timer;     /* at the heap's minimum */
    struct tn_ledger_rec *ledger;          /* ring of recent grants */
    size_t ledger_cap;                     /* its size */
    size_t ledger_next;                    /* grants recorded so far */
    uint64_t expiries_total;               /* grants that ran out */
    struct pending_event *spare_events;    /* announced, kept for reuse */
    size_t n_spare_events;                 /* how many */
    int64_t retain_ms;                     /* 0: names are never retired */
    struct tn_loop_timer retire_timer;     /* tick of the retirement sweep */
    size_t retire_cursor;                  /* next bucket the sweep visits */
    uint64_t retired_seq;                  /* change of the last retirement */
    uint64_t retired_total;                /* names retired */
    size_t n_live;                         /* leases counted live */
    size_t max_leases;                     /* cap on n_live; 0 none */
    size_t max_names;                      /* cap on table.count; 0 none */
    /* Sessions (docs/SESSIONS.md; events.c, session.c). */
    size_t n_sessions_live;             /* sessions counted live */
    size_t max_sessions;                /* cap on n_sessions_live; 0 none */
    struct tn_heap session_expiries;    /* min-heap of struct tn_sexpiry */
    struct tn_loop_timer session_timer; /* at its minimum */
    struct tn_session *settle_head;     /* ended sessions whose leases are
                                           still to settle, oldest first */
    struct tn_session *settle_tail;     /* the newest of them */
    struct tn_loop_timer settle_timer;  /* settles the next slice */
    uint64_t sessions_gone_seq; /* change of the last session row deleted */
    uint64_t sessions_opened;   /* sessions opened */
    uint64_t sessions_ended[4]; /* sessions ended, by enum tn_session_end */
    uint64_t leases_settled;    /* leases ended with their session */
    /* wait.c's: l ended outside a request about its name (its session
     * ended); serve its waiters on the next loop turn.  May be NULL. */
    void (*lease_freed)(struct embedded *e, struct tn_lease_entry *l);
};

#endif
