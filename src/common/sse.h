/* SPDX-License-Identifier: MIT */
/* The reading side of a server-sent event stream (GET /v1/events): bytes
 * in, complete lines out.  An "id: " line is remembered for
 * Last-Event-ID on reconnect; a "data: " line is handed to a callback;
 * other lines (comments, heartbeats, blank separators) are skipped. */
#ifndef TN_COMMON_SSE_H
#define TN_COMMON_SSE_H

#include <stddef.h>

#include "common/buf.h"

struct tn_sse {
    struct tn_buf line; /* the partial line; one over max_line is dropped */
    char last_id[32];   /* of the last event seen ("" before the first) */
};

/* A reader whose lines are at most max_line bytes. */
void tn_sse_init(struct tn_sse *s, size_t max_line);
void tn_sse_release(struct tn_sse *s);
/* Read len bytes of the stream; on_data(arg, text) for each data line
 * they complete, text after "data: " and NUL-terminated. */
void tn_sse_feed(struct tn_sse *s, const char *p, size_t len,
                 void (*on_data)(void *arg, const char *data), void *arg);

#endif
