/* SPDX-License-Identifier: MIT */
/* The fair-share recipe's internals (<tenure/share.h>): the share, shared
 * by share.c (start, stop, the thread, its wake-ups) and share_round.c
 * (one round: read the group and the shards, verify, claim or release).
 * Not installed. */
#ifndef TN_CLIENT_SHARE_INT_H
#define TN_CLIENT_SHARE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/share.h>

struct tn_share_shard {
    char *name;             /* owned */
    struct tn_lease *lease; /* held by this worker (a reference), or NULL */
};

struct tn_share {
    struct tn_client *c;           /* borrowed, outlives the share */
    char *owner;                   /* "<group>/<worker>", owned */
    char *group_prefix;            /* "<group>/", owned */
    char *list_prefix;             /* owned */
    char *query;                   /* "?prefix=..." of the event stream */
    struct tn_share_shard *shards; /* n, sorted by name; the thread's */
    size_t n;                      /* shards */
    int64_t ttl_ms;                /* the session's */
    int64_t rebalance_ms;          /* longest wait between rounds */
    int64_t lock_delay_ms;         /* of the grants */
    tn_share_gained_fn gained;     /* may be NULL */
    tn_share_lost_fn lost;         /* may be NULL */
    void *ud;                      /* theirs */
    struct tn_session *s;          /* the thread's session, or NULL */
    pthread_t thread;              /* the share's loop */
    pthread_t ev_thread;           /* its event follower */
    bool ev_started;               /* ev_thread runs */
    atomic_bool stop;              /* tn_share_stop was called */
    /* Guarded by mu. */
    pthread_mutex_t mu;       /* guards what follows */
    pthread_cond_t cond;      /* CLOCK_MONOTONIC: wakes the loop */
    bool wake;                /* something changed: a round now */
    bool session_over;        /* the session's keepalive ended */
    size_t count;             /* shards held (tn_share_count) */
    int last_rc;              /* of the last round */
    struct tn_errmsg last_em; /* its detail */
};

/* share_round.c: one round with session sh->s: report the shards whose
 * lease ended, read the group and the shards, verify, then claim this
 * worker's missing share or release its surplus.  0 or the first error
 * (detail in em). */
int tn_share_round(struct tn_share *sh, struct tn_errmsg *em);
/* share_round.c: report every shard whose lease is no longer held as lost
 * (once each) and forget it. */
void tn_share_reap(struct tn_share *sh);
/* share_round.c: give every shard back: lost(RELEASED), then the leases
 * are forgotten (the caller ends the session, which releases them). */
void tn_share_drop_all(struct tn_share *sh, enum tn_lease_end why);

#endif
