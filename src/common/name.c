/* SPDX-License-Identifier: MIT */
/* Printable UTF-8 validation (RFC 3629: no overlongs, no surrogates). */
#include "name.h"

#include <stdint.h>

/* Length of the well-formed sequence at s (1..4), or 0 if ill-formed. */
static size_t utf8_seq(const uint8_t *s, size_t left, uint32_t *cp)
{
    uint8_t c = s[0];
    size_t n;
    uint32_t min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        n = 2, min = 0x80, *cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3, min = 0x800, *cp = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4, min = 0x10000, *cp = c & 0x07u;
    } else {
        return 0;
    }
    if (left < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        *cp = (*cp << 6) | (s[i] & 0x3Fu);
    }
    if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF))
        return 0;
    return n;
}

bool tn_name_is_valid(const char *s, size_t len, size_t max_bytes)
{
    if (len == 0 || len > max_bytes)
        return false;
    const uint8_t *p = (const uint8_t *)s;
    size_t i = 0;
    while (i < len) {
        if (p[i] >= 0x20 && p[i] < 0x7F) { /* printable ASCII */
            i++;
            continue;
        }
        uint32_t cp;
        size_t n = utf8_seq(p + i, len - i, &cp);
        if (n == 0 || cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0))
            return false;
        i += n;
    }
    return true;
}

size_t tn_utf8_char(const char *s, size_t left)
{
    uint32_t cp;
    return utf8_seq((const uint8_t *)s, left, &cp);
}

size_t tn_utf8_prefix(const char *s, size_t len, size_t max_bytes)
{
    size_t at = 0;
    while (at < len) {
        size_t n = tn_utf8_char(s + at, len - at);
        if (n == 0)
            n = 1;
        if (at + n > max_bytes)
            break;
        at += n;
    }
    return at;
}
