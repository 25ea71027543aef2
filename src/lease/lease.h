/* SPDX-License-Identifier: MIT */
/* The lease state machine: a table of named leases and the decisions of
 * acquire, renew, release and the reads.  Pure: no I/O, no locks, no clock
 * reads (callers pass now_ms on the server clock), no globals.  Invariants
 * (CONTRACT §4): tokens come from one counter and strictly increase; a name's
 * token is its floor, the highest token ever granted for it; renew never
 * changes a token; renew and release act only on (name, live token,
 * secret).  An entry leaves the table only when the store retires its
 * name (tn_lease_remove); the store then answers for it from the table's
 * retired_floor, which is at least the token of every retired name. */
#ifndef TN_LEASE_LEASE_H
#define TN_LEASE_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h> /* memcpy, for TN_LEASE_COPY_GRANT */

#include "common/map.h"
#include "lease/session.h"

#define TN_SECRET_BYTES 16

/* The expires_at_ms of a lease under a session: it has no expiry of its
 * own (its session's is the one that counts: tn_lease_expires_at), and a
 * store that reads the field sees a lease that does not run out.  Far
 * enough below INT64_MAX that adding a lock delay cannot overflow. */
#define TN_LEASE_NO_EXPIRY (INT64_MAX / 4)

/* One piece of memory per entry, cut from the table's slabs (a removed
 * entry goes to a free list of its size, so entries need no malloc header
 * of their own): the fixed
 * part, then the name and, when they fit in the room reserved at creation,
 * the strings of the current grant (owner_id, request_id, principal, each
 * NUL-terminated, in that order) inline in str[].  A grant whose strings
 * do not fit keeps them in one malloc'd block instead.  The string
 * pointers point into either place.  Entries never move and their memory
 * stays a valid entry until the table is released (a removed one is
 * zeroed, held false, until an insert reuses it), so other structures may
 * keep pointers to them and recheck what they point to.
 * Fields are ordered to leave no padding (str[] at 149 bytes on LP64), and
 * a lookup that misses reads only the first cache line of each entry in
 * the chain: next, hash and name_len (the table is a tn_map over them).
 * A lease granted under a session is on that session's list (session,
 * sess_next, sess_prev) until it is released alone or settled after the
 * session ended (session.h). */
struct tn_lease_entry {
    void *next;        /* map chain; free list once removed */
    char *name;        /* NUL-terminated, 1..256 bytes, in str[] */
    char *owner_id;    /* NUL-terminated; NULL if never held; starts the grant
                          strings (inline or the separate block) */
    char *request_id;  /* of the grant, or NULL; after owner_id */
    char *principal;   /* who acquired it (auth on), or NULL */
    uint64_t token;    /* last token granted: the name's floor */
    uint64_t seq;      /* change number of the last mutation */
    uint32_t hash;     /* of the name: chains and rehash read only this line */
    uint32_t name_len; /* bytes of name */
    void *waiters;     /* the store's queue of waiters; opaque here */
    struct tn_session *session;       /* its session, or NULL */
    struct tn_lease_entry *sess_next; /* on its session's list, or NULL */
    struct tn_lease_entry *sess_prev; /* on its session's list, or NULL */
    int64_t expires_at_ms; /* server clock; meaningful while held; under a
                              session TN_LEASE_NO_EXPIRY */
    int64_t ttl_ms;        /* of the current grant (last renew); under a
                              session, its session's at the grant */
    int64_t lock_delay_ms; /* after expiry, no grant for this long */
    uint8_t secret[TN_SECRET_BYTES]; /* credential of the current grant */
    uint32_t hist_slot; /* store: ledger slot of the current grant */
    uint32_t row_id;    /* store: its row in the store's file, 0 = none */
    uint16_t str_room;  /* bytes reserved in str[] after the name */
    bool held;          /* granted and not released (may be expired) */
    bool expiry_noted;  /* store: the expiry of this grant was announced */
    bool counted;       /* store: counted among the live leases */
    char str[];         /* name, NUL, then str_room bytes (table entries
                           only; an image passed to restore has none) */
};

/* The fields of a grant as each record of it names them (a table entry,
 * an image loaded from the file, a row of the embedded store's group
 * commit): copied by this one list, so a field added to the grant is
 * carried everywhere or nowhere. */
#define TN_LEASE_COPY_GRANT(dst, src)                                          \
    do {                                                                       \
        (dst)->token = (src)->token;                                           \
        memcpy((dst)->secret, (src)->secret, TN_SECRET_BYTES);                 \
        (dst)->ttl_ms = (src)->ttl_ms;                                         \
        (dst)->expires_at_ms = (src)->expires_at_ms;                           \
        (dst)->lock_delay_ms = (src)->lock_delay_ms;                           \
        (dst)->held = (src)->held;                                             \
    } while (0)

/* The lease table: a tn_map of entries keyed by name (common/map.h grows
 * it a few buckets per insert, never all at once), the token counters and
 * the slabs the entries are cut from (table.c). */
struct tn_lease_table {
    struct tn_map map;      /* the entries (held or not) by name */
    uint64_t last_token;    /* highest token ever granted */
    uint64_t seq;           /* last change number handed out */
    uint32_t last_row_id;   /* store: highest row id in use */
    uint32_t *free_rows;    /* store: row ids given back, reused first */
    size_t n_free_rows;     /* used */
    size_t cap_free_rows;   /* allocated */
    uint64_t retired_floor; /* >= the token of every removed entry */
    size_t removed;         /* entries removed so far */
    struct tn_lease_entry **free_lists; /* removed entries by size / 8 */
    void *slabs;               /* list of the entries' slabs, newest first */
    char *slab_free;           /* unused bytes of the newest slab */
    size_t slab_left;          /* how many */
    size_t reserved;           /* entries a load puts in (table_reserve) */
    struct tn_map sessions;    /* struct tn_session by id (session.c) */
    uint32_t last_session_row; /* store: highest session row id in use */
};

struct tn_acquire_req {
    const char *name;       /* borrowed, validated by the caller */
    size_t name_len;        /* bytes */
    const char *owner_id;   /* borrowed, NUL-terminated */
    const char *request_id; /* borrowed, NUL-terminated, or NULL */
    const char *principal;  /* authenticated acquirer, or NULL (auth off) */
    int64_t ttl_ms;         /* validated by the caller; 0 under a
                               session (the session's TTL rules) */
    int64_t lock_delay_ms;  /* 0 = none */
    const uint8_t *secret;  /* TN_SECRET_BYTES fresh random bytes */
    const char *session_id; /* borrowed, NUL-terminated: take the lease
                               under this session; NULL = none */
    const uint8_t *session_secret; /* TN_SECRET_BYTES presented with it */
    int64_t wait_ms;           /* store level: block up to this long, 0 = no */
    bool (*wanted)(void *ctx); /* store level: is the requester still
                                  there?  NULL = always */
    void *wanted_ctx;          /* argument of wanted */
};

struct tn_token_req {
    const char *name;                /* borrowed */
    size_t name_len;                 /* bytes */
    uint64_t token;                  /* the grant's fencing token */
    uint8_t secret[TN_SECRET_BYTES]; /* presented secret */
    int64_t ttl_ms;                  /* renew only: new TTL, 0 = keep */
    bool force;            /* release only: admin, ignore token/secret */
    const char *principal; /* must match the grant's; NULL: auth off or admin */
};

/* 0 or TN_ENOMEM.  expected is a sizing hint (entries). */
int tn_lease_table_init(struct tn_lease_table *t, size_t expected);
void tn_lease_table_release(struct tn_lease_table *t);
/* Size an empty table for n entries at once (a load), so that it neither
 * rehashes nor grows long chains meanwhile.  Best effort: on failure the
 * table stays as it was. */
void tn_lease_table_reserve(struct tn_lease_table *t, size_t n);
/* Entries in the table, held or not. */
size_t tn_lease_table_count(const struct tn_lease_table *t);

/* Row ids, for a store that keeps one row per name in a file (0 = none).
 * tn_lease_next_row hands out an id given back, else last_row_id + 1.
 * tn_lease_give_back_row offers a retired name's id for reuse: the caller
 * gives it back only once the row's deletion is ordered before any later
 * write of the id.  A table loaded afresh has none given back. */
uint32_t tn_lease_next_row(struct tn_lease_table *t);
void tn_lease_give_back_row(struct tn_lease_table *t, uint32_t id);

struct tn_lease_entry *tn_lease_find(const struct tn_lease_table *t,
                                     const char *name, size_t name_len);

/* True if l is held and not expired at now_ms: under a session, if its
 * session is live (one renew keeps them all; one end ends them all). */
static inline bool tn_lease_is_live(const struct tn_lease_entry *l,
                                    int64_t now_ms)
{
    return l != NULL && l->held && now_ms < l->expires_at_ms &&
           (l->session == NULL || tn_session_is_live(l->session, now_ms));
}

/* When l's grant runs out (or ran out): its session's end under a
 * session, else its own expiry. */
static inline int64_t tn_lease_expires_at(const struct tn_lease_entry *l)
{
    return l->session != NULL ? tn_session_end_at(l->session)
                              : l->expires_at_ms;
}

/* True if an acquire of l's name (l NULL: a new name) would grant now:
 * no live lease, no lock delay running.  A lease of a session that is no
 * longer live counts as ended with it (tn_lease_settle). */
bool tn_lease_is_free(const struct tn_lease_entry *l, int64_t now_ms);

/* True if r asks again for l's live grant (the same owner's request_id
 * replay, or an acquire under the session that holds it with the same
 * owner_id): it gets that grant back instead of a refusal or a place in a
 * queue.  docs/SESSIONS.md "Idempotent claims". */
bool tn_lease_is_replay(const struct tn_lease_entry *l,
                        const struct tn_acquire_req *r, int64_t now_ms);

/* Grant, or say why not.  Under a session (r->session_id), the session
 * must be live and its secret (and principal, when given) match; the
 * lease then lives as long as the session.  Returns:
 *   TN_OK        granted; *out is the lease (new token); *replayed_out is
 *                true when the grant is the live one r asks again for
 *                (tn_lease_is_replay; no change made)
 *   TN_ECONFLICT *out is the live holder
 *   TN_ELOCKDELAY the name expired and is in lock delay; *retry_ms_out
 *   TN_ELOST     the session is not live (*out is the name's entry)
 *   TN_EFORBIDDEN wrong session secret or principal
 *   TN_ENOMEM
 * A lease of a session that is no longer live is settled first
 * (tn_lease_settle). */
int tn_lease_acquire(struct tn_lease_table *t, const struct tn_acquire_req *r,
                     int64_t now_ms, struct tn_lease_entry **out,
                     bool *replayed_out, int64_t *retry_ms_out);
/* tn_lease_acquire with the name's hash (tn_lease_hash) already taken, as
 * a store that looked the name up first has it. */
int tn_lease_acquire_h(struct tn_lease_table *t, uint32_t h,
                       const struct tn_acquire_req *r, int64_t now_ms,
                       struct tn_lease_entry **out, bool *replayed_out,
                       int64_t *retry_ms_out);

/* TN_OK (*out renewed), TN_ELOST (token not live), TN_EFORBIDDEN (bad
 * secret), TN_EINVAL (a lease under a session: renew the session). */
int tn_lease_renew(struct tn_lease_table *t, const struct tn_token_req *r,
                   int64_t now_ms, struct tn_lease_entry **out);

/* TN_OK (*out released), TN_ELOST, TN_EFORBIDDEN.  With force, releases
 * whatever grant is live and never answers TN_EFORBIDDEN.  A lease under a
 * session leaves it (the session goes on). */
int tn_lease_release(struct tn_lease_table *t, const struct tn_token_req *r,
                     int64_t now_ms, struct tn_lease_entry **out);

/* l's session is no longer live (ended, or run out at now_ms): make l an
 * ordinary ended lease, as if it had ended alone at the session's end
 * instant: expired (held, expires_at_ms the end, so its lock delay counts
 * from there), or released (released, revoked).  Takes l off the
 * session's list; a new change number.  Returns how it ended. */
enum tn_session_end tn_lease_settle(struct tn_lease_table *t,
                                    struct tn_lease_entry *l, int64_t now_ms);

/* Put l (held, on no session's list) on the list of s (a load). */
void tn_lease_attach(struct tn_lease_entry *l, struct tn_session *s);

/* Put a lease loaded from the store into the table (restart).  Takes the
 * strings by copy; an entry of that name already there takes the image
 * and leaves its session's list (tn_lease_attach puts it on one again).
 * 0 or TN_ENOMEM. */
int tn_lease_restore(struct tn_lease_table *t, const struct tn_lease_entry *img,
                     struct tn_lease_entry **out);

/* A load of many rows, without waiting on one cache miss per row: stage
 * each row as a new entry, not yet in the table (its strings copied, its
 * bucket fetched: tn_lease_prefetch), then link it a few rows later, once
 * that bucket and its chain are in the cache.  tn_lease_stage_link links
 * l and returns NULL, or, if the table already has an entry of l's name,
 * leaves l out and returns that entry (the caller then keeps one of the
 * two: tn_lease_restore copies l over it, tn_lease_discard drops l).
 * Staging raises last_token like restore.  NULL or the entry. */
struct tn_lease_entry *tn_lease_stage(struct tn_lease_table *t,
                                      const struct tn_lease_entry *img);
struct tn_lease_entry *tn_lease_stage_link(struct tn_lease_table *t,
                                           struct tn_lease_entry *l);
/* Bring the bucket of l's name into the cache, or with chain, the first
 * entry of that bucket's chain (fetch the bucket first).  Hints only. */
void tn_lease_prefetch(const struct tn_lease_table *t, uint32_t h, bool chain);
/* Free a staged entry that was not linked. */
void tn_lease_discard(struct tn_lease_table *t, struct tn_lease_entry *l);

/* Visit live leases whose names start with prefix and sort after `after`
 * (NULL = from the start), in name order, at most limit of them.  Fills
 * out[0..n) with borrowed pointers and returns n; *more_out tells whether
 * more exist.  out must hold limit entries. */
size_t tn_lease_list(const struct tn_lease_table *t, const char *prefix,
                     size_t prefix_len, const char *after, size_t after_len,
                     int64_t now_ms, const struct tn_lease_entry **out,
                     size_t limit, bool *more_out);

/* Remove l (found in t) from the table; its memory is reused by a later
 * insert, so every pointer to it must be gone.  Raises retired_floor to
 * the highest token granted so far (at least l's). */
void tn_lease_remove(struct tn_lease_table *t, struct tn_lease_entry *l);

/* The floor of a name not in the table: the highest token a removed name
 * may have had (0 while nothing was removed). */
uint64_t tn_lease_floor_of_absent(const struct tn_lease_table *t);

/* Visit the entries of `buckets` buckets starting at *cursor (wrapping
 * around; *cursor is advanced), first moving as many buckets of a running
 * rehash.  fn may remove the entry it is given, nothing else.  Returns the
 * entries visited. */
size_t tn_lease_scan(struct tn_lease_table *t, size_t *cursor, size_t buckets,
                     void (*fn)(struct tn_lease_entry *l, void *ctx),
                     void *ctx);

/* Number of live leases at now_ms (O(n); for metrics). */
size_t tn_lease_count_live(const struct tn_lease_table *t, int64_t now_ms);

/* Call fn on every entry, held or not, in no order, until it returns
 * false.  The table must not change meanwhile. */
void tn_lease_each(const struct tn_lease_table *t,
                   bool (*fn)(const struct tn_lease_entry *l, void *ctx),
                   void *ctx);

#endif
