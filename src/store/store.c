/* SPDX-License-Identifier: MIT */
/* The store registry: one line per backend in backends.def, with the
 * --store spellings it answers and what it supports.  `tenured --store`
 * opens through tn_store_open; the contract suite runs every line
 * (tests/contract/).  Adding a backend: its folder beside embedded/ and
 * pg/, exporting one `const struct tn_store_ops tn_store_NAME_ops`, and
 * its line in backends.def (docs/CONTRIBUTING.md). */
#include "store/store.h"

#include <string.h>

/* Each line declares its backend's vtable... */
#define TN_STORE_BACKEND(name, schemes, caps, test_env)                        \
    extern const struct tn_store_ops tn_store_##name##_ops;
#include "store/backends.def"
#undef TN_STORE_BACKEND

/* ...and is one row of the registry. */
#define SCHEMES(...) ((const char *const[]){__VA_ARGS__, NULL})
/* clang-format off */
#define CAPS(...) {__VA_ARGS__}
/* clang-format on */
#define TN_STORE_BACKEND(name, schemes, caps, test_env)                        \
    {#name, schemes, &tn_store_##name##_ops, caps, test_env},
static const struct tn_store_backend backends[] = {
#include "store/backends.def"
};
#undef TN_STORE_BACKEND
#undef CAPS
#undef SCHEMES

#define N_BACKENDS (sizeof(backends) / sizeof(backends[0]))

const struct tn_store_backend *tn_store_backends(size_t *n)
{
    *n = N_BACKENDS;
    return backends;
}

static bool answers(const struct tn_store_backend *b, const char *url)
{
    for (const char *const *s = b->schemes; *s != NULL; s++) {
        if ((*s)[0] == '\0' ? url[0] == '\0'
                            : strncmp(url, *s, strlen(*s)) == 0)
            return true;
    }
    return false;
}

const struct tn_store_backend *tn_store_backend_for(const char *url)
{
    if (url == NULL)
        url = "";
    for (size_t i = 0; i < N_BACKENDS; i++) {
        if (answers(&backends[i], url))
            return &backends[i];
    }
    return NULL;
}

const struct tn_store_backend *tn_store_backend_named(const char *name)
{
    for (size_t i = 0; i < N_BACKENDS; i++) {
        if (strcmp(backends[i].name, name) == 0)
            return &backends[i];
    }
    return NULL;
}

int tn_store_open_with(const struct tn_store_backend *b, struct tn_loop *loop,
                       const struct tn_store_config *cfg, struct tn_store **out,
                       struct tn_errmsg *em)
{
    *out = NULL;
    int rc = b->ops->open(loop, cfg, out, em);
    if (rc == 0)
        (*out)->backend = b;
    return rc;
}

/* Append text to out (cap bytes, n used) if it fits; the new n. */
static size_t put(char *out, size_t cap, size_t n, const char *text)
{
    size_t len = strlen(text);
    if (n + len >= cap)
        return n;
    memcpy(out + n, text, len + 1);
    return n + len;
}

/* Every spelling of the registry, for the error of an unknown --store:
 * "(empty) for embedded, postgresql://... or postgres://... for pg". */
static void spellings(char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < N_BACKENDS; i++) {
        const char *const *first = backends[i].schemes;
        for (const char *const *s = first; *s != NULL; s++) {
            n = put(out, cap, n, s != first ? " or " : i > 0 ? ", " : "");
            n = put(out, cap, n, (*s)[0] == '\0' ? "(empty)" : *s);
            n = put(out, cap, n, (*s)[0] == '\0' ? "" : "...");
        }
        n = put(out, cap, n, " for ");
        n = put(out, cap, n, backends[i].name);
    }
}

int tn_store_open(struct tn_loop *loop, const struct tn_store_config *cfg,
                  struct tn_store **out, struct tn_errmsg *em)
{
    *out = NULL;
    const struct tn_store_backend *b = tn_store_backend_for(cfg->url);
    if (b == NULL) {
        char known[256];
        spellings(known, sizeof(known));
        tn_errmsg_set(em, "unknown store \"%s\"; --store takes %s", cfg->url,
                      known);
        return TN_EINVAL;
    }
    return tn_store_open_with(b, loop, cfg, out, em);
}
