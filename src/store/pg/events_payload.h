/* SPDX-License-Identifier: MIT */
/* The NOTIFY payloads of the PostgreSQL store's events, parsed and
 * delivered (events_payload.c). */
#ifndef TN_STORE_PG_EVENTS_PAYLOAD_H
#define TN_STORE_PG_EVENTS_PAYLOAD_H

#include "store/pg/pg.h"

/* Parse one NOTIFY payload (src/store/pg/sql.h) and deliver its events in
 * order: to on_event, and released/expired/revoked wake the name's waiters.
 * Malformed lines are skipped. */
void tn_pg_events_deliver(struct tn_pg *p, const char *payload);

#endif
