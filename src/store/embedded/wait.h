/* SPDX-License-Identifier: MIT */
/* Blocking acquire on the embedded store, FIFO per name (wait.c). */
#ifndef TN_STORE_EMBEDDED_WAIT_H
#define TN_STORE_EMBEDDED_WAIT_H

#include <stdbool.h>

#include "store/embedded/embedded.h"

/* Set up e->waits from cfg's limits: 0 or TN_ENOMEM. */
int tn_embedded_wait_init(struct embedded *e,
                          const struct tn_store_config *cfg);
/* Queue r (which got TN_ECONFLICT or TN_ELOCKDELAY on l) until the name is
 * free, its deadline passes, or the requester goes away.  Returns 0 when
 * queued (done runs later), or TN_ECAPACITY (out->capacity says which
 * limit). */
int tn_embedded_wait(struct embedded *e, struct tn_lease_entry *l,
                     const struct tn_acquire_req *r,
                     struct tn_store_result *out, tn_store_done_fn done,
                     void *arg);
/* True if l has waiters (a non-waiting acquire must not jump them). */
bool tn_embedded_has_waiters(const struct tn_lease_entry *l);
/* The lease l was released or its expiry moved: grant to the first waiter
 * if it is free, else re-arm the name's timer. */
void tn_embedded_wake(struct embedded *e, struct tn_lease_entry *l);
/* Answer every waiter with rc (store failure, shutdown). */
void tn_embedded_fail_waiters(struct embedded *e, int rc);
/* Drop and answer (TN_ECANCELED) the waiter whose wanted_ctx is ctx. */
void tn_embedded_cancel_wait(struct embedded *e, void *ctx);

#endif
