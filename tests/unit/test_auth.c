/* SPDX-License-Identifier: MIT */
/* The auth module (CONTRACT §9): strict parsing of the auth file (a good
 * file, then one table row per kind of bad file), file checks, bearer
 * authentication, prefix authorization, holder binding, and every
 * allocation failing in turn.  All table-driven. */
#include <setjmp.h>
#include <sodium.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tenure/err.h>

#include "api/auth.h"
#include "common/alloc.h"
#include "tn_test.h"

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
static void hex_sha256(const char *tok, char out[65])
{
    unsigned char h[crypto_hash_sha256_BYTES];
    (void)crypto_hash_sha256(h, (const unsigned char *)tok, strlen(tok));
    (void)sodium_bin2hex(out, 65, h, sizeof(h));
}

static int setup_good(void **state)
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

static struct tn_auth *load_good(void)
{
    struct tn_auth *a = NULL;
    struct tn_errmsg em = {{0}};
    int rc = tn_auth_parse(good_file, strlen(good_file), &a, &em);
    if (rc != 0)
        fail_msg("good file rejected: %s", em.text);
    return a;
}

static void test_auth__good_file_parses(void **state)
{
    (void)state;
    struct tn_auth *a = load_good();
    assert_int_equal(tn_auth_principal_count(a), N_GOOD);
    for (size_t i = 0; i < N_GOOD; i++) {
        const struct tn_auth_principal *p =
            tn_auth_find_principal(a, tokens[i][0], strlen(tokens[i][0]));
        assert_non_null(p);
        assert_string_equal(tn_auth_principal_name(p), tokens[i][0]);
        assert_int_equal(tn_auth_principal_is_admin(p),
                         strcmp(tokens[i][0], "ops") == 0);
    }
    assert_null(tn_auth_find_principal(a, "index", 5));
    assert_null(tn_auth_find_principal(a, "indexerx", 8));
    tn_auth_free(a);
}

static void test_auth__empty_principals_is_deny_all(void **state)
{
    (void)state;
    struct tn_auth *a = NULL;
    const char *text = "{\"principals\": []}";
    assert_int_equal(tn_auth_parse(text, strlen(text), &a, NULL), 0);
    assert_int_equal(tn_auth_principal_count(a), 0);
    const struct tn_auth_principal *p = NULL;
    assert_int_equal(tn_auth_authenticate(a, "Bearer abc", &p), TN_EUNAUTH);
    assert_null(p);
    tn_auth_free(a);
}

struct bad_case {
    const char *what; /* the kind of mistake */
    const char *text; /* the file */
    const char *says; /* a substring the detail must contain */
};

#define P1 "{\"name\": \"a\", \"token_sha256\": \"" H1 "\""
#define WRAP(x) "{\"principals\": [" x "]}"
#define RULE(x) WRAP(P1 ", \"allow\": [" x "]}")

static const struct bad_case bad_cases[] = {
    {"not JSON", "principals: []", "malformed JSON"},
    {"empty file", "", "malformed JSON"},
    {"trailing garbage", WRAP(P1 "}") " x", "malformed JSON"},
    {"duplicate JSON key", "{\"principals\": [], \"principals\": []}",
     "malformed JSON"},
    {"root is an array", "[]", "object"},
    {"no principals", "{}", "\"principals\" must be an array"},
    {"principals not an array", "{\"principals\": {}}",
     "\"principals\" must be an array"},
    {"unknown top-level key", "{\"principals\": [], \"admins\": []}",
     "unknown top-level key \"admins\""},
    {"principal not an object", WRAP("\"a\""), "principal #1: must be"},
    {"name missing", WRAP("{\"token_sha256\": \"" H1 "\"}"),
     "#1: \"name\" must be"},
    {"name empty", WRAP("{\"name\": \"\", \"token_sha256\": \"" H1 "\"}"),
     "\"name\" must be"},
    {"name not a string", WRAP("{\"name\": 7, \"token_sha256\": \"" H1 "\"}"),
     "\"name\" must be"},
    {"name with a quote",
     WRAP("{\"name\": \"a\\\"b\", \"token_sha256\": \"" H1 "\"}"),
     "\"name\" must be"},
    {"name with a newline",
     WRAP("{\"name\": \"a\\nb\", \"token_sha256\": \"" H1 "\"}"),
     "\"name\" must be"},
    {"name too long",
     WRAP("{\"name\": "
          "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaa\", \"token_sha256\": \"" H1 "\"}"),
     "\"name\" must be"},
    {"duplicate name",
     WRAP(P1 "}, {\"name\": \"a\", \"token_sha256\": \"" H2 "\"}"),
     "principal #2 (\"a\"): duplicate principal name"},
    {"duplicate token hash",
     WRAP(P1 "}, {\"name\": \"b\", \"token_sha256\": \"" H1 "\"}"),
     "principal #2 (\"b\"): same token_sha256 as principal \"a\""},
    {"token_sha256 missing", WRAP("{\"name\": \"a\"}"),
     "(\"a\"): \"token_sha256\" must be"},
    {"token_sha256 short",
     WRAP("{\"name\": \"a\", \"token_sha256\": \"abcd\"}"),
     "\"token_sha256\" must be"},
    {"token_sha256 long",
     WRAP("{\"name\": \"a\", \"token_sha256\": \"" H1 "00\"}"),
     "\"token_sha256\" must be"},
    {"token_sha256 not hex",
     WRAP("{\"name\": \"a\", \"token_sha256\": "
          "\"g111111111111111111111111111111111111111111111111111111111111111"
          "\"}"),
     "\"token_sha256\" must be"},
    {"token_sha256 with sha256sum's tail",
     WRAP("{\"name\": \"a\", \"token_sha256\": \"" H1 "  -\"}"),
     "\"token_sha256\" must be"},
    {"token_sha256 a number", WRAP("{\"name\": \"a\", \"token_sha256\": 1}"),
     "\"token_sha256\" must be"},
    {"token_sha256 an empty list",
     WRAP("{\"name\": \"a\", \"token_sha256\": []}"),
     "or a list of 1-4 of them"},
    {"token_sha256 a list of 5",
     WRAP("{\"name\": \"a\", \"token_sha256\": [\"" H1 "\", \"" H2 "\", \"" H3
          "\", \"" H4 "\", \"" H5 "\"]}"),
     "or a list of 1-4 of them"},
    {"token_sha256 list with a bad entry",
     WRAP("{\"name\": \"a\", \"token_sha256\": [\"" H1 "\", \"x\"]}"),
     "\"token_sha256\" must be"},
    {"token_sha256 list with a number",
     WRAP("{\"name\": \"a\", \"token_sha256\": [\"" H1 "\", 2]}"),
     "\"token_sha256\" must be"},
    {"token_sha256 an object", WRAP("{\"name\": \"a\", \"token_sha256\": {}}"),
     "\"token_sha256\" must be"},
    {"the same hash twice in one principal",
     WRAP("{\"name\": \"a\", \"token_sha256\": [\"" H1 "\", \"" H1 "\"]}"),
     "(\"a\"): the same token_sha256 twice"},
    {"a listed hash shared with another principal",
     WRAP(P1 "}, {\"name\": \"b\", \"token_sha256\": [\"" H2 "\", \"" H1
             "\"]}"),
     "principal #2 (\"b\"): same token_sha256 as principal \"a\""},
    {"hashes differing only in case are the same",
     WRAP("{\"name\": \"a\", \"token_sha256\": \"" HA "\"}, "
          "{\"name\": \"b\", \"token_sha256\": \"" HAU "\"}"),
     "same token_sha256 as principal \"a\""},
    {"unknown principal key", WRAP(P1 ", \"alow\": []}"),
     "(\"a\"): unknown key \"alow\""},
    {"admin not a boolean", WRAP(P1 ", \"admin\": \"yes\"}"),
     "\"admin\" must be true or false"},
    {"allow not an array", WRAP(P1 ", \"allow\": {}}"),
     "\"allow\" must be an array"},
    {"rule not an object", RULE("\"shard:\""), "rule must be an object"},
    {"unknown rule key",
     RULE("{\"prefix\": \"\", \"actions\": [\"read\"], \"deny\": true}"),
     "unknown key \"deny\" in a rule"},
    {"prefix missing", RULE("{\"actions\": [\"read\"]}"),
     "needs a string \"prefix\""},
    {"prefix not a string", RULE("{\"prefix\": 1, \"actions\": [\"read\"]}"),
     "needs a string \"prefix\""},
    {"prefix with a control character",
     RULE("{\"prefix\": \"a\\u0001\", \"actions\": [\"read\"]}"),
     "\"prefix\" must be printable"},
    {"actions missing", RULE("{\"prefix\": \"a\"}"),
     "\"actions\" must be a non-empty array"},
    {"actions empty", RULE("{\"prefix\": \"a\", \"actions\": []}"),
     "\"actions\" must be a non-empty array"},
    {"actions a string", RULE("{\"prefix\": \"a\", \"actions\": \"read\"}"),
     "\"actions\" must be a non-empty array"},
    {"unknown action", RULE("{\"prefix\": \"a\", \"actions\": [\"write\"]}"),
     "unknown action \"write\""},
    {"admin as an action",
     RULE("{\"prefix\": \"a\", \"actions\": [\"read\", \"admin\"]}"),
     "unknown action \"admin\""},
    {"action in upper case",
     RULE("{\"prefix\": \"a\", \"actions\": [\"READ\"]}"),
     "unknown action \"READ\""},
    {"action not a string", RULE("{\"prefix\": \"a\", \"actions\": [1]}"),
     "unknown action \"\""},
    {"second rule bad",
     RULE("{\"prefix\": \"a\", \"actions\": [\"read\"]}, {\"prefix\": \"b\"}"),
     "\"actions\" must be a non-empty array"},
};

static void test_auth__every_bad_file_is_rejected(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        const struct bad_case *c = &bad_cases[i];
        struct tn_auth *a = (struct tn_auth *)1;
        struct tn_errmsg em = {{0}};
        int rc = tn_auth_parse(c->text, strlen(c->text), &a, &em);
        if (rc != TN_EINVAL || a != NULL)
            fail_msg("%s: expected TN_EINVAL, got %s", c->what, tn_errname(rc));
        if (strstr(em.text, c->says) == NULL)
            fail_msg("%s: detail \"%s\" lacks \"%s\"", c->what, em.text,
                     c->says);
        if (strstr(em.text, "auth file") == NULL)
            fail_msg("%s: detail \"%s\" does not say it is the auth file",
                     c->what, em.text);
    }
}

static void test_auth__prefix_at_the_name_limit(void **state)
{
    char text[1024];
    char prefix[300];
    (void)state;
    for (size_t len = 256; len <= 257; len++) {
        memset(prefix, 'p', len);
        prefix[len] = '\0';
        (void)snprintf(text, sizeof(text),
                       RULE("{\"prefix\": \"%s\", \"actions\": [\"read\"]}"),
                       prefix);
        struct tn_auth *a = NULL;
        int rc = tn_auth_parse(text, strlen(text), &a, NULL);
        assert_int_equal(rc, len == 256 ? 0 : TN_EINVAL);
        tn_auth_free(a);
    }
}

static void test_auth__principal_count_limit(void **state)
{
    (void)state;
    size_t cap = (TN_AUTH_MAX_PRINCIPALS + 1) * 128 + 64;
    char *text = tn_malloc(cap);
    assert_non_null(text);
    for (unsigned n = TN_AUTH_MAX_PRINCIPALS; n <= TN_AUTH_MAX_PRINCIPALS + 1;
         n++) {
        size_t len = (size_t)snprintf(text, cap, "{\"principals\": [");
        for (unsigned i = 0; i < n; i++)
            len += (size_t)snprintf(text + len, cap - len,
                                    "%s{\"name\": \"p%u\", \"token_sha256\": "
                                    "\"%064x\"}",
                                    i == 0 ? "" : ",", i, i);
        len += (size_t)snprintf(text + len, cap - len, "]}");
        assert_true(len < cap);
        struct tn_auth *a = NULL;
        struct tn_errmsg em = {{0}};
        int rc = tn_auth_parse(text, len, &a, &em);
        if (n == TN_AUTH_MAX_PRINCIPALS) {
            assert_int_equal(rc, 0);
            assert_int_equal(tn_auth_principal_count(a), n);
            tn_auth_free(a);
        } else {
            assert_int_equal(rc, TN_EINVAL);
            assert_non_null(strstr(em.text, "at most 4096"));
        }
    }
    tn_free(text);
}

/* --- files */

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, mode), 0);
}

static void test_auth__load_checks_the_file(void **state)
{
    char dir[] = "/tmp/tn-auth-test.XXXXXX";
    char path[128];
    (void)state;
    assert_non_null(mkdtemp(dir));
    (void)snprintf(path, sizeof(path), "%s/auth.json", dir);
    struct tn_auth *a = NULL;
    struct tn_errmsg em = {{0}};

    write_file(path, good_file, 0640);
    assert_int_equal(tn_auth_load(path, &a, &em), 0);
    assert_int_equal(tn_auth_principal_count(a), N_GOOD);
    tn_auth_free(a);

    write_file(path, good_file, 0646);
    assert_int_equal(tn_auth_load(path, &a, &em), TN_EINVAL);
    assert_null(a);
    assert_non_null(strstr(em.text, "writable by others"));

    write_file(path, "{\"principals\": 1}", 0600);
    assert_int_equal(tn_auth_load(path, &a, &em), TN_EINVAL);
    assert_non_null(strstr(em.text, "\"principals\" must be"));

    assert_int_equal(tn_auth_load(dir, &a, &em), TN_EINVAL);
    assert_non_null(strstr(em.text, "not a regular file"));

    assert_int_equal(unlink(path), 0);
    assert_int_equal(tn_auth_load(path, &a, &em), TN_EIO);
    assert_non_null(strstr(em.text, "cannot open auth file"));

    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (unsigned i = 0; i <= TN_AUTH_FILE_MAX_BYTES / 16; i++)
        assert_int_equal(fputs("                ", f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(tn_auth_load(path, &a, &em), TN_EINVAL);
    assert_non_null(strstr(em.text, "larger than"));

    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* --- authentication */

struct authn_case {
    const char *header; /* Authorization value, NULL for none */
    const char *who;    /* expected principal, NULL for TN_EUNAUTH */
};

static const struct authn_case authn_cases[] = {
    {"Bearer abc", "indexer"},
    {"Bearer ops-tok", "ops"},
    {"Bearer rd-tok", "reader"},
    {"Bearer none-tok", "nobody"},
    {"Bearer rot-old", "rotating"}, /* either listed hash */
    {"Bearer rot-new", "rotating"},
    {"Bearer rot-newer", NULL},
    {"bearer abc", "indexer"}, /* the scheme is case-insensitive */
    {"BEARER abc", "indexer"},
    {"Bearer   abc", "indexer"}, /* 1*SP after the scheme */
    {"Bearer abc  ", "indexer"}, /* trailing OWS is not the token */
    {"Bearer abc\t", "indexer"},
    {NULL, NULL},      /* no header */
    {"", NULL},        /* empty header */
    {"Bearer", NULL},  /* no token */
    {"Bearer ", NULL}, /* empty bearer */
    {"Bearer    ", NULL},
    {"Bearer abd", NULL},         /* wrong token */
    {"Bearer ab", NULL},          /* a prefix of a right token */
    {"Bearer abcd", NULL},        /* a right token plus more */
    {"Bearer ABC", NULL},         /* tokens are case-sensitive */
    {"Bearer " ABC_SHA256, NULL}, /* the hash is not the token */
    {"Basic YWJjOmFiYw==", NULL}, /* another scheme */
    {"Basic abc", NULL},
    {"Bearerabc", NULL},          /* no space */
    {"Bearer\tabc", NULL},        /* the separator is SP */
    {" Bearer abc", NULL},        /* leading space */
    {"Bearer abc def", NULL},     /* two tokens */
    {"Bearer abc,ops-tok", NULL}, /* a list */
    {"Bearer \"abc\"", NULL},     /* quoted */
    {"Bearer abc\n", NULL},       /* control characters */
    {"Bearer ab=c", NULL},        /* '=' only at the end */
    {"Token abc", NULL},
};

static void test_auth__authenticate_table(void **state)
{
    (void)state;
    struct tn_auth *a = load_good();
    for (size_t i = 0; i < sizeof(authn_cases) / sizeof(authn_cases[0]); i++) {
        const struct authn_case *c = &authn_cases[i];
        const struct tn_auth_principal *p = (void *)1;
        int rc = tn_auth_authenticate(a, c->header, &p);
        const char *h = c->header != NULL ? c->header : "(none)";
        if (c->who == NULL && (rc != TN_EUNAUTH || p != NULL))
            fail_msg("case %zu \"%s\": expected TN_EUNAUTH, got %s", i, h,
                     tn_errname(rc));
        if (c->who != NULL && (rc != 0 || p == NULL ||
                               strcmp(tn_auth_principal_name(p), c->who) != 0))
            fail_msg("case %zu \"%s\": expected %s, got %s", i, h, c->who,
                     rc == 0 ? tn_auth_principal_name(p) : tn_errname(rc));
    }
    tn_auth_free(a);
}

static void test_auth__token_length_limit(void **state)
{
    (void)state;
    char *tok = tn_malloc(TN_AUTH_TOKEN_MAX_BYTES + 16);
    char hex[65];
    char text[512];
    assert_non_null(tok);
    for (size_t len = TN_AUTH_TOKEN_MAX_BYTES;
         len <= TN_AUTH_TOKEN_MAX_BYTES + 1; len++) {
        memcpy(tok, "Bearer ", 7);
        memset(tok + 7, 'k', len);
        tok[7 + len] = '\0';
        hex_sha256(tok + 7, hex);
        (void)snprintf(text, sizeof(text),
                       WRAP("{\"name\": \"long\", \"token_sha256\": \"%s\"}"),
                       hex);
        struct tn_auth *a = NULL;
        assert_int_equal(tn_auth_parse(text, strlen(text), &a, NULL), 0);
        const struct tn_auth_principal *p = NULL;
        int rc = tn_auth_authenticate(a, tok, &p);
        assert_int_equal(rc, len <= TN_AUTH_TOKEN_MAX_BYTES ? 0 : TN_EUNAUTH);
        tn_auth_free(a);
    }
    tn_free(tok);
}

/* --- authorization */

struct authz_case {
    const char *who;         /* principal */
    const char *name;        /* lease name or list prefix */
    enum tn_auth_action act; /* action */
    int rc;                  /* expected */
};

#define ACQ TN_AUTH_ACQUIRE
#define RD TN_AUTH_READ
#define ADM TN_AUTH_ADMIN
#define NO TN_EFORBIDDEN

static const struct authz_case authz_cases[] = {
    /* indexer: acquire+read on "shard:", read on "cfg/" */
    {"indexer", "shard:1", ACQ, 0},
    {"indexer", "shard:1", RD, 0},
    {"indexer", "shard:", ACQ, 0},    /* the prefix itself */
    {"indexer", "shard:", RD, 0},     /* list with exactly its prefix */
    {"indexer", "shard:88", RD, 0},   /* list with a longer prefix */
    {"indexer", "shard", ACQ, NO},    /* shorter than the prefix */
    {"indexer", "shard", RD, NO},     /* a list reaching beyond it */
    {"indexer", "", RD, NO},          /* list of everything */
    {"indexer", "Shard:1", ACQ, NO},  /* byte-wise, case-sensitive */
    {"indexer", "xshard:1", ACQ, NO}, /* prefix, not substring */
    {"indexer", "cfg/a", RD, 0},
    {"indexer", "cfg/a", ACQ, NO}, /* read does not imply acquire */
    {"indexer", "cfg", RD, NO},
    {"indexer", "shard:1", ADM, NO}, /* force release is admin-only */
    {"indexer", "", ADM, NO},
    /* reader: read on "" */
    {"reader", "", RD, 0},
    {"reader", "anything", RD, 0},
    {"reader", "anything", ACQ, NO}, /* read does not imply acquire */
    {"reader", "", ACQ, NO},
    {"reader", "anything", ADM, NO},
    /* ops: admin */
    {"ops", "shard:1", ACQ, 0},
    {"ops", "", RD, 0},
    {"ops", "shard:1", ADM, 0},
    {"ops", "", ADM, 0},
    /* nobody: no rules */
    {"nobody", "shard:1", ACQ, NO},
    {"nobody", "", RD, NO},
    {"nobody", "x", ADM, NO},
};

static void test_auth__authorize_table(void **state)
{
    (void)state;
    struct tn_auth *a = load_good();
    for (size_t i = 0; i < sizeof(authz_cases) / sizeof(authz_cases[0]); i++) {
        const struct authz_case *c = &authz_cases[i];
        const struct tn_auth_principal *p =
            tn_auth_find_principal(a, c->who, strlen(c->who));
        assert_non_null(p);
        int rc = tn_auth_authorize(p, c->act, c->name, strlen(c->name));
        if (rc != c->rc)
            fail_msg("case %zu: %s %s \"%s\": expected %s, got %s", i, c->who,
                     tn_auth_action_name(c->act), c->name, tn_errname(c->rc),
                     tn_errname(rc));
    }
    /* An empty name may come as NULL. */
    const struct tn_auth_principal *r = tn_auth_find_principal(a, "reader", 6);
    assert_int_equal(tn_auth_authorize(r, RD, NULL, 0), 0);
    tn_auth_free(a);
}

static void test_auth__action_names(void **state)
{
    (void)state;
    assert_string_equal(tn_auth_action_name(ACQ), "acquire");
    assert_string_equal(tn_auth_action_name(RD), "read");
    assert_string_equal(tn_auth_action_name(ADM), "admin");
    assert_string_equal(tn_auth_action_name((enum tn_auth_action)9), "unknown");
}

struct holder_case {
    const char *who;    /* principal renewing or releasing */
    const char *holder; /* principal stored with the lease */
    int rc;             /* expected */
};

static const struct holder_case holder_cases[] = {
    {"indexer", "indexer", 0},
    {"indexer", "reader", NO},
    {"indexer", "indexe", NO},
    {"indexer", "indexer2", NO},
    {"indexer", "", NO}, /* acquired while auth was off */
    {"reader", "indexer", NO},
    {"ops", "indexer", 0}, /* admins may do everything */
    {"ops", "", 0},
};

static void test_auth__holder_binding_table(void **state)
{
    (void)state;
    struct tn_auth *a = load_good();
    for (size_t i = 0; i < sizeof(holder_cases) / sizeof(holder_cases[0]);
         i++) {
        const struct holder_case *c = &holder_cases[i];
        const struct tn_auth_principal *p =
            tn_auth_find_principal(a, c->who, strlen(c->who));
        assert_non_null(p);
        int rc = tn_auth_check_holder(p, c->holder, strlen(c->holder));
        if (rc != c->rc)
            fail_msg("case %zu: %s on a lease of \"%s\": expected %s, got %s",
                     i, c->who, c->holder, tn_errname(c->rc), tn_errname(rc));
    }
    tn_auth_free(a);
}

/* A reference outlives the reload that dropped the table's first one. */
static void test_auth__reference_keeps_principals(void **state)
{
    (void)state;
    struct tn_auth *old = load_good();
    const struct tn_auth_principal *p = NULL;
    assert_int_equal(tn_auth_authenticate(old, "Bearer abc", &p), 0);
    struct tn_auth *parked = tn_auth_ref(old);
    tn_auth_free(old); /* the reload swapped it out */
    assert_string_equal(tn_auth_principal_name(p), "indexer");
    assert_int_equal(tn_auth_authorize(p, ACQ, "shard:9", 7), 0);
    tn_auth_free(parked);
    tn_auth_free(NULL);
}

/* Every allocation of a parse failing in turn: TN_ENOMEM, nothing leaks
 * (the ASan build checks), and the parse succeeds once none fails. */
static void test_auth__allocation_failures(void **state)
{
    (void)state;
    for (unsigned long n = 1; n < 1000; n++) {
        struct tn_auth *a = NULL;
        tn_alloc_fail_at(n);
        int rc = tn_auth_parse(good_file, strlen(good_file), &a, NULL);
        tn_alloc_fail_at(0);
        if (rc == 0) {
            assert_int_equal(tn_auth_principal_count(a), N_GOOD);
            tn_auth_free(a);
            return;
        }
        assert_int_equal(rc, TN_ENOMEM);
        assert_null(a);
    }
    fail_msg("the parse never succeeded");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auth__good_file_parses),
        cmocka_unit_test(test_auth__empty_principals_is_deny_all),
        cmocka_unit_test(test_auth__every_bad_file_is_rejected),
        cmocka_unit_test(test_auth__prefix_at_the_name_limit),
        cmocka_unit_test(test_auth__principal_count_limit),
        cmocka_unit_test(test_auth__load_checks_the_file),
        cmocka_unit_test(test_auth__authenticate_table),
        cmocka_unit_test(test_auth__token_length_limit),
        cmocka_unit_test(test_auth__authorize_table),
        cmocka_unit_test(test_auth__action_names),
        cmocka_unit_test(test_auth__holder_binding_table),
        cmocka_unit_test(test_auth__reference_keeps_principals),
        cmocka_unit_test(test_auth__allocation_failures),
    };
    return TN_RUN_TESTS(tests, setup_good, NULL);
}
