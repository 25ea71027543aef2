/* SPDX-License-Identifier: MIT */
/* A change of the embedded store: the lease's row goes into the open batch
 * of the group commit, and the answer waits for that batch's commit.  An
 * answer that only reveals state waits for the commit of the change that
 * made it (tn_embedded_finish). */
#include "store/embedded/change.h"

#include "common/clock.h"
#include "store/embedded/commit.h"

/* The start of every operation: the store and the time the operation
 * sees, or NULL when a failed disk refuses it (answered here). */
struct embedded *tn_embedded_op_begin(struct tn_store *s,
                                      struct tn_store_result *out,
                                      tn_store_done_fn done, void *arg,
                                      int64_t *now)
{
    struct embedded *e = (struct embedded *)s;
    *now = tn_clock_now_ms();
    if (e->degraded_rc == 0)
        return e;
    out->rc = e->degraded_rc == TN_ENOSPC ? TN_ENOSPC : TN_EUNAVAIL;
    out->retry_after_ms = RETRY_AFTER_MS;
    done(arg);
    return NULL;
}

/* Answer now if the state seen at change `seq` is durable, else after the
 * open batch commits. */
void tn_embedded_finish(struct embedded *e, uint64_t seq,
                        struct tn_store_result *out, tn_store_done_fn done,
                        void *arg)
{
    if (seq <= e->durable_seq)
        done(arg);
    else
        tn_commit_add_waiter(e->commit, done, arg, out);
}

/* A name's first write gives it a row id: a retired name's, once its
 * deletion is in the batch stream (retire.c; the journal applies rows in
 * order, so the new row replaces the deleted one wherever both meet), else
 * the next one (the table's highest id comes from the file at load). */
static void assign_row(struct embedded *e, struct tn_lease_entry *l)
{
    if (l->row_id == 0)
        l->row_id = tn_lease_next_row(&e->table);
}

void tn_embedded_commit_row(struct embedded *e, struct tn_lease_entry *l)
{
    assign_row(e, l);
    tn_commit_add_row(e->commit, l, e->table.last_token);
}

/* A mutation: persist l and answer after its commit. */
void tn_embedded_commit_change(struct embedded *e, struct tn_lease_entry *l,
                               struct tn_store_result *out,
                               tn_store_done_fn done, void *arg)
{
    tn_embedded_commit_row(e, l);
    tn_commit_add_waiter(e->commit, done, arg, out);
}
