/* SPDX-License-Identifier: MIT */
/* The flat-body subset decoder: one pass over the bytes, copies of keys and
 * strings into the caller's struct, no allocation.  Anything it is unsure
 * of is "not in subset" (TN_EPROTO), never an error of its own: jansson
 * stays the judge of every body this file does not take. */
#include "json_flat.h"

#include <string.h>

#include "json.h"

/* Digits an integer may have: 10^18 - 1 fits in int64_t with room. */
#define INT_DIGITS_MAX 18

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && is_ws(*p))
        p++;
    return p;
}

/* p is just past an opening quote.  Copies the string into f->bytes and
 * returns the byte after its closing quote, or NULL when it is not a plain
 * printable-ASCII string or does not fit. */
static const char *scan_str(const char *p, const char *end,
                            struct tn_json_flat *f, const char **s_out,
                            size_t *len_out)
{
    const char *start = p;
    while (p < end && *p != '"') {
        unsigned char ch = (unsigned char)*p;
        if (ch < 0x20 || ch > 0x7e || ch == '\\')
            return NULL;
        p++;
    }
    if (p == end)
        return NULL;
    size_t n = (size_t)(p - start);
    if (n >= TN_JSON_FLAT_BYTES - f->used)
        return NULL;
    char *dst = f->bytes + f->used;
    memcpy(dst, start, n);
    dst[n] = '\0';
    f->used += n + 1;
    *s_out = dst;
    *len_out = n;
    return p + 1;
}

/* -?(0|[1-9][0-9]*) of at most INT_DIGITS_MAX digits, not -0, and not the
 * start of a real (fraction or exponent). */
static const char *scan_int(const char *p, const char *end, int64_t *out)
{
    bool neg = *p == '-';
    if (neg)
        p++;
    if (p == end || *p < '0' || *p > '9')
        return NULL;
    const char *digits = p;
    int64_t v = 0;
    if (*p == '0') {
        p++;
    } else {
        while (p < end && *p >= '0' && *p <= '9') {
            if (p - digits >= INT_DIGITS_MAX)
                return NULL;
            v = v * 10 + (*p - '0');
            p++;
        }
    }
    if (p < end &&
        (*p == '.' || *p == 'e' || *p == 'E' || (*p >= '0' && *p <= '9')))
        return NULL;
    if (neg && v == 0)
        return NULL;
    *out = neg ? -v : v;
    return p;
}

static bool has_word(const char *p, const char *end, const char *w, size_t n)
{
    return (size_t)(end - p) >= n && memcmp(p, w, n) == 0;
}

/* One value at p (not at end): fills the value half of m. */
static const char *scan_value(const char *p, const char *end,
                              struct tn_json_flat *f,
                              struct tn_json_flat_member *m)
{
    switch (*p) {
    case '"':
        m->type = TN_JSON_FLAT_STRING;
        return scan_str(p + 1, end, f, &m->str, &m->str_len);
    case 't':
        m->type = TN_JSON_FLAT_TRUE;
        return has_word(p, end, "true", 4) ? p + 4 : NULL;
    case 'f':
        m->type = TN_JSON_FLAT_FALSE;
        return has_word(p, end, "false", 5) ? p + 5 : NULL;
    case 'n':
        m->type = TN_JSON_FLAT_NULL;
        return has_word(p, end, "null", 4) ? p + 4 : NULL;
    default:
        m->type = TN_JSON_FLAT_INTEGER;
        return scan_int(p, end, &m->num);
    }
}

static bool is_dup(const struct tn_json_flat *f, const char *key, size_t len)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->m[i].key_len == len && memcmp(f->m[i].key, key, len) == 0)
            return true;
    return false;
}

/* One "key": value member at p (just past '{' or ',' and whitespace).
 * Returns the byte after the value, or NULL. */
static const char *scan_member(const char *p, const char *end,
                               struct tn_json_flat *f)
{
    if (f->n == TN_JSON_FLAT_MAX || p == end || *p != '"')
        return NULL;
    struct tn_json_flat_member *m = &f->m[f->n];
    p = scan_str(p + 1, end, f, &m->key, &m->key_len);
    if (p == NULL || is_dup(f, m->key, m->key_len))
        return NULL;
    p = skip_ws(p, end);
    if (p == end || *p != ':')
        return NULL;
    p = skip_ws(p + 1, end);
    if (p == end)
        return NULL;
    p = scan_value(p, end, f, m);
    if (p != NULL)
        f->n++;
    return p;
}

int tn_json_flat_parse(const char *buf, size_t len, struct tn_json_flat *out)
{
    out->n = 0;
    out->used = 0;
    if (len == 0)
        return TN_EPROTO;
    const char *end = buf + len;
    const char *p = skip_ws(buf, end);
    if (p == end || *p != '{')
        return TN_EPROTO;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}') {
        p++;
    } else {
        for (;;) {
            p = scan_member(p, end, out);
            if (p == NULL)
                return TN_EPROTO;
            p = skip_ws(p, end);
            if (p == end)
                return TN_EPROTO;
            if (*p == '}') {
                p++;
                break;
            }
            if (*p != ',')
                return TN_EPROTO;
            p = skip_ws(p + 1, end);
        }
    }
    return skip_ws(p, end) == end ? TN_OK : TN_EPROTO;
}

static const struct tn_json_flat_member *find(const struct tn_json_flat *f,
                                              const char *key)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->m[i].key, key) == 0)
            return f->m[i].type == TN_JSON_FLAT_NULL ? NULL : &f->m[i];
    return NULL;
}

int tn_json_flat_get_str(const struct tn_json_flat *f, const char *key,
                         const char **out, size_t *len_out,
                         struct tn_errmsg *em)
{
    const struct tn_json_flat_member *m = find(f, key);
    if (m == NULL)
        return TN_ENOTFOUND;
    if (m->type != TN_JSON_FLAT_STRING)
        return tn_json_fail_type(key, TN_JSON_WANT_STRING, em);
    *out = m->str;
    *len_out = m->str_len;
    return TN_OK;
}

int tn_json_flat_get_int(const struct tn_json_flat *f, const char *key,
                         int64_t min, int64_t max, int64_t *out,
                         struct tn_errmsg *em)
{
    const struct tn_json_flat_member *m = find(f, key);
    if (m == NULL)
        return TN_ENOTFOUND;
    if (m->type != TN_JSON_FLAT_INTEGER)
        return tn_json_fail_type(key, TN_JSON_WANT_INTEGER, em);
    return tn_json_check_int(key, m->num, min, max, out, em);
}

int tn_json_flat_get_bool(const struct tn_json_flat *f, const char *key,
                          bool *out, struct tn_errmsg *em)
{
    const struct tn_json_flat_member *m = find(f, key);
    if (m == NULL)
        return TN_ENOTFOUND;
    if (m->type != TN_JSON_FLAT_TRUE && m->type != TN_JSON_FLAT_FALSE)
        return tn_json_fail_type(key, TN_JSON_WANT_BOOLEAN, em);
    *out = m->type == TN_JSON_FLAT_TRUE;
    return TN_OK;
}
