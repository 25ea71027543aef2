/* SPDX-License-Identifier: MIT */
/* A growable byte buffer with a hard cap fixed at init.  Going over the cap
 * returns TN_ETOOBIG and leaves the buffer as it was.  Always NUL-terminated
 * past len so text can be handed to parsers.  Not thread-safe. */
#ifndef TN_COMMON_BUF_H
#define TN_COMMON_BUF_H

#include <stddef.h>
#include <stdint.h>

struct tn_buf {
    char *data;       /* NULL until the first append; data[len] == '\0' */
    size_t len;       /* bytes used */
    size_t cap;       /* bytes allocated, excluding the NUL */
    size_t max_bytes; /* hard cap on len */
};

void tn_buf_init(struct tn_buf *b, size_t max_bytes);
/* Frees the storage and leaves b zeroed (cap kept). */
void tn_buf_release(struct tn_buf *b);
void tn_buf_reset(struct tn_buf *b);
/* 0, TN_ETOOBIG or TN_ENOMEM. */
int tn_buf_append(struct tn_buf *b, const void *p, size_t len);
/* tn_buf_append of a NUL-terminated string, and of the decimal digits of
 * v: the pieces of hot-path text, without a printf. */
int tn_buf_append_str(struct tn_buf *b, const char *s);
int tn_buf_append_uint(struct tn_buf *b, uint64_t v);
int tn_buf_printf(struct tn_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
