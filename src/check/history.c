/* SPDX-License-Identifier: MIT */
/* A history's memory: its growing arrays and its interned strings (each
 * distinct process, name, owner once), which history_read.c fills from
 * the lines.  Nothing here decides what is a violation. */
#include "history.h"

#include <stddef.h>
#include <string.h>

#include "common/alloc.h"
#include "common/map.h"

void tn_history_init(struct tn_history *h)
{
    memset(h, 0, sizeof(*h));
    tn_buf_init(&h->partial, TN_HISTORY_MAX_LINE_BYTES);
}

struct str {
    void *next;    /* map link */
    uint32_t hash; /* map hash of s */
    uint32_t id;   /* its index in strs */
    size_t len;    /* bytes of s */
    char s[];      /* NUL-terminated; strs[id] points here */
};

static bool str_eq(const void *entry, const void *key, size_t len)
{
    const struct str *e = entry;
    return e->len == len && memcmp(e->s, key, len) == 0;
}

static const struct tn_map_type str_map = {
    .link_off = offsetof(struct str, next),
    .hash_off = offsetof(struct str, hash),
    .eq = str_eq,
};

static bool free_str(void *entry, void *ctx)
{
    (void)ctx;
    tn_free(entry);
    return true;
}

void tn_history_release(struct tn_history *h)
{
    tn_map_each(&h->interned, free_str, NULL);
    tn_map_release(&h->interned);
    tn_free(h->strs);
    tn_free(h->pending);
    tn_free(h->ops);
    tn_free(h->sinks);
    tn_buf_release(&h->partial);
    tn_history_init(h);
}

const char *tn_history_str(const struct tn_history *h, uint32_t id)
{
    if (id >= h->n_strs)
        return "";
    return h->strs[id];
}

const char *tn_history_kind_name(unsigned kind)
{
    static const char *const names[] = {
        "acquire",      "renew",         "release",    "check",
        "session_open", "session_renew", "session_end"};
    return kind < TN_HISTORY_N_KINDS ? names[kind] : "?";
}

const char *tn_history_outcome_name(unsigned outcome)
{
    static const char *const names[] = {"pending", "ok", "fail", "info"};
    return outcome < 4 ? names[outcome] : "?";
}

/* ---- string interning (common/map, keyed hash) ---- */

static int add_str(struct tn_history *h, const char *s, size_t len,
                   uint32_t hash, uint32_t *id_out)
{
    if (h->n_strs == h->cap_strs) {
        size_t cap = h->cap_strs == 0 ? 32 : h->cap_strs * 2;
        char **strs = tn_reallocarray(h->strs, cap, sizeof(*strs));
        if (strs == NULL)
            return TN_ENOMEM;
        h->strs = strs;
        h->cap_strs = cap;
    }
    struct str *e = tn_malloc(offsetof(struct str, s) + len + 1);
    if (e == NULL)
        return TN_ENOMEM;
    e->hash = hash;
    e->id = (uint32_t)h->n_strs;
    e->len = len;
    memcpy(e->s, s, len);
    e->s[len] = '\0';
    tn_map_insert(&h->interned, e);
    *id_out = (uint32_t)h->n_strs;
    h->strs[h->n_strs++] = e->s;
    return TN_OK;
}

int tn_history_intern(struct tn_history *h, const char *s, size_t len,
                      uint32_t *id_out)
{
    if (h->n_strs >= UINT32_MAX / 4)
        return TN_ETOOBIG;
    if (h->interned.buckets == NULL &&
        tn_map_init(&h->interned, &str_map, 0) < 0)
        return TN_ENOMEM;
    uint32_t hash = tn_map_hash(s, len);
    const struct str *e = tn_map_find(&h->interned, hash, s, len);
    if (e != NULL) {
        *id_out = e->id;
        return TN_OK;
    }
    return add_str(h, s, len, hash, id_out);
}

/* ---- growing arrays ---- */

int tn_history_grow(void **arr, size_t *cap, size_t used, size_t elem)
{
    if (used < *cap)
        return TN_OK;
    size_t n = *cap == 0 ? 64 : *cap * 2;
    void *p = tn_reallocarray(*arr, n, elem);
    if (p == NULL)
        return TN_ENOMEM;
    *arr = p;
    *cap = n;
    return TN_OK;
}

int tn_history_pending_reserve(struct tn_history *h, uint32_t proc)
{
    if (proc < h->cap_pending)
        return TN_OK;
    size_t n = h->cap_pending == 0 ? 64 : h->cap_pending;
    while (n <= proc)
        n *= 2;
    uint32_t *p = tn_reallocarray(h->pending, n, sizeof(*p));
    if (p == NULL)
        return TN_ENOMEM;
    memset(p + h->cap_pending, 0, (n - h->cap_pending) * sizeof(*p));
    h->pending = p;
    h->cap_pending = n;
    return TN_OK;
}
