/* SPDX-License-Identifier: MIT */
/* The loaded auth table, shared by auth.c (the file, the table's
 * lifetime) and auth_check.c (authentication and authorization).
 * Immutable once loaded. */
#ifndef TN_API_AUTH_INT_H
#define TN_API_AUTH_INT_H

#include <sodium.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"

#define HASH_BYTES crypto_hash_sha256_BYTES
#define ACT_BIT(a) (1u << (unsigned)(a))

struct rule {
    char *prefix;      /* owned, NUL-terminated; may be empty */
    size_t prefix_len; /* bytes, <= TN_NAME_MAX_BYTES */
    unsigned actions;  /* ACT_BIT set of enum tn_auth_action, never 0 */
};

struct tn_auth_principal {
    char *name;      /* owned, 1..TN_AUTH_NAME_MAX_BYTES */
    size_t name_len; /* bytes */
    uint8_t hash[TN_AUTH_MAX_TOKENS][HASH_BYTES]; /* SHA-256 of each token */
    size_t n_hashes;                              /* 1..TN_AUTH_MAX_TOKENS */
    bool admin;                                   /* may do everything */
    struct rule *rules;                           /* owned array of n_rules */
    size_t n_rules;                               /* <= TN_AUTH_MAX_RULES */
};

struct tn_auth {
    atomic_uint refs;                     /* >= 1 while reachable */
    struct tn_auth_principal *principals; /* owned array of n */
    size_t n;                             /* <= TN_AUTH_MAX_PRINCIPALS */
};

#endif
