/* SPDX-License-Identifier: MIT */
/* The in-memory fence for stream processors: a map (common/map) of
 * resource -> mark with a hard cap on resources.  The mark never moves
 * down.  Not thread-safe: one filter per processing thread. */
#include <stddef.h>
#include <string.h>

#include <tenure/fence_mem.h>

#include "common/alloc.h"
#include "common/map.h"

struct resource {
    void *next;    /* map link */
    uint32_t hash; /* map hash of name */
    uint64_t hwm;  /* the mark */
    size_t len;    /* bytes of name */
    char name[];   /* not NUL-terminated */
};

static bool name_eq(const void *entry, const void *key, size_t len)
{
    const struct resource *r = entry;
    return r->len == len && memcmp(r->name, key, len) == 0;
}

static const struct tn_map_type resource_map = {
    .link_off = offsetof(struct resource, next),
    .hash_off = offsetof(struct resource, hash),
    .eq = name_eq,
};

struct tn_fence_mem {
    struct tn_map map;    /* struct resource by name */
    size_t max_resources; /* hard cap on map.count */
};

struct tn_fence_mem *tn_fence_mem_new(size_t max_resources)
{
    struct tn_fence_mem *f = tn_calloc(1, sizeof(*f));
    if (f == NULL)
        return NULL;
    if (tn_map_init(&f->map, &resource_map, 0) < 0) {
        tn_free(f);
        return NULL;
    }
    f->max_resources = max_resources;
    return f;
}

static bool free_one(void *entry, void *ctx)
{
    (void)ctx;
    tn_free(entry);
    return true;
}

void tn_fence_mem_free(struct tn_fence_mem *f)
{
    if (f == NULL)
        return;
    tn_map_each(&f->map, free_one, NULL);
    tn_map_release(&f->map);
    tn_free(f);
}

static struct resource *find(const struct tn_fence_mem *f, uint32_t h,
                             const char *name, size_t len)
{
    return tn_map_find(&f->map, h, name, len);
}

int tn_fence_mem_advance(struct tn_fence_mem *f, const char *resource,
                         size_t len, uint64_t token, uint64_t *hwm_before_out)
{
    if (resource == NULL || len == 0 || token > TN_FENCE_TOKEN_MAX)
        return TN_EINVAL;
    /* keyed hash: resource names come from records */
    uint32_t h = tn_map_hash(resource, len);
    struct resource *r = find(f, h, resource, len);
    if (r != NULL) {
        if (hwm_before_out != NULL)
            *hwm_before_out = r->hwm;
        if (token < r->hwm)
            return TN_ESTALE;
        r->hwm = token;
        return TN_OK;
    }
    if (f->map.count >= f->max_resources)
        return TN_ETOOBIG;
    r = tn_malloc(offsetof(struct resource, name) + len);
    if (r == NULL)
        return TN_ENOMEM;
    r->hash = h;
    r->hwm = token;
    r->len = len;
    memcpy(r->name, resource, len);
    tn_map_insert(&f->map, r);
    if (hwm_before_out != NULL)
        *hwm_before_out = 0;
    return TN_OK;
}

int tn_fence_mem_get(const struct tn_fence_mem *f, const char *resource,
                     size_t len, uint64_t *hwm_out)
{
    const struct resource *r =
        find(f, tn_map_hash(resource, len), resource, len);
    if (r == NULL)
        return TN_ENOTFOUND;
    *hwm_out = r->hwm;
    return TN_OK;
}

size_t tn_fence_mem_count(const struct tn_fence_mem *f)
{
    return f->map.count;
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
