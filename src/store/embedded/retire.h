/* SPDX-License-Identifier: MIT */
/* Retiring names of the embedded store (--retain-ms; retire.c). */
#ifndef TN_STORE_EMBEDDED_RETIRE_H
#define TN_STORE_EMBEDDED_RETIRE_H

#include "store/embedded/embedded.h"

/* Arm the sweep's timer when e->retain_ms > 0; with 0, names are kept for
 * ever and nothing is armed.  Loop thread, once the table is loaded. */
void tn_embedded_retire_start(struct embedded *e);
/* Disarm the sweep: nothing is retired after this (the store closes). */
void tn_embedded_retire_stop(struct embedded *e);

#endif
