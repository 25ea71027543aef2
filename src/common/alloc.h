/* SPDX-License-Identifier: MIT */
/* All heap memory of tenure goes through here: overflow-checked sizes and a
 * "fail the Nth allocation" switch for torture tests.  Returns NULL only on
 * out of memory (real or injected).  Thread-safe. */
#ifndef TN_COMMON_ALLOC_H
#define TN_COMMON_ALLOC_H

#include <stddef.h>

void *tn_malloc(size_t n);
void *tn_calloc(size_t count, size_t size);
void *tn_realloc(void *p, size_t n);
/* realloc of count * size with overflow check. */
void *tn_reallocarray(void *p, size_t count, size_t size);
void tn_free(void *p);
/* Fault in the whole pages of p[0..n) (memory about to be filled at once,
 * as by a load) in one system call, instead of one page fault per page.
 * Best effort: the contents do not change, a page it skips faults later. */
void tn_populate(void *p, size_t n);
/* Copy of s[0..len) plus a NUL; NULL on out of memory. */
char *tn_strndup(const char *s, size_t len);
char *tn_strdup(const char *s);

/* Make allocation number n (1-based, counted from this call) fail; 0 turns
 * injection off.  For tests. */
void tn_alloc_fail_at(unsigned long n);

#endif
