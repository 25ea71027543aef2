/* SPDX-License-Identifier: MIT */
/* Group commit: the loop thread appends row images and waiters to the open
 * batch; one committer thread takes the whole open batch, writes it in one
 * transaction through a writer callback, and hands the batch back to the
 * loop thread, which then answers its waiters.  The next batch forms while
 * the previous one commits, and the committer is woken once at the end of
 * a loop iteration (tn_loop_defer), so that one iteration's requests share
 * a commit.  With in_loop (--commit=inline) the loop thread itself writes
 * the open batch at that point, through the same writer, and answers its
 * waiters right after; the thread then only runs recovery and the
 * heartbeat.  Either way no waiter is answered before the write of its
 * batch has returned.  Knows nothing of SQLite or HTTP. */
#ifndef TN_STORE_COMMIT_H
#define TN_STORE_COMMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/loop.h"
#include "lease/lease.h"
#include "store/backend.h"
#include "store/embedded/batch.h"

struct tn_commit;

/* Write b in one transaction; 0 or TN_E*.  Runs on the committer thread,
 * or in_loop on the loop thread; never at the same time as the heartbeat
 * or recover. */
typedef int (*tn_commit_write_fn)(void *ctx, struct tn_batch *b);
/* Loop side: b has been written (b->rc); the callee answers the waiters
 * and returns b with tn_commit_recycle(). */
typedef void (*tn_commit_done_fn)(void *ctx, struct tn_batch *b);
/* Committer side, in the failed state: try to recover; 0 when the store
 * takes writes again.  Runs on the committer thread. */
typedef int (*tn_commit_recover_fn)(void *ctx);

struct tn_commit_config {
    struct tn_loop *loop;           /* where done runs */
    tn_commit_write_fn write;       /* committer thread */
    tn_commit_done_fn done;         /* loop thread */
    tn_commit_recover_fn recover;   /* committer thread */
    tn_loop_fn recovered;           /* loop thread, after recover said 0 */
    tn_commit_recover_fn heartbeat; /* committer thread, when idle */
    void *ctx;                      /* for all of them */
    int64_t recover_interval_ms;    /* between recovery attempts */
    int64_t heartbeat_ms;           /* idle time before a heartbeat */
    bool in_loop; /* the loop thread writes each batch (--commit=inline) */
};

struct tn_commit *tn_commit_start(const struct tn_commit_config *cfg);
/* Write what is open, stop the thread, free.  Loop thread; the done
 * callbacks of the last batches run inside. */
void tn_commit_stop(struct tn_commit *c);
/* Whether the committer is asleep waiting for work (a kick, or its
 * heartbeat).  Rows added while it sleeps wait for the loop iteration's
 * kick, and so go as one batch; tests use this to start from that state. */
bool tn_commit_parked(struct tn_commit *c);

/* Loop thread: append a row image of l to the open batch.  Aborts on out of
 * memory (the table would otherwise diverge from what is durable). */
void tn_commit_add_row(struct tn_commit *c, const struct tn_lease_entry *l,
                       uint64_t last_token);
/* Loop thread: with hold, the committer does not cut the open batch until
 * hold is taken back (in the same loop turn): the rows added meanwhile
 * become durable in one commit (a claim's grants).  Rows are still added
 * in change-number order, so durable_seq never covers one not written. */
void tn_commit_hold(struct tn_commit *c, bool hold);
/* Loop thread: append the row of session s (s->row_id, s->seq) to the
 * open batch, or with gone, the deletion of its row.  Aborts on out of
 * memory. */
void tn_commit_add_session(struct tn_commit *c, const struct tn_session *s,
                           bool gone, uint64_t last_token);
/* Loop thread: append the retirement of l's row (l->row_id, l->seq) to
 * the open batch; floor is the token counter now. */
void tn_commit_add_retire(struct tn_commit *c, const struct tn_lease_entry *l,
                          uint64_t floor);
/* Loop thread: answer done(arg) when the open batch has committed. */
void tn_commit_add_waiter(struct tn_commit *c, tn_store_done_fn done, void *arg,
                          struct tn_store_result *out);
/* Loop thread: after a failure, drop the open batch (its waiters are
 * failed with rc) and ask the committer to run recover. */
void tn_commit_fail_open(struct tn_commit *c, int rc);
/* Loop thread: give a batch back after its waiters were answered. */
void tn_commit_recycle(struct tn_commit *c, struct tn_batch *b);
/* String of a row. */

#endif
