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

/* Serialise compactly into a fresh NUL-terminated string (tn_free it);
 * NULL on out of memory. Consumes no reference. */
char *tn_json_dump(const json_t *v, size_t *len_out);

#endif
