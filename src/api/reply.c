/* SPDX-License-Identifier: MIT */
/* JSON reply writer.  Errors of the capped buffer are ignored here: replies
 * are small and bounded, and an over-cap reply is caught by the caller. */
#include "reply.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A byte a JSON string cannot hold as is: a control byte, '"' or '\\'. */
static bool needs_escape(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\';
}

/* Whether any of the 8 bytes at s may need escaping: a byte below 0x20,
 * a '"' or a '\\' is never missed; a false alarm (a borrow between
 * bytes) only sends the 8 bytes down the bytewise path. */
static bool special8(const char *s)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    uint64_t w;
    memcpy(&w, s, sizeof(w));
    uint64_t q = w ^ (ones * '"');
    uint64_t bs = w ^ (ones * '\\');
    uint64_t t =
        ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((bs - ones) & ~bs);
    return (t & high) != 0;
}

void tn_reply_str(struct tn_buf *b, const char *s)
{
    size_t len = strlen(s);
    size_t run = 0;
    size_t i = 0;
    (void)tn_buf_append(b, "\"", 1);
    while (i < len) {
        if (len - i >= 8 && !special8(s + i)) {
            i += 8;
            continue;
        }
        unsigned char c = (unsigned char)s[i++];
        if (!needs_escape(c))
            continue;
        (void)tn_buf_append(b, s + run, i - 1 - run);
        char esc[8];
        if (c == '"' || c == '\\')
            (void)snprintf(esc, sizeof(esc), "\\%c", c);
        else
            (void)snprintf(esc, sizeof(esc), "\\u%04x", c);
        (void)tn_buf_append(b, esc, strlen(esc));
        run = i;
    }
    (void)tn_buf_append(b, s + run, len - run);
    (void)tn_buf_append(b, "\"", 1);
}
