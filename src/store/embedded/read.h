/* SPDX-License-Identifier: MIT */
/* The reads of the embedded store (read.c): the tn_store_ops entries get,
 * check, list and history (backend.h). */
#ifndef TN_STORE_EMBEDDED_READ_H
#define TN_STORE_EMBEDDED_READ_H

#include <stddef.h>
#include <stdint.h>

#include "store/embedded/embedded.h"

void tn_embedded_get(struct tn_store *s, const char *name, size_t name_len,
                     struct tn_store_result *out, tn_store_done_fn done,
                     void *arg);
void tn_embedded_check(struct tn_store *s, const char *name, size_t name_len,
                       uint64_t token, struct tn_store_result *out,
                       tn_store_done_fn done, void *arg);
void tn_embedded_list(struct tn_store *s, const struct tn_list_req *r,
                      struct tn_store_result *out, tn_store_done_fn done,
                      void *arg);
void tn_embedded_history(struct tn_store *s, const char *name, size_t name_len,
                         size_t limit, struct tn_store_result *out,
                         tn_store_done_fn done, void *arg);

#endif
