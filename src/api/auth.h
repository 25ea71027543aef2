/* SPDX-License-Identifier: MIT */
/* Authentication and authorization of CONTRACT §9: the auth file (principals
 * with the SHA-256 of their bearer token, prefix rules, admins), bearer
 * token checks in constant time, and the action/prefix decision.  It knows
 * nothing of HTTP or of the store: callers pass the Authorization header
 * value, a lease name or list prefix, and the name of the principal that
 * acquired a lease.  A loaded table is immutable; a reload loads a new one
 * and swaps it in.  No token, hash or secret ever leaves this module in a
 * message.  See docs/SECURITY.md. */
#ifndef TN_API_AUTH_H
#define TN_API_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include <tenure/err.h>

/* Caps of the auth file; past them tn_auth_load fails with TN_EINVAL. */
#define TN_AUTH_FILE_MAX_BYTES (1u << 20) /* whole file */
#define TN_AUTH_MAX_PRINCIPALS 4096       /* principals per file */
#define TN_AUTH_MAX_RULES 256             /* allow rules per principal */
#define TN_AUTH_NAME_MAX_BYTES 128        /* principal name */
#define TN_AUTH_TOKEN_MAX_BYTES 4096      /* bearer token */
#define TN_AUTH_MAX_TOKENS 4              /* token hashes per principal */

/* A loaded auth file.  Immutable once loaded, so it may be read from any
 * number of threads at once; its reference count is atomic. */
struct tn_auth;

/* One principal of a loaded file.  Borrowed from its struct tn_auth and
 * valid as long as the caller holds a reference to that table. */
struct tn_auth_principal;

enum tn_auth_action {
    TN_AUTH_ACQUIRE, /* acquire, renew, release of one's own leases */
    TN_AUTH_READ,    /* get, list, check, history, events */
    TN_AUTH_ADMIN,   /* force release and anything else admin-only */
};

/* Parse the auth file at path (JSON, CONTRACT §9):
 *   {"principals": [{"name": "indexer", "token_sha256": "<64 hex>",
 *     "allow": [{"prefix": "shard:", "actions": ["acquire", "read"]}]},
 *    {"name": "ops", "token_sha256": "<64 hex>", "admin": true}]}
 * "token_sha256" may also be a list of 1..TN_AUTH_MAX_TOKENS hashes, any
 * of which authenticates the principal (to rotate a token without a gap).
 * "admin" defaults to false and "allow" to no rules.
 * Strict: unknown keys, unknown action names, wrong types, hex that is not
 * exactly 64 hex digits, an empty or duplicate principal name, a hash that
 * appears twice in the file, an empty "actions" list, prefixes
 * that are not printable UTF-8 of at most 256 bytes, files over the caps
 * above, and files that are not regular or are writable by others all fail
 * with TN_EINVAL and a detail in em that names the principal and field.
 * TN_EIO when the file cannot be read, TN_ENOMEM on out of memory.  On
 * success *out holds one reference (drop it with tn_auth_free).
 * Thread-safe. */
int tn_auth_load(const char *path, struct tn_auth **out, struct tn_errmsg *em);

/* Same, from a buffer (text[0..len), not necessarily NUL-terminated),
 * without the file checks.  For tests and for callers that read the file
 * themselves. */
int tn_auth_parse(const char *text, size_t len, struct tn_auth **out,
                  struct tn_errmsg *em);

/* Take one more reference to a (so that a request parked across a reload
 * keeps its principal alive).  Returns a.  Thread-safe. */
struct tn_auth *tn_auth_ref(struct tn_auth *a);

/* Drop one reference; the last one frees the table and every principal in
 * it.  NULL is a no-op.  Thread-safe. */
void tn_auth_free(struct tn_auth *a);

/* Number of principals in a. */
size_t tn_auth_principal_count(const struct tn_auth *a);

/* Find the principal from the value of an Authorization header, which
 * must be "Bearer <token>": the scheme is case-insensitive and followed by
 * one or more spaces; the token is 1..TN_AUTH_TOKEN_MAX_BYTES characters
 * of RFC 6750's b64token (A-Z a-z 0-9 - . _ ~ + / then optional '=');
 * trailing spaces and tabs are optional whitespace of HTTP and ignored.
 * SHA-256 of the token is compared in constant time with every hash of
 * every principal, all of them every time.  authorization may be NULL (no
 * header).  Returns 0 and a borrowed principal in *out, or TN_EUNAUTH
 * (missing, malformed, another scheme, or unknown token; *out is NULL).
 * Thread-safe. */
int tn_auth_authenticate(const struct tn_auth *a, const char *authorization,
                         const struct tn_auth_principal **out);

/* Look a principal up by name (e.g. the subject CN of a verified client
 * certificate).  NULL when there is none.  Thread-safe. */
const struct tn_auth_principal *
tn_auth_find_principal(const struct tn_auth *a, const char *name, size_t len);

/* May p perform act on name[0..name_len)?  For a lease route, name is the
 * lease name; for list and events it is the requested prefix (possibly
 * empty), and the request is allowed when some rule granting act has a
 * prefix that is a prefix of it, so that a rule never lets a list reach
 * beyond its prefix.  Admins may do everything; TN_AUTH_ADMIN is for
 * admins only.  Returns 0 or TN_EFORBIDDEN.  Thread-safe. */
int tn_auth_authorize(const struct tn_auth_principal *p,
                      enum tn_auth_action act, const char *name,
                      size_t name_len);

/* May p perform act on some name: an admin, or a principal with a rule
 * granting act on any prefix (the session routes, whose names come one
 * by one later, or not at all).  0 or TN_EFORBIDDEN.  Thread-safe. */
int tn_auth_authorize_some(const struct tn_auth_principal *p,
                           enum tn_auth_action act);

/* Renew and release are bound to the principal that acquired the lease:
 * 0 when holder[0..holder_len) (the name stored with the lease) is p's
 * name or p is an admin, TN_EFORBIDDEN otherwise.  A lease acquired while
 * auth was off has an empty holder: only admins may touch it.  Bind by
 * name, so that a reload that changes a principal's token keeps its
 * leases.  Thread-safe. */
int tn_auth_check_holder(const struct tn_auth_principal *p, const char *holder,
                         size_t holder_len);

/* The principal's name (NUL-terminated, printable, no quotes or
 * backslashes, so it can be logged as is).  Borrowed like p. */
const char *tn_auth_principal_name(const struct tn_auth_principal *p);

/* True if p is an admin. */
bool tn_auth_principal_is_admin(const struct tn_auth_principal *p);

/* Name of an action as the auth file spells it ("acquire", "read",
 * "admin"). */
const char *tn_auth_action_name(enum tn_auth_action act);

#endif
