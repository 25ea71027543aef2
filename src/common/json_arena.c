/* SPDX-License-Identifier: MIT */
/* The decode arena: see json_arena.h. */
#include "json_arena.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#    define TN_ARENA_ASAN 1
#elif defined(__has_feature)
#    if __has_feature(address_sanitizer)
#        define TN_ARENA_ASAN 1
#    endif
#endif
#ifdef TN_ARENA_ASAN
#    include <sanitizer/asan_interface.h>
#    define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#    define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#    define POISON(p, n) ((void)(p), (void)(n))
#    define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define ARENA_BYTES 16384 /* an acquire body takes about 700 */
#define ARENA_ALIGN 16

static _Alignas(ARENA_ALIGN) unsigned char arena[ARENA_BYTES];
static size_t used; /* bytes handed out since the arena was last empty */
static size_t live; /* blocks handed out and not yet freed */
static _Thread_local bool on;

static void *arena_malloc(size_t n)
{
    size_t need = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (!on || need == 0 || need > ARENA_BYTES - used)
        return malloc(n);
    void *p = arena + used;
    used += need;
    live++;
    UNPOISON(p, n);
    return p;
}

static void arena_free(void *p)
{
    if (!tn_json_arena_owns(p)) {
        free(p);
        return;
    }
    if (--live == 0) {
        POISON(arena, used);
        used = 0; /* its last block is gone: all of it is free again */
    }
}

void tn_json_arena_install(void)
{
    POISON(arena, sizeof(arena));
    json_set_alloc_funcs(arena_malloc, arena_free);
}

void tn_json_arena_begin(void)
{
    on = true;
}

void tn_json_arena_end(void)
{
    on = false;
}

bool tn_json_arena_owns(const void *p)
{
    return (uintptr_t)p - (uintptr_t)arena < ARENA_BYTES;
}

size_t tn_json_arena_live(void)
{
    return live;
}
