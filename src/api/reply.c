/* SPDX-License-Identifier: MIT */
/* JSON reply writer.  Errors of the capped buffer are ignored here: replies
 * are small and bounded, and an over-cap reply is caught by the caller. */
#include "reply.h"

#include <stdio.h>
#include <string.h>

/* A byte a JSON string cannot hold as is: a control byte, '"' or '\\'
 * (and the NUL that ends s). */
static bool needs_escape(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\';
}

void tn_reply_str(struct tn_buf *b, const char *s)
{
    (void)tn_buf_append(b, "\"", 1);
    const char *run = s;
    const char *p = s;
    for (;;) {
        while (!needs_escape((unsigned char)*p))
            p++;
        (void)tn_buf_append(b, run, (size_t)(p - run));
        unsigned char c = (unsigned char)*p;
        if (c == '\0')
            break;
        char esc[8];
        if (c == '"' || c == '\\')
            (void)snprintf(esc, sizeof(esc), "\\%c", c);
        else
            (void)snprintf(esc, sizeof(esc), "\\u%04x", c);
        (void)tn_buf_append(b, esc, strlen(esc));
        run = ++p;
    }
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

void tn_reply_kv_str(struct tn_buf *b, const char *key, const char *v,
                     bool first)
{
    tn_reply_key(b, key, first);
    tn_reply_str(b, v);
}

void tn_reply_kv_int(struct tn_buf *b, const char *key, int64_t v, bool first)
{
    tn_reply_key(b, key, first);
    if (v < 0)
        (void)tn_buf_append(b, "-", 1);
    (void)tn_buf_append_uint(b, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

void tn_reply_kv_uint(struct tn_buf *b, const char *key, uint64_t v, bool first)
{
    tn_reply_key(b, key, first);
    (void)tn_buf_append_uint(b, v);
}
