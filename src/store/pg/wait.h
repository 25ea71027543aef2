/* SPDX-License-Identifier: MIT */
/* Blocking acquire on PostgreSQL, FIFO per name within this instance
 * (wait.c). */
#ifndef TN_STORE_PG_WAIT_H
#define TN_STORE_PG_WAIT_H

#include <stdbool.h>

#include "common/buf.h"
#include "store/pg/pg.h"

int tn_pg_wait_init(struct tn_pg *p, const struct tn_store_config *cfg);
/* Take r if waiting is involved: r waits (wait_ms > 0), or the name has
 * local waiters and r must not jump them (then a replay of the live grant,
 * by request_id or by the same session, is still answered at once, as
 * without waiters).  Returns true when taken (done runs later, or already
 * ran), false when r is a plain acquire. */
bool tn_pg_wait_acquire(struct tn_pg *p, const struct tn_acquire_req *r,
                        struct tn_store_result *out, tn_store_done_fn done,
                        void *arg);
/* Does name have waiters on this instance (a claim answers it held)? */
bool tn_pg_wait_has_waiters(struct tn_pg *p, const char *name, size_t len);
/* The name may have become free (an event said so): try its first
 * waiter. */
void tn_pg_wait_wake(struct tn_pg *p, const char *name);
/* Try the first waiter of every name (events may have been missed). */
void tn_pg_wait_wake_all(struct tn_pg *p);
/* Answer every waiter with rc (shutdown). */
void tn_pg_wait_fail_all(struct tn_pg *p, int rc);
/* Answer every waiter TN_EUNAVAIL, then free the queues. */
void tn_pg_wait_free(struct tn_pg *p);
/* Drop and answer (TN_ECANCELED) the waiter whose wanted_ctx is ctx. */
void tn_pg_wait_cancel(struct tn_pg *p, void *ctx);
void tn_pg_wait_metrics(struct tn_pg *p, struct tn_buf *out);

#endif
