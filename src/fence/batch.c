/* SPDX-License-Identifier: MIT */
/* Batch fence: the records of one sink transaction decided in memory.  The
 * first record of a resource goes through the sink's own advance (which
 * reads, and raises when admitted, the stored mark inside the caller's
 * transaction and so locks the row against other writers); the later ones
 * compare with the mark held here, and flush writes each mark that moved
 * since once, before the commit.  The decisions are exactly those of one
 * advance per record.  Not thread-safe; names are borrowed until the next
 * begin. */
#include <string.h>

#include <tenure/fence.h>

#include "common/alloc.h"
#include "common/hash.h"

struct slot {
    const char *name; /* borrowed, valid while gen == the batch's gen */
    size_t len;       /* bytes of name */
    uint32_t gen;     /* batch generation that filled the slot */
    uint64_t hwm;     /* mark after this batch's decisions so far */
    uint64_t stored;  /* mark the sink holds in this transaction */
};

struct tn_fence_batch {
    struct slot *slots;    /* cap entries */
    size_t cap;            /* power of two, >= 2 * max_resources */
    struct slot **touched; /* slots filled this batch, [max_resources] */
    size_t count;          /* entries of touched */
    size_t max_resources;  /* cap on resources held per batch */
    uint32_t gen;          /* current batch generation, never 0 */
    int (*fn)(void *, const char *, size_t, uint64_t, uint64_t *,
              struct tn_errmsg *); /* the sink's check-and-advance */
    void *ctx;                     /* its first argument */
};

static uint64_t hash(const char *s, size_t len)
{
    return tn_hash(s, len); /* keyed: resource names come from records */
}

struct tn_fence_batch *tn_fence_batch_new(size_t max_resources)
{
    if (max_resources == 0)
        max_resources = 1;
    struct tn_fence_batch *b = tn_calloc(1, sizeof(*b));
    if (b == NULL)
        return NULL;
    b->cap = 16;
    while (b->cap < 2 * max_resources)
        b->cap *= 2;
    b->slots = tn_calloc(b->cap, sizeof(struct slot));
    b->touched = tn_calloc(max_resources, sizeof(struct slot *));
    if (b->slots == NULL || b->touched == NULL) {
        tn_fence_batch_free(b);
        return NULL;
    }
    b->max_resources = max_resources;
    b->gen = 1;
    return b;
}

void tn_fence_batch_free(struct tn_fence_batch *b)
{
    if (b == NULL)
        return;
    tn_free(b->slots);
    tn_free(b->touched);
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
    b->count = 0;
    b->gen++;
    if (b->gen == 0) {
        /* Wrapped: clear the slots so that no old generation matches. */
        memset(b->slots, 0, b->cap * sizeof(struct slot));
        b->gen = 1;
    }
}

/* The slot of name: its own, or the empty one where it would go. */
static struct slot *find(struct tn_fence_batch *b, const char *name, size_t len)
{
    size_t i = (size_t)hash(name, len) & (b->cap - 1);
    for (;;) {
        struct slot *s = &b->slots[i];
        if (s->gen != b->gen ||
            (s->len == len && memcmp(s->name, name, len) == 0))
            return s;
        i = (i + 1) & (b->cap - 1);
    }
}

/* First record of a resource in this batch: the sink decides. */
static int first(struct tn_fence_batch *b, struct slot *s, const char *name,
                 size_t len, uint64_t token, uint64_t *hwm_before_out,
                 struct tn_errmsg *em)
{
    uint64_t before = 0;
    int rc = b->fn(b->ctx, name, len, token, &before, em);
    if (rc < 0 && rc != TN_ESTALE)
        return rc;
    if (hwm_before_out != NULL)
        *hwm_before_out = before;
    if (s == NULL)
        return rc; /* batch full: this resource stays with the sink */
    s->name = name;
    s->len = len;
    s->gen = b->gen;
    s->hwm = rc == 0 ? token : before;
    s->stored = s->hwm;
    b->touched[b->count++] = s;
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
    struct slot *s = find(b, resource, len);
    if (s->gen != b->gen) {
        struct slot *fresh = b->count < b->max_resources ? s : NULL;
        return first(b, fresh, resource, len, token, hwm_before_out, em);
    }
    if (hwm_before_out != NULL)
        *hwm_before_out = s->hwm;
    if (token < s->hwm)
        return TN_ESTALE;
    s->hwm = token;
    return TN_OK;
}

int tn_fence_batch_flush(struct tn_fence_batch *b, struct tn_errmsg *em)
{
    if (b->fn == NULL) {
        tn_errmsg_set(em, "fence batch used outside begin");
        return TN_EINVAL;
    }
    for (size_t i = 0; i < b->count; i++) {
        struct slot *s = b->touched[i];
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
