/* SPDX-License-Identifier: MIT */
/* The store registry (src/store/store.c): every backend, one table line
 * each, with its --store spellings and capabilities.  `tenured --store`
 * opens through it and the contract suite (tests/contract/) runs every
 * backend it lists.  The vtable a backend implements is in backend.h. */
#ifndef TN_STORE_STORE_H
#define TN_STORE_STORE_H

#include <stddef.h>

#include <tenure/err.h>

#include "store/backend.h"

/* The backends, in table order; *n is set to their number. */
const struct tn_store_backend *tn_store_backends(size_t *n);

/* The backend that answers url (--store; "" or NULL: the default store),
 * or NULL when none does. */
const struct tn_store_backend *tn_store_backend_for(const char *url);

/* The backend called name, or NULL. */
const struct tn_store_backend *tn_store_backend_named(const char *name);

/* Open a store of backend b at cfg->url (b answers it, or it is b's first
 * spelling): 0 or the backend's error, with em. */
int tn_store_open_with(const struct tn_store_backend *b, struct tn_loop *loop,
                       const struct tn_store_config *cfg, struct tn_store **out,
                       struct tn_errmsg *em);

/* Open the store cfg->url names, through its backend.  0, or TN_EINVAL
 * (no backend answers the URL) or the backend's error, with em. */
int tn_store_open(struct tn_loop *loop, const struct tn_store_config *cfg,
                  struct tn_store **out, struct tn_errmsg *em);

#endif
