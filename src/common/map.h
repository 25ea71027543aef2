/* SPDX-License-Identifier: MIT */
/* The one hash map of tenure, in the manner of Redis dict.c: chained
 * buckets, a power-of-two bucket array doubled incrementally (a few
 * buckets move per insert, never all at once: a full rehash of a million
 * entries stalled every request for tens of milliseconds).  Intrusive: an
 * entry carries its own chain link and 32-bit hash, so the map never
 * allocates per entry and an entry never moves.  It does not own the
 * entries, does not hash keys (callers pass tn_map_hash of the key) and
 * keeps one entry per key only if callers insert absent keys only.
 * Invariant: while `old` is set, an entry is in buckets or, if its old
 * bucket is at or after old_next, in old.  Not thread-safe. */
#ifndef TN_COMMON_MAP_H
#define TN_COMMON_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How the map finds its way around an entry type. */
struct tn_map_type {
    size_t link_off; /* offsetof(entry, its `void *` chain link) */
    size_t hash_off; /* offsetof(entry, its uint32_t hash) */
    /* Does entry's key equal key[0..len)?  Called only on equal hashes. */
    bool (*eq)(const void *entry, const void *key, size_t len);
};

struct tn_map {
    const struct tn_map_type *type; /* borrowed; outlives the map */
    void **buckets;                 /* power-of-two array of chains */
    size_t mask;                    /* bucket count - 1 */
    void **old;                     /* the array being emptied, or NULL */
    size_t old_mask;                /* its bucket count - 1 */
    size_t old_next;                /* its first bucket not yet moved */
    size_t count;                   /* entries */
};

/* Keyed hash of a key (SipHash under a per-process key, so clients
 * cannot pick colliding names).  Thread-safe. */
uint32_t tn_map_hash(const void *key, size_t len);

/* 0 or TN_ENOMEM.  expected is a sizing hint (entries). */
int tn_map_init(struct tn_map *m, const struct tn_map_type *type,
                size_t expected);
/* Frees the buckets, not the entries (visit them first with
 * tn_map_each).  Leaves m zeroed. */
void tn_map_release(struct tn_map *m);
/* Size an empty map for n entries at once (a load), so that it neither
 * rehashes nor grows long chains meanwhile.  Best effort. */
void tn_map_reserve(struct tn_map *m, size_t n);

/* The entry whose key is key[0..len) (hash = tn_map_hash(key, len)), or
 * NULL. */
void *tn_map_find(const struct tn_map *m, uint32_t hash, const void *key,
                  size_t len);
/* Hints for a caller about to look up or insert many keys (a load): bring
 * the bucket of hash into the cache, then, a little later, the first entry
 * of its chain.  Only hints: nothing changes. */
static inline void tn_map_prefetch(const struct tn_map *m, uint32_t hash)
{
    __builtin_prefetch(&m->buckets[hash & m->mask], 1);
}
static inline void tn_map_prefetch_chain(const struct tn_map *m, uint32_t hash)
{
    const char *e = m->buckets[hash & m->mask];
    if (e != NULL)
        __builtin_prefetch(e + m->type->hash_off);
}

/* Link entry (its hash field already set; its key not in m).  Never
 * fails: if the map cannot grow it keeps longer chains. */
void tn_map_insert(struct tn_map *m, void *entry);
/* Unlink entry; false if it was not in m. */
bool tn_map_remove(struct tn_map *m, void *entry);

/* Call fn on every entry, in no order, until it returns false.  fn may
 * remove the entry it is given, nothing else. */
void tn_map_each(const struct tn_map *m, bool (*fn)(void *entry, void *ctx),
                 void *ctx);

/* Visit the entries of `buckets` buckets starting at *cursor (wrapping
 * around; *cursor is advanced), first moving as many buckets of a running
 * rehash.  fn may remove the entry it is given, nothing else.  Returns the
 * entries visited. */
size_t tn_map_scan(struct tn_map *m, size_t *cursor, size_t buckets,
                   void (*fn)(void *entry, void *ctx), void *ctx);

#endif
