/* SPDX-License-Identifier: MIT */
/* Chained hash map with incremental doubling; see map.h. */
#include "map.h"

#include <string.h>

#include <tenure/err.h>

#include "alloc.h"
#include "hash.h"

uint32_t tn_map_hash(const void *key, size_t len)
{
    return (uint32_t)tn_hash(key, len);
}

static void **link_of(const struct tn_map *m, void *e)
{
    return (void **)((char *)e + m->type->link_off);
}

static uint32_t hash_of(const struct tn_map *m, const void *e)
{
    return *(const uint32_t *)((const char *)e + m->type->hash_off);
}

int tn_map_init(struct tn_map *m, const struct tn_map_type *type,
                size_t expected)
{
    memset(m, 0, sizeof(*m));
    size_t n = 64;
    while (n < expected)
        n *= 2;
    m->buckets = tn_calloc(n, sizeof(*m->buckets));
    if (m->buckets == NULL)
        return TN_ENOMEM;
    m->type = type;
    m->mask = n - 1;
    return TN_OK;
}

void tn_map_release(struct tn_map *m)
{
    tn_free(m->buckets);
    tn_free(m->old);
    memset(m, 0, sizeof(*m));
}

void tn_map_reserve(struct tn_map *m, size_t n)
{
    if (m->count != 0 || m->old != NULL || n <= m->mask + 1)
        return;
    size_t b = m->mask + 1;
    while (b < n)
        b *= 2;
    void **v = tn_calloc(b, sizeof(*v));
    if (v == NULL)
        return;
    tn_populate(v, b * sizeof(*v)); /* the load writes all over it */
    tn_free(m->buckets);
    m->buckets = v;
    m->mask = b - 1;
}

static void *chain_find(const struct tn_map *m, void *e, uint32_t h,
                        const void *key, size_t len)
{
    for (; e != NULL; e = *link_of(m, e)) {
        if (hash_of(m, e) == h && m->type->eq(e, key, len))
            return e;
    }
    return NULL;
}

void *tn_map_find(const struct tn_map *m, uint32_t hash, const void *key,
                  size_t len)
{
    void *e = chain_find(m, m->buckets[hash & m->mask], hash, key, len);
    if (e == NULL && m->old != NULL)
        e = chain_find(m, m->old[hash & m->old_mask], hash, key, len);
    return e;
}

/* Old buckets moved per insert.  Growth starts at count = n + 1 (n old
 * buckets) and the next one at 2n + 1, so n inserts come between: two
 * buckets each empty the old array after n / 2 of them. */
#define REHASH_STEP 2

static void rehash_step(struct tn_map *m, size_t buckets)
{
    while (m->old != NULL && buckets-- > 0) {
        void *e = m->old[m->old_next];
        m->old[m->old_next] = NULL;
        while (e != NULL) {
            void *next = *link_of(m, e);
            size_t i = hash_of(m, e) & m->mask;
            *link_of(m, e) = m->buckets[i];
            m->buckets[i] = e;
            e = next;
        }
        if (m->old_next++ == m->old_mask) {
            tn_free(m->old);
            m->old = NULL;
        }
    }
}

/* Start doubling once entries outnumber buckets; the chains move over
 * later, REHASH_STEP buckets per insert. */
static void maybe_grow(struct tn_map *m)
{
    rehash_step(m, REHASH_STEP);
    if (m->count <= m->mask + 1)
        return;
    rehash_step(m, SIZE_MAX); /* only if inserts outran the steps */
    size_t n = (m->mask + 1) * 2;
    void **b = tn_calloc(n, sizeof(*b));
    if (b == NULL)
        return; /* keep the longer chains; still correct */
    m->old = m->buckets;
    m->old_mask = m->mask;
    m->old_next = 0;
    m->buckets = b;
    m->mask = n - 1;
}

void tn_map_insert(struct tn_map *m, void *entry)
{
    size_t i = hash_of(m, entry) & m->mask;
    *link_of(m, entry) = m->buckets[i];
    m->buckets[i] = entry;
    m->count++;
    maybe_grow(m);
}

/* The link in e's chain of b[i] that points to e, or NULL. */
static void **find_link(const struct tn_map *m, void **b, size_t i, void *e)
{
    void **p = &b[i];
    while (*p != NULL && *p != e)
        p = link_of(m, *p);
    return *p == e ? p : NULL;
}

bool tn_map_remove(struct tn_map *m, void *entry)
{
    uint32_t h = hash_of(m, entry);
    void **p = find_link(m, m->buckets, h & m->mask, entry);
    if (p == NULL && m->old != NULL && (h & m->old_mask) >= m->old_next)
        p = find_link(m, m->old, h & m->old_mask, entry);
    if (p == NULL)
        return false;
    *p = *link_of(m, entry);
    *link_of(m, entry) = NULL;
    m->count--;
    return true;
}

/* fn on every entry of buckets [from, last]; false if fn stopped. */
static bool each_in(const struct tn_map *m, void *const *b, size_t from,
                    size_t last, bool (*fn)(void *entry, void *ctx), void *ctx)
{
    for (size_t i = from; i <= last; i++) {
        for (void *e = b[i]; e != NULL;) {
            void *next = *link_of(m, e); /* fn may remove e */
            if (!fn(e, ctx))
                return false;
            e = next;
        }
    }
    return true;
}

void tn_map_each(const struct tn_map *m, bool (*fn)(void *entry, void *ctx),
                 void *ctx)
{
    if (m->buckets == NULL)
        return;
    if (each_in(m, m->buckets, 0, m->mask, fn, ctx) && m->old != NULL)
        (void)each_in(m, m->old, m->old_next, m->old_mask, fn, ctx);
}

size_t tn_map_scan(struct tn_map *m, size_t *cursor, size_t buckets,
                   void (*fn)(void *entry, void *ctx), void *ctx)
{
    rehash_step(m, buckets); /* so that old buckets do not wait for inserts */
    size_t seen = 0;
    for (size_t k = 0; k < buckets && k <= m->mask; k++) {
        size_t i = *cursor & m->mask;
        *cursor = (i + 1) & m->mask;
        for (void *e = m->buckets[i]; e != NULL;) {
            void *next = *link_of(m, e); /* fn may remove e */
            fn(e, ctx);
            seen++;
            e = next;
        }
    }
    return seen;
}
