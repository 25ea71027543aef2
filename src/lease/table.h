/* SPDX-License-Identifier: MIT */
/* The lease table: the entries of the names, cut from slabs and filed by
 * name in a tn_map (common/map.h), the token and change counters, and the
 * room the sessions of the table are kept in (session.c fills it).  Holds
 * no decisions and knows no session: whether a lease is live, and every
 * change of a grant, are the state machine's (lease.h), which sits on
 * top of this.  Entries stay put once made (see struct tn_lease_entry). */
#ifndef TN_LEASE_TABLE_H
#define TN_LEASE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h> /* memcpy, for TN_LEASE_COPY_GRANT */

#include "common/heap.h"
#include "common/map.h"

#define TN_SECRET_BYTES 16

struct tn_session;

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

/* Set up an empty table for about expected entries; its sessions are
 * session.c's (tn_lease_table_init sets up both).  0 or TN_ENOMEM. */
int tn_lease_entries_init(struct tn_lease_table *t, size_t expected);
/* Free the entries and the table's memory (not the sessions: those are
 * tn_session_table_release's); the table is left zeroed. */
void tn_lease_entries_release(struct tn_lease_table *t);
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

/* The hash the table files name[0..len) under. */
uint32_t tn_lease_hash(const char *name, size_t len);

struct tn_lease_entry *tn_lease_find(const struct tn_lease_table *t,
                                     const char *name, size_t name_len);
/* The entry of name (hash h = tn_lease_hash(name, len)), or NULL. */
struct tn_lease_entry *tn_lease_find_h(const struct tn_lease_table *t,
                                       uint32_t h, const char *name,
                                       size_t len);

/* Bytes the grant strings take in one block (0 when all are NULL). */
size_t tn_lease_strings_size(const char *owner, const char *rid,
                             const char *who);

/* A new, not held entry for name (absent from t) with room for `room`
 * bytes of grant strings inline, or NULL (out of memory). */
struct tn_lease_entry *tn_lease_insert(struct tn_lease_table *t, uint32_t h,
                                       const char *name, size_t len,
                                       size_t room);

/* The same, not yet in the table: tn_lease_link puts it there. */
struct tn_lease_entry *tn_lease_new(struct tn_lease_table *t, uint32_t h,
                                    const char *name, size_t len, size_t room);
void tn_lease_link(struct tn_lease_table *t, struct tn_lease_entry *l);

/* Replace the grant strings of l (the sources must not point into l);
 * 0, or TN_ENOMEM and nothing changed. */
int tn_lease_set_strings(struct tn_lease_entry *l, const char *owner,
                         const char *rid, const char *who);

/* Bring the bucket of l's name into the cache, or with chain, the first
 * entry of that bucket's chain (fetch the bucket first).  Hints only. */
void tn_lease_prefetch(const struct tn_lease_table *t, uint32_t h, bool chain);
/* Free a staged entry that was not linked. */
void tn_lease_discard(struct tn_lease_table *t, struct tn_lease_entry *l);

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

/* Call fn on every entry, held or not, in no order, until it returns
 * false.  The table must not change meanwhile. */
void tn_lease_each(const struct tn_lease_table *t,
                   bool (*fn)(const struct tn_lease_entry *l, void *ctx),
                   void *ctx);

/* ---- one page of a list (the leases in lease.c, the sessions in
 * session.c) ---- */

/* A list walk: what it asks for, and the smallest `limit` matches so far,
 * kept in h, a max-heap over the caller's out (tn_heap_init_fixed, its
 * order "sorts after" so that the top is the first to give up). */
struct tn_list_page {
    struct tn_heap h;
    const char *prefix; /* of the keys wanted (names; owners of sessions) */
    size_t prefix_len;
    const char *after; /* keys after this one, or NULL */
    size_t after_len;
    int64_t now_ms;
    bool more; /* a match did not fit */
};

/* Offer elem (a match) to the page: it stays if it is among the smallest. */
void tn_list_page_offer(struct tn_list_page *p, const void *elem);
/* The page's matches, sorted by cmp in the caller's out: their count, and
 * in *more_out whether more matched. */
size_t tn_list_page_sort(struct tn_list_page *p,
                         int (*cmp)(const void *a, const void *b),
                         bool *more_out);

#endif
