/* SPDX-License-Identifier: MIT */
/* The LISTEN connection, the expiry sweep and the ledger prune
 * (events.c); its payloads are parsed in events_payload.c. */
#ifndef TN_STORE_PG_EVENTS_H
#define TN_STORE_PG_EVENTS_H

#include "common/buf.h"
#include "store/pg/pg.h"

/* Start the LISTEN connection, the sweep and the prune timers. */
void tn_pg_events_start(struct tn_pg *p);
/* Start counting the database's leases every so often, for --max-leases
 * and --max-names (src/store/pg/limits.c). */
void tn_pg_events_count_start(struct tn_pg *p);
/* The store may have come up (a connection became ready): a count that
 * came due while it was down is sent now. */
void tn_pg_events_up(struct tn_pg *p);
/* Stop them and close the LISTEN connection. */
void tn_pg_events_stop(struct tn_pg *p);
void tn_pg_events_metrics(struct tn_pg *p, struct tn_buf *out);

#endif
