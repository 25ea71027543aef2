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

void tn_reply_key(struct tn_buf *b, const char *key, bool first)
{
    if (!first)
        (void)tn_buf_append(b, ",", 1);
    tn_reply_str(b, key);
    (void)tn_buf_append(b, ":", 1);
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
    (void)tn_buf_printf(b, "%lld", (long long)v);
}

void tn_reply_kv_uint(struct tn_buf *b, const char *key, uint64_t v, bool first)
{
    tn_reply_key(b, key, first);
    (void)tn_buf_printf(b, "%llu", (unsigned long long)v);
}
