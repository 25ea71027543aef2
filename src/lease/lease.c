/* SPDX-License-Identifier: MIT */
/* Lease table (chained hash, entries never removed) and the decisions. */
#include "lease.h"

#include <stdlib.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "common/rand.h"

static uint32_t hash_name(const char *s, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (uint8_t)s[i];
        h *= 16777619u;
    }
    return h;
}

int tn_lease_table_init(struct tn_lease_table *t, size_t expected)
{
    memset(t, 0, sizeof(*t));
    size_t n = 64;
    while (n < expected)
        n *= 2;
    t->buckets = tn_calloc(n, sizeof(*t->buckets));
    if (t->buckets == NULL)
        return TN_ENOMEM;
    t->mask = n - 1;
    return TN_OK;
}

static void lease_free(struct tn_lease *l)
{
    tn_free(l->name);
    tn_free(l->owner_id);
    tn_free(l->request_id);
    tn_free(l->principal);
    tn_free(l);
}

void tn_lease_table_release(struct tn_lease_table *t)
{
    if (t->buckets == NULL)
        return;
    for (size_t i = 0; i <= t->mask; i++) {
        struct tn_lease *l = t->buckets[i];
        while (l != NULL) {
            struct tn_lease *next = l->next;
            lease_free(l);
            l = next;
        }
    }
    tn_free(t->buckets);
    memset(t, 0, sizeof(*t));
}

struct tn_lease *tn_lease_find(const struct tn_lease_table *t, const char *name,
                               size_t name_len)
{
    uint32_t h = hash_name(name, name_len);
    for (struct tn_lease *l = t->buckets[h & t->mask]; l; l = l->next) {
        if (l->hash == h && l->name_len == name_len &&
            memcmp(l->name, name, name_len) == 0)
            return l;
    }
    return NULL;
}

/* Doubling resize.  TODO(#8): rehash incrementally past a million. */
static void maybe_grow(struct tn_lease_table *t)
{
    if (t->count <= t->mask + 1)
        return;
    size_t n = (t->mask + 1) * 2;
    struct tn_lease **b = tn_calloc(n, sizeof(*b));
    if (b == NULL)
        return; /* keep the longer chains; still correct */
    for (size_t i = 0; i <= t->mask; i++) {
        struct tn_lease *l = t->buckets[i];
        while (l != NULL) {
            struct tn_lease *next = l->next;
            l->next = b[l->hash & (n - 1)];
            b[l->hash & (n - 1)] = l;
            l = next;
        }
    }
    tn_free(t->buckets);
    t->buckets = b;
    t->mask = n - 1;
}

static struct tn_lease *insert_new(struct tn_lease_table *t, const char *name,
                                   size_t name_len)
{
    struct tn_lease *l = tn_calloc(1, sizeof(*l));
    if (l == NULL)
        return NULL;
    l->name = tn_strndup(name, name_len);
    if (l->name == NULL) {
        tn_free(l);
        return NULL;
    }
    l->name_len = (uint32_t)name_len;
    l->hash = hash_name(name, name_len);
    l->next = t->buckets[l->hash & t->mask];
    t->buckets[l->hash & t->mask] = l;
    t->count++;
    maybe_grow(t);
    return l;
}

bool tn_lease_is_live(const struct tn_lease *l, int64_t now_ms)
{
    return l != NULL && l->held && now_ms < l->expires_at_ms;
}

static bool same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) ||
           (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static bool same_request(const struct tn_lease *l,
                         const struct tn_acquire_req *r)
{
    return r->request_id != NULL && l->request_id != NULL &&
           strcmp(l->request_id, r->request_id) == 0 &&
           strcmp(l->owner_id, r->owner_id) == 0 &&
           same_str(l->principal, r->principal);
}

/* Replace a string field; on failure the old value stays. */
static int set_str(char **field, const char *s)
{
    char *copy = NULL;
    if (s != NULL && (copy = tn_strdup(s)) == NULL)
        return TN_ENOMEM;
    tn_free(*field);
    *field = copy;
    return TN_OK;
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
static int grant(struct tn_lease_table *t, struct tn_lease *l,
                 const struct tn_acquire_req *r, int64_t now_ms)
{
    char *owner = tn_strdup(r->owner_id);
    char *rid = r->request_id != NULL ? tn_strdup(r->request_id) : NULL;
    char *who = r->principal != NULL ? tn_strdup(r->principal) : NULL;
    if (owner == NULL || (r->request_id != NULL && rid == NULL) ||
        (r->principal != NULL && who == NULL)) {
        tn_free(owner);
        tn_free(rid);
        tn_free(who);
        return TN_ENOMEM;
    }
    tn_free(l->owner_id);
    tn_free(l->request_id);
    tn_free(l->principal);
    l->owner_id = owner;
    l->request_id = rid;
    l->principal = who;
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
                     int64_t now_ms, struct tn_lease **out, bool *replayed_out,
                     int64_t *retry_ms_out)
{
    *replayed_out = false;
    struct tn_lease *l = tn_lease_find(t, r->name, r->name_len);
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
    if (l == NULL && (l = insert_new(t, r->name, r->name_len)) == NULL)
        return TN_ENOMEM;
    *out = l;
    return grant(t, l, r, now_ms);
}

/* The live lease a token request names, or why there is none. */
static int match(struct tn_lease_table *t, const struct tn_token_req *r,
                 int64_t now_ms, struct tn_lease **out)
{
    struct tn_lease *l = tn_lease_find(t, r->name, r->name_len);
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
                   int64_t now_ms, struct tn_lease **out)
{
    int rc = match(t, r, now_ms, out);
    if (rc < 0)
        return rc;
    struct tn_lease *l = *out;
    if (r->ttl_ms > 0)
        l->ttl_ms = r->ttl_ms;
    l->expires_at_ms = expiry(now_ms, l->ttl_ms);
    l->seq = ++t->seq;
    return TN_OK;
}

int tn_lease_release(struct tn_lease_table *t, const struct tn_token_req *r,
                     int64_t now_ms, struct tn_lease **out)
{
    int rc = match(t, r, now_ms, out);
    if (rc < 0)
        return rc;
    struct tn_lease *l = *out;
    l->held = false;
    l->expires_at_ms = now_ms;
    (void)set_str(&l->request_id, NULL);
    l->seq = ++t->seq;
    return TN_OK;
}

int tn_lease_restore(struct tn_lease_table *t, const struct tn_lease *img,
                     struct tn_lease **out)
{
    struct tn_lease *l = tn_lease_find(t, img->name, img->name_len);
    if (l == NULL && (l = insert_new(t, img->name, img->name_len)) == NULL)
        return TN_ENOMEM;
    if (set_str(&l->owner_id, img->owner_id) < 0 ||
        set_str(&l->request_id, img->request_id) < 0 ||
        set_str(&l->principal, img->principal) < 0)
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

static int name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c != 0)
        return c;
    return alen < blen ? -1 : alen > blen;
}

static int lease_cmp(const struct tn_lease *a, const struct tn_lease *b)
{
    return name_cmp(a->name, a->name_len, b->name, b->name_len);
}

/* Max-heap on name of the `limit` smallest candidates seen so far. */
struct heap {
    const struct tn_lease **v; /* caller's array */
    size_t n;                  /* used */
    size_t cap;                /* limit + 0 */
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
        const struct tn_lease *tmp = h->v[i];
        h->v[i] = h->v[m];
        h->v[m] = tmp;
        i = m;
    }
}

static void heap_push(struct heap *h, const struct tn_lease *l)
{
    size_t i = h->n++;
    h->v[i] = l;
    while (i > 0 && lease_cmp(h->v[(i - 1) / 2], h->v[i]) < 0) {
        const struct tn_lease *tmp = h->v[i];
        h->v[i] = h->v[(i - 1) / 2];
        h->v[(i - 1) / 2] = tmp;
        i = (i - 1) / 2;
    }
}

/* Offer l to the heap; returns true if something was pushed out. */
static bool heap_offer(struct heap *h, const struct tn_lease *l)
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
    return lease_cmp(*(const struct tn_lease *const *)a,
                     *(const struct tn_lease *const *)b);
}

size_t tn_lease_list(const struct tn_lease_table *t, const char *prefix,
                     size_t prefix_len, const char *after, size_t after_len,
                     int64_t now_ms, const struct tn_lease **out, size_t limit,
                     bool *more_out)
{
    struct heap h = {.v = out, .n = 0, .cap = limit};
    bool more = false;
    for (size_t i = 0; i <= t->mask; i++) {
        for (const struct tn_lease *l = t->buckets[i]; l; l = l->next) {
            if (!tn_lease_is_live(l, now_ms) || l->name_len < prefix_len ||
                memcmp(l->name, prefix, prefix_len) != 0)
                continue;
            if (after != NULL &&
                name_cmp(l->name, l->name_len, after, after_len) <= 0)
                continue;
            if (limit == 0 || heap_offer(&h, l))
                more = true;
        }
    }
    qsort(out, h.n, sizeof(*out), qsort_cmp);
    *more_out = more;
    return h.n;
}

size_t tn_lease_count_live(const struct tn_lease_table *t, int64_t now_ms)
{
    size_t n = 0;
    for (size_t i = 0; i <= t->mask; i++) {
        for (const struct tn_lease *l = t->buckets[i]; l; l = l->next)
            n += tn_lease_is_live(l, now_ms);
    }
    return n;
}
