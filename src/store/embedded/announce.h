/* SPDX-License-Identifier: MIT */
/* The embedded store's durable events (announce.c). */
#ifndef TN_STORE_EMBEDDED_ANNOUNCE_H
#define TN_STORE_EMBEDDED_ANNOUNCE_H

#include "store/embedded/embedded.h"

/* Free the announced events kept for reuse (at close). */
void tn_embedded_free_events(struct embedded *e);
/* Announce ev about l after the open batch commits. */
void tn_embedded_emit(struct embedded *e, enum tn_event_type type,
                      const struct tn_lease_entry *l);
/* Announce ev about s after the open batch commits. */
void tn_embedded_emit_session(struct embedded *e, enum tn_event_type type,
                              const struct tn_session *s);
/* How the grants of a session that ended so end. */
enum tn_grant_end tn_embedded_grant_end(enum tn_session_end how);

#endif
