/* SPDX-License-Identifier: MIT */
/* Lookup in a table of built-in files. */
#include "common/embed.h"

#include <string.h>

const struct tn_embed *tn_embed_find(const struct tn_embed *table,
                                     const char *name, size_t len)
{
    for (const struct tn_embed *e = table; e->name != NULL; e++) {
        if (strlen(e->name) == len && memcmp(e->name, name, len) == 0)
            return e;
    }
    return NULL;
}
