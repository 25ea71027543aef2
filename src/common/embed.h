/* SPDX-License-Identifier: MIT */
/* Files built into a binary (cmake/embed.cmake writes the tables): web
 * assets served or written without touching the disk at run time.  A table
 * ends with an entry whose name is NULL. */
#ifndef TN_COMMON_EMBED_H
#define TN_COMMON_EMBED_H

#include <stddef.h>

struct tn_embed {
    const char *name;          /* base file name, e.g. "console.js" */
    const char *type;          /* media type for Content-Type */
    const unsigned char *data; /* the bytes, followed by a NUL */
    size_t len;                /* bytes, without that NUL */
};

/* The entry of table named name (len bytes, not NUL-ended), or NULL. */
const struct tn_embed *tn_embed_find(const struct tn_embed *table,
                                     const char *name, size_t len);

#endif
