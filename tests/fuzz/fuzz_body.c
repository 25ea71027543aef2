/* SPDX-License-Identifier: MIT */
/* Fuzz target for request bodies: tn_decode_json (yajl's events and the
 * checks around them) against jansson's strict parser as the reference.
 * The first byte picks the options: bit 0, empty body allowed or not;
 * bit 1, the batch routes' decode (tn_decode_json_items), whose item cap
 * and batch size come from bits 2-7; the rest is the body.  Checked: the
 * decoder accepts a body exactly when strict jansson reads it as one
 * object (save for the documented differences below); what it keeps is
 * the object's top level, field for field, and with items what each
 * top-level array holds, element for element and member for member, never
 * more than the cap; the typed getters return 0, TN_ENOTFOUND or
 * TN_EINVAL, and the batch getters give exactly the reference's names, all
 * valid and distinct, or TN_EINVAL. */
#include <jansson.h>
#include <string.h>

#include "api/decode.h"
#include "common/alloc.h"
#include "common/assert.h"
#include "common/name.h"
#include "fuzz.h"

static const char *const keys[] = {
    "name", "owner_id", "ttl_ms", "token",  "lease_secret",   "wait_ms",
    "a",    "",         "names",  "leases", "session_secret", "session_id"};

static enum tn_body_type type_of(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return TN_BODY_OBJECT;
    case JSON_ARRAY:
        return TN_BODY_ARRAY;
    case JSON_STRING:
        return TN_BODY_STRING;
    case JSON_INTEGER:
        return TN_BODY_INT;
    case JSON_REAL:
        return TN_BODY_REAL;
    case JSON_TRUE:
    case JSON_FALSE:
        return TN_BODY_BOOL;
    case JSON_NULL:
        break;
    }
    return TN_BODY_NULL;
}

/* Every field b kept is the reference's, and there are as many. */
static void same_fields(const struct tn_body *b, json_t *ref)
{
    TN_ASSERT(b->n == json_object_size(ref));
    for (size_t i = 0; i < b->n; i++) {
        const struct tn_body_field *f = &b->fields[i];
        TN_ASSERT(strlen(f->key) == f->key_len);
        json_t *v = json_object_getn(ref, f->key, f->key_len);
        TN_ASSERT(v != NULL && type_of(v) == f->type);
        TN_ASSERT(tn_decode_field(b, f->key) == f);
        if (f->type == TN_BODY_STRING)
            TN_ASSERT(f->str_len == json_string_length(v) &&
                      memcmp(f->str, json_string_value(v), f->str_len) == 0);
        if (f->type == TN_BODY_INT)
            TN_ASSERT(f->num == json_integer_value(v));
        if (f->type == TN_BODY_BOOL)
            TN_ASSERT(f->num == json_is_true(v));
    }
}

static void getters(const struct tn_body *b)
{
    char msg[200];
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const char *s = NULL;
        size_t len = 0;
        int64_t n = 0;
        int rc = tn_decode_str(b, keys[i], &s, &len, msg, sizeof(msg));
        TN_ASSERT(rc == 0 || rc == TN_ENOTFOUND || rc == TN_EINVAL);
        rc = tn_decode_name(b, keys[i], 64, true, &s, NULL, msg, sizeof(msg));
        TN_ASSERT(rc == 0 || rc == TN_EINVAL);
        rc = tn_decode_int(b, keys[i], 1, 3600000, true, &n, msg, sizeof(msg));
        TN_ASSERT(rc == 0 || rc == TN_EINVAL);
        if (rc == 0)
            TN_ASSERT(n >= 1 && n <= 3600000);
    }
}

/* One item against the reference's element or member v. */
static void same_value(const struct tn_body_item *it, json_t *v)
{
    TN_ASSERT(v != NULL && type_of(v) == it->type);
    if (it->type == TN_BODY_STRING)
        TN_ASSERT(it->str_len == json_string_length(v) &&
                  strlen(it->str) == it->str_len &&
                  memcmp(it->str, json_string_value(v), it->str_len) == 0);
    if (it->type == TN_BODY_INT && !it->out_of_range)
        TN_ASSERT(it->num == json_integer_value(v));
}

/* The items of array field f are the reference array's elements, each
 * followed by its members when it is an object, all of them unless cut. */
static void same_items(const struct tn_body *b, const struct tn_body_field *f,
                       json_t *arr)
{
    TN_ASSERT(f->n_elems == json_array_size(arr));
    TN_ASSERT(f->item0 + f->n_items <= b->n_items);
    if (b->max_items == 0) { /* nothing kept: all cut */
        TN_ASSERT(f->n_items == 0 && b->items == NULL);
        TN_ASSERT(f->n_elems == 0 || f->items_cut);
        return;
    }
    size_t next = 0, members = 0;
    for (size_t i = 0; i < f->n_items; i++) {
        const struct tn_body_item *it = &b->items[f->item0 + i];
        if (it->key == NULL) {
            json_t *prev = next > 0 ? json_array_get(arr, next - 1) : NULL;
            TN_ASSERT(prev == NULL || !json_is_object(prev) ||
                      members == json_object_size(prev));
            TN_ASSERT(it->elem == next++);
            same_value(it, json_array_get(arr, it->elem));
            members = 0;
            continue;
        }
        json_t *e = json_array_get(arr, it->elem);
        TN_ASSERT(next > 0 && it->elem == next - 1 && json_is_object(e));
        TN_ASSERT(strlen(it->key) == it->key_len);
        same_value(it, json_object_getn(e, it->key, it->key_len));
        members++;
    }
    if (!f->items_cut)
        TN_ASSERT(next == f->n_elems);
}

static bool valid_name(const char *s, size_t len)
{
    return tn_name_is_valid(s, len, TN_NAME_MAX_BYTES);
}

/* "names": 0 only with every element a valid name and none twice, and,
 * when the reference could read the body (ref), exactly its array; else
 * TN_EINVAL. */
static void names_check(const struct tn_body *b, json_t *ref, size_t max)
{
    char msg[200];
    struct tn_name_ref *names = NULL;
    size_t n = 0;
    int rc = tn_decode_names(b, "names", max, &names, &n, msg, sizeof(msg));
    TN_ASSERT(rc == 0 || rc == TN_EINVAL);
    json_t *arr = json_object_get(ref, "names");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        TN_ASSERT(n >= 1 && n <= max &&
                  valid_name(names[i].name, names[i].len));
        for (size_t j = 0; j < i; j++)
            TN_ASSERT(names[j].len != names[i].len ||
                      memcmp(names[j].name, names[i].name, names[i].len) != 0);
        if (ref == NULL)
            continue;
        json_t *v = json_array_get(arr, i);
        TN_ASSERT(n == json_array_size(arr) && json_is_string(v));
        TN_ASSERT(names[i].len == json_string_length(v) &&
                  memcmp(names[i].name, json_string_value(v), names[i].len) ==
                      0);
    }
    tn_free(names);
}

/* "leases": as names_check, each a valid name with a token in
 * 1..2^53-1. */
static void leases_check(const struct tn_body *b, json_t *ref, size_t max)
{
    char msg[200];
    struct tn_name_token *leases = NULL;
    size_t n = 0;
    int rc =
        tn_decode_name_tokens(b, "leases", max, &leases, &n, msg, sizeof(msg));
    TN_ASSERT(rc == 0 || rc == TN_EINVAL);
    json_t *arr = json_object_get(ref, "leases");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        TN_ASSERT(n >= 1 && n <= max &&
                  valid_name(leases[i].name, leases[i].len));
        TN_ASSERT(leases[i].token >= 1 && leases[i].token < (1ull << 53));
        for (size_t j = 0; j < i; j++)
            TN_ASSERT(leases[j].len != leases[i].len ||
                      memcmp(leases[j].name, leases[i].name, leases[i].len));
        if (ref == NULL)
            continue;
        json_t *e = json_array_get(arr, i);
        TN_ASSERT(n == json_array_size(arr) && json_is_object(e));
        json_t *tok = json_object_get(e, "token");
        TN_ASSERT(json_is_integer(tok) &&
                  (uint64_t)json_integer_value(tok) == leases[i].token);
    }
    tn_free(leases);
}

/* Items mode: the cap kept, every array field against the reference
 * (when it could read the body: ref), and the batch getters. */
static void check_items(const struct tn_body *b, json_t *ref, size_t max)
{
    TN_ASSERT(b->n_items <= b->max_items && b->cap_items <= b->max_items);
    for (size_t i = 0; ref != NULL && i < b->n; i++) {
        const struct tn_body_field *f = &b->fields[i];
        if (f->type == TN_BODY_ARRAY)
            same_items(b, f, json_object_getn(ref, f->key, f->key_len));
    }
    names_check(b, ref, max);
    leases_check(b, ref, max);
}

/* The decode the first byte picks: 0, TN_EINVAL (or TN_ENOMEM). */
static int decode(uint8_t opts, const char *body, size_t len, bool allow_empty,
                  struct tn_body *b, char *msg, size_t msglen)
{
    if ((opts & 2) == 0)
        return tn_decode_json(body, len, allow_empty, b, msg, msglen);
    return tn_decode_json_items(body, len, (size_t)(opts >> 2), b, msg, msglen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bool allow_empty = false;
    const char *body = NULL;
    size_t len = 0;
    if (!tn_fuzz_body_input(data, size, &allow_empty, &body, &len))
        return 0;
    struct tn_body b;
    char msg[200] = "";
    bool items = (data[0] & 2) != 0;
    int rc = decode(data[0], body, len, allow_empty, &b, msg, sizeof(msg));
    TN_ASSERT(rc == 0 || rc == TN_EINVAL);
    if (items)
        allow_empty = false; /* a batch body is never empty */
    TN_ASSERT(rc == 0 || msg[0] != '\0');
    json_error_t err = {0};
    json_t *ref =
        len > 0 ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &err) : NULL;
    bool ref_ok = ref != NULL && json_is_object(ref);
    /* The bodies the decoder reads and jansson refuses: a number past
     * int64 or a double's range, which JSON allows and the API ignores
     * in an unknown field.  jansson stops there, so nothing after it is
     * compared. */
    bool big = !ref_ok && (strstr(err.text, "too big") != NULL ||
                           strstr(err.text, "overflow") != NULL);
    if (rc == 0 && len > 0 && !big) {
        TN_ASSERT(ref_ok);
        same_fields(&b, ref);
    }
    if (rc == 0 && len == 0)
        TN_ASSERT(allow_empty && b.n == 0);
    /* The bodies jansson reads and the decoder refuses: nesting deeper
     * than TN_DECODE_MAX_DEPTH, and a raw NUL byte right after a number
     * (which jansson's lexer steps over; RFC 8259 has no place for it). */
    if (rc != 0 && ref_ok)
        TN_ASSERT(strstr(msg, "nested deeper than") != NULL ||
                  (strstr(msg, "control byte") != NULL &&
                   memchr(body, '\0', len) != NULL));
    if (rc == 0)
        getters(&b);
    if (rc == 0 && items && len > 0)
        check_items(&b, big ? NULL : ref, 1 + ((size_t)data[0] >> 5));
    if (!items || data[0] < 4)
        TN_ASSERT(b.n_items == 0 && b.items == NULL);
    json_decref(ref);
    tn_decode_done(&b);
    return 0;
}
