/* SPDX-License-Identifier: MIT */
/* The auth module (CONTRACT §9), its file: strict parsing of the auth file
 * (a good file, then one table row per kind of bad file), file checks and
 * every allocation failing in turn.  What the parsed file then allows
 * (authentication, authorization, holder binding) is in
 * test_auth_access.c.  All table-driven. */
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
#include "auth_fixture.h"
#include "common/alloc.h"
#include "tn_test.h"

#include <cmocka.h>

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
        cmocka_unit_test(test_auth__allocation_failures),
    };
    return TN_RUN_TESTS(tests, setup_good, NULL);
}
