/* SPDX-License-Identifier: MIT */
/* Lease table (chained hash; entries leave only when their name is
 * retired) and the decisions. */
#include "lease.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "common/hash.h"
#include "common/rand.h"

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
                  offsetof(struct tn_lease_entry, str) == 125,
              "struct tn_lease_entry grew");

static uint32_t hash_name(const char *s, size_t len)
{
    return (uint32_t)tn_hash(s, len); /* keyed: names come from clients */
}

/* Entry sizes are multiples of 8 up to this (the fixed part, a 256-byte
 * name, the largest inline room, rounding). */
#define TN_LEASE_SIZE_CLASSES ((size_t)128)

int tn_lease_table_init(struct tn_lease_table *t, size_t expected)
{
    memset(t, 0, sizeof(*t));
    size_t n = 64;
    while (n < expected)
        n *= 2;
    t->buckets = tn_calloc(n, sizeof(*t->buckets));
    t->free_lists = tn_calloc(TN_LEASE_SIZE_CLASSES, sizeof(*t->free_lists));
    if (t->buckets == NULL || t->free_lists == NULL) {
        tn_free(t->buckets);
        tn_free(t->free_lists);
        t->buckets = NULL;
        t->free_lists = NULL;
        return TN_ENOMEM;
    }
    t->mask = n - 1;
    return TN_OK;
}

void tn_lease_table_reserve(struct tn_lease_table *t, size_t n)
{
    if (t->count != 0 || t->old != NULL || n <= t->mask + 1)
        return;
    size_t b = t->mask + 1;
    while (b < n)
        b *= 2;
    struct tn_lease_entry **v = tn_calloc(b, sizeof(*v));
    if (v == NULL)
        return;
    tn_free(t->buckets);
    t->buckets = v;
    t->mask = b - 1;
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
        while (size < TN_LEASE_SLAB_MAX && size < t->count * n / 2)
            size *= 2;
        while (size < n + sizeof(struct slab))
            size *= 2;
        struct slab *s = tn_malloc(size);
        if (s == NULL)
            return NULL;
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

static bool free_one(const struct tn_lease_entry *l, void *ctx)
{
    (void)ctx;
    lease_free((struct tn_lease_entry *)(uintptr_t)l); /* the table's own */
    return true;
}

void tn_lease_table_release(struct tn_lease_table *t)
{
    if (t->buckets == NULL)
        return;
    tn_lease_each(t, free_one, NULL);
    tn_free(t->buckets);
    tn_free(t->old);
    tn_free(t->free_lists);
    struct slab *s = t->slabs;
    while (s != NULL) {
        struct slab *next = s->next;
        tn_free(s);
        s = next;
    }
    memset(t, 0, sizeof(*t));
}

static struct tn_lease_entry *chain_find(struct tn_lease_entry *l, uint32_t h,
                                         const char *name, size_t name_len)
{
    for (; l != NULL; l = l->next) {
        if (l->hash == h && l->name_len == name_len &&
            memcmp(l->str, name, name_len) == 0)
            return l;
    }
    return NULL;
}

static struct tn_lease_entry *find_h(const struct tn_lease_table *t, uint32_t h,
                                     const char *name, size_t name_len)
{
    struct tn_lease_entry *l =
        chain_find(t->buckets[h & t->mask], h, name, name_len);
    if (l == NULL && t->old != NULL)
        l = chain_find(t->old[h & t->old_mask], h, name, name_len);
    return l;
}

struct tn_lease_entry *tn_lease_find(const struct tn_lease_table *t,
                                     const char *name, size_t name_len)
{
    return find_h(t, hash_name(name, name_len), name, name_len);
}

/* Old buckets moved per insert.  Growth starts at count = n + 1 (n old
 * buckets) and the next one at 2n + 1, so n inserts come between: two
 * buckets each empty the old table after n / 2 of them. */
#define REHASH_STEP 2

static void rehash_step(struct tn_lease_table *t, size_t buckets)
{
    while (t->old != NULL && buckets-- > 0) {
        struct tn_lease_entry *l = t->old[t->old_next];
        t->old[t->old_next] = NULL;
        while (l != NULL) {
            struct tn_lease_entry *next = l->next;
            size_t i = l->hash & t->mask;
            l->next = t->buckets[i];
            t->buckets[i] = l;
            l = next;
        }
        if (t->old_next++ == t->old_mask) {
            tn_free(t->old);
            t->old = NULL;
        }
    }
}

/* Start doubling once entries outnumber buckets; the chains move over
 * later, REHASH_STEP buckets per insert. */
static void maybe_grow(struct tn_lease_table *t)
{
    rehash_step(t, REHASH_STEP);
    if (t->count <= t->mask + 1)
        return;
    rehash_step(t, SIZE_MAX); /* only if inserts outran the steps */
    size_t n = (t->mask + 1) * 2;
    struct tn_lease_entry **b = tn_calloc(n, sizeof(*b));
    if (b == NULL)
        return; /* keep the longer chains; still correct */
    t->old = t->buckets;
    t->old_mask = t->mask;
    t->old_next = 0;
    t->buckets = b;
    t->mask = n - 1;
}

/* fn on every entry of buckets [from, last]; false if fn stopped. */
static bool each_in(struct tn_lease_entry *const *b, size_t from, size_t last,
                    bool (*fn)(const struct tn_lease_entry *l, void *ctx),
                    void *ctx)
{
    for (size_t i = from; i <= last; i++) {
        for (const struct tn_lease_entry *l = b[i]; l != NULL;) {
            const struct tn_lease_entry *next = l->next; /* fn may free l */
            if (!fn(l, ctx))
                return false;
            l = next;
        }
    }
    return true;
}

void tn_lease_each(const struct tn_lease_table *t,
                   bool (*fn)(const struct tn_lease_entry *l, void *ctx),
                   void *ctx)
{
    if (each_in(t->buckets, 0, t->mask, fn, ctx) && t->old != NULL)
        (void)each_in(t->old, t->old_next, t->old_mask, fn, ctx);
}

/* Bytes the grant strings take in one block; an owner is always stored
 * (as "" when the grant has none but has other strings). */
static size_t strings_size(const char *owner, const char *rid, const char *who)
{
    if (owner == NULL && rid == NULL && who == NULL)
        return 0;
    return (owner != NULL ? strlen(owner) : 0) + 1 +
           (rid != NULL ? strlen(rid) + 1 : 0) +
           (who != NULL ? strlen(who) + 1 : 0);
}

/* Replace the grant strings of l (the sources must not point into l);
 * on failure nothing changes. */
static int set_strings(struct tn_lease_entry *l, const char *owner,
                       const char *rid, const char *who)
{
    size_t need = strings_size(owner, rid, who);
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

/* A new entry with room for `room` bytes of grant strings inline. */
static struct tn_lease_entry *insert_new(struct tn_lease_table *t, uint32_t h,
                                         const char *name, size_t name_len,
                                         size_t room)
{
    size_t base = offsetof(struct tn_lease_entry, str) + name_len + 1;
    if (room > TN_LEASE_MAX_ROOM)
        room = 0; /* rare: such strings get a block of their own */
    size_t size = entry_round(base + room);
    if (size < sizeof(struct tn_lease_entry))
        size = sizeof(struct tn_lease_entry);
    room = size - base; /* the alignment slack can hold a longer owner */
    struct tn_lease_entry *l = NULL;
    size_t cls = size / TN_LEASE_ALIGN;
    if (cls < TN_LEASE_SIZE_CLASSES && t->free_lists[cls] != NULL) {
        l = t->free_lists[cls];
        TN_LEASE_UNPOISON(l, size);
        t->free_lists[cls] = l->next;
    } else if ((l = slab_alloc(t, size)) == NULL) {
        return NULL;
    }
    memset(l, 0, offsetof(struct tn_lease_entry, str));
    memcpy(l->str, name, name_len);
    l->str[name_len] = '\0';
    l->name = l->str;
    l->name_len = (uint32_t)name_len;
    l->str_room = (uint16_t)room;
    l->hash = h;
    size_t b = l->hash & t->mask;
    l->next = t->buckets[b];
    t->buckets[b] = l;
    t->count++;
    maybe_grow(t);
    return l;
}

bool tn_lease_is_live(const struct tn_lease_entry *l, int64_t now_ms)
{
    return l != NULL && l->held && now_ms < l->expires_at_ms;
}

static bool same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) ||
           (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static bool same_request(const struct tn_lease_entry *l,
                         const struct tn_acquire_req *r)
{
    return r->request_id != NULL && l->request_id != NULL &&
           strcmp(l->request_id, r->request_id) == 0 &&
           strcmp(l->owner_id, r->owner_id) == 0 &&
           same_str(l->principal, r->principal);
}

/* now_ms is the server clock truncated to the millisecond, so the request
 * may have arrived up to 1 ms later than now_ms says; its sender counts the
 * TTL from before it sent.  Expiring at now_ms + ttl could then end the
 * lease before the holder's own count does: round up instead (found by the
 * fault harness, issue #7). */
static int64_t expiry(int64_t now_ms, int64_t ttl_ms)
{
    return now_ms + ttl_ms + 1;
}

/* The grant itself: new token, new secret, new expiry. */
static int grant(struct tn_lease_table *t, struct tn_lease_entry *l,
                 const struct tn_acquire_req *r, int64_t now_ms)
{
    if (set_strings(l, r->owner_id, r->request_id, r->principal) < 0)
        return TN_ENOMEM;
    TN_ASSERT(t->last_token >= l->token);
    l->token = ++t->last_token;
    memcpy(l->secret, r->secret, TN_SECRET_BYTES);
    l->ttl_ms = r->ttl_ms;
    l->expires_at_ms = expiry(now_ms, r->ttl_ms);
    l->lock_delay_ms = r->lock_delay_ms;
    l->held = true;
    l->expiry_noted = false;
    l->seq = ++t->seq;
    return TN_OK;
}

int tn_lease_acquire(struct tn_lease_table *t, const struct tn_acquire_req *r,
                     int64_t now_ms, struct tn_lease_entry **out,
                     bool *replayed_out, int64_t *retry_ms_out)
{
    *replayed_out = false;
    uint32_t h = hash_name(r->name, r->name_len);
    struct tn_lease_entry *l = find_h(t, h, r->name, r->name_len);
    *out = l;
    if (tn_lease_is_live(l, now_ms)) {
        if (!same_request(l, r))
            return TN_ECONFLICT;
        *replayed_out = true;
        return TN_OK;
    }
    if (l != NULL && l->held && l->lock_delay_ms > 0 &&
        now_ms < l->expires_at_ms + l->lock_delay_ms) {
        *retry_ms_out = l->expires_at_ms + l->lock_delay_ms - now_ms;
        return TN_ELOCKDELAY;
    }
    if (l == NULL && (l = insert_new(t, h, r->name, r->name_len,
                                     strings_size(r->owner_id, r->request_id,
                                                  r->principal))) == NULL)
        return TN_ENOMEM;
    *out = l;
    return grant(t, l, r, now_ms);
}

/* The live lease a token request names, or why there is none. */
static int match(struct tn_lease_table *t, const struct tn_token_req *r,
                 int64_t now_ms, struct tn_lease_entry **out)
{
    uint32_t h = hash_name(r->name, r->name_len);
    struct tn_lease_entry *l = find_h(t, h, r->name, r->name_len);
    *out = l;
    if (!tn_lease_is_live(l, now_ms))
        return TN_ELOST;
    if (r->force)
        return TN_OK;
    if (l->token != r->token)
        return TN_ELOST;
    if (!tn_ct_equal(l->secret, r->secret, TN_SECRET_BYTES))
        return TN_EFORBIDDEN;
    /* With auth on, the secret alone is not enough: renew and release are
     * bound to the principal that acquired the lease. */
    if (r->principal != NULL &&
        (l->principal == NULL || strcmp(l->principal, r->principal) != 0))
        return TN_EFORBIDDEN;
    return TN_OK;
}

int tn_lease_renew(struct tn_lease_table *t, const struct tn_token_req *r,
                   int64_t now_ms, struct tn_lease_entry **out)
{
    int rc = match(t, r, now_ms, out);
    if (rc < 0)
        return rc;
    struct tn_lease_entry *l = *out;
    if (r->ttl_ms > 0)
        l->ttl_ms = r->ttl_ms;
    l->expires_at_ms = expiry(now_ms, l->ttl_ms);
    l->seq = ++t->seq;
    return TN_OK;
}

int tn_lease_release(struct tn_lease_table *t, const struct tn_token_req *r,
                     int64_t now_ms, struct tn_lease_entry **out)
{
    int rc = match(t, r, now_ms, out);
    if (rc < 0)
        return rc;
    struct tn_lease_entry *l = *out;
    l->held = false;
    l->expires_at_ms = now_ms;
    l->request_id = NULL; /* its bytes stay in the grant's block */
    l->seq = ++t->seq;
    return TN_OK;
}

int tn_lease_restore(struct tn_lease_table *t, const struct tn_lease_entry *img,
                     struct tn_lease_entry **out)
{
    uint32_t h = hash_name(img->name, img->name_len);
    struct tn_lease_entry *l = find_h(t, h, img->name, img->name_len);
    if (l == NULL &&
        (l = insert_new(t, h, img->name, img->name_len,
                        strings_size(img->owner_id, img->request_id,
                                     img->principal))) == NULL)
        return TN_ENOMEM;
    if (set_strings(l, img->owner_id, img->request_id, img->principal) < 0)
        return TN_ENOMEM;
    l->token = img->token;
    memcpy(l->secret, img->secret, TN_SECRET_BYTES);
    l->ttl_ms = img->ttl_ms;
    l->expires_at_ms = img->expires_at_ms;
    l->lock_delay_ms = img->lock_delay_ms;
    l->held = img->held;
    l->seq = 0;
    if (img->token > t->last_token)
        t->last_token = img->token;
    *out = l;
    return TN_OK;
}

/* Bytes of l's piece of slab (insert_new: base + room, rounded). */
static size_t entry_size(const struct tn_lease_entry *l)
{
    return offsetof(struct tn_lease_entry, str) + l->name_len + 1 + l->str_room;
}

/* The link in l's chain that points to l, or NULL. */
static struct tn_lease_entry **link_of(struct tn_lease_table *t,
                                       const struct tn_lease_entry *l)
{
    struct tn_lease_entry **p = &t->buckets[l->hash & t->mask];
    while (*p != NULL && *p != l)
        p = &(*p)->next;
    if (*p == l)
        return p;
    if (t->old == NULL || (l->hash & t->old_mask) < t->old_next)
        return NULL;
    p = &t->old[l->hash & t->old_mask];
    while (*p != NULL && *p != l)
        p = &(*p)->next;
    return *p == l ? p : NULL;
}

void tn_lease_remove(struct tn_lease_table *t, struct tn_lease_entry *l)
{
    struct tn_lease_entry **p = link_of(t, l);
    TN_ASSERT(p != NULL);
    *p = l->next;
    t->count--;
    t->removed++;
    /* Every token granted so far, the removed name's included: the floor
     * of an absent name never goes down and covers every token it had. */
    TN_ASSERT(t->last_token >= l->token);
    t->retired_floor = t->last_token;
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

size_t tn_lease_scan(struct tn_lease_table *t, size_t *cursor, size_t buckets,
                     void (*fn)(struct tn_lease_entry *l, void *ctx), void *ctx)
{
    rehash_step(t, buckets); /* so that old buckets do not wait for inserts */
    size_t seen = 0;
    for (size_t k = 0; k < buckets && k <= t->mask; k++) {
        size_t i = *cursor & t->mask;
        *cursor = (i + 1) & t->mask;
        for (struct tn_lease_entry *l = t->buckets[i]; l != NULL;) {
            struct tn_lease_entry *next = l->next; /* fn may remove l */
            fn(l, ctx);
            seen++;
            l = next;
        }
    }
    return seen;
}

static int name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c != 0)
        return c;
    return alen < blen ? -1 : alen > blen;
}

static int lease_cmp(const struct tn_lease_entry *a,
                     const struct tn_lease_entry *b)
{
    return name_cmp(a->name, a->name_len, b->name, b->name_len);
}

/* Max-heap on name of the `limit` smallest candidates seen so far. */
struct heap {
    const struct tn_lease_entry **v; /* caller's array */
    size_t n;                        /* used */
    size_t cap;                      /* limit + 0 */
};

static void heap_sift_down(struct heap *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && lease_cmp(h->v[l], h->v[m]) > 0)
            m = l;
        if (r < h->n && lease_cmp(h->v[r], h->v[m]) > 0)
            m = r;
        if (m == i)
            return;
        const struct tn_lease_entry *tmp = h->v[i];
        h->v[i] = h->v[m];
        h->v[m] = tmp;
        i = m;
    }
}

static void heap_push(struct heap *h, const struct tn_lease_entry *l)
{
    size_t i = h->n++;
    h->v[i] = l;
    while (i > 0 && lease_cmp(h->v[(i - 1) / 2], h->v[i]) < 0) {
        const struct tn_lease_entry *tmp = h->v[i];
        h->v[i] = h->v[(i - 1) / 2];
        h->v[(i - 1) / 2] = tmp;
        i = (i - 1) / 2;
    }
}

/* Offer l to the heap; returns true if something was pushed out. */
static bool heap_offer(struct heap *h, const struct tn_lease_entry *l)
{
    if (h->n < h->cap) {
        heap_push(h, l);
        return false;
    }
    if (lease_cmp(l, h->v[0]) < 0) {
        h->v[0] = l;
        heap_sift_down(h, 0);
    }
    return true;
}

static int qsort_cmp(const void *a, const void *b)
{
    return lease_cmp(*(const struct tn_lease_entry *const *)a,
                     *(const struct tn_lease_entry *const *)b);
}

struct list_walk {
    struct heap h;      /* the smallest names so far */
    const char *prefix; /* of the names wanted */
    size_t prefix_len;
    const char *after; /* names after this one, or NULL */
    size_t after_len;
    int64_t now_ms;
    size_t limit;
    bool more; /* a match did not fit */
};

static bool list_one(const struct tn_lease_entry *l, void *ctx)
{
    struct list_walk *w = ctx;
    if (!tn_lease_is_live(l, w->now_ms) || l->name_len < w->prefix_len ||
        memcmp(l->name, w->prefix, w->prefix_len) != 0)
        return true;
    if (w->after != NULL &&
        name_cmp(l->name, l->name_len, w->after, w->after_len) <= 0)
        return true;
    if (w->limit == 0 || heap_offer(&w->h, l))
        w->more = true;
    return true;
}

size_t tn_lease_list(const struct tn_lease_table *t, const char *prefix,
                     size_t prefix_len, const char *after, size_t after_len,
                     int64_t now_ms, const struct tn_lease_entry **out,
                     size_t limit, bool *more_out)
{
    struct list_walk w = {.h = {.v = out, .n = 0, .cap = limit},
                          .prefix = prefix,
                          .prefix_len = prefix_len,
                          .after = after,
                          .after_len = after_len,
                          .now_ms = now_ms,
                          .limit = limit};
    tn_lease_each(t, list_one, &w);
    qsort(out, w.h.n, sizeof(*out), qsort_cmp);
    *more_out = w.more;
    return w.h.n;
}

struct live_count {
    int64_t now_ms;
    size_t n;
};

static bool count_one(const struct tn_lease_entry *l, void *ctx)
{
    struct live_count *c = ctx;
    c->n += tn_lease_is_live(l, c->now_ms);
    return true;
}

size_t tn_lease_count_live(const struct tn_lease_table *t, int64_t now_ms)
{
    struct live_count c = {.now_ms = now_ms, .n = 0};
    tn_lease_each(t, count_one, &c);
    return c.n;
}
