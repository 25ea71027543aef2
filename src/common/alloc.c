/* SPDX-License-Identifier: MIT */
/* The allocator wrapper: overflow checks and fault injection, nothing else. */
#include "alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static atomic_ulong fail_countdown; /* 0 = off; else fail when it hits 1 */

void tn_alloc_fail_at(unsigned long n)
{
    atomic_store(&fail_countdown, n);
}

static int injected_failure(void)
{
    unsigned long c = atomic_load(&fail_countdown);
    while (c != 0) {
        if (atomic_compare_exchange_weak(&fail_countdown, &c, c - 1))
            return c == 1;
    }
    return 0;
}

void *tn_malloc(size_t n)
{
    if (injected_failure())
        return NULL;
    return malloc(n == 0 ? 1 : n);
}

void *tn_calloc(size_t count, size_t size)
{
    if (injected_failure())
        return NULL;
    return calloc(count == 0 ? 1 : count, size == 0 ? 1 : size);
}

void *tn_realloc(void *p, size_t n)
{
    if (injected_failure())
        return NULL;
    return realloc(p, n == 0 ? 1 : n);
}

void *tn_reallocarray(void *p, size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size)
        return NULL;
    return tn_realloc(p, count * size);
}

void tn_free(void *p)
{
    free(p);
}

void tn_populate(void *p, size_t n)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t to = ((uintptr_t)p + n) & ~(page - 1);
    if (to > from)
        (void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
}

char *tn_strndup(const char *s, size_t len)
{
    if (len == SIZE_MAX)
        return NULL;
    char *d = tn_malloc(len + 1);
    if (d == NULL)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

char *tn_strdup(const char *s)
{
    return tn_strndup(s, strlen(s));
}
