/* SPDX-License-Identifier: MIT */
/* Choosing a store backend from a URL. */
#include <string.h>

#include "store/store.h"

int tn_store_open_url(struct tn_loop *loop, const struct tn_store_config *cfg,
                      struct tn_store **out, struct tn_errmsg *em)
{
    const char *u = cfg->pg_url;
    if (strncmp(u, "postgresql://", 13) == 0 ||
        strncmp(u, "postgres://", 11) == 0)
        return tn_store_pg_open(loop, cfg, out, em);
    tn_errmsg_set(em, "unknown store \"%s\": use postgresql://...", u);
    return TN_EINVAL;
}
