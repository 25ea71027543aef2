/* SPDX-License-Identifier: MIT */
/* The auth module (CONTRACT §9), what a parsed auth file allows: bearer
 * authentication, prefix authorization, holder binding, and a reference
 * that outlives a reload.  The file's parsing is in test_auth.c.  All
 * table-driven. */
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

/* The session routes ask for an action on some prefix: whoever has a
 * rule granting it (or is an admin), whatever the rule's prefix. */
static void test_auth__authorize_some(void **state)
{
    (void)state;
    static const struct {
        const char *who;
        enum tn_auth_action act;
        int rc;
    } some[] = {
        {"indexer", ACQ, 0},  {"indexer", RD, 0},  {"reader", RD, 0},
        {"reader", ACQ, NO},  {"ops", ACQ, 0},     {"ops", RD, 0},
        {"ops", ADM, 0},      {"nobody", ACQ, NO}, {"nobody", RD, NO},
        {"indexer", ADM, NO},
    };
    struct tn_auth *a = load_good();
    for (size_t i = 0; i < sizeof(some) / sizeof(some[0]); i++) {
        const struct tn_auth_principal *p =
            tn_auth_find_principal(a, some[i].who, strlen(some[i].who));
        assert_non_null(p);
        int rc = tn_auth_authorize_some(p, some[i].act);
        if (rc != some[i].rc)
            fail_msg("%s %s: expected %s, got %s", some[i].who,
                     tn_auth_action_name(some[i].act), tn_errname(some[i].rc),
                     tn_errname(rc));
    }
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auth__authenticate_table),
        cmocka_unit_test(test_auth__token_length_limit),
        cmocka_unit_test(test_auth__authorize_table),
        cmocka_unit_test(test_auth__authorize_some),
        cmocka_unit_test(test_auth__action_names),
        cmocka_unit_test(test_auth__holder_binding_table),
        cmocka_unit_test(test_auth__reference_keeps_principals),
    };
    return TN_RUN_TESTS(tests, setup_good, NULL);
}
