/* SPDX-License-Identifier: MIT */
/* What the auth module's tests share: the good auth file of every
 * authentication and authorization case (made by setup_good) and the
 * hashes the tables name. */
#ifndef TN_TEST_AUTH_FIXTURE_H
#define TN_TEST_AUTH_FIXTURE_H

#include <setjmp.h>
#include <sodium.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "api/auth.h"

#include <cmocka.h>

/* printf %s abc | sha256sum: the documented way to make a token_sha256. */
#define ABC_SHA256                                                             \
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/* Arbitrary distinct hashes for principals never authenticated. */
#define H1 "1111111111111111111111111111111111111111111111111111111111111111"
#define H2 "2222222222222222222222222222222222222222222222222222222222222222"
#define H3 "3333333333333333333333333333333333333333333333333333333333333333"
#define H4 "4444444444444444444444444444444444444444444444444444444444444444"
#define H5 "5555555555555555555555555555555555555555555555555555555555555555"
#define HA "abababababababababababababababababababababababababababababababab"
#define HAU "ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB"

/* The file of every authentication and authorization case:
 *   abc      -> "indexer": acquire+read on "shard:", read on "cfg/"
 *   ops-tok  -> "ops": admin
 *   rd-tok   -> "reader": read on everything
 *   none-tok -> "nobody": no rules at all
 *   rot-old, rot-new -> "rotating": read on "r/" (a token being rotated) */
static char good_file[2048];

static const char *const tokens[][2] = {
    {"indexer", "abc"},     {"ops", "ops-tok"},      {"reader", "rd-tok"},
    {"nobody", "none-tok"}, {"rotating", "rot-old"},
};

#define N_GOOD 5

/* Hex SHA-256 of tok, as sha256sum prints it (the "abc" principal pins
 * this against a value sha256sum printed). */
static inline void hex_sha256(const char *tok, char out[65])
{
    unsigned char h[crypto_hash_sha256_BYTES];
    (void)crypto_hash_sha256(h, (const unsigned char *)tok, strlen(tok));
    (void)sodium_bin2hex(out, 65, h, sizeof(h));
}

static inline int setup_good(void **state)
{
    char ops[65];
    char rd[65];
    char none[65];
    char rot_old[65];
    char rot_new[65];
    (void)state;
    hex_sha256("ops-tok", ops);
    hex_sha256("rd-tok", rd);
    hex_sha256("none-tok", none);
    hex_sha256("rot-old", rot_old);
    hex_sha256("rot-new", rot_new);
    int n = snprintf(
        good_file, sizeof(good_file),
        "{\"principals\": ["
        "{\"name\": \"indexer\", \"token_sha256\": \"" ABC_SHA256 "\","
        " \"allow\": [{\"prefix\": \"shard:\", \"actions\": [\"acquire\","
        " \"read\"]}, {\"prefix\": \"cfg/\", \"actions\": [\"read\"]}]},"
        "{\"name\": \"ops\", \"token_sha256\": \"%s\", \"admin\": true},"
        "{\"name\": \"reader\", \"token_sha256\": \"%s\", \"admin\": false,"
        " \"allow\": [{\"prefix\": \"\", \"actions\": [\"read\"]}]},"
        "{\"name\": \"nobody\", \"token_sha256\": \"%s\", \"allow\": []},"
        "{\"name\": \"rotating\", \"token_sha256\": [\"%s\", \"%s\"],"
        " \"allow\": [{\"prefix\": \"r/\", \"actions\": [\"read\"]}]}"
        "]}",
        ops, rd, none, rot_old, rot_new);
    assert_true(n > 0 && (size_t)n < sizeof(good_file));
    return 0;
}

static inline struct tn_auth *load_good(void)
{
    struct tn_auth *a = NULL;
    struct tn_errmsg em = {{0}};
    int rc = tn_auth_parse(good_file, strlen(good_file), &a, &em);
    if (rc != 0)
        fail_msg("good file rejected: %s", em.text);
    return a;
}

/* An auth file of the principals x. */
#define WRAP(x) "{\"principals\": [" x "]}"

#endif
