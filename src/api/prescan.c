/* SPDX-License-Identifier: MIT */
/* The checks of a request body that yajl does not make, over the whole
 * body at once before it is parsed (decode.c parses it): control bytes,
 * UTF-8, the pairing of surrogate escapes, and what follows the object. */
#include "prescan.h"

#include <stdint.h>
#include <string.h>

#include "common/name.h"
#include "common/rand.h"

/* The 4 hex digits at s as a number. */
static bool hex4(const char *s, unsigned *out)
{
    uint8_t b[2];
    if (tn_hex_decode(s, 4, b, sizeof(b)) < 0)
        return false;
    *out = (unsigned)b[0] << 8 | b[1];
    return true;
}

/* Whether every \u escape of a surrogate in buf is a high one followed by
 * a low one.  In valid JSON every backslash is in a string and the first
 * of an escape, so the escapes are read in order from the start; what is
 * not valid JSON is yajl's to refuse. */
static bool surrogates_paired(const char *buf, size_t len)
{
    const char *s = memchr(buf, '\\', len);
    const char *end = buf + len;
    while (s != NULL && end - s >= 2) {
        unsigned hi = 0, lo = 0;
        if (s[1] == 'u' && end - s >= 6 && hex4(s + 2, &hi) && hi >= 0xD800 &&
            hi <= 0xDFFF) {
            if (hi >= 0xDC00 || end - s < 12 || s[6] != '\\' || s[7] != 'u' ||
                !hex4(s + 8, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                return false;
            s += 12;
        } else {
            s += 2;
        }
        s = s < end ? memchr(s, '\\', (size_t)(end - s)) : NULL;
    }
    return true;
}

/* 8 bytes at a time: whether any is below 0x20, at or above 0x80, or a
 * backslash, i.e. whether the slow path has to look at them. */
static bool plain8(const char *s)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    uint64_t w;
    memcpy(&w, s, sizeof(w));
    uint64_t bs = w ^ (ones * '\\');
    uint64_t below = (w - ones * 0x20) | (bs - ones) | w;
    return (below & high) == 0;
}

/* The white space RFC 8259 allows between tokens. */
static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

const char *tn_json_prescan(const char *buf, size_t len, bool *escapes)
{
    size_t i = 0;
    *escapes = false;
    while (i < len) {
        if (len - i >= 8 && plain8(buf + i)) {
            i += 8;
            continue;
        }
        unsigned char c = (unsigned char)buf[i];
        if (c < 0x20 && !is_space((char)c))
            return "a control byte outside the white space JSON allows";
        if (c == '\\')
            *escapes = true;
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n = tn_utf8_char(buf + i, len - i);
        if (n == 0)
            return "bytes that are not well-formed UTF-8";
        i += n;
    }
    if (*escapes && !surrogates_paired(buf, len))
        return "a \\u escape of an unpaired surrogate";
    return NULL;
}

bool tn_json_only_space_after(const char *buf, size_t len, size_t end)
{
    for (size_t i = end; i < len; i++)
        if (!is_space(buf[i]))
            return false;
    return true;
}
