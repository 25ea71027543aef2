/* SPDX-License-Identifier: MIT */
/* A bump arena for jansson's allocations while a request body is decoded.
 * A body is a small object decoded and dropped within one loop turn, and
 * jansson makes about fifteen malloc/free pairs of it (lexer buffers,
 * values, keys, the hash table); the arena hands out those blocks from one
 * static region instead and takes it back whole when the last of them is
 * freed, so a region still in use is never reused.
 *
 * tn_json_arena_install() puts the arena's functions under jansson, for
 * the whole process: call it once, before any other thread starts.  Then,
 * on the one thread that decodes bodies, the jansson allocations between
 * tn_json_arena_begin() and tn_json_arena_end() come from the arena (or
 * from malloc once it is full); every other allocation, of any thread, is
 * malloc's as before.  Values made in the arena must be freed on the
 * thread that made them.  Without install, begin and end change nothing. */
#ifndef TN_COMMON_JSON_ARENA_H
#define TN_COMMON_JSON_ARENA_H

#include <stdbool.h>
#include <stddef.h>

void tn_json_arena_install(void);
void tn_json_arena_begin(void);
void tn_json_arena_end(void);

/* For tests: whether p is a block of the arena, and how many of its
 * blocks are live. */
bool tn_json_arena_owns(const void *p);
size_t tn_json_arena_live(void);

#endif
