/* SPDX-License-Identifier: MIT */
/* The cluster's one publisher on PostgreSQL (leader.c). */
#ifndef TN_PUBLISH_LEADER_H
#define TN_PUBLISH_LEADER_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <tenure/err.h>

struct tn_pub_leader {
    pthread_mutex_t mu;         /* guards conn */
    char *conninfo;             /* owned */
    PGconn *conn;               /* holds the advisory lock when leader */
    _Atomic bool leader;        /* this instance publishes */
    _Atomic uint64_t term;      /* bumped at each gain of the lock */
    _Atomic uint64_t term_head; /* the log's head when the term began */
};

int tn_pub_leader_init(struct tn_pub_leader *l, const char *conninfo);
void tn_pub_leader_release(struct tn_pub_leader *l);
/* Connect, take or check the lock (blocking; the flusher calls it).  head
 * is the event log's head just before: a term that begins here publishes
 * every event after it, whenever its targets notice the new term. */
void tn_pub_leader_tick(struct tn_pub_leader *l, uint64_t head);
/* At the start of a term: the highest id reserved for target so far (0
 * if none).  TN_OK or TN_EUNAVAIL (not the leader any more). */
int tn_pub_leader_begin(struct tn_pub_leader *l, const char *target,
                        uint64_t *hi);
/* Make sure ids up to upto are reserved (*reserved: how far they are);
 * TN_OK, or TN_EUNAVAIL when the lock's session is gone. */
int tn_pub_leader_reserve(struct tn_pub_leader *l, const char *target,
                          uint64_t upto, uint64_t *reserved);

#endif
