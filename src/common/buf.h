/* SPDX-License-Identifier: MIT */
/* A growable byte buffer with a hard cap fixed at init.  Going over the cap
 * returns TN_ETOOBIG and leaves the buffer as it was.  Always NUL-terminated
 * past len so text can be handed to parsers.  Not thread-safe. */
#ifndef TN_COMMON_BUF_H
#define TN_COMMON_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
/* tn_buf_append when the bytes do not fit the storage as it is. */
int tn_buf_append_grow(struct tn_buf *b, const void *p, size_t len);

/* 0, TN_ETOOBIG or TN_ENOMEM.  Inline: replies and requests are built of
 * many short appends, most of them of constant length, which then become
 * a few stores. */
static inline int tn_buf_append(struct tn_buf *b, const void *p, size_t len)
{
    /* cap never exceeds max_bytes, so what fits cap is within the cap. */
    if (b->data == NULL || len > PTRDIFF_MAX || len > b->cap - b->len)
        return tn_buf_append_grow(b, p, len);
    if (len > 0)
        memcpy(b->data + b->len, p, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}
/* tn_buf_append of a NUL-terminated string, and of the decimal digits of
 * v: the pieces of hot-path text, without a printf. */
int tn_buf_append_str(struct tn_buf *b, const char *s);
int tn_buf_append_uint(struct tn_buf *b, uint64_t v);
int tn_buf_printf(struct tn_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
