/* SPDX-License-Identifier: MIT */
/* Fuzz target for request bodies: tn_decode_json (yajl's events and the
 * checks around them) against jansson's strict parser as the reference.
 * The first byte picks the options (empty body allowed or not); the rest is
 * the body.  Checked: the decoder accepts a body exactly when strict
 * jansson reads it as one object (save for the documented differences
 * below); what it keeps is the object's top level, field for
 * field; the typed getters return 0, TN_ENOTFOUND or TN_EINVAL. */
#include <jansson.h>
#include <string.h>

#include "api/decode.h"
#include "common/assert.h"
#include "fuzz.h"

static const char *const keys[] = {
    "name", "owner_id", "ttl_ms", "token", "lease_secret", "wait_ms", "a", ""};

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
        rc = tn_decode_name(b, keys[i], 64, true, &s, msg, sizeof(msg));
        TN_ASSERT(rc == 0 || rc == TN_EINVAL);
        rc = tn_decode_int(b, keys[i], 1, 3600000, true, &n, msg, sizeof(msg));
        TN_ASSERT(rc == 0 || rc == TN_EINVAL);
        if (rc == 0)
            TN_ASSERT(n >= 1 && n <= 3600000);
    }
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
    int rc = tn_decode_json(body, len, allow_empty, &b, msg, sizeof(msg));
    TN_ASSERT(rc == 0 || rc == TN_EINVAL);
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
    json_decref(ref);
    tn_decode_done(&b);
    return 0;
}
