/* SPDX-License-Identifier: MIT */
/* The wire names of the store's events and of how grants end, one table
 * each, so that the SSE stream (api/events.c), the publisher's Redis and
 * Kafka records (src/publish) and the history (api/history.c) say them
 * alike.  Inline, so that the publisher links no store for them. */
#ifndef TN_STORE_NAMES_H
#define TN_STORE_NAMES_H

#include "store/backend.h"

/* "acquired", "released", "expired", "revoked", "reset", "session_opened"
 * or "session_ended"; "reset" for a value out of range. */
static inline const char *tn_event_type_name(enum tn_event_type t)
{
    static const char *const names[] = {
        [TN_EVENT_ACQUIRED] = "acquired",
        [TN_EVENT_RELEASED] = "released",
        [TN_EVENT_EXPIRED] = "expired",
        [TN_EVENT_REVOKED] = "revoked",
        [TN_EVENT_RESET] = "reset",
        [TN_EVENT_SESSION_OPENED] = "session_opened",
        [TN_EVENT_SESSION_ENDED] = "session_ended",
    };
    return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "reset";
}

/* "released", "revoked", "superseded", or "expired" (also for a grant
 * not ended: a session's end, the one events name, is never that). */
static inline const char *tn_grant_end_name(enum tn_grant_end end)
{
    switch (end) {
    case TN_GRANT_RELEASED:
        return "released";
    case TN_GRANT_REVOKED:
        return "revoked";
    case TN_GRANT_SUPERSEDED:
        return "superseded";
    default:
        return "expired";
    }
}

#endif
