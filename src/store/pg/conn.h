/* SPDX-License-Identifier: MIT */
/* The PostgreSQL store's statement connections (conn.c). */
#ifndef TN_STORE_PG_CONN_H
#define TN_STORE_PG_CONN_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "store/pg/pg.h"

/* Set c up as the statement connection of p (DOWN, nothing armed). */
void tn_pg_conn_init(struct tn_pg_conn *c, struct tn_pg *p);
/* Close c for good (the store is closing); nothing is called back. */
void tn_pg_conn_close(struct tn_pg_conn *c);
/* Start connecting now (state DOWN -> CONNECTING). */
void tn_pg_conn_start(struct tn_pg_conn *c);
/* Forget the connection (every op in flight on it is answered
 * TN_EUNAVAIL) and reconnect after the backoff.  why is logged. */
void tn_pg_conn_drop(struct tn_pg_conn *c, const char *why);
/* The host did not answer in time: try it last from now on, and drop. */
void tn_pg_conn_stalled(struct tn_pg_conn *c, const char *why);
/* Watch the connection's socket for events (re-registers if libpq changed
 * the socket). */
void tn_pg_conn_watch(struct tn_pg_conn *c, uint32_t events);
/* Stop watching the socket (before anything that may close it). */
void tn_pg_conn_unwatch(struct tn_pg_conn *c);
/* c's last libpq error on one line, without quotes, for the log. */
void tn_pg_message(PGconn *c, char *out, size_t cap);

#endif
