/* SPDX-License-Identifier: MIT */
/* A minimal JSON writer for replies: objects built by appending members to
 * a capped buffer, strings escaped.  Faster than building a jansson tree
 * for the few flat shapes of the API. */
#ifndef TN_API_REPLY_H
#define TN_API_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/* Append s as a JSON string (quoted, escaped). */
void tn_reply_str(struct tn_buf *b, const char *s);
/* Append ,"key":value pieces; `first` members omit the comma. */
void tn_reply_key(struct tn_buf *b, const char *key, bool first);
void tn_reply_kv_str(struct tn_buf *b, const char *key, const char *v,
                     bool first);
void tn_reply_kv_int(struct tn_buf *b, const char *key, int64_t v, bool first);
void tn_reply_kv_uint(struct tn_buf *b, const char *key, uint64_t v,
                      bool first);

#endif
