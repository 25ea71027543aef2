/* SPDX-License-Identifier: MIT */
/* Strict JSON glue. */
#include "json.h"

#include <string.h>

#include "alloc.h"

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

static int fail_type(const char *key, const char *want, struct tn_errmsg *em)
{
    tn_errmsg_set(em, "field \"%s\" must be %s", key, want);
    return TN_EINVAL;
}

static int check_int(const char *key, int64_t v, int64_t min, int64_t max,
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
        return fail_type(key, "a string", em);
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
        return fail_type(key, "an integer", em);
    return check_int(key, (int64_t)json_integer_value(v), min, max, out, em);
}

int tn_json_get_bool(json_t *obj, const char *key, bool *out,
                     struct tn_errmsg *em)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return TN_ENOTFOUND;
    if (!json_is_boolean(v))
        return fail_type(key, "a boolean", em);
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
