/* SPDX-License-Identifier: MIT */
/* Internals of the embedded store shared by its files:
 * src/store/embedded/store.c (decisions and group commit) and
 * src/store/embedded/wait.c (blocking acquire). Loop thread only, except where
 * a field says otherwise. */
#ifndef TN_STORE_EMBEDDED_H
#define TN_STORE_EMBEDDED_H

#include "common/heap.h"
#include "common/loop.h"
#include "lease/lease.h"
#include "store/embedded/commit.h"
#include "store/store.h"

struct tn_disk;

#define RETRY_AFTER_MS 1000
#define N_BATCH_BUCKETS 12
#define N_LAT_BUCKETS 12

struct pending_event;

struct embedded {
    struct tn_store base;           /* vtable; first */
    struct tn_loop *loop;           /* the loop thread's loop */
    struct tn_lease_table table;    /* loop thread only */
    struct tn_disk *disk;           /* committer thread after open */
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
    struct tn_waitq *queues;               /* every name with waiters */
    size_t n_waiters;                      /* blocked acquires, all names */
    size_t max_waiters;                    /* cap on n_waiters */
    size_t max_waiters_per_name;           /* cap per name */
    int64_t max_wait_ms;                   /* wait_ms is capped to this */
    uint64_t waits_granted;                /* waiters that got the lease */
    uint64_t waits_timed_out;           /* waiters answered at their deadline */
    uint64_t waits_dropped;             /* waiters gone before their turn */
    tn_store_event_fn on_event;         /* events, or NULL */
    void *event_ctx;                    /* its argument */
    struct tn_heap expiries;            /* min-heap of struct tn_expiry */
    struct tn_loop_timer expiry_timer;  /* at the heap's minimum */
    struct tn_ledger_rec *ledger;       /* ring of recent grants */
    size_t ledger_cap;                  /* its size */
    size_t ledger_next;                 /* grants recorded so far */
    uint64_t expiries_total;            /* grants that ran out */
    struct pending_event *spare_events; /* announced, kept for reuse */
    size_t n_spare_events;              /* how many */
    int64_t retain_ms;                  /* 0: names are never retired */
    struct tn_loop_timer retire_timer;  /* tick of the retirement sweep */
    size_t retire_cursor;               /* next bucket the sweep visits */
    uint64_t retired_seq;               /* change of the last retirement */
    uint64_t retired_total;             /* names retired */
    uint32_t *free_rows;                /* row ids of retired names */
    size_t n_free_rows;                 /* used */
    size_t cap_free_rows;               /* allocated */
    size_t n_live;                      /* leases counted live */
    size_t max_leases;                  /* cap on n_live; 0 none */
    size_t max_names;                   /* cap on table.count; 0 none */
};

/* Persist l and answer done(arg) after its commit. */
void tn_embedded_commit_change(struct embedded *e, struct tn_lease *l,
                               struct tn_store_result *out,
                               tn_store_done_fn done, void *arg);
/* Answer done(arg) once the state seen at change seq is durable. */
void tn_embedded_finish(struct embedded *e, uint64_t seq,
                        struct tn_store_result *out, tn_store_done_fn done,
                        void *arg);

/* src/store/embedded/wait.c: blocking acquire, FIFO per name. */
/* Queue r (which got TN_ECONFLICT or TN_ELOCKDELAY on l) until the name is
 * free, its deadline passes, or the requester goes away.  Returns 0 when
 * queued (done runs later), or TN_ECAPACITY (out->capacity says which
 * limit). */
int tn_embedded_wait(struct embedded *e, struct tn_lease *l,
                     const struct tn_acquire_req *r,
                     struct tn_store_result *out, tn_store_done_fn done,
                     void *arg);
/* True if l has waiters (a non-waiting acquire must not jump them). */
bool tn_embedded_has_waiters(const struct tn_lease *l);
/* The lease l was released or its expiry moved: grant to the first waiter
 * if it is free, else re-arm the name's timer. */
void tn_embedded_wake(struct embedded *e, struct tn_lease *l);
/* Answer every waiter with rc (store failure, shutdown). */
void tn_embedded_fail_waiters(struct embedded *e, int rc);
/* Drop and answer (TN_ECANCELED) the waiter whose wanted_ctx is ctx. */
void tn_embedded_cancel_wait(struct embedded *e, void *ctx);

/* src/store/embedded/events.c: durable events. */
/* Free the announced events kept for reuse (at close). */
void tn_embedded_free_events(struct embedded *e);
/* Announce ev about l after the open batch commits. */
void tn_embedded_emit(struct embedded *e, enum tn_event_type type,
                      const struct tn_lease *l);
/* Track the expiry of l's current grant (after a grant or a renew). */
void tn_embedded_track_expiry(struct embedded *e, const struct tn_lease *l);
/* Before anything reveals that l's grant ran out (an answer, an event, a
 * grant to another): if its expiry is not recorded yet, write l, ended,
 * into the open batch (l->seq moves; answer with tn_embedded_finish on
 * it) and announce "expired" after that commit.  docs/SAFETY.md 8. */
void tn_embedded_note_expiry(struct embedded *e, struct tn_lease *l,
                             int64_t now);
/* Track the expiry of every held lease whose expiry is not recorded yet
 * (after a load). */
void tn_embedded_track_all(struct embedded *e);
/* src/store/embedded/history.c: the grant ledger. */
int tn_embedded_ledger_init(struct embedded *e, size_t capacity);
void tn_embedded_ledger_clear(struct embedded *e);
void tn_embedded_ledger_free(struct embedded *e);
/* l was just granted (l->token is the new token). */
void tn_embedded_ledger_grant(struct embedded *e, struct tn_lease *l,
                              int64_t now);
/* l's current grant ended at at_ms; false if that was already known. */
bool tn_embedded_ledger_end(struct embedded *e, const struct tn_lease *l,
                            enum tn_grant_end how, int64_t at_ms);
/* Fill out->history with l's grants still in the ring, newest first. */
int tn_embedded_ledger_query(struct embedded *e, struct tn_lease *l,
                             size_t limit, int64_t now,
                             struct tn_store_result *out);

/* Forget tracked expiries (the table is being replaced). */
void tn_embedded_clear_expiries(struct embedded *e);
/* Handle every tracked expiry due at now: the expiry timer's work, and
 * before a list, which reveals the ends of the leases it leaves out. */
void tn_embedded_expire_due(struct embedded *e, int64_t now);
/* l's grant is no longer live (released, or its expiry was handled). */
void tn_embedded_uncount(struct embedded *e, struct tn_lease *l);
/* src/store/embedded/retire.c: retiring names (--retain-ms). */
void tn_embedded_retire_start(struct embedded *e);
void tn_embedded_retire_stop(struct embedded *e);
/* A row id a retired name gave back, or 0. */
uint32_t tn_embedded_take_row(struct embedded *e);
/* The table was reloaded from the file: the ids given back are gone. */
void tn_embedded_forget_free_rows(struct embedded *e);
/* Forget l's grants in the ledger (its name is being retired). */
void tn_embedded_ledger_forget(struct embedded *e, const struct tn_lease *l);

#endif
