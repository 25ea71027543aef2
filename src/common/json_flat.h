/* SPDX-License-Identifier: MIT */
/* A decoder for the flat request bodies the API sees on every call, e.g.
 * {"name":"shard:8841","owner_id":"indexer-17","ttl_ms":10000}, that
 * allocates nothing.  It is a strict subset of jansson (json.h), not a
 * second JSON parser: it recognises only one object of at most
 * TN_JSON_FLAT_MAX members whose values are plain printable-ASCII strings
 * without escapes, integers of at most 18 digits, true, false or null, and
 * without duplicate keys.  Every other input is "not in subset" and goes to
 * tn_json_parse_object, which accepts it or says what is wrong.  Whatever
 * the subset accepts, jansson accepts too, with the same values. */
#ifndef TN_COMMON_JSON_FLAT_H
#define TN_COMMON_JSON_FLAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/err.h>

#define TN_JSON_FLAT_MAX 8
#define TN_JSON_FLAT_BYTES (4096 + 16)

enum tn_json_flat_type {
    TN_JSON_FLAT_STRING,
    TN_JSON_FLAT_INTEGER,
    TN_JSON_FLAT_TRUE,
    TN_JSON_FLAT_FALSE,
    TN_JSON_FLAT_NULL,
};

struct tn_json_flat_member {
    const char *key;             /* NUL-terminated, inside bytes */
    size_t key_len;              /* bytes of key before its NUL */
    enum tn_json_flat_type type; /* which of str / num holds the value */
    const char *str;             /* TN_JSON_FLAT_STRING: inside bytes */
    size_t str_len;              /* bytes of str before its NUL */
    int64_t num;                 /* TN_JSON_FLAT_INTEGER: |num| < 10^18 */
};

struct tn_json_flat {
    size_t n;                                       /* members, 0..MAX */
    struct tn_json_flat_member m[TN_JSON_FLAT_MAX]; /* in body order */
    size_t used;                                    /* bytes used */
    char bytes[TN_JSON_FLAT_BYTES];                 /* keys and strings */
};

/* Decode buf[0..len) into *out when it is in the subset: TN_OK.  When it
 * is not (including an empty body, and bodies whose keys and strings need
 * more than TN_JSON_FLAT_BYTES with their NULs): TN_EPROTO, and *out is
 * meaningless.  TN_EPROTO only means "ask jansson"; the input may well be
 * valid JSON.  No allocation, no message.  Pointers in *out point into
 * out->bytes and live as long as *out, which must not be copied by value
 * while they are in use.  Thread-safe. */
int tn_json_flat_parse(const char *buf, size_t len, struct tn_json_flat *out);

/* The getters of json.h over a decoded flat body, with the same contract
 * and the same messages: 0 when present and valid, TN_ENOTFOUND when
 * absent or null, TN_EINVAL with detail in em (may be NULL) when present
 * but of the wrong type or out of [min, max].  Strings are borrowed from
 * f. */
int tn_json_flat_get_str(const struct tn_json_flat *f, const char *key,
                         const char **out, size_t *len_out,
                         struct tn_errmsg *em);
int tn_json_flat_get_int(const struct tn_json_flat *f, const char *key,
                         int64_t min, int64_t max, int64_t *out,
                         struct tn_errmsg *em);
int tn_json_flat_get_bool(const struct tn_json_flat *f, const char *key,
                          bool *out, struct tn_errmsg *em);

#endif
