/* SPDX-License-Identifier: MIT */
/* Batch fence: the records of one sink transaction decided in memory.  The
 * first record of a resource goes through the sink's own advance (which
 * reads, and raises when admitted, the stored mark inside the caller's
 * transaction and so locks the row against other writers); the later ones
 * compare with the mark held here, and flush writes each mark that moved
 * since once, before the commit.  The decisions are exactly those of one
 * advance per record.  Not thread-safe; names are borrowed until the next
 * begin. */
#include <stddef.h>
#include <string.h>

#include <tenure/fence.h>

#include "common/alloc.h"
#include "common/map.h"

struct entry {
    void *next;       /* map link */
    uint32_t hash;    /* map hash of name */
    const char *name; /* borrowed until the next begin */
    size_t len;       /* bytes of name */
    uint64_t hwm;     /* mark after this batch's decisions so far */
    uint64_t stored;  /* mark the sink holds in this transaction */
};

static bool name_eq(const void *entry, const void *key, size_t len)
{
    const struct entry *e = entry;
    return e->len == len && memcmp(e->name, key, len) == 0;
}

static const struct tn_map_type entry_map = {
    .link_off = offsetof(struct entry, next),
    .hash_off = offsetof(struct entry, hash),
    .eq = name_eq,
};

struct tn_fence_batch {
    struct tn_map map;     /* this batch's entries by name */
    struct entry *entries; /* [max_resources]; the first count in map */
    size_t count;          /* entries in use this batch */
    size_t max_resources;  /* cap on resources held per batch */
    int (*fn)(void *, const char *, size_t, uint64_t, uint64_t *,
              struct tn_errmsg *); /* the sink's check-and-advance */
    void *ctx;                     /* its first argument */
};

struct tn_fence_batch *tn_fence_batch_new(size_t max_resources)
{
    if (max_resources == 0)
        max_resources = 1;
    struct tn_fence_batch *b = tn_calloc(1, sizeof(*b));
    if (b == NULL)
        return NULL;
    /* Sized for a full batch up front: the map never grows mid-batch. */
    b->entries = tn_calloc(max_resources, sizeof(struct entry));
    if (b->entries == NULL ||
        tn_map_init(&b->map, &entry_map, max_resources) < 0) {
        tn_fence_batch_free(b);
        return NULL;
    }
    b->max_resources = max_resources;
    return b;
}

void tn_fence_batch_free(struct tn_fence_batch *b)
{
    if (b == NULL)
        return;
    tn_map_release(&b->map);
    tn_free(b->entries);
    tn_free(b);
}

void tn_fence_batch_begin(struct tn_fence_batch *b,
                          int (*fn)(void *ctx, const char *resource, size_t len,
                                    uint64_t token, uint64_t *hwm_before_out,
                                    struct tn_errmsg *em),
                          void *ctx)
{
    b->fn = fn;
    b->ctx = ctx;
    for (size_t i = 0; i < b->count; i++)
        (void)tn_map_remove(&b->map, &b->entries[i]);
    b->count = 0;
}

/* First record of a resource in this batch: the sink decides. */
static int first(struct tn_fence_batch *b, uint32_t h, const char *name,
                 size_t len, uint64_t token, uint64_t *hwm_before_out,
                 struct tn_errmsg *em)
{
    uint64_t before = 0;
    int rc = b->fn(b->ctx, name, len, token, &before, em);
    if (rc < 0 && rc != TN_ESTALE)
        return rc;
    if (hwm_before_out != NULL)
        *hwm_before_out = before;
    if (b->count == b->max_resources)
        return rc; /* batch full: this resource stays with the sink */
    struct entry *e = &b->entries[b->count++];
    e->hash = h;
    e->name = name;
    e->len = len;
    e->hwm = rc == 0 ? token : before;
    e->stored = e->hwm;
    tn_map_insert(&b->map, e);
    return rc;
}

int tn_fence_batch_advance(struct tn_fence_batch *b, const char *resource,
                           size_t len, uint64_t token, uint64_t *hwm_before_out,
                           struct tn_errmsg *em)
{
    if (b->fn == NULL) {
        tn_errmsg_set(em, "fence batch used outside begin");
        return TN_EINVAL;
    }
    if (resource == NULL || len == 0 || len > TN_FENCE_NAME_MAX ||
        token > TN_FENCE_TOKEN_MAX)
        return TN_EINVAL;
    /* keyed hash: resource names come from records */
    uint32_t h = tn_map_hash(resource, len);
    struct entry *e = tn_map_find(&b->map, h, resource, len);
    if (e == NULL)
        return first(b, h, resource, len, token, hwm_before_out, em);
    if (hwm_before_out != NULL)
        *hwm_before_out = e->hwm;
    if (token < e->hwm)
        return TN_ESTALE;
    e->hwm = token;
    return TN_OK;
}

int tn_fence_batch_flush(struct tn_fence_batch *b, struct tn_errmsg *em)
{
    if (b->fn == NULL) {
        tn_errmsg_set(em, "fence batch used outside begin");
        return TN_EINVAL;
    }
    for (size_t i = 0; i < b->count; i++) {
        struct entry *s = &b->entries[i];
        if (s->hwm == s->stored)
            continue;
        int rc = b->fn(b->ctx, s->name, s->len, s->hwm, NULL, em);
        if (rc == TN_ESTALE) {
            /* Only another writer inside our transaction could do this. */
            tn_errmsg_set(em, "mark of \"%.*s\" moved during the batch",
                          (int)s->len, s->name);
            return TN_ECONFLICT;
        }
        if (rc < 0)
            return rc;
        s->stored = s->hwm;
    }
    return TN_OK;
}
