/* SPDX-License-Identifier: MIT */
/* JSON reply writer.  Errors of the capped buffer are ignored here: replies
 * are small and bounded, and an over-cap reply is caught by the caller. */
#include "reply.h"

#include <stdio.h>
#include <string.h>

void tn_reply_str(struct tn_buf *b, const char *s)
{
    (void)tn_buf_append(b, "\"", 1);
    const char *run = s;
    for (const char *p = s; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        (void)tn_buf_append(b, run, (size_t)(p - run));
        char esc[8];
        if (c == '"' || c == '\\')
            (void)snprintf(esc, sizeof(esc), "\\%c", c);
        else
            (void)snprintf(esc, sizeof(esc), "\\u%04x", c);
        (void)tn_buf_append(b, esc, strlen(esc));
        run = p + 1;
    }
    (void)tn_buf_append(b, run, strlen(run));
    (void)tn_buf_append(b, "\"", 1);
}

/* Keys are the API's own identifiers: nothing in them needs escaping. */
void tn_reply_key(struct tn_buf *b, const char *key, bool first)
{
    char k[64];
    size_t n = strlen(key);
    if (n > sizeof(k) - 4) {
        if (!first)
            (void)tn_buf_append(b, ",", 1);
        tn_reply_str(b, key);
        (void)tn_buf_append(b, ":", 1);
        return;
    }
    size_t at = 0;
    if (!first)
        k[at++] = ',';
    k[at++] = '"';
    memcpy(k + at, key, n);
    at += n;
    k[at++] = '"';
    k[at++] = ':';
    (void)tn_buf_append(b, k, at);
}

/* Decimal digits of v, without printf. */
static void append_u64(struct tn_buf *b, uint64_t v, bool negative)
{
    char d[24];
    size_t at = sizeof(d);
    do {
        d[--at] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    if (negative)
        d[--at] = '-';
    (void)tn_buf_append(b, d + at, sizeof(d) - at);
}

void tn_reply_kv_str(struct tn_buf *b, const char *key, const char *v,
                     bool first)
{
    tn_reply_key(b, key, first);
    tn_reply_str(b, v);
}

void tn_reply_kv_int(struct tn_buf *b, const char *key, int64_t v, bool first)
{
    tn_reply_key(b, key, first);
    append_u64(b, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, v < 0);
}

void tn_reply_kv_uint(struct tn_buf *b, const char *key, uint64_t v, bool first)
{
    tn_reply_key(b, key, first);
    append_u64(b, v, false);
}
