/* SPDX-License-Identifier: MIT */
/* Binary heap over an array of fixed-size elements; see heap.h.  Sifts
 * move a hole rather than swapping, so each element is copied once per
 * level and `moved` is told once per move. */
#include "heap.h"

#include <string.h>

#include <tenure/err.h>

#include "alloc.h"
#include "assert.h"

static void init(struct tn_heap *h, size_t size,
                 bool (*before)(const void *a, const void *b))
{
    TN_ASSERT(size > 0 && size <= TN_HEAP_MAX_ELEM);
    memset(h, 0, sizeof(*h));
    h->size = size;
    h->before = before;
}

void tn_heap_init(struct tn_heap *h, size_t size,
                  bool (*before)(const void *a, const void *b),
                  void (*moved)(void *elem, size_t i))
{
    init(h, size, before);
    h->moved = moved;
}

void tn_heap_init_fixed(struct tn_heap *h, void *storage, size_t cap,
                        size_t size,
                        bool (*before)(const void *a, const void *b))
{
    init(h, size, before);
    h->v = storage;
    h->cap = cap;
    h->fixed = true;
}

void tn_heap_release(struct tn_heap *h)
{
    if (!h->fixed) {
        tn_free(h->v);
        h->v = NULL;
        h->cap = 0;
    }
    h->n = 0;
}

void tn_heap_clear(struct tn_heap *h)
{
    h->n = 0;
}

size_t tn_heap_count(const struct tn_heap *h)
{
    return h->n;
}

void *tn_heap_at(const struct tn_heap *h, size_t i)
{
    TN_ASSERT(i < h->n);
    return h->v + i * h->size;
}

void *tn_heap_top(const struct tn_heap *h)
{
    return h->n > 0 ? h->v : NULL;
}

/* Copy elem to slot i and tell the owner. */
static void put(struct tn_heap *h, size_t i, const void *elem)
{
    void *slot = h->v + i * h->size;
    memcpy(slot, elem, h->size);
    if (h->moved != NULL)
        h->moved(slot, i);
}

/* Place elem at hole i or above it. */
static void sift_up(struct tn_heap *h, size_t i, const void *elem)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        const void *p = h->v + parent * h->size;
        if (!h->before(elem, p))
            break;
        put(h, i, p);
        i = parent;
    }
    put(h, i, elem);
}

/* Place elem at hole i or below it. */
static void sift_down(struct tn_heap *h, size_t i, const void *elem)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        const void *best = h->v + c * h->size;
        if (c + 1 < h->n && h->before(h->v + (c + 1) * h->size, best)) {
            c++;
            best = h->v + c * h->size;
        }
        if (!h->before(best, elem))
            break;
        put(h, i, best);
        i = c;
    }
    put(h, i, elem);
}

int tn_heap_reserve(struct tn_heap *h, size_t n)
{
    if (n <= h->cap)
        return TN_OK;
    if (h->fixed)
        return TN_ETOOBIG;
    unsigned char *v = tn_reallocarray(h->v, n, h->size);
    if (v == NULL)
        return TN_ENOMEM;
    h->v = v;
    h->cap = n;
    return TN_OK;
}

static int grow(struct tn_heap *h)
{
    return tn_heap_reserve(h, h->cap != 0 ? h->cap * 2 : 16);
}

int tn_heap_push(struct tn_heap *h, const void *elem)
{
    if (h->n == h->cap) {
        int rc = grow(h);
        if (rc < 0)
            return rc;
    }
    sift_up(h, h->n++, elem);
    return TN_OK;
}

void tn_heap_remove(struct tn_heap *h, size_t i, void *out)
{
    TN_ASSERT(i < h->n);
    if (out != NULL)
        memcpy(out, h->v + i * h->size, h->size);
    if (i == --h->n)
        return;
    unsigned char last[TN_HEAP_MAX_ELEM];
    memcpy(last, h->v + h->n * h->size, h->size);
    /* The last element fills the hole: it may belong above it or below. */
    if (i > 0 && h->before(last, h->v + (i - 1) / 2 * h->size))
        sift_up(h, i, last);
    else
        sift_down(h, i, last);
}

void tn_heap_pop(struct tn_heap *h, void *out)
{
    tn_heap_remove(h, 0, out);
}

void tn_heap_replace_top(struct tn_heap *h, const void *elem)
{
    TN_ASSERT(h->n > 0);
    unsigned char e[TN_HEAP_MAX_ELEM];
    memcpy(e, elem, h->size);
    sift_down(h, 0, e);
}

bool tn_heap_keep(struct tn_heap *h, const void *elem)
{
    if (tn_heap_push(h, elem) == TN_OK)
        return false;
    const void *top = tn_heap_top(h);
    if (top != NULL && h->before(top, elem))
        tn_heap_replace_top(h, elem);
    return true;
}
