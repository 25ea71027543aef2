/* SPDX-License-Identifier: MIT */
/* The session operations of the embedded store (session.c; claims and
 * batch releases are claim.c's).  docs/SESSIONS.md. */
#ifndef TN_STORE_EMBEDDED_SESSION_H
#define TN_STORE_EMBEDDED_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "store/embedded/embedded.h"

/* Fill v from s (secret too when with_secret), expires_in_ms from now. */
void tn_embedded_view_session(struct tn_session_view *v,
                              const struct tn_session *s, int64_t now,
                              bool with_secret);

/* A request naming the session id with secret (and principal): may it act
 * on it now?  If so *s_out is the session and false is returned;
 * otherwise the request is answered (TN_ELOST with its reason, or
 * TN_EFORBIDDEN) once the end it reveals is durable, and true is
 * returned.  An end that ran out is recorded first. */
bool tn_embedded_session_refuse(struct embedded *e,
                                const struct tn_session_req *r, int64_t now,
                                struct tn_store_result *out,
                                tn_store_done_fn done, void *arg,
                                struct tn_session **s_out);

/* The tn_store_ops entries (backend.h). */
void tn_embedded_session_open(struct tn_store *st,
                              const struct tn_session_open_req *r,
                              struct tn_store_result *out,
                              tn_store_done_fn done, void *arg);
void tn_embedded_session_renew(struct tn_store *st,
                               const struct tn_session_req *r,
                               struct tn_store_result *out,
                               tn_store_done_fn done, void *arg);
void tn_embedded_session_end(struct tn_store *st,
                             const struct tn_session_req *r,
                             struct tn_store_result *out, tn_store_done_fn done,
                             void *arg);
void tn_embedded_session_get(struct tn_store *st, const char *id,
                             struct tn_store_result *out, tn_store_done_fn done,
                             void *arg);
void tn_embedded_session_list(struct tn_store *st, const struct tn_list_req *r,
                              struct tn_store_result *out,
                              tn_store_done_fn done, void *arg);

#endif
