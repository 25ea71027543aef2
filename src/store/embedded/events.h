/* SPDX-License-Identifier: MIT */
/* The embedded store's expiries and durable events (events.c). */
#ifndef TN_STORE_EMBEDDED_EVENTS_H
#define TN_STORE_EMBEDDED_EVENTS_H

#include <stdint.h>

#include "store/embedded/embedded.h"

/* Free the announced events kept for reuse (at close). */
void tn_embedded_free_events(struct embedded *e);
/* Announce ev about l after the open batch commits. */
void tn_embedded_emit(struct embedded *e, enum tn_event_type type,
                      const struct tn_lease_entry *l);
/* Track the expiry of l's current grant (after a grant or a renew). */
void tn_embedded_track_expiry(struct embedded *e,
                              const struct tn_lease_entry *l);
/* Before anything reveals that l's grant ran out (an answer, an event, a
 * grant to another): if its expiry is not recorded yet, write l, ended,
 * into the open batch (l->seq moves; answer with tn_embedded_finish on
 * it) and announce "expired" after that commit.  docs/SAFETY.md 8. */
void tn_embedded_note_expiry(struct embedded *e, struct tn_lease_entry *l,
                             int64_t now);
/* Track the expiry of every held lease whose expiry is not recorded yet
 * (after a load). */
void tn_embedded_track_all(struct embedded *e);
/* The same for one lease as a load puts it in the table; one told of
 * again (a second row of its name) that has ended is uncounted. */
void tn_embedded_track_loaded(struct embedded *e, struct tn_lease_entry *l);
/* Forget tracked expiries (the table is being replaced). */
void tn_embedded_clear_expiries(struct embedded *e);
/* Handle every tracked expiry due at now: the expiry timer's work, and
 * before a list, which reveals the ends of the leases it leaves out. */
void tn_embedded_expire_due(struct embedded *e, int64_t now);
/* l's grant is no longer live (released, or its expiry was handled). */
void tn_embedded_uncount(struct embedded *e, struct tn_lease_entry *l);

#endif
