/* SPDX-License-Identifier: MIT */
/* The embedded store's expiries and settling (events.c); its events are
 * announce.h's. */
#ifndef TN_STORE_EMBEDDED_EVENTS_H
#define TN_STORE_EMBEDDED_EVENTS_H

#include <stdint.h>

#include "store/embedded/embedded.h"

/* Track the expiry of l's current grant (after a grant or a renew). */
void tn_embedded_track_expiry(struct embedded *e,
                              const struct tn_lease_entry *l);
/* Before anything reveals that l's grant ran out (an answer, an event, a
 * grant to another): if its expiry is not recorded yet, write l, ended,
 * into the open batch (l->seq moves; answer with tn_embedded_finish on
 * it) and announce "expired" after that commit
 * (docs/safety/revealed-end.md).  A lease of a session that is no longer
 * live is settled (its session's end recorded first): from then on it is
 * an ordinary ended lease. */
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

/* ---- sessions (docs/SESSIONS.md) ---- */

/* Set up the session expiry heap (at open). */
void tn_embedded_sessions_init(struct embedded *e);
/* After a load: count the live sessions and track their expiries; queue
 * the ended ones, whose leases are to settle. */
void tn_embedded_sessions_loaded(struct embedded *e);
/* Forget tracked session expiries and the settle queue (the table is
 * being replaced, or the store closes). */
void tn_embedded_sessions_clear(struct embedded *e);
/* Track s's expiry (after an open or a renew). */
void tn_embedded_track_session(struct embedded *e, struct tn_session *s);
/* Handle every session expiry due at now (the session timer's work). */
void tn_embedded_expire_sessions(struct embedded *e, int64_t now);
/* Before anything reveals that s ran out: if its end is not recorded yet,
 * record it (tn_embedded_session_ended; answers wait for s->seq).  A NULL
 * or live s is left alone. */
void tn_embedded_note_session(struct embedded *e, struct tn_session *s,
                              int64_t now);
/* s has just ended (tn_session_end): write its row with its end into the
 * open batch, announce session_ended after that commit, and queue its
 * leases to settle, a slice per loop turn once that commit is durable,
 * after which its row goes. */
void tn_embedded_session_ended(struct embedded *e, struct tn_session *s);
/* A commit came back (durable_seq moved): settle on if the next ended
 * session's end is durable now. */
void tn_embedded_settle_kick(struct embedded *e);
/* Settle l, a lease of a session whose end is recorded: it becomes an
 * ordinary ended lease (tn_lease_settle), its row written, its ledger
 * entry ended, its own event announced after the session's, its waiters
 * served on the next loop turn, uncounted. */
void tn_embedded_settle(struct embedded *e, struct tn_lease_entry *l,
                        int64_t now);

#endif
