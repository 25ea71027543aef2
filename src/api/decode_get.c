/* SPDX-License-Identifier: MIT */
/* The typed fields of a decoded body (decode.h), each failure with the
 * message its 400 carries: strings, names and integers of the top level,
 * and the arrays of the batch routes (names; {"name","token"} objects),
 * read from the items tn_decode_json_items kept.  The parse is decode.c's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/name.h"
#include "common/rand.h"
#include "decode.h"

#define TOKEN_LIMIT ((int64_t)1 << 53)

const struct tn_body_field *tn_decode_field_sorted(const struct tn_body *b,
                                                   const char *key, size_t len)
{
    struct tn_body_field k = {.key = key, .key_len = len};
    return bsearch(&k, b->fields, b->n, sizeof(k), tn_decode_cmp_field);
}

/* The field, or NULL when it is absent or null. */
static const struct tn_body_field *present(const struct tn_body *b,
                                           const char *key)
{
    const struct tn_body_field *f = tn_decode_field(b, key);
    return f == NULL || f->type == TN_BODY_NULL ? NULL : f;
}

int tn_decode_str(const struct tn_body *b, const char *key, const char **out,
                  size_t *len, char *msg, size_t msglen)
{
    const struct tn_body_field *f = present(b, key);
    if (f == NULL)
        return TN_ENOTFOUND;
    if (f->type != TN_BODY_STRING) {
        (void)snprintf(msg, msglen, "field \"%s\" must be a string", key);
        return TN_EINVAL;
    }
    *out = f->str;
    *len = f->str_len;
    return TN_OK;
}

int tn_decode_name(const struct tn_body *b, const char *key, size_t max,
                   bool required, const char **out, size_t *len_out, char *msg,
                   size_t msglen)
{
    size_t len = 0;
    int rc = tn_decode_str(b, key, out, &len, msg, msglen);
    if (len_out != NULL)
        *len_out = rc == TN_OK ? len : 0;
    if (rc == TN_ENOTFOUND && !required) {
        *out = NULL;
        return TN_OK;
    }
    if (rc == TN_ENOTFOUND)
        (void)snprintf(msg, msglen, "field \"%s\" is required", key);
    else if (rc == TN_OK && !tn_name_is_valid(*out, len, max))
        (void)snprintf(msg, msglen,
                       "field \"%s\" must be 1-%zu bytes of printable UTF-8",
                       key, max);
    else
        return rc;
    return TN_EINVAL;
}

int tn_decode_int(const struct tn_body *b, const char *key, int64_t min,
                  int64_t max, bool required, int64_t *out, char *msg,
                  size_t msglen)
{
    const struct tn_body_field *f = present(b, key);
    if (f == NULL && !required)
        return TN_OK;
    if (f == NULL)
        (void)snprintf(msg, msglen, "field \"%s\" is required", key);
    else if (f->type != TN_BODY_INT)
        (void)snprintf(msg, msglen, "field \"%s\" must be an integer", key);
    else if (f->out_of_range || f->num < min || f->num > max)
        (void)snprintf(msg, msglen,
                       "field \"%s\" must be between %lld and %lld", key,
                       (long long)min, (long long)max);
    else {
        *out = f->num;
        return TN_OK;
    }
    return TN_EINVAL;
}

int tn_decode_secret(const struct tn_body *b, const char *key,
                     uint8_t out[TN_SECRET_BYTES], char *msg, size_t msglen)
{
    const char *s = NULL;
    size_t len = 0;
    if (tn_decode_str(b, key, &s, &len, msg, msglen) < 0) {
        (void)snprintf(msg, msglen,
                       "field \"%s\" is required and must be a string", key);
        return TN_EINVAL;
    }
    if (tn_hex_decode(s, len, out, TN_SECRET_BYTES) < 0) {
        (void)snprintf(msg, msglen, "field \"%s\" must be %d hex digits", key,
                       2 * TN_SECRET_BYTES);
        return TN_EINVAL;
    }
    return TN_OK;
}

/* The array field key, present, of 1..max elements whose items were all
 * kept: 0, or TN_EINVAL with msg.  what names an element ("names"). */
static int array_field(const struct tn_body *b, const char *key, size_t max,
                       const char *what, const struct tn_body_field **out,
                       char *msg, size_t msglen)
{
    const struct tn_body_field *f = present(b, key);
    *out = f;
    if (f == NULL)
        (void)snprintf(msg, msglen, "field \"%s\" is required", key);
    else if (f->type != TN_BODY_ARRAY)
        (void)snprintf(msg, msglen, "field \"%s\" must be an array of %s", key,
                       what);
    else if (f->n_elems == 0)
        (void)snprintf(msg, msglen, "field \"%s\" must not be empty", key);
    else if (f->n_elems > max)
        (void)snprintf(msg, msglen,
                       "field \"%s\" holds %zu %s; at most %zu are accepted "
                       "(--max-batch-names)",
                       key, f->n_elems, what, max);
    else if (f->items_cut)
        (void)snprintf(msg, msglen,
                       "field \"%s\": too many array elements and members in "
                       "the body",
                       key);
    else
        return TN_OK;
    return TN_EINVAL;
}

static int cmp_ref(const void *a, const void *b)
{
    const struct tn_name_ref *x = a, *y = b;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return memcmp(x->name, y->name, x->len);
}

/* No name of refs[0..n) twice: 0, or TN_EINVAL with msg naming one that
 * is (at most its first 64 bytes), or TN_ENOMEM. */
static int distinct(const struct tn_name_ref *refs, size_t n, const char *key,
                    char *msg, size_t msglen)
{
    if (n < 2)
        return TN_OK;
    struct tn_name_ref *v = tn_calloc(n, sizeof(*v));
    if (v == NULL)
        return TN_ENOMEM;
    memcpy(v, refs, n * sizeof(*v));
    qsort(v, n, sizeof(*v), cmp_ref);
    int rc = TN_OK;
    for (size_t i = 1; i < n && rc == TN_OK; i++) {
        if (cmp_ref(&v[i - 1], &v[i]) != 0)
            continue;
        int shown = (int)tn_utf8_prefix(v[i].name, v[i].len, 64);
        (void)snprintf(msg, msglen,
                       "field \"%s\" gives the name \"%.*s\" twice", key, shown,
                       v[i].name);
        rc = TN_EINVAL;
    }
    tn_free(v);
    return rc;
}

static int bad_elem(char *msg, size_t msglen, const char *key, size_t i,
                    const char *what)
{
    (void)snprintf(msg, msglen, "%s[%zu] must be %s", key, i, what);
    return TN_EINVAL;
}

int tn_decode_names(const struct tn_body *b, const char *key, size_t max,
                    struct tn_name_ref **out, size_t *n, char *msg,
                    size_t msglen)
{
    const struct tn_body_field *f = NULL;
    *out = NULL;
    *n = 0;
    int rc = array_field(b, key, max, "names", &f, msg, msglen);
    if (rc < 0)
        return rc;
    struct tn_name_ref *v = tn_calloc(f->n_elems, sizeof(*v));
    if (v == NULL)
        return TN_ENOMEM;
    for (size_t i = 0; i < f->n_items && rc == TN_OK; i++) {
        const struct tn_body_item *it = &b->items[f->item0 + i];
        if (it->key != NULL)
            continue; /* a member of an element that is an object */
        if (it->type != TN_BODY_STRING ||
            !tn_name_is_valid(it->str, it->str_len, TN_NAME_MAX_BYTES))
            rc = bad_elem(msg, msglen, key, it->elem,
                          "a lease name (1-256 bytes of printable UTF-8)");
        v[it->elem].name = it->str;
        v[it->elem].len = it->str_len;
    }
    if (rc == TN_OK)
        rc = distinct(v, f->n_elems, key, msg, msglen);
    if (rc < 0) {
        tn_free(v);
        return rc;
    }
    *out = v;
    *n = f->n_elems;
    return TN_OK;
}

/* A member of element e of "leases": name or token.  0 or TN_EINVAL. */
static int lease_member(const struct tn_body_item *it, struct tn_name_token *e,
                        const char *key, char *msg, size_t msglen)
{
    if (it->key_len == 4 && memcmp(it->key, "name", 4) == 0) {
        if (it->type != TN_BODY_STRING ||
            !tn_name_is_valid(it->str, it->str_len, TN_NAME_MAX_BYTES))
            return bad_elem(msg, msglen, key, it->elem,
                            "an object whose \"name\" is a lease name");
        e->name = it->str;
        e->len = it->str_len;
    } else if (it->key_len == 5 && memcmp(it->key, "token", 5) == 0) {
        if (it->type != TN_BODY_INT || it->out_of_range || it->num < 1 ||
            it->num >= TOKEN_LIMIT)
            return bad_elem(msg, msglen, key, it->elem,
                            "an object whose \"token\" is an integer in "
                            "1..2^53-1");
        e->token = (uint64_t)it->num;
    }
    return TN_OK;
}

/* The elements of a "leases" array into v (each an object with both
 * members): 0 or TN_EINVAL. */
static int lease_elems(const struct tn_body *b, const struct tn_body_field *f,
                       struct tn_name_token *v, const char *key, char *msg,
                       size_t msglen)
{
    for (size_t i = 0; i < f->n_items; i++) {
        const struct tn_body_item *it = &b->items[f->item0 + i];
        int rc = TN_OK;
        if (it->key == NULL && it->type != TN_BODY_OBJECT)
            rc = bad_elem(msg, msglen, key, it->elem,
                          "an object {\"name\", \"token\"}");
        else if (it->key != NULL)
            rc = lease_member(it, &v[it->elem], key, msg, msglen);
        if (rc < 0)
            return rc;
    }
    for (size_t e = 0; e < f->n_elems; e++) {
        if (v[e].name == NULL || v[e].token == 0)
            return bad_elem(msg, msglen, key, e,
                            "an object with both \"name\" and \"token\"");
    }
    return TN_OK;
}

int tn_decode_name_tokens(const struct tn_body *b, const char *key, size_t max,
                          struct tn_name_token **out, size_t *n, char *msg,
                          size_t msglen)
{
    const struct tn_body_field *f = NULL;
    *out = NULL;
    *n = 0;
    int rc = array_field(b, key, max, "leases", &f, msg, msglen);
    if (rc < 0)
        return rc;
    struct tn_name_token *v = tn_calloc(f->n_elems, sizeof(*v));
    struct tn_name_ref *refs = tn_calloc(f->n_elems, sizeof(*refs));
    rc = v != NULL && refs != NULL ? TN_OK : TN_ENOMEM;
    if (rc == TN_OK)
        rc = lease_elems(b, f, v, key, msg, msglen);
    for (size_t e = 0; rc == TN_OK && e < f->n_elems; e++) {
        refs[e].name = v[e].name;
        refs[e].len = v[e].len;
    }
    if (rc == TN_OK)
        rc = distinct(refs, f->n_elems, key, msg, msglen);
    tn_free(refs);
    if (rc < 0) {
        tn_free(v);
        return rc;
    }
    *out = v;
    *n = f->n_elems;
    return TN_OK;
}
