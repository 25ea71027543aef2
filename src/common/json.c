/* SPDX-License-Identifier: MIT */
/* Strict JSON glue. */
#include "json.h"

#include <string.h>

#include "alloc.h"
#include "assert.h"

/* Every block carries a header naming the arena it came from, or NULL for
 * the heap, so the free hook needs no other lookup.  16 bytes keep the
 * payload aligned for any type jansson stores. */
#define ARENA_HDR 16u

static _Thread_local struct tn_json_arena *tls_arena; /* inside a scope */
static _Thread_local struct tn_json_arena *tls_home;  /* last entered */

static void *arena_malloc(size_t n)
{
    struct tn_json_arena *a = tls_arena;
    unsigned char *p;
    if (a != NULL && n <= TN_JSON_ARENA_BYTES &&
        ARENA_HDR + ((n + 15u) & ~(size_t)15u) <=
            TN_JSON_ARENA_BYTES - a->used) {
        p = a->mem + a->used;
        a->used += ARENA_HDR + ((n + 15u) & ~(size_t)15u);
        a->live++;
    } else {
        if (n > (size_t)-1 - ARENA_HDR)
            return NULL;
        p = tn_malloc(n + ARENA_HDR);
        if (p == NULL)
            return NULL;
        a = NULL;
    }
    memcpy(p, &a, sizeof(a));
    return p + ARENA_HDR;
}

static void arena_free(void *ptr)
{
    if (ptr == NULL)
        return;
    unsigned char *p = (unsigned char *)ptr - ARENA_HDR;
    struct tn_json_arena *a;
    memcpy(&a, p, sizeof(a));
    if (a == NULL) {
        tn_free(p);
        return;
    }
    TN_ASSERT(a == tls_home && a->live > 0);
    if (--a->live == 0)
        a->used = 0;
}

void tn_json_use_arenas(void)
{
    json_set_alloc_funcs(arena_malloc, arena_free);
}

void tn_json_arena_enter(struct tn_json_arena *a)
{
    TN_ASSERT(tls_arena == NULL);
    tls_arena = a;
    tls_home = a;
}

void tn_json_arena_leave(void)
{
    tls_arena = NULL;
}

int tn_json_parse_object(const char *buf, size_t len, bool allow_empty,
                         json_t **out, struct tn_errmsg *em)
{
    *out = NULL;
    if (len == 0 && allow_empty) {
        *out = json_object();
        return *out != NULL ? TN_OK : TN_ENOMEM;
    }
    json_error_t jerr;
    json_t *v = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (v == NULL) {
        tn_errmsg_set(em, "malformed JSON body: %s at line %d column %d",
                      jerr.text, jerr.line, jerr.column);
        return TN_EINVAL;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        tn_errmsg_set(em, "the body must be a JSON object");
        return TN_EINVAL;
    }
    *out = v;
    return TN_OK;
}

int tn_json_fail_type(const char *key, const char *want, struct tn_errmsg *em)
{
    tn_errmsg_set(em, "field \"%s\" must be %s", key, want);
    return TN_EINVAL;
}

int tn_json_check_int(const char *key, int64_t v, int64_t min, int64_t max,
                      int64_t *out, struct tn_errmsg *em)
{
    if (v < min || v > max) {
        tn_errmsg_set(em, "field \"%s\" must be between %lld and %lld", key,
                      (long long)min, (long long)max);
        return TN_EINVAL;
    }
    *out = v;
    return TN_OK;
}

int tn_json_get_str(json_t *obj, const char *key, const char **out,
                    size_t *len_out, struct tn_errmsg *em)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return TN_ENOTFOUND;
    if (!json_is_string(v))
        return tn_json_fail_type(key, TN_JSON_WANT_STRING, em);
    *out = json_string_value(v);
    *len_out = json_string_length(v);
    return TN_OK;
}

int tn_json_get_int(json_t *obj, const char *key, int64_t min, int64_t max,
                    int64_t *out, struct tn_errmsg *em)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return TN_ENOTFOUND;
    if (!json_is_integer(v))
        return tn_json_fail_type(key, TN_JSON_WANT_INTEGER, em);
    return tn_json_check_int(key, (int64_t)json_integer_value(v), min, max, out,
                             em);
}

int tn_json_get_bool(json_t *obj, const char *key, bool *out,
                     struct tn_errmsg *em)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return TN_ENOTFOUND;
    if (!json_is_boolean(v))
        return tn_json_fail_type(key, TN_JSON_WANT_BOOLEAN, em);
    *out = json_is_true(v);
    return TN_OK;
}

char *tn_json_dump(const json_t *v, size_t *len_out)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (s == NULL)
        return NULL;
    size_t n = strlen(s);
    char *copy = tn_strndup(s, n);
    free(s);
    if (len_out != NULL)
        *len_out = n;
    return copy;
}
