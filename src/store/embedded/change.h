/* SPDX-License-Identifier: MIT */
/* A change of the embedded store into the open batch, and answers that
 * wait for the commit of what they reveal (change.c). */
#ifndef TN_STORE_EMBEDDED_CHANGE_H
#define TN_STORE_EMBEDDED_CHANGE_H

#include <stdint.h>

#include "store/embedded/embedded.h"

/* Persist l and answer done(arg) after its commit. */
void tn_embedded_commit_change(struct embedded *e, struct tn_lease_entry *l,
                               struct tn_store_result *out,
                               tn_store_done_fn done, void *arg);
/* Answer done(arg) once the state seen at change seq is durable. */
void tn_embedded_finish(struct embedded *e, uint64_t seq,
                        struct tn_store_result *out, tn_store_done_fn done,
                        void *arg);

#endif
