/* SPDX-License-Identifier: MIT */
/* The one decoder of request bodies: one strict JSON object, read by
 * yajl's event parser, and the typed fields the routes read, each failure
 * with the message the 400 carries.
 *
 * Strict as RFC 8259 with no extension: duplicate keys (at any depth),
 * trailing bytes, comments, a NUL in a string or key (\u0000 included),
 * ill-formed UTF-8 and unpaired surrogate escapes, and nesting deeper
 * than TN_DECODE_MAX_DEPTH are refused.  Only the top level's fields are
 * kept, and, when asked for (the batch routes), the elements of its arrays
 * and the members of objects in them; unknown fields are checked and then
 * ignored.  A number is valid JSON whatever its size: an integer past
 * int64 is refused only by the getter of a field that takes integers.
 * Loop thread only: nothing here is shared, but nothing is locked. */
#ifndef TN_API_DECODE_H
#define TN_API_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "http/http.h"
#include "store/backend.h" /* struct tn_name_ref, tn_name_token */

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
    size_t n_elems;    /* an array: its elements */
    size_t item0;      /* an array, items kept: its first in tn_body.items */
    size_t n_items;    /* how many items it has there */
    bool items_cut;    /* an array: its items did not all fit max_items (0:
                          none kept) */
};

/* What a top-level array holds, kept only by tn_decode_json_items: one
 * item per element (key NULL), and after an element that is an object one
 * item per member of it (key set; a member that is itself an array or an
 * object is kept as its type only).  Strings as in tn_body_field. */
struct tn_body_item {
    const char *key;        /* member's key, or NULL for the element */
    size_t key_len;         /* bytes */
    size_t elem;            /* the element's index in its array */
    enum tn_body_type type; /* of the element or member */
    const char *str;        /* strings: NUL-terminated */
    size_t str_len;         /* bytes */
    int64_t num;            /* integers, booleans */
    bool out_of_range;      /* an integer past int64 (num meaningless) */
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
    struct tn_buf keys;         /* nested objects' keys, to refuse duplicates */
    struct tn_body_item *items; /* arrays' contents (heap), or NULL */
    size_t n_items;             /* used */
    size_t cap_items;           /* allocated */
    size_t max_items;           /* kept at most; 0: none kept */
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

/* tn_decode_json that also keeps what top-level arrays hold (struct
 * tn_body_item), at most max_items items in all: a body of the batch
 * routes.  The items' array grows with the body up to max_items, so
 * its memory is bounded by the caller, not by the body. */
int tn_decode_json_items(const char *buf, size_t len, size_t max_items,
                         struct tn_body *out, char *msg, size_t msglen);

static inline int tn_decode_body_items(struct tn_http_req *req,
                                       size_t max_items, struct tn_body *out,
                                       char *msg, size_t msglen)
{
    size_t len = 0;
    const char *body = tn_http_req_body(req, &len);
    return tn_decode_json_items(body, len, max_items, out, msg, msglen);
}

void tn_decode_done(struct tn_body *b);

/* Fields by key (qsort, bsearch): shorter first, then bytewise, so
 * unequal lengths decide without a memcmp. */
static inline int tn_decode_cmp_field(const void *a, const void *b)
{
    const struct tn_body_field *x = a, *y = b;
    if (x->key_len != y->key_len)
        return x->key_len < y->key_len ? -1 : 1;
    return memcmp(x->key, y->key, x->key_len);
}

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

/* A string field of printable UTF-8 of 1..max bytes, borrowed from b,
 * and its length in *len_out unless len_out is NULL (the decoder knows it:
 * no strlen after).  Absent (or null) and not required: 0 with *out NULL
 * and length 0.  0, or TN_EINVAL with msg set. */
int tn_decode_name(const struct tn_body *b, const char *key, size_t max,
                   bool required, const char **out, size_t *len_out, char *msg,
                   size_t msglen);

/* A required string field of 2 * TN_SECRET_BYTES hex digits (a lease or
 * session secret) into out.  0, or TN_EINVAL with msg set. */
int tn_decode_secret(const struct tn_body *b, const char *key,
                     uint8_t out[TN_SECRET_BYTES], char *msg, size_t msglen);

/* An array field of 1..max strings, each a lease name (printable UTF-8
 * of 1..TN_NAME_MAX_BYTES), no two equal (tn_decode_json_items, with
 * max_items > max).  *out is an array of *n refs into b (tn_free it);
 * NULL on failure.  0, or TN_EINVAL with msg set, or TN_ENOMEM. */
int tn_decode_names(const struct tn_body *b, const char *key, size_t max,
                    struct tn_name_ref **out, size_t *n, char *msg,
                    size_t msglen);

/* An array field of 1..max objects {"name": a lease name, "token": an
 * integer in 1..2^53-1} (other members ignored), no name twice
 * (tn_decode_json_items, with max_items > 3 * max).  As above. */
int tn_decode_name_tokens(const struct tn_body *b, const char *key, size_t max,
                          struct tn_name_token **out, size_t *n, char *msg,
                          size_t msglen);

/* An integer field in [min, max].  Absent (or null) and not required: 0,
 * *out untouched.  0, or TN_EINVAL with msg set. */
int tn_decode_int(const struct tn_body *b, const char *key, int64_t min,
                  int64_t max, bool required, int64_t *out, char *msg,
                  size_t msglen);

#endif
