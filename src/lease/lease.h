/* SPDX-License-Identifier: MIT */
/* The lease state machine: the decisions of acquire, renew, release and
 * the reads, on the entries of the lease table (table.h) and the sessions
 * beside them (session.h), which sit below it and know nothing of it.
 * Pure: no I/O, no locks, no clock reads (callers pass now_ms on the
 * server clock), no globals.  Invariants (CONTRACT §4): tokens come from
 * one counter and strictly increase; a name's token is its floor, the
 * highest token ever granted for it; renew never changes a token; renew
 * and release act only on (name, live token, secret).  An entry leaves
 * the table only when the store retires its name (tn_lease_remove); the
 * store then answers for it from the table's retired_floor, which is at
 * least the token of every retired name. */
#ifndef TN_LEASE_LEASE_H
#define TN_LEASE_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lease/session.h"
#include "lease/table.h"

/* The expires_at_ms of a lease under a session: it has no expiry of its
 * own (its session's is the one that counts: tn_lease_expires_at), and a
 * store that reads the field sees a lease that does not run out.  Far
 * enough below INT64_MAX that adding a lock delay cannot overflow. */
#define TN_LEASE_NO_EXPIRY (INT64_MAX / 4)

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

/* The whole table: its entries (table.h) and its sessions (session.h).
 * 0 or TN_ENOMEM.  expected is a sizing hint (entries). */
int tn_lease_table_init(struct tn_lease_table *t, size_t expected);
void tn_lease_table_release(struct tn_lease_table *t);

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
/* Visit live leases whose names start with prefix and sort after `after`
 * (NULL = from the start), in name order, at most limit of them.  Fills
 * out[0..n) with borrowed pointers and returns n; *more_out tells whether
 * more exist.  out must hold limit entries. */
size_t tn_lease_list(const struct tn_lease_table *t, const char *prefix,
                     size_t prefix_len, const char *after, size_t after_len,
                     int64_t now_ms, const struct tn_lease_entry **out,
                     size_t limit, bool *more_out);

/* Number of live leases at now_ms (O(n); for metrics). */
size_t tn_lease_count_live(const struct tn_lease_table *t, int64_t now_ms);

#endif
