/* SPDX-License-Identifier: MIT */
/* The PostgreSQL store.  TODO(#5): not built yet. */
#include "store.h"

int tn_store_pg_open(struct tn_loop *loop, const struct tn_store_config *cfg,
                     struct tn_store **out, struct tn_errmsg *em)
{
    (void)loop;
    (void)cfg;
    *out = NULL;
    tn_errmsg_set(em, "the PostgreSQL store is not available in this build");
    return TN_EINVAL;
}
