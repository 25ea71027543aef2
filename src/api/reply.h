/* SPDX-License-Identifier: MIT */
/* A minimal JSON writer for replies: objects built by appending members to
 * a capped buffer, strings escaped.  Faster than building a jansson tree
 * for the few flat shapes of the API. */
#ifndef TN_API_REPLY_H
#define TN_API_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"

/* Append s as a JSON string (quoted, escaped). */
void tn_reply_str(struct tn_buf *b, const char *s);

/* Append ,"key":value pieces; `first` members omit the comma.  Keys are
 * the API's own identifiers, literals with nothing to escape: inline, so
 * that their length is known when compiling and each key is a few stores
 * and one append. */
static inline void tn_reply_key(struct tn_buf *b, const char *key, bool first)
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

static inline void tn_reply_kv_str(struct tn_buf *b, const char *key,
                                   const char *v, bool first)
{
    tn_reply_key(b, key, first);
    tn_reply_str(b, v);
}

static inline void tn_reply_kv_int(struct tn_buf *b, const char *key, int64_t v,
                                   bool first)
{
    tn_reply_key(b, key, first);
    if (v < 0)
        (void)tn_buf_append(b, "-", 1);
    (void)tn_buf_append_uint(b, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

static inline void tn_reply_kv_uint(struct tn_buf *b, const char *key,
                                    uint64_t v, bool first)
{
    tn_reply_key(b, key, first);
    (void)tn_buf_append_uint(b, v);
}

#endif
