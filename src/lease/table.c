/* SPDX-License-Identifier: MIT */
/* The lease table: entries cut from slabs, filed by name in a tn_map,
 * removed only when the store retires their name.  Holds no decisions
 * and knows no session (those are lease.c's and session.c's, above it). */
#include "table.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "common/map.h"

#ifdef __SANITIZE_ADDRESS__
#    include <sanitizer/asan_interface.h>
/* The unused rest of a slab stays poisoned: a write past the newest entry
 * is caught like one past a malloc'd block. */
#    define TN_LEASE_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#    define TN_LEASE_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#    define TN_LEASE_POISON(p, n) ((void)(p), (void)(n))
#    define TN_LEASE_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* Issue #8: the fixed part stays compact (no padding); the name starts
 * right after it. */
static_assert(sizeof(void *) != 8 ||
                  offsetof(struct tn_lease_entry, str) == 149,
              "struct tn_lease_entry grew");

static bool name_eq(const void *entry, const void *key, size_t len)
{
    const struct tn_lease_entry *l = entry;
    return l->name_len == len && memcmp(l->str, key, len) == 0;
}

static const struct tn_map_type lease_map = {
    .link_off = offsetof(struct tn_lease_entry, next),
    .hash_off = offsetof(struct tn_lease_entry, hash),
    .eq = name_eq,
};

uint32_t tn_lease_hash(const char *name, size_t len)
{
    return tn_map_hash(name, len); /* keyed: names come from clients */
}

/* Entry sizes are multiples of 8 up to this (the fixed part, a 256-byte
 * name, the largest inline room, rounding). */
#define TN_LEASE_SIZE_CLASSES ((size_t)128)

int tn_lease_entries_init(struct tn_lease_table *t, size_t expected)
{
    memset(t, 0, sizeof(*t));
    t->free_lists = tn_calloc(TN_LEASE_SIZE_CLASSES, sizeof(*t->free_lists));
    if (t->free_lists == NULL)
        return TN_ENOMEM;
    if (tn_map_init(&t->map, &lease_map, expected) < 0) {
        tn_free(t->free_lists);
        t->free_lists = NULL;
        return TN_ENOMEM;
    }
    return TN_OK;
}

void tn_lease_table_reserve(struct tn_lease_table *t, size_t n)
{
    tn_map_reserve(&t->map, n);
    t->reserved = n;
}

size_t tn_lease_table_count(const struct tn_lease_table *t)
{
    return t->map.count;
}

uint32_t tn_lease_next_row(struct tn_lease_table *t)
{
    if (t->n_free_rows > 0)
        return t->free_rows[--t->n_free_rows];
    TN_ASSERT(t->last_row_id < UINT32_MAX);
    return ++t->last_row_id;
}

/* Best effort: an id that finds no room is not reused (ids are plenty). */
void tn_lease_give_back_row(struct tn_lease_table *t, uint32_t id)
{
    if (t->n_free_rows == t->cap_free_rows) {
        size_t n = t->cap_free_rows < 64 ? 64 : t->cap_free_rows * 2;
        uint32_t *v = tn_reallocarray(t->free_rows, n, sizeof(*v));
        if (v == NULL)
            return;
        t->free_rows = v;
        t->cap_free_rows = n;
    }
    t->free_rows[t->n_free_rows++] = id;
}

/* Where the grant strings go when they fit: right after the name. */
static char *inline_strings(struct tn_lease_entry *l)
{
    return l->str + l->name_len + 1;
}

/* The grant strings live in a block of their own (they did not fit). */
static bool strings_outside(struct tn_lease_entry *l)
{
    return l->owner_id != NULL && l->owner_id != inline_strings(l);
}

/* The entry itself goes with its slab. */
static void lease_free(struct tn_lease_entry *l)
{
    if (strings_outside(l))
        tn_free(l->owner_id);
}

/* Entries are cut from slabs: one malloc header per slab instead of one
 * per entry, and long-lived entries are not interleaved with the server's
 * short-lived allocations (whose freed holes would stay resident). */
struct slab {
    struct slab *next;  /* older slab */
    max_align_t data[]; /* entries */
};

#define TN_LEASE_SLAB_MIN ((size_t)16 * 1024)
#define TN_LEASE_SLAB_MAX ((size_t)4 * 1024 * 1024)
#define TN_LEASE_ALIGN ((size_t)8)

static size_t entry_round(size_t n)
{
    return (n + TN_LEASE_ALIGN - 1) & ~(TN_LEASE_ALIGN - 1);
}

/* n bytes (a multiple of TN_LEASE_ALIGN) for an entry, or NULL. */
static void *slab_alloc(struct tn_lease_table *t, size_t n)
{
    if (n > t->slab_left) {
        size_t size = TN_LEASE_SLAB_MIN;
        while (size < TN_LEASE_SLAB_MAX && size < t->map.count * n / 2)
            size *= 2;
        while (size < n + sizeof(struct slab))
            size *= 2;
        struct slab *s = tn_malloc(size);
        if (s == NULL)
            return NULL;
        if (t->map.count < t->reserved)
            tn_populate(s, size); /* a load is filling the table */
        s->next = t->slabs;
        t->slabs = s;
        t->slab_free = (char *)s->data;
        t->slab_left = size - offsetof(struct slab, data);
        TN_LEASE_POISON(t->slab_free, t->slab_left);
    }
    void *p = t->slab_free;
    TN_LEASE_UNPOISON(p, n);
    t->slab_free += n;
    t->slab_left -= n;
    return p;
}

static bool free_one(void *l, void *ctx)
{
    (void)ctx;
    lease_free(l);
    return true;
}

void tn_lease_entries_release(struct tn_lease_table *t)
{
    if (t->map.buckets == NULL)
        return;
    tn_map_each(&t->map, free_one, NULL);
    tn_map_release(&t->map);
    tn_free(t->free_lists);
    tn_free(t->free_rows);
    struct slab *s = t->slabs;
    while (s != NULL) {
        struct slab *next = s->next;
        tn_free(s);
        s = next;
    }
    memset(t, 0, sizeof(*t));
}

struct tn_lease_entry *tn_lease_find_h(const struct tn_lease_table *t,
                                       uint32_t h, const char *name, size_t len)
{
    return tn_map_find(&t->map, h, name, len);
}

struct tn_lease_entry *tn_lease_find(const struct tn_lease_table *t,
                                     const char *name, size_t name_len)
{
    return tn_lease_find_h(t, tn_lease_hash(name, name_len), name, name_len);
}

struct each_ctx {
    bool (*fn)(const struct tn_lease_entry *l, void *ctx);
    void *ctx;
};

static bool each_one(void *l, void *ctx)
{
    struct each_ctx *c = ctx;
    return c->fn(l, c->ctx);
}

void tn_lease_each(const struct tn_lease_table *t,
                   bool (*fn)(const struct tn_lease_entry *l, void *ctx),
                   void *ctx)
{
    struct each_ctx c = {.fn = fn, .ctx = ctx};
    tn_map_each(&t->map, each_one, &c);
}

size_t tn_lease_strings_size(const char *owner, const char *rid,
                             const char *who)
{
    /* An owner is always stored (as "" when the grant has none but has
     * other strings). */
    if (owner == NULL && rid == NULL && who == NULL)
        return 0;
    return (owner != NULL ? strlen(owner) : 0) + 1 +
           (rid != NULL ? strlen(rid) + 1 : 0) +
           (who != NULL ? strlen(who) + 1 : 0);
}

int tn_lease_set_strings(struct tn_lease_entry *l, const char *owner,
                         const char *rid, const char *who)
{
    size_t need = tn_lease_strings_size(owner, rid, who);
    char *dst = inline_strings(l);
    if (need > l->str_room && (dst = tn_malloc(need)) == NULL)
        return TN_ENOMEM;
    if (strings_outside(l))
        tn_free(l->owner_id);
    l->owner_id = l->request_id = l->principal = NULL;
    if (need == 0)
        return TN_OK;
    size_t n = owner != NULL ? strlen(owner) : 0;
    memcpy(dst, owner != NULL ? owner : "", n + 1);
    l->owner_id = dst;
    dst += n + 1;
    if (rid != NULL) {
        n = strlen(rid);
        memcpy(dst, rid, n + 1);
        l->request_id = dst;
        dst += n + 1;
    }
    if (who != NULL) {
        memcpy(dst, who, strlen(who) + 1);
        l->principal = dst;
    }
    return TN_OK;
}

/* Grant strings longer than this live in a block of their own. */
#define TN_LEASE_MAX_ROOM ((size_t)512)

/* size bytes for an entry: a removed one of that size, or fresh slab. */
static struct tn_lease_entry *entry_alloc(struct tn_lease_table *t, size_t size)
{
    size_t cls = size / TN_LEASE_ALIGN;
    if (cls < TN_LEASE_SIZE_CLASSES && t->free_lists[cls] != NULL) {
        struct tn_lease_entry *l = t->free_lists[cls];
        TN_LEASE_UNPOISON(l, size);
        t->free_lists[cls] = l->next;
        return l;
    }
    return slab_alloc(t, size);
}

struct tn_lease_entry *tn_lease_insert(struct tn_lease_table *t, uint32_t h,
                                       const char *name, size_t len,
                                       size_t room)
{
    struct tn_lease_entry *l = tn_lease_new(t, h, name, len, room);
    if (l != NULL)
        tn_map_insert(&t->map, l);
    return l;
}

struct tn_lease_entry *tn_lease_new(struct tn_lease_table *t, uint32_t h,
                                    const char *name, size_t len, size_t room)
{
    size_t base = offsetof(struct tn_lease_entry, str) + len + 1;
    if (room > TN_LEASE_MAX_ROOM)
        room = 0; /* rare: such strings get a block of their own */
    size_t size = entry_round(base + room);
    if (size < sizeof(struct tn_lease_entry))
        size = sizeof(struct tn_lease_entry);
    room = size - base; /* the alignment slack can hold a longer owner */
    struct tn_lease_entry *l = entry_alloc(t, size);
    if (l == NULL)
        return NULL;
    memset(l, 0, offsetof(struct tn_lease_entry, str));
    memcpy(l->str, name, len);
    l->str[len] = '\0';
    l->name = l->str;
    l->name_len = (uint32_t)len;
    l->str_room = (uint16_t)room;
    l->hash = h;
    return l;
}

void tn_lease_link(struct tn_lease_table *t, struct tn_lease_entry *l)
{
    tn_map_insert(&t->map, l);
}

void tn_lease_prefetch(const struct tn_lease_table *t, uint32_t h, bool chain)
{
    if (chain)
        tn_map_prefetch_chain(&t->map, h);
    else
        tn_map_prefetch(&t->map, h);
}

/* Bytes of l's piece of slab (tn_lease_insert: base + room, rounded). */
static size_t entry_size(const struct tn_lease_entry *l)
{
    return offsetof(struct tn_lease_entry, str) + l->name_len + 1 + l->str_room;
}

void tn_lease_remove(struct tn_lease_table *t, struct tn_lease_entry *l)
{
    TN_ASSERT(l->session == NULL); /* a session's lease is never retired */
    bool found = tn_map_remove(&t->map, l);
    TN_ASSERT(found);
    t->removed++;
    /* Every token granted so far, the removed name's included: the floor
     * of an absent name never goes down and covers every token it had. */
    TN_ASSERT(t->last_token >= l->token);
    t->retired_floor = t->last_token;
    tn_lease_discard(t, l);
}

void tn_lease_discard(struct tn_lease_table *t, struct tn_lease_entry *l)
{
    lease_free(l);
    size_t size = entry_size(l);
    size_t cls = size / TN_LEASE_ALIGN;
    if (cls >= TN_LEASE_SIZE_CLASSES)
        return; /* cannot happen (sizes are bounded); the bytes stay unused */
    memset(l, 0, offsetof(struct tn_lease_entry, str));
    l->next = t->free_lists[cls];
    t->free_lists[cls] = l;
    /* The fixed part stays readable: a stale pointer (the store's expiry
     * heap) sees a zeroed entry that is not held; the strings are gone. */
    TN_LEASE_POISON(l->str, size - offsetof(struct tn_lease_entry, str));
}

uint64_t tn_lease_floor_of_absent(const struct tn_lease_table *t)
{
    return t->retired_floor;
}

struct scan_ctx {
    void (*fn)(struct tn_lease_entry *l, void *ctx);
    void *ctx;
};

static void scan_one(void *l, void *ctx)
{
    struct scan_ctx *c = ctx;
    c->fn(l, c->ctx);
}

size_t tn_lease_scan(struct tn_lease_table *t, size_t *cursor, size_t buckets,
                     void (*fn)(struct tn_lease_entry *l, void *ctx), void *ctx)
{
    struct scan_ctx c = {.fn = fn, .ctx = ctx};
    return tn_map_scan(&t->map, cursor, buckets, scan_one, &c);
}

void tn_list_page_offer(struct tn_list_page *p, const void *elem)
{
    if (tn_heap_keep(&p->h, elem))
        p->more = true;
}

size_t tn_list_page_sort(struct tn_list_page *p,
                         int (*cmp)(const void *a, const void *b),
                         bool *more_out)
{
    size_t n = tn_heap_count(&p->h);
    qsort(p->h.v, n, p->h.size, cmp);
    *more_out = p->more;
    return n;
}
