/* SPDX-License-Identifier: MIT */
/* One FIFO waiter queue for every backend.  Blocked acquires wait per name
 * in arrival order, each with its deadline (wait_ms, capped); the waiters
 * are bounded in all and per name (TN_ECAPACITY); a queue is found by name
 * (common/map) or a waiter by the client that asked (cancel); the lines
 * are <sys/queue.h> lists.  What granting or refusing a waiter means is
 * the backend's (src/store/embedded/wait.c, src/store/pg/wait.c): the set
 * calls it back when a waiter's deadline passes, when a waiter leaves its
 * line, and before it frees a queue.  Loop thread only. */
#ifndef TN_STORE_WAITQ_H
#define TN_STORE_WAITQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "common/buf.h"
#include "common/loop.h"
#include "common/map.h"
#include "store/backend.h"

struct tn_waitq;

/* One blocked acquire: a copy of its request, and whom to answer. */
struct tn_blocked {
    struct tn_waitq *q;           /* its queue */
    TAILQ_ENTRY(tn_blocked) link; /* q->waiters, FIFO */
    char *owner_id;               /* owned */
    char *request_id;             /* owned, or NULL */
    char *principal;              /* owned, or NULL */
    char *session_id;             /* owned, or NULL: under no session */
    uint8_t session_secret[TN_SECRET_BYTES]; /* presented with it */
    int64_t ttl_ms;                          /* of the grant it asks for */
    int64_t lock_delay_ms;                   /* of the grant it asks for */
    uint8_t secret[TN_SECRET_BYTES];         /* drawn by the API */
    bool (*wanted)(void *ctx);               /* is the client still there */
    void *wanted_ctx;                        /* its argument */
    bool timed_out;                /* backend's: deadline passed while busy */
    struct tn_store_result *out;   /* the caller's result */
    tn_store_done_fn done;         /* the caller's completion */
    void *arg;                     /* its argument */
    struct tn_loop_timer deadline; /* wait_ms */
};

struct tn_waitq_set;

/* The waiters of one name.  A backend's queue struct starts with it. */
struct tn_waitq {
    struct tn_waitq_set *set;  /* owner */
    LIST_ENTRY(tn_waitq) link; /* set->all */
    void *chain;               /* set->names link */
    uint32_t hash;             /* set->names hash of name */
    char *name;                /* owned, NUL-terminated */
    size_t name_len;           /* bytes */
    /* Its waiters, first in line first. */
    TAILQ_HEAD(tn_blocked_list, tn_blocked) waiters;
    size_t n;                   /* waiters */
    bool busy;                  /* the backend works on it: kept when empty */
    struct tn_loop_timer timer; /* backend's: when the name may be free */
};

/* What a backend adds to the shared queue. */
struct tn_waitq_hooks {
    size_t queue_size; /* of the backend's queue struct (>= tn_waitq) */
    /* w's deadline passed (it is still queued). */
    void (*on_deadline)(struct tn_blocked *w);
    /* q is about to be freed; may be NULL. */
    void (*on_free)(struct tn_waitq *q);
    /* w is being taken out of its queue; may be NULL. */
    void (*on_unlink)(struct tn_blocked *w);
};

struct tn_waitq_set {
    struct tn_loop *loop;               /* the loop thread's */
    const struct tn_waitq_hooks *hooks; /* borrowed, static */
    size_t max_waiters;                 /* in all */
    size_t max_waiters_per_name;        /* per queue */
    int64_t max_wait_ms;                /* cap of wait_ms */
    LIST_HEAD(, tn_waitq) all;          /* every queue, newest first */
    struct tn_map names;                /* every queue, by name */
    size_t n_waiters;                   /* blocked acquires, all names */
    uint64_t granted;                   /* waiters that got the lease */
    uint64_t timed_out;                 /* answered at their deadline */
    uint64_t dropped;                   /* gone before their turn */
};

/* Set s up for the waiter limits of cfg (max_waiters,
 * max_waiters_per_name, max_wait_ms), on loop, with the backend's hooks:
 * 0 or TN_ENOMEM. */
int tn_waitq_init(struct tn_waitq_set *s, struct tn_loop *loop,
                  const struct tn_store_config *cfg,
                  const struct tn_waitq_hooks *hooks);
/* Free every queue (their waiters must have been answered). */
void tn_waitq_fini(struct tn_waitq_set *s);

/* The queue of name, or NULL. */
struct tn_waitq *tn_waitq_find(struct tn_waitq_set *s, const char *name,
                               size_t name_len);

/* Room for one more waiter on q (NULL: a name nobody waits for)?  TN_OK,
 * or TN_ECAPACITY with out->capacity ("waiters" first, then
 * "waiters_per_name") and out->retry_after_ms set to retry_ms. */
int tn_waitq_admit(const struct tn_waitq_set *s, const struct tn_waitq *q,
                   struct tn_store_result *out, int64_t retry_ms);

/* Queue a copy of r at the tail of the queue of its name (*qp, or a new
 * one, stored in *qp) with its deadline armed; answered later by the
 * backend through out, done, arg.  NULL when out of memory (nothing
 * changed). */
struct tn_blocked *tn_waitq_push(struct tn_waitq_set *s, struct tn_waitq **qp,
                                 const struct tn_acquire_req *r,
                                 struct tn_store_result *out,
                                 tn_store_done_fn done, void *arg);

/* Take w out of its queue (its deadline disarmed, the backend's
 * on_unlink called); the queue stays. */
void tn_waitq_unlink(struct tn_blocked *w);
/* Free an unlinked w. */
void tn_waitq_blocked_free(struct tn_blocked *w);
/* Has w's client gone away (it must never get the lease)? */
bool tn_waitq_gone(const struct tn_blocked *w);
/* The acquire w asked for, to run now (no wait): it borrows w's strings
 * and secret, and the name of w's queue. */
struct tn_acquire_req tn_waitq_request(const struct tn_blocked *w);
/* Answer an unlinked w with rc (and retry_ms as retry_after_ms if > 0;
 * out's other fields as they are), then free it. */
void tn_waitq_answer(struct tn_blocked *w, int rc, int64_t retry_ms);
/* Answer every waiter of q as tn_waitq_answer does; q stays.  capacity,
 * if not NULL, names the limit of a TN_ECAPACITY (out->capacity). */
void tn_waitq_fail(struct tn_waitq *q, int rc, int64_t retry_ms,
                   const char *capacity);
/* Answer every waiter of every queue as tn_waitq_answer does (store
 * failure, shutdown), and free the queues that are not busy. */
void tn_waitq_fail_all(struct tn_waitq_set *s, int rc, int64_t retry_ms);
/* The client of the waiter whose wanted_ctx is ctx went away: it is
 * dropped and answered TN_ECANCELED, its queue freed if left empty. */
void tn_waitq_cancel(struct tn_waitq_set *s, void *ctx);
/* Free q if nobody waits on it and it is not busy; true if freed. */
bool tn_waitq_release(struct tn_waitq *q);

/* The waiter whose wanted_ctx is ctx, or NULL.  A scan of every queue:
 * cancels are rare (a client left mid-wait), and the waiters are bounded
 * by max_waiters. */
struct tn_blocked *tn_waitq_find_ctx(struct tn_waitq_set *s, void *ctx);

/* The waiters gauge and the waits counters, Prometheus text. */
void tn_waitq_metrics(const struct tn_waitq_set *s, struct tn_buf *out);

#endif
