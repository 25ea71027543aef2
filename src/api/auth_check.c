/* SPDX-License-Identifier: MIT */
/* The decisions made from a loaded auth table (CONTRACT §9): who a bearer
 * token or a certificate's CN names, and what that principal may do.
 * Tokens are compared by their SHA-256, in constant time, with every hash
 * of every principal every time; nothing here keeps or logs a token. */
#include <string.h>
#include <strings.h>

#include "auth_int.h"
#include "common/name.h"

static bool is_b64token_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
           c == '~' || c == '+' || c == '/';
}

/* The token of "Bearer <token>", or TN_EUNAUTH.  Looks only at the
 * header's shape, never at secrets, so its early exits leak nothing. */
static int bearer_token(const char *h, const char **tok_out, size_t *len_out)
{
    if (h == NULL || strncasecmp(h, "Bearer", 6) != 0 || h[6] != ' ')
        return TN_EUNAUTH;
    const char *p = h + 6;
    while (*p == ' ')
        p++;
    const char *start = p;
    while (is_b64token_char(*p))
        p++;
    while (*p == '=')
        p++;
    size_t len = (size_t)(p - start);
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != '\0' || len == 0 || len > TN_AUTH_TOKEN_MAX_BYTES)
        return TN_EUNAUTH;
    *tok_out = start;
    *len_out = len;
    return TN_OK;
}

int tn_auth_authenticate(const struct tn_auth *a, const char *authorization,
                         const struct tn_auth_principal **out)
{
    const char *tok = NULL;
    size_t len = 0;
    *out = NULL;
    if (bearer_token(authorization, &tok, &len) < 0)
        return TN_EUNAUTH;
    uint8_t h[HASH_BYTES];
    (void)crypto_hash_sha256(h, (const unsigned char *)tok, len);
    /* Compare with every hash of every principal and select the match
     * with masks, so the time taken depends only on the number of hashes
     * in the file, never on which (if any) matched.  Hashes are unique,
     * so at most one does. */
    size_t match = 0;
    size_t found = 0;
    for (size_t i = 0; i < a->n; i++) {
        const struct tn_auth_principal *p = &a->principals[i];
        for (size_t k = 0; k < p->n_hashes; k++) {
            size_t eq = (size_t)(sodium_memcmp(h, p->hash[k], HASH_BYTES) == 0);
            size_t mask = (size_t)0 - eq;
            match = (match & ~mask) | (i & mask);
            found |= eq;
        }
    }
    sodium_memzero(h, sizeof(h));
    if (found == 0)
        return TN_EUNAUTH;
    *out = &a->principals[match];
    return TN_OK;
}

const struct tn_auth_principal *
tn_auth_find_principal(const struct tn_auth *a, const char *name, size_t len)
{
    for (size_t i = 0; i < a->n; i++) {
        const struct tn_auth_principal *p = &a->principals[i];
        if (p->name_len == len && memcmp(p->name, name, len) == 0)
            return p;
    }
    return NULL;
}

int tn_auth_authorize(const struct tn_auth_principal *p,
                      enum tn_auth_action act, const char *name,
                      size_t name_len)
{
    if (p->admin)
        return TN_OK;
    if (act != TN_AUTH_ACQUIRE && act != TN_AUTH_READ)
        return TN_EFORBIDDEN;
    for (size_t i = 0; i < p->n_rules; i++) {
        const struct rule *r = &p->rules[i];
        if ((r->actions & ACT_BIT(act)) != 0 && r->prefix_len <= name_len &&
            (r->prefix_len == 0 || memcmp(r->prefix, name, r->prefix_len) == 0))
            return TN_OK;
    }
    return TN_EFORBIDDEN;
}

int tn_auth_authorize_some(const struct tn_auth_principal *p,
                           enum tn_auth_action act)
{
    if (p->admin)
        return TN_OK;
    if (act != TN_AUTH_ACQUIRE && act != TN_AUTH_READ)
        return TN_EFORBIDDEN;
    for (size_t i = 0; i < p->n_rules; i++) {
        if ((p->rules[i].actions & ACT_BIT(act)) != 0)
            return TN_OK;
    }
    return TN_EFORBIDDEN;
}

int tn_auth_check_holder(const struct tn_auth_principal *p, const char *holder,
                         size_t holder_len)
{
    if (p->admin)
        return TN_OK;
    if (holder_len == p->name_len && holder_len > 0 &&
        memcmp(holder, p->name, holder_len) == 0)
        return TN_OK;
    return TN_EFORBIDDEN;
}

const char *tn_auth_principal_name(const struct tn_auth_principal *p)
{
    return p->name;
}

bool tn_auth_principal_is_admin(const struct tn_auth_principal *p)
{
    return p->admin;
}
