/* SPDX-License-Identifier: MIT */
/* Fuzz target for request bodies: tn_json_parse_object, the flat-body
 * subset decoder and the typed field getters the API uses on every body.
 * The first byte picks the options (empty body allowed or not); the rest is
 * the body.  Checked: a parsed body is an object that strict jansson also
 * accepts; each getter returns 0, TN_ENOTFOUND or TN_EINVAL, and what it
 * returns is what the object holds (strings with their length, integers
 * within the bounds asked).  Differentially: whenever the flat decoder takes
 * a body, jansson accepts the same bytes as an object with the same members
 * and values, and every getter gives the same rc, value and message on
 * both. */
#include <jansson.h>
#include <string.h>

#include "common/assert.h"
#include "common/json.h"
#include "common/json_flat.h"
#include "fuzz.h"
#include "json_flat_same.h"

static const char *const keys[] = {"name",       "owner_id",      "ttl_ms",
                                   "token",      "lease_secret",  "wait_ms",
                                   "request_id", "lock_delay_ms", "force"};

static void getters(json_t *obj)
{
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(obj, keys[i]);
        const char *s = NULL;
        size_t len = 0;
        int rc = tn_json_get_str(obj, keys[i], &s, &len, NULL);
        TN_ASSERT(rc == 0 || rc == TN_ENOTFOUND || rc == TN_EINVAL);
        if (rc == 0) {
            TN_ASSERT(json_is_string(v));
            TN_ASSERT(len == json_string_length(v));
            TN_ASSERT(memcmp(s, json_string_value(v), len) == 0);
        }
        if (rc == TN_ENOTFOUND)
            TN_ASSERT(v == NULL || json_is_null(v));
        int64_t n = 0;
        rc = tn_json_get_int(obj, keys[i], 1, 3600000, &n, NULL);
        TN_ASSERT(rc == 0 || rc == TN_ENOTFOUND || rc == TN_EINVAL);
        if (rc == 0) {
            TN_ASSERT(json_is_integer(v) && json_integer_value(v) == n);
            TN_ASSERT(n >= 1 && n <= 3600000);
        }
        rc = tn_json_get_int(obj, keys[i], 0, INT64_MAX, &n, NULL);
        TN_ASSERT(rc == 0 || rc == TN_ENOTFOUND || rc == TN_EINVAL);
        if (rc == 0)
            TN_ASSERT(n >= 0);
        bool b = false;
        rc = tn_json_get_bool(obj, keys[i], &b, NULL);
        TN_ASSERT(rc == 0 || rc == TN_ENOTFOUND || rc == TN_EINVAL);
        if (rc == 0)
            TN_ASSERT(json_is_boolean(v) && json_is_true(v) == b);
    }
}

static const int64_t bounds[][2] = {
    {1, 3600000}, {0, INT64_MAX}, {INT64_MIN, INT64_MAX}, {-5, 5}};

/* The getters on both representations agree on key: rc, value, message. */
static void same_getters(json_t *obj, const struct tn_json_flat *f,
                         const char *key)
{
    struct tn_errmsg e1 = {{0}};
    struct tn_errmsg e2 = {{0}};
    const char *s1 = NULL;
    const char *s2 = NULL;
    size_t l1 = 0;
    size_t l2 = 0;
    TN_ASSERT(tn_json_get_str(obj, key, &s1, &l1, &e1) ==
              tn_json_flat_get_str(f, key, &s2, &l2, &e2));
    TN_ASSERT(strcmp(e1.text, e2.text) == 0);
    TN_ASSERT(l1 == l2 && (s1 == NULL) == (s2 == NULL));
    TN_ASSERT(s1 == NULL || memcmp(s1, s2, l1 + 1) == 0);
    for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
        int64_t n1 = 7;
        int64_t n2 = 7;
        e1.text[0] = e2.text[0] = '\0';
        TN_ASSERT(
            tn_json_get_int(obj, key, bounds[i][0], bounds[i][1], &n1, &e1) ==
            tn_json_flat_get_int(f, key, bounds[i][0], bounds[i][1], &n2, &e2));
        TN_ASSERT(strcmp(e1.text, e2.text) == 0 && n1 == n2);
    }
    bool b1 = false;
    bool b2 = false;
    e1.text[0] = e2.text[0] = '\0';
    TN_ASSERT(tn_json_get_bool(obj, key, &b1, &e1) ==
              tn_json_flat_get_bool(f, key, &b2, &e2));
    TN_ASSERT(strcmp(e1.text, e2.text) == 0 && b1 == b2);
}

/* When the flat decoder takes the body, strict jansson must take it too
 * and agree on every member and every getter. */
static void differential(const char *body, size_t len)
{
    static struct tn_json_flat f;
    int rc = tn_json_flat_parse(body, len, &f);
    TN_ASSERT(rc == TN_OK || rc == TN_EPROTO);
    if (rc != TN_OK)
        return;
    TN_ASSERT(len > 0 && f.n <= TN_JSON_FLAT_MAX);
    json_t *obj = NULL;
    struct tn_errmsg em;
    TN_ASSERT(tn_json_parse_object(body, len, false, &obj, &em) == 0);
    TN_ASSERT(tn_json_flat_differs(obj, &f) == NULL);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        same_getters(obj, &f, keys[i]);
    for (size_t i = 0; i < f.n; i++)
        same_getters(obj, &f, f.m[i].key);
    json_decref(obj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    bool allow_empty = (data[0] & 1) != 0;
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    differential(body, len);
    json_t *obj = NULL;
    struct tn_errmsg em;
    int rc = tn_json_parse_object(body, len, allow_empty, &obj, &em);
    TN_ASSERT(rc == 0 || rc == TN_EINVAL);
    if (rc != 0) {
        TN_ASSERT(obj == NULL);
        return 0;
    }
    TN_ASSERT(json_is_object(obj));
    if (len > 0) {
        json_t *ref = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
        TN_ASSERT(ref != NULL && json_is_object(ref));
        TN_ASSERT(json_equal(ref, obj));
        json_decref(ref);
    }
    getters(obj);
    json_decref(obj);
    return 0;
}
