/* SPDX-License-Identifier: MIT */
/* Sessions: one heartbeat for many leases (docs/SESSIONS.md).  A session
 * lives beside the lease table, in it (struct tn_lease_table.sessions),
 * and keeps the leases granted under it on an intrusive list, so that
 * adding or removing one costs O(1) whatever the number of leases.  Pure
 * like the rest of the state machine: no I/O, no clock, now_ms passed in.
 * Invariants: a lease under a session is live iff it is held and the
 * session is live; ending a session ends every lease of it at that one
 * instant (tn_lease_is_live asks the session); a session renew touches no
 * lease and no token.  A lease of an ended session stays on the list
 * until the store settles it (tn_lease_settle) into an ordinary ended
 * lease; the session is freed once its list is empty. */
#ifndef TN_LEASE_SESSION_H
#define TN_LEASE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 16 random bytes drawn by the API, lower-case hex. */
#define TN_SESSION_ID_LEN 32
#define TN_SESSION_SECRET_BYTES 16

struct tn_lease_entry;
struct tn_lease_table;

/* How a session ended; TN_SESSION_LIVE while it has not (it may still
 * have run out by the clock: tn_session_is_live says). */
enum tn_session_end {
    TN_SESSION_LIVE = 0,
    TN_SESSION_EXPIRED = 1,  /* ran out without a renew */
    TN_SESSION_RELEASED = 2, /* ended by its holder (DELETE) */
    TN_SESSION_REVOKED = 3,  /* ended by an admin (DELETE ?force=true) */
};

/* One malloc'd block: the fixed part, then owner_id and principal. */
struct tn_session {
    void *next;                     /* map chain */
    uint32_t hash;                  /* of id */
    uint32_t row_id;                /* store: its row, 0 = none yet */
    char id[TN_SESSION_ID_LEN + 1]; /* NUL-terminated, the map's key */
    char *owner_id;                 /* NUL-terminated, in this block */
    char *principal;                /* who opened it (auth on), or NULL */
    uint8_t secret[TN_SESSION_SECRET_BYTES]; /* its credential */
    int64_t ttl_ms;                          /* of the last open or renew */
    int64_t expires_at_ms;                   /* server clock; while not ended */
    int64_t ended_at_ms;                     /* server clock; once ended */
    enum tn_session_end end;                 /* LIVE until ended */
    uint64_t seq;                  /* change number of the last mutation */
    size_t n_leases;               /* leases on the list */
    struct tn_lease_entry *leases; /* first lease of the list, or NULL */
    size_t heap_index; /* store: its slot in the expiry heap, SIZE_MAX */
    struct tn_session *settle_next; /* store: next ended session to settle */
    bool counted;                   /* store: counted among the live sessions */
    bool settling; /* store: on the queue of sessions to settle */
};

/* What opening a session takes (the store's request, validated). */
struct tn_session_spec {
    const char *id;        /* TN_SESSION_ID_LEN hex digits, NUL-terminated */
    const char *owner_id;  /* borrowed, NUL-terminated */
    const char *principal; /* borrowed, or NULL */
    int64_t ttl_ms;        /* validated by the caller */
    const uint8_t *secret; /* TN_SESSION_SECRET_BYTES */
};

/* True if s exists, has not ended and has not run out at now_ms. */
static inline bool tn_session_is_live(const struct tn_session *s,
                                      int64_t now_ms)
{
    return s != NULL && s->end == TN_SESSION_LIVE && now_ms < s->expires_at_ms;
}

/* When s ended or will end: ended_at_ms once ended, else its expiry. */
static inline int64_t tn_session_end_at(const struct tn_session *s)
{
    return s->end != TN_SESSION_LIVE ? s->ended_at_ms : s->expires_at_ms;
}

/* The session map of t: set up empty, and freed with every session in
 * it (tn_lease_table_init and tn_lease_table_release call these). */
int tn_session_table_init(struct tn_lease_table *t);
void tn_session_table_release(struct tn_lease_table *t);

/* The session of id (NUL-terminated), or NULL. */
struct tn_session *tn_session_find(const struct tn_lease_table *t,
                                   const char *id);

/* Open a session.  TN_OK (*out), TN_ECONFLICT (the id is taken: ids are
 * drawn at random, so only a caller's bug), TN_EINVAL (id not
 * TN_SESSION_ID_LEN bytes), TN_ENOMEM. */
int tn_session_open(struct tn_lease_table *t, const struct tn_session_spec *r,
                    int64_t now_ms, struct tn_session **out);

/* May the bearer of secret (and principal, NULL: auth off or an admin)
 * act on s at now_ms?  TN_OK, TN_ELOST (s NULL, ended or run out),
 * TN_EFORBIDDEN (wrong secret or principal). */
int tn_session_auth(const struct tn_session *s, const uint8_t *secret,
                    const char *principal, int64_t now_ms);

/* Renew s (tn_session_auth first): a new expiry from now_ms, ttl_ms > 0
 * replacing its TTL.  Touches no lease.  TN_OK or tn_session_auth's. */
int tn_session_renew(struct tn_lease_table *t, struct tn_session *s,
                     const uint8_t *secret, const char *principal,
                     int64_t ttl_ms, int64_t now_ms);

/* End s at at_ms with end (not LIVE); s must not have ended.  Its leases
 * stay on its list, all not live from this call on. */
void tn_session_end(struct tn_lease_table *t, struct tn_session *s,
                    enum tn_session_end end, int64_t at_ms);

/* Take s out of the table and free it; its list must be empty. */
void tn_session_free(struct tn_lease_table *t, struct tn_session *s);

/* Put a session loaded from the store into the table (restart): img's
 * fields and strings are copied; its list starts empty.  0, TN_ECONFLICT
 * (the id is there already) or TN_ENOMEM. */
int tn_session_restore(struct tn_lease_table *t, const struct tn_session *img,
                       struct tn_session **out);

/* Which sessions a list wants. */
struct tn_session_query {
    const char *prefix; /* of their owner_id; borrowed */
    size_t prefix_len;  /* bytes, 0 for all */
    const char *after;  /* ids after this one (byte order), or NULL */
    size_t after_len;   /* bytes */
};

/* Live sessions that q wants, in id order, at most limit.  Fills
 * out[0..n) with borrowed pointers and returns n; *more_out tells whether
 * more exist.  out must hold limit entries.  Sessions that ran out are
 * left out: the caller records their end first (it reveals it). */
size_t tn_session_list(const struct tn_lease_table *t,
                       const struct tn_session_query *q, int64_t now_ms,
                       struct tn_session **out, size_t limit, bool *more_out);

/* Call fn on every session until it returns false; fn may free the one
 * it is given (tn_session_free), nothing else. */
void tn_session_each(const struct tn_lease_table *t,
                     bool (*fn)(struct tn_session *s, void *ctx), void *ctx);

/* Sessions in the table (live or ended, not yet freed). */
size_t tn_session_count(const struct tn_lease_table *t);

#endif
