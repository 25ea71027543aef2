/* SPDX-License-Identifier: MIT */
/* The one decoder of request bodies: one strict JSON object, read by
 * yajl's event parser, and the typed fields the routes read, each failure
 * with the message the 400 carries.
 *
 * Strict as RFC 8259 with no extension: duplicate keys (at any depth),
 * trailing bytes, comments, a NUL in a string or key (\u0000 included),
 * ill-formed UTF-8 and unpaired surrogate escapes, and nesting deeper
 * than TN_DECODE_MAX_DEPTH are refused.  Only the top level's fields are
 * kept; unknown fields are checked and then ignored.  A number is valid
 * JSON whatever its size: an integer past int64 is refused only by the
 * getter of a field that takes integers.
 * Loop thread only: nothing here is shared, but nothing is locked. */
#ifndef TN_API_DECODE_H
#define TN_API_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "http/http.h"

#define TN_DECODE_MAX_DEPTH 32

enum tn_body_type {
    TN_BODY_NULL,
    TN_BODY_BOOL,
    TN_BODY_INT,
    TN_BODY_REAL,
    TN_BODY_STRING,
    TN_BODY_ARRAY,
    TN_BODY_OBJECT,
};

/* One top-level field.  key and str are NUL-terminated; str is set for
 * strings, num for integers and booleans (0 or 1). */
struct tn_body_field {
    const char *key;
    size_t key_len;
    enum tn_body_type type;
    const char *str;
    size_t str_len;
    int64_t num;
    bool out_of_range; /* an integer past int64 (num is then meaningless) */
};

/* A decoded body: its top-level fields (sorted by key when there are
 * more than 16) and the storage they point into, inside the struct for a
 * usual body and on the heap past that.  tn_decode_json sets it up. */
#define TN_BODY_FIELDS_INLINE 8
#define TN_BODY_TEXT_INLINE 256

struct tn_body {
    struct tn_body_field *fields; /* fsmall or the heap */
    size_t n;
    size_t fcap;
    char *text; /* tsmall or the heap: keys and strings, a NUL after each */
    size_t text_used;
    size_t text_cap;
    struct tn_buf keys; /* nested objects' keys, to refuse duplicates */
    struct tn_body_field fsmall[TN_BODY_FIELDS_INLINE];
    char tsmall[TN_BODY_TEXT_INLINE];
};

/* buf[0..len) as one JSON object into *out (tn_decode_done() it, also
 * after a failure).  An empty body is an empty object when allow_empty.
 * 0, or TN_EINVAL with msg[0..msglen) set, or TN_ENOMEM. */
int tn_decode_json(const char *buf, size_t len, bool allow_empty,
                   struct tn_body *out, char *msg, size_t msglen);

/* tn_decode_json of req's body. */
static inline int tn_decode_body(struct tn_http_req *req, bool allow_empty,
                                 struct tn_body *out, char *msg, size_t msglen)
{
    size_t len = 0;
    const char *body = tn_http_req_body(req, &len);
    return tn_decode_json(body, len, allow_empty, out, msg, msglen);
}

void tn_decode_done(struct tn_body *b);

/* The top-level field named key[0..len), or NULL, when there are more
 * than 16 (sorted). */
const struct tn_body_field *tn_decode_field_sorted(const struct tn_body *b,
                                                   const char *key, size_t len);

/* The top-level field named key, or NULL.  Inline: keys are literals,
 * whose length is known when compiling. */
static inline const struct tn_body_field *
tn_decode_field(const struct tn_body *b, const char *key)
{
    size_t len = strlen(key);
    if (b->n > 16)
        return tn_decode_field_sorted(b, key, len);
    for (size_t i = 0; i < b->n; i++)
        if (b->fields[i].key_len == len &&
            memcmp(b->fields[i].key, key, len) == 0)
            return &b->fields[i];
    return NULL;
}

/* A string field, borrowed from b.  Absent (or null): TN_ENOTFOUND.  0, or
 * TN_EINVAL with msg set. */
int tn_decode_str(const struct tn_body *b, const char *key, const char **out,
                  size_t *len, char *msg, size_t msglen);

/* A string field of printable UTF-8 of 1..max bytes, borrowed from b.
 * Absent (or null) and not required: 0 with *out NULL.  0, or TN_EINVAL
 * with msg set. */
int tn_decode_name(const struct tn_body *b, const char *key, size_t max,
                   bool required, const char **out, char *msg, size_t msglen);

/* An integer field in [min, max].  Absent (or null) and not required: 0,
 * *out untouched.  0, or TN_EINVAL with msg set. */
int tn_decode_int(const struct tn_body *b, const char *key, int64_t min,
                  int64_t max, bool required, int64_t *out, char *msg,
                  size_t msglen);

#endif
