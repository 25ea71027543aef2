/* SPDX-License-Identifier: MIT */
/* Capped buffer. */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "alloc.h"

void tn_buf_init(struct tn_buf *b, size_t max_bytes)
{
    memset(b, 0, sizeof(*b));
    b->max_bytes = max_bytes;
}

void tn_buf_release(struct tn_buf *b)
{
    size_t max = b->max_bytes;
    tn_free(b->data);
    tn_buf_init(b, max);
}

void tn_buf_reset(struct tn_buf *b)
{
    b->len = 0;
    if (b->data != NULL)
        b->data[0] = '\0';
}

static int reserve(struct tn_buf *b, size_t need)
{
    if (need <= b->cap && b->data != NULL)
        return TN_OK;
    /* 256 first: replies and request bodies then need one allocation. */
    size_t cap = b->cap < 256 ? 256 : b->cap;
    while (cap < need)
        cap *= 2;
    if (cap > b->max_bytes)
        cap = b->max_bytes;
    char *p = tn_realloc(b->data, cap + 1);
    if (p == NULL)
        return TN_ENOMEM;
    b->data = p;
    b->cap = cap;
    return TN_OK;
}

int tn_buf_append_grow(struct tn_buf *b, const void *p, size_t len)
{
    if (len > b->max_bytes - b->len)
        return TN_ETOOBIG;
    int rc = reserve(b, b->len + len);
    if (rc < 0)
        return rc;
    if (len > 0)
        memcpy(b->data + b->len, p, len);
    b->len += len;
    b->data[b->len] = '\0';
    return TN_OK;
}

int tn_buf_append_str(struct tn_buf *b, const char *s)
{
    return tn_buf_append(b, s, strlen(s));
}

/* Two digits at a time, as most integer printers do: half the
 * divisions. */
static const char digit_pairs[] = "00010203040506070809"
                                  "10111213141516171819"
                                  "20212223242526272829"
                                  "30313233343536373839"
                                  "40414243444546474849"
                                  "50515253545556575859"
                                  "60616263646566676869"
                                  "70717273747576777879"
                                  "80818283848586878889"
                                  "90919293949596979899";

int tn_buf_append_uint(struct tn_buf *b, uint64_t v)
{
    char d[24];
    size_t at = sizeof(d);
    while (v >= 100) {
        uint64_t r = v % 100;
        v /= 100;
        at -= 2;
        memcpy(d + at, digit_pairs + 2 * r, 2);
    }
    if (v >= 10) {
        at -= 2;
        memcpy(d + at, digit_pairs + 2 * v, 2);
    } else {
        d[--at] = (char)('0' + v);
    }
    return tn_buf_append(b, d + at, sizeof(d) - at);
}

int tn_buf_printf(struct tn_buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0)
        return TN_EINVAL;
    if ((size_t)n < sizeof(tmp))
        return tn_buf_append(b, tmp, (size_t)n);
    if ((size_t)n > b->max_bytes - b->len)
        return TN_ETOOBIG;
    int rc = reserve(b, b->len + (size_t)n);
    if (rc < 0)
        return rc;
    va_start(ap, fmt);
    (void)vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return TN_OK;
}
