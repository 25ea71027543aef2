/* SPDX-License-Identifier: MIT */
/* Whether the PostgreSQL primary has a synchronous standby (sync.c). */
#ifndef TN_STORE_PG_SYNC_H
#define TN_STORE_PG_SYNC_H

#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"
#include "store/pg/pg.h"

/* Start checking every so often; with require (--require-sync-standby)
 * every request is refused until a check finds a synchronous standby. */
void tn_pg_sync_start(struct tn_pg *p, bool require);
/* A statement connection became ready (maybe to another primary): what
 * was known no longer holds; check again now. */
void tn_pg_sync_conn_up(struct tn_pg *p);
/* The LISTEN connection's heartbeat saw whether the primary on host (of
 * p->hosts) has a synchronous standby; it counts only while a statement
 * connection is ready on that very host.  Without one, a
 * required standby closes the gate at once (and the statement
 * connections try the other hosts after a while), even while the
 * statement connections are stuck behind commits that wait for it; only
 * the check on the statement connections opens it again. */
void tn_pg_sync_heard(struct tn_pg *p, size_t host, bool has_standby);
/* Stop the checks (closing); the result is released by tn_pg_sync_free
 * once every op has been answered. */
void tn_pg_sync_stop(struct tn_pg *p);
void tn_pg_sync_free(struct tn_pg *p);
void tn_pg_sync_metrics(struct tn_pg *p, struct tn_buf *out);

#endif
