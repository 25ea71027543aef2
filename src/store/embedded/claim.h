/* SPDX-License-Identifier: MIT */
/* Claims and batch releases under a session of the embedded store
 * (claim.c): the tn_store_ops entries claim and unclaim (backend.h). */
#ifndef TN_STORE_EMBEDDED_CLAIM_H
#define TN_STORE_EMBEDDED_CLAIM_H

#include "store/embedded/embedded.h"

void tn_embedded_claim(struct tn_store *st, const struct tn_claim_req *r,
                       struct tn_store_result *out, tn_store_done_fn done,
                       void *arg);
void tn_embedded_unclaim(struct tn_store *st, const struct tn_unclaim_req *r,
                         struct tn_store_result *out, tn_store_done_fn done,
                         void *arg);

#endif
