/* SPDX-License-Identifier: MIT */
/* The in-memory fence for stream processors (libtenure): resource -> mark
 * with a hard cap on resources.  Not thread-safe: one filter per
 * processing thread. */
#ifndef TENURE_FENCE_MEM_H
#define TENURE_FENCE_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/fence.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tn_fence_mem;

/* The backend for tn_fence_advance / tn_fence_get: conn is a struct
 * tn_fence_mem *. */
extern TN_EXTERN const struct tn_fence_ops tn_fence_mem_ops;

/* A filter holding at most max_resources marks; NULL on out of memory. */
TN_EXTERN struct tn_fence_mem *tn_fence_mem_new(size_t max_resources);
TN_EXTERN void tn_fence_mem_free(struct tn_fence_mem *f);
/* As tn_fence_advance (no transaction); TN_ETOOBIG when a new resource would
 * pass max_resources, TN_ENOMEM. */
TN_EXTERN int tn_fence_mem_advance(struct tn_fence_mem *f, const char *resource,
                                   size_t len, uint64_t token,
                                   uint64_t *hwm_before_out);
/* Mark of resource into *hwm_out: 0 or TN_ENOTFOUND. */
TN_EXTERN int tn_fence_mem_get(const struct tn_fence_mem *f,
                               const char *resource, size_t len,
                               uint64_t *hwm_out);
/* Number of resources tracked. */
TN_EXTERN size_t tn_fence_mem_count(const struct tn_fence_mem *f);

#ifdef __cplusplus
}
#endif
#endif
