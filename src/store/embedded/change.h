/* SPDX-License-Identifier: MIT */
/* A change of the embedded store into the open batch, and answers that
 * wait for the commit of what they reveal (change.c). */
#ifndef TN_STORE_EMBEDDED_CHANGE_H
#define TN_STORE_EMBEDDED_CHANGE_H

#include <stdint.h>

#include "store/embedded/embedded.h"

/* The start of every operation: the store s is, with the time the
 * operation sees in *now, or NULL when a failed disk refuses it (then
 * answered already: TN_EUNAVAIL or TN_ENOSPC). */
struct embedded *tn_embedded_op_begin(struct tn_store *s,
                                      struct tn_store_result *out,
                                      tn_store_done_fn done, void *arg,
                                      int64_t *now);
/* Persist l (its row into the open batch); whoever answers about it
 * waits for l->seq (tn_embedded_finish). */
void tn_embedded_commit_row(struct embedded *e, struct tn_lease_entry *l);
/* Persist l and answer done(arg) after its commit. */
void tn_embedded_commit_change(struct embedded *e, struct tn_lease_entry *l,
                               struct tn_store_result *out,
                               tn_store_done_fn done, void *arg);
/* Answer done(arg) once the state seen at change seq is durable. */
void tn_embedded_finish(struct embedded *e, uint64_t seq,
                        struct tn_store_result *out, tn_store_done_fn done,
                        void *arg);

#endif
