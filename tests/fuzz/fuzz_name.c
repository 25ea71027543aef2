/* SPDX-License-Identifier: MIT */
/* Fuzz target for lease names in paths: percent-decoding
 * (tn_http_pct_decode, plain and form) and name validation
 * (tn_name_is_valid, and the fence kit's tn_fence_name_is_valid, which must
 * agree with it).  Checked: the decoded length never exceeds the input; a
 * decoded string, percent-encoded byte by byte, decodes back to itself; a
 * valid name is 1..max bytes of well-formed UTF-8 with no control
 * character. */
#include <stdlib.h>
#include <string.h>

#include <tenure/fence.h>

#include "common/assert.h"
#include "common/name.h"
#include "fuzz.h"
#include "http/http.h"

/* A reference reading of "printable UTF-8" (RFC 3629: shortest form, no
 * surrogates, at most U+10FFFF; no C0, DEL or C1). */
static bool ref_valid(const unsigned char *s, size_t len, size_t max)
{
    if (len == 0 || len > max)
        return false;
    for (size_t i = 0; i < len;) {
        unsigned c = s[i];
        size_t n;
        unsigned cp;
        if (c < 0x80) {
            if (c < 0x20 || c == 0x7f)
                return false;
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) {
            n = 1;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 2;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (i + n >= len)
            return false;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
            (cp >= 0x80 && cp <= 0x9f))
            return false;
        i += n + 1;
    }
    return true;
}

static void names(const char *s, size_t len)
{
    bool v = tn_name_is_valid(s, len, TN_NAME_MAX_BYTES);
    TN_ASSERT(v == ref_valid((const unsigned char *)s, len, TN_NAME_MAX_BYTES));
    TN_ASSERT(v == tn_fence_name_is_valid(s, len));
    if (len > 0)
        TN_ASSERT(tn_name_is_valid(s, len, len - 1) == false);
}

static void roundtrip(const char *dec, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    char *enc = malloc(3 * n + 1);
    char *back = malloc(3 * n + 2);
    TN_ASSERT(enc != NULL && back != NULL);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)dec[i];
        enc[3 * i] = '%';
        enc[3 * i + 1] = hex[c >> 4];
        enc[3 * i + 2] = hex[c & 15];
    }
    long m = tn_http_pct_decode(enc, 3 * n, false, back);
    TN_ASSERT(m == (long)n);
    TN_ASSERT(memcmp(back, dec, n) == 0);
    free(enc);
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    names(s, size);
    char *out = malloc(size + 1);
    TN_ASSERT(out != NULL);
    for (int form = 0; form < 2; form++) {
        long n = tn_http_pct_decode(s, size, form != 0, out);
        TN_ASSERT(n >= -1 && n <= (long)size);
        if (n < 0)
            continue;
        if (memchr(s, '%', size) == NULL && (!form || !memchr(s, '+', size)))
            TN_ASSERT(n == (long)size && memcmp(out, s, size) == 0);
        roundtrip(out, (size_t)n);
        names(out, (size_t)n);
    }
    free(out);
    return 0;
}
