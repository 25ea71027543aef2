/* SPDX-License-Identifier: MIT */
/* Sessions on PostgreSQL: the session ops and the session sweep
 * (session.c). */
#ifndef TN_STORE_PG_SESSION_H
#define TN_STORE_PG_SESSION_H

#include "common/buf.h"
#include "store/pg/pg.h"

/* The session ops of the vtable (backend.h), each one statement of
 * src/store/pg/sql_session.c.  done(arg) runs once, as for every op. */
void tn_pg_session_open(struct tn_pg *p, const struct tn_session_open_req *r,
                        struct tn_store_result *out, tn_store_done_fn done,
                        void *arg);
void tn_pg_session_renew(struct tn_pg *p, const struct tn_session_req *r,
                         struct tn_store_result *out, tn_store_done_fn done,
                         void *arg);
void tn_pg_session_end(struct tn_pg *p, const struct tn_session_req *r,
                       struct tn_store_result *out, tn_store_done_fn done,
                       void *arg);
void tn_pg_session_get(struct tn_pg *p, const char *id,
                       struct tn_store_result *out, tn_store_done_fn done,
                       void *arg);
void tn_pg_session_list(struct tn_pg *p, const struct tn_list_req *r,
                        struct tn_store_result *out, tn_store_done_fn done,
                        void *arg);
void tn_pg_claim(struct tn_pg *p, const struct tn_claim_req *r,
                 struct tn_store_result *out, tn_store_done_fn done, void *arg);
void tn_pg_unclaim(struct tn_pg *p, const struct tn_unclaim_req *r,
                   struct tn_store_result *out, tn_store_done_fn done,
                   void *arg);

/* Start and stop the session sweep (every 200 ms, at once while it comes
 * back full). */
void tn_pg_sessions_start(struct tn_pg *p);
void tn_pg_sessions_stop(struct tn_pg *p);
void tn_pg_sessions_metrics(struct tn_pg *p, struct tn_buf *out);

#endif
