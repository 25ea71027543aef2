/* SPDX-License-Identifier: MIT */
/* The PostgreSQL store's statement connections (conn.c). */
#ifndef TN_STORE_PG_CONN_H
#define TN_STORE_PG_CONN_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "store/pg/pg.h"

/* Start connecting now (state DOWN -> CONNECTING). */
void tn_pg_conn_start(struct tn_pg_conn *c);
/* Forget the connection (every op in flight on it is answered
 * TN_EUNAVAIL) and reconnect after the backoff.  why is logged. */
void tn_pg_conn_drop(struct tn_pg_conn *c, const char *why);
/* Watch the connection's socket for events (re-registers if libpq changed
 * the socket). */
void tn_pg_conn_watch(struct tn_pg_conn *c, uint32_t events);
/* Stop watching the socket (before anything that may close it). */
void tn_pg_conn_unwatch(struct tn_pg_conn *c);
/* c's last libpq error on one line, without quotes, for the log. */
void tn_pg_message(PGconn *c, char *out, size_t cap);

#endif
