/* SPDX-License-Identifier: MIT */
/* Retiring names of the embedded store (--retain-ms; retire.c). */
#ifndef TN_STORE_EMBEDDED_RETIRE_H
#define TN_STORE_EMBEDDED_RETIRE_H

#include <stdint.h>

#include "store/embedded/embedded.h"

void tn_embedded_retire_start(struct embedded *e);
void tn_embedded_retire_stop(struct embedded *e);
/* A row id a retired name gave back, or 0. */
uint32_t tn_embedded_take_row(struct embedded *e);
/* The table was reloaded from the file: the ids given back are gone. */
void tn_embedded_forget_free_rows(struct embedded *e);

#endif
