/* SPDX-License-Identifier: MIT */
/* Inside the lease module: what the state machine (lease.c) asks of the
 * table (table.c), that is of the entries' storage.  Not for callers
 * outside src/lease/; they use lease.h. */
#ifndef TN_LEASE_TABLE_H
#define TN_LEASE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "lease.h"

/* The hash the table files name[0..len) under. */
uint32_t tn_lease_hash(const char *name, size_t len);

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

/* The session map of t (session.c): set up empty, and freed with every
 * session in it. */
int tn_session_table_init(struct tn_lease_table *t);
void tn_session_table_release(struct tn_lease_table *t);

#endif
