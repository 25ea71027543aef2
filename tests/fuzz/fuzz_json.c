/* SPDX-License-Identifier: MIT */
/* Fuzz target for request bodies: tn_json_parse_object and the typed
 * field getters the API uses on every body.
 * The first byte picks the options (empty body allowed or not); the rest is
 * the body.  Checked: a parsed body is an object that strict jansson also
 * accepts; each getter returns 0, TN_ENOTFOUND or TN_EINVAL, and what it
 * returns is what the object holds (strings with their length, integers
 * within the bounds asked). */
#include <jansson.h>
#include <string.h>

#include "common/assert.h"
#include "common/json.h"
#include "fuzz.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bool allow_empty = false;
    const char *body = NULL;
    size_t len = 0;
    if (!tn_fuzz_body_input(data, size, &allow_empty, &body, &len))
        return 0;
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
