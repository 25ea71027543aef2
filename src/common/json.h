/* SPDX-License-Identifier: MIT */
/* Strict JSON decoding glue over jansson: one object per body, duplicate
 * keys and trailing garbage rejected, typed field getters that say which
 * field was wrong.  Unknown fields are the caller's to ignore. */
#ifndef TN_COMMON_JSON_H
#define TN_COMMON_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/err.h>

/* Parse buf[0..len) as one JSON object.  An empty body is an empty object
 * when allow_empty.  Returns a new reference in *out, or TN_EINVAL with
 * detail in em. */
int tn_json_parse_object(const char *buf, size_t len, bool allow_empty,
                         json_t **out, struct tn_errmsg *em);

/* Field getters: 0 when present and valid, TN_ENOTFOUND when absent (or
 * null), TN_EINVAL with detail when present but wrong.  Strings are
 * borrowed from obj. */
int tn_json_get_str(json_t *obj, const char *key, const char **out,
                    size_t *len_out, struct tn_errmsg *em);
int tn_json_get_int(json_t *obj, const char *key, int64_t min, int64_t max,
                    int64_t *out, struct tn_errmsg *em);
int tn_json_get_bool(json_t *obj, const char *key, bool *out,
                     struct tn_errmsg *em);

/* The getters' checks, shared with the flat-body decoder (json_flat.h) so
 * that both say exactly the same thing.  tn_json_fail_type sets
 * "field \"key\" must be <want>" in em (may be NULL) and returns TN_EINVAL;
 * want is one of TN_JSON_WANT_*.  tn_json_check_int stores v in *out and
 * returns 0 when min <= v <= max, else sets the bounds message and returns
 * TN_EINVAL. */
#define TN_JSON_WANT_STRING "a string"
#define TN_JSON_WANT_INTEGER "an integer"
#define TN_JSON_WANT_BOOLEAN "a boolean"
int tn_json_fail_type(const char *key, const char *want, struct tn_errmsg *em);
int tn_json_check_int(const char *key, int64_t v, int64_t min, int64_t max,
                      int64_t *out, struct tn_errmsg *em);

/* An arena for the JSON trees one thread parses and drops while it handles
 * a request.  jansson asks for about a dozen small blocks per request body;
 * inside an arena each is a bump of a pointer, and the arena rewinds when
 * its last live block is freed.  Blocks that do not fit come from the heap.
 *
 * tn_json_use_arenas() installs the allocation hooks for the whole process:
 * call it first thing in main(), before any JSON value exists (a library
 * must never call it).  Between tn_json_arena_enter(a) and
 * tn_json_arena_leave(), jansson allocations of the calling thread come
 * from a; every value allocated there must be freed on that same thread.
 * A value that outlives the scope only keeps the arena from rewinding. */
#define TN_JSON_ARENA_BYTES 8192
struct tn_json_arena {
    size_t used; /* bytes handed out since the last rewind */
    size_t live; /* blocks handed out and not yet freed */
    _Alignas(16) unsigned char mem[TN_JSON_ARENA_BYTES];
};
void tn_json_use_arenas(void);
void tn_json_arena_enter(struct tn_json_arena *a);
void tn_json_arena_leave(void);

/* Serialise compactly into a fresh NUL-terminated string (tn_free it);
 * NULL on out of memory. Consumes no reference. */
char *tn_json_dump(const json_t *v, size_t *len_out);

#endif
