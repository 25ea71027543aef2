/* SPDX-License-Identifier: MIT */
/* Token parsing and formatting, lease-name validation, reason names: the
 * leaf of the fence kit (proof.c and record.c build on it).  Pure
 * functions, no allocation. */
#include <string.h>

#include <tenure/fence.h>

int tn_fence_parse_token(const char *s, size_t len, uint64_t *out)
{
    /* 2^53 has 16 digits; anything longer is junk or too big. */
    if (s == NULL || len == 0 || len > 16)
        return TN_EINVAL;
    if (s[0] == '0' && len > 1)
        return TN_EINVAL;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return TN_EINVAL;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > TN_FENCE_TOKEN_MAX)
        return TN_EINVAL;
    *out = v;
    return TN_OK;
}

size_t tn_fence_format_token(uint64_t token, char out[21])
{
    char tmp[21];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + token % 10);
        token /= 10;
    } while (token > 0);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

/* Length of the UTF-8 sequence starting at p (at most left bytes) and its
 * code point, or 0 when invalid (overlong, surrogate, > U+10FFFF). */
static size_t utf8_next(const unsigned char *p, size_t left, uint32_t *cp)
{
    unsigned char c = p[0];
    size_t n = 0;
    uint32_t v = 0;
    uint32_t min = 0;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        n = 2, v = c & 0x1Fu, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3, v = c & 0x0Fu, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4, v = c & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    if (n > left)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3Fu);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return n;
}

bool tn_fence_name_is_valid(const char *name, size_t len)
{
    if (name == NULL || len == 0 || len > TN_FENCE_NAME_MAX)
        return false;
    const unsigned char *p = (const unsigned char *)name;
    size_t i = 0;
    while (i < len) {
        uint32_t cp = 0;
        size_t n = utf8_next(p + i, len - i, &cp);
        if (n == 0)
            return false;
        if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0))
            return false;
        i += n;
    }
    return true;
}

const char *tn_fence_reason_name(enum tn_fence_reason r)
{
    switch (r) {
    case TN_FENCE_OK:
        return "ok";
    case TN_FENCE_NO_KEY:
        return "no_key";
    case TN_FENCE_BAD_KEY:
        return "bad_key";
    case TN_FENCE_NO_TOKEN:
        return "no_token";
    case TN_FENCE_BAD_TOKEN:
        return "bad_token";
    case TN_FENCE_BAD_CLAIM:
        return "bad_claim";
    case TN_FENCE_BAD_PROOF:
        return "bad_proof";
    case TN_FENCE_STALE:
        return "stale";
    }
    return "unknown";
}
