/* SPDX-License-Identifier: MIT */
/* The embedded store's grant ledger (history.c). */
#ifndef TN_STORE_EMBEDDED_HISTORY_H
#define TN_STORE_EMBEDDED_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/embedded/embedded.h"

int tn_embedded_ledger_init(struct embedded *e, size_t capacity);
void tn_embedded_ledger_clear(struct embedded *e);
void tn_embedded_ledger_free(struct embedded *e);
/* l was just granted (l->token is the new token). */
void tn_embedded_ledger_grant(struct embedded *e, struct tn_lease_entry *l,
                              int64_t now);
/* l's current grant ended at at_ms; false if that was already known. */
bool tn_embedded_ledger_end(struct embedded *e, const struct tn_lease_entry *l,
                            enum tn_grant_end how, int64_t at_ms);
/* Fill out->history with l's grants still in the ring, newest first (the
 * caller notes a grant that ran out first: events.h). */
int tn_embedded_ledger_query(struct embedded *e, struct tn_lease_entry *l,
                             size_t limit, int64_t now,
                             struct tn_store_result *out);
/* Forget l's grants in the ledger (its name is being retired). */
void tn_embedded_ledger_forget(struct embedded *e,
                               const struct tn_lease_entry *l);

#endif
