/* SPDX-License-Identifier: MIT */
/* The one binary heap of tenure: an array of fixed-size elements (values,
 * copied in and out), ordered by a caller's `before` (the element that
 * goes nearer the top: a min-heap or a max-heap alike).  The array either
 * grows on the heap (tn_heap_init) or is caller storage of a fixed
 * capacity (tn_heap_init_fixed).  An optional `moved` callback is told
 * each element's new index, so that an element can be removed from the
 * middle in O(log n) (timers).  Not thread-safe. */
#ifndef TN_COMMON_HEAP_H
#define TN_COMMON_HEAP_H

#include <stdbool.h>
#include <stddef.h>

/* Largest element, in bytes (the sift keeps one on its stack). */
#define TN_HEAP_MAX_ELEM ((size_t)64)

struct tn_heap {
    unsigned char *v; /* n elements of `size` bytes */
    size_t n;         /* elements in use */
    size_t cap;       /* elements v holds */
    size_t size;      /* bytes per element, 1..TN_HEAP_MAX_ELEM */
    bool fixed;       /* v is caller storage: never grown, never freed */
    /* True if a must be nearer the top than b. */
    bool (*before)(const void *a, const void *b);
    /* Optional: the element at v[i] has just been put there. */
    void (*moved)(void *elem, size_t i);
};

/* An empty heap that grows as needed. */
void tn_heap_init(struct tn_heap *h, size_t size,
                  bool (*before)(const void *a, const void *b),
                  void (*moved)(void *elem, size_t i));
/* An empty heap in storage (cap elements of size bytes; borrowed). */
void tn_heap_init_fixed(struct tn_heap *h, void *storage, size_t cap,
                        size_t size,
                        bool (*before)(const void *a, const void *b));
/* Frees a growing heap's array; leaves h empty and reusable. */
void tn_heap_release(struct tn_heap *h);

/* Make room for n elements in a growing heap.  0 or TN_ENOMEM. */
int tn_heap_reserve(struct tn_heap *h, size_t n);
/* Copy elem in.  0, TN_ENOMEM, or TN_ETOOBIG (a fixed heap is full). */
int tn_heap_push(struct tn_heap *h, const void *elem);
/* The top element (borrowed until the heap next changes), or NULL. */
void *tn_heap_top(const struct tn_heap *h);
/* Copy the element at index i (0 = top) to out (may be NULL) and take it
 * out.  i < tn_heap_count(h). */
void tn_heap_remove(struct tn_heap *h, size_t i, void *out);
/* Take the top out (into out, may be NULL); the heap must not be empty. */
void tn_heap_pop(struct tn_heap *h, void *out);
/* Put elem in place of the top (a bounded heap keeping the best n). */
void tn_heap_replace_top(struct tn_heap *h, const void *elem);
/* Offer elem to a fixed heap that keeps the best of what it is offered,
 * the worst of those on top (`before(a, b)`: a is worse than b): elem
 * goes in while there is room, then only in place of a worse top.  True
 * if something was left out (elem, or the top it replaced). */
bool tn_heap_keep(struct tn_heap *h, const void *elem);
/* Forget every element (keeps the array). */
void tn_heap_clear(struct tn_heap *h);

size_t tn_heap_count(const struct tn_heap *h);
/* The element at index i < count (heap order, not sorted). */
void *tn_heap_at(const struct tn_heap *h, size_t i);

#endif
