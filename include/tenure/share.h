/* SPDX-License-Identifier: MIT */
/* The fair-share recipe of libtenure: every worker of a group runs it with
 * the same list of shards, and the shards spread evenly over the workers
 * that are alive, moving from one to another only through the lease
 * server, with a higher token at each move.  Each worker holds one
 * session (owner_id "<group>/<worker>", kept alive by the client's
 * keepalive) and its shards as leases under it.  A thread of its own
 * reads the live sessions of the group, claims free shards in batches
 * while the worker holds fewer than its share, releases the surplus when
 * it holds more, and follows the event stream to act at once when a
 * worker joins or leaves or a shard is freed.  The application is told
 * which shards it gained (with their tokens) and lost; it must write
 * through the fence with each shard's token and check tn_lease_is_held
 * before each write, as with any lease: the callbacks are a notice, the
 * token at the sink is the safety.
 *
 * A worker's share: with n shards and k live sessions in the group, in
 * session_id order, the first n % k sessions take ceil(n / k) shards and
 * the others floor(n / k), so the shares add up to n and differ by at most
 * one.  When its session is lost (the worker froze, or was cut off), every
 * shard is reported lost and the worker opens a new session and starts
 * over: its old tokens are below the new holders'.
 *
 * Thread-safety: tn_share_* may be called from any thread but a callback
 * of the share; callbacks run on the share's own thread, one at a time. */
#ifndef TENURE_SHARE_H
#define TENURE_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/client.h>
#include <tenure/err.h>
#include <tenure/session.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tn_share; /* opaque: one worker's part of a group */

/* Shards gained: leases[0..n) (their names and tokens), valid until the
 * lost callback that names them has returned. */
typedef void (*tn_share_gained_fn)(struct tn_share *sh,
                                   struct tn_lease *const *leases, size_t n,
                                   void *ud);
/* Shards lost, each once: why is TN_LEASE_END_RELEASED when the share gave
 * them back (balance, or tn_share_stop), else how the lease ended (LOST,
 * EXPIRED: the session is gone).  Stop writing with these tokens before
 * returning; the leases are freed after the call. */
typedef void (*tn_share_lost_fn)(struct tn_share *sh,
                                 struct tn_lease *const *leases, size_t n,
                                 enum tn_lease_end why, void *ud);

struct tn_share_options {
    const char *group;         /* required: "<group>/" prefixes the
                                  owner_id of every worker of it */
    const char *worker;        /* this worker's name in the group; NULL =
                                  "host:pid" */
    const char *const *shards; /* required: the names to share, distinct;
                                  copied by start() */
    size_t n_shards;           /* 1.. */
    const char *list_prefix;   /* where the shards are listed and followed
                                  (GET /v1/leases?prefix=, the event
                                  stream); NULL = the longest common
                                  prefix of the shard names */
    int64_t ttl_ms;            /* the session's TTL; default 10000 */
    int64_t rebalance_ms;      /* look at the group at least this often;
                                  default 2000 */
    int64_t lock_delay_ms;     /* of every grant; default 0 */
    tn_share_gained_fn gained; /* may be NULL */
    tn_share_lost_fn lost;     /* may be NULL */
    void *ud;                  /* passed to both */
};

/* Fill o with the defaults (no group, no shards).  Thread-safe. */
TN_EXTERN void tn_share_options_init(struct tn_share_options *o);

/* Join the group: start the share's thread, which opens the session and
 * claims this worker's share.  Returns 0 and *out, TN_EINVAL (bad
 * options, detail in em), TN_ENOMEM or TN_EIO (no thread).  The session
 * is opened by the thread (and opened again after a loss), so a server
 * that is down or has no sessions shows as a share that holds nothing;
 * tn_share_last_error says why.  c must outlive the share. */
TN_EXTERN int tn_share_start(struct tn_client *c,
                             const struct tn_share_options *o,
                             struct tn_share **out, struct tn_errmsg *em);

/* Leave the group: every shard held is reported lost (RELEASED), the
 * session is ended (which gives every shard back at once), the thread is
 * joined and sh freed.  NULL is a no-op. */
TN_EXTERN void tn_share_stop(struct tn_share *sh);

/* Shards this worker holds now. */
TN_EXTERN size_t tn_share_count(struct tn_share *sh);

/* The last error of the share's thread (0 after a round without one), with
 * its detail in em when not NULL: TN_ENOTIMPL when the server has no
 * sessions.  Thread-safe. */
TN_EXTERN int tn_share_last_error(struct tn_share *sh, struct tn_errmsg *em);

#ifdef __cplusplus
}
#endif
#endif
