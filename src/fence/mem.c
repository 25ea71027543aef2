/* SPDX-License-Identifier: MIT */
/* The in-memory fence for stream processors: an open-addressing hash table
 * of resource -> mark with a hard cap on resources.  The mark never moves
 * down.  Not thread-safe: one filter per processing thread. */
#include <string.h>

#include <tenure/fence_mem.h>

#include "common/alloc.h"
#include "common/hash.h"

struct slot {
    char *name;   /* owned copy, NULL when the slot is empty */
    size_t len;   /* bytes of name */
    uint64_t hwm; /* the mark */
};

struct tn_fence_mem {
    struct slot *slots;   /* cap entries */
    size_t cap;           /* power of two, >= 2 * count */
    size_t count;         /* resources tracked */
    size_t max_resources; /* hard cap on count */
};

static uint64_t hash(const char *s, size_t len)
{
    return tn_hash(s, len); /* keyed: resource names come from records */
}

struct tn_fence_mem *tn_fence_mem_new(size_t max_resources)
{
    struct tn_fence_mem *f = tn_calloc(1, sizeof(*f));
    if (f == NULL)
        return NULL;
    f->cap = 16;
    f->slots = tn_calloc(f->cap, sizeof(struct slot));
    if (f->slots == NULL) {
        tn_free(f);
        return NULL;
    }
    f->max_resources = max_resources;
    return f;
}

void tn_fence_mem_free(struct tn_fence_mem *f)
{
    if (f == NULL)
        return;
    for (size_t i = 0; i < f->cap; i++)
        tn_free(f->slots[i].name);
    tn_free(f->slots);
    tn_free(f);
}

static struct slot *find(struct slot *slots, size_t cap, const char *name,
                         size_t len)
{
    size_t i = (size_t)hash(name, len) & (cap - 1);
    for (;;) {
        struct slot *s = &slots[i];
        if (s->name == NULL ||
            (s->len == len && memcmp(s->name, name, len) == 0))
            return s;
        i = (i + 1) & (cap - 1);
    }
}

static int grow(struct tn_fence_mem *f)
{
    size_t cap = f->cap * 2;
    struct slot *slots = tn_calloc(cap, sizeof(struct slot));
    if (slots == NULL)
        return TN_ENOMEM;
    for (size_t i = 0; i < f->cap; i++) {
        if (f->slots[i].name != NULL)
            *find(slots, cap, f->slots[i].name, f->slots[i].len) = f->slots[i];
    }
    tn_free(f->slots);
    f->slots = slots;
    f->cap = cap;
    return TN_OK;
}

int tn_fence_mem_advance(struct tn_fence_mem *f, const char *resource,
                         size_t len, uint64_t token, uint64_t *hwm_before_out)
{
    if (resource == NULL || len == 0 || token > TN_FENCE_TOKEN_MAX)
        return TN_EINVAL;
    struct slot *s = find(f->slots, f->cap, resource, len);
    if (s->name != NULL) {
        if (hwm_before_out != NULL)
            *hwm_before_out = s->hwm;
        if (token < s->hwm)
            return TN_ESTALE;
        s->hwm = token;
        return TN_OK;
    }
    if (f->count >= f->max_resources)
        return TN_ETOOBIG;
    if (2 * (f->count + 1) > f->cap) {
        int rc = grow(f);
        if (rc < 0)
            return rc;
        s = find(f->slots, f->cap, resource, len);
    }
    s->name = tn_strndup(resource, len);
    if (s->name == NULL)
        return TN_ENOMEM;
    s->len = len;
    s->hwm = token;
    f->count++;
    if (hwm_before_out != NULL)
        *hwm_before_out = 0;
    return TN_OK;
}

int tn_fence_mem_get(const struct tn_fence_mem *f, const char *resource,
                     size_t len, uint64_t *hwm_out)
{
    const struct slot *s = find(f->slots, f->cap, resource, len);
    if (s->name == NULL)
        return TN_ENOTFOUND;
    *hwm_out = s->hwm;
    return TN_OK;
}

size_t tn_fence_mem_count(const struct tn_fence_mem *f)
{
    return f->count;
}

/* The backend of tn_fence_advance: conn is a struct tn_fence_mem *. */
static int ops_get(void *conn, const char *resource, size_t len, bool lock,
                   uint64_t *hwm_out, struct tn_errmsg *em)
{
    (void)lock;
    (void)em;
    int rc = tn_fence_mem_get(conn, resource, len, hwm_out);
    if (rc == TN_ENOTFOUND) {
        *hwm_out = 0;
        rc = TN_OK;
    }
    return rc;
}

static int ops_raise(void *conn, const char *resource, size_t len,
                     uint64_t token, struct tn_errmsg *em)
{
    int rc = tn_fence_mem_advance(conn, resource, len, token, NULL);
    if (rc == TN_ETOOBIG)
        tn_errmsg_set(em, "in-memory fence full (%zu resources)",
                      tn_fence_mem_count(conn));
    return rc;
}

const struct tn_fence_ops tn_fence_mem_ops = {
    .name = "mem",
    .in_txn = NULL,
    .get = ops_get,
    .raise = ops_raise,
};
