/* SPDX-License-Identifier: MIT */
/* The argv walk of the option parser (src/common/opt.c) and its printers
 * (opt_help.c): an unknown option, a missing value and an operand where
 * none is allowed are refused in the one message shape; argv is permuted
 * as GNU getopt does ("--" ends the options); an action (--help) ends the
 * parse; required rows, several tables and the environment; --help and the
 * Markdown table have the documented layout.  The values of each type are
 * in test_opt.c. */
/* clang-format off: cmocka.h needs these headers first */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tn_test.h"

#include <cmocka.h>
/* clang-format on */

#include "common/opt.h"
#include "opt_fixture.h"

static void test_opt__unknown_and_missing(void **state)
{
    (void)state;
    struct run r;
    assert_string_equal(refused(&r, "--frob"), "--frob: unknown option");
    assert_string_equal(refused(&r, "--frob=1"), "--frob: unknown option");
    assert_string_equal(refused(&r, "-x"), "-x: unknown option");
    assert_string_equal(refused(&r, "-fx"), "-x: unknown option");
    /* no abbreviation: a prefix of a name is no option */
    assert_string_equal(refused(&r, "--fla"), "--fla: unknown option");
    assert_string_equal(refused(&r, "--str"), "--str: needs a value");
    assert_string_equal(refused(&r, "-s"), "-s: needs a value");
    assert_string_equal(refused(&r, "--old=x"), "--old: is gone; use --str");
    assert_string_equal(refused(&r, "--help=x"), "--help: takes no value");
}

static void test_opt__operands_and_double_dash(void **state)
{
    (void)state;
    struct run r;
    /* operands anywhere; argv permuted: options first, operands in order */
    assert_int_equal(PARSE(&r, "a", "--str", "v", "b", "-f", "c"), 0);
    assert_int_equal(r.p.first_operand, 4);
    assert_string_equal(r.argv[1], "--str");
    assert_string_equal(r.argv[2], "v");
    assert_string_equal(r.argv[3], "-f");
    assert_string_equal(r.argv[4], "a");
    assert_string_equal(r.argv[5], "b");
    assert_string_equal(r.argv[6], "c");
    /* "--" ends the options: after it, "-x" is an operand; "-" always is */
    assert_int_equal(PARSE(&r, "a", "-f", "--", "-x", "--str"), 0);
    assert_int_equal(r.p.first_operand, 3);
    assert_string_equal(r.argv[2], "--");
    assert_string_equal(r.argv[3], "a");
    assert_string_equal(r.argv[4], "-x");
    assert_string_equal(r.argv[5], "--str");
    assert_null(r.v.str);
    assert_int_equal(PARSE(&r, "-"), 0);
    assert_int_equal(r.p.first_operand, 1);
    /* the permuted argv parses again to the same result */
    assert_int_equal(tn_opt_parse(&r.p, r.argc, r.argv, &r.em), 0);
    /* options before a command only */
    assert_int_equal(
        parse_flags(&r, TN_OPT_STOP_AT_OPERAND, "-f", "cmd", "--frob", NULL),
        0);
    assert_int_equal(r.p.first_operand, 2);
    assert_true(r.v.flag);
    assert_int_equal(
        parse_flags(&r, TN_OPT_NO_OPERANDS, "-f", "serve", "--frob", NULL),
        TN_EINVAL);
    assert_string_equal(r.em.text, "unexpected argument 'serve'");
    assert_int_equal(parse_flags(&r, TN_OPT_NO_OPERANDS, "-f", NULL), 0);
    assert_int_equal(r.p.first_operand, 2);
}

static void test_opt__action_stops(void **state)
{
    (void)state;
    struct run r;
    assert_int_equal(PARSE(&r, "--i32=5", "--help", "--frob", "--i32=x"), 0);
    assert_non_null(r.p.action);
    assert_int_equal(r.p.action->action, ACT_HELP);
    assert_int_equal(r.v.i32, 5);
    assert_int_equal(PARSE(&r, "-fh", "--frob"), 0);
    assert_non_null(r.p.action);
    assert_true(r.v.flag);
    assert_int_equal(PARSE(&r, "-f"), 0);
    assert_null(r.p.action);
}

/* Two tables: the first one's row wins a name both have; a required row
 * is satisfied by argv or its variable; given means on argv. */
struct extra {
    const char *str; /* --str of the second table: never reached */
    const char *req; /* --req, required */
};
static const struct tn_opt extra_rows[] = {
    {.name = "str", .type = TN_OPT_STR, TN_OPT_AT(struct extra, str)},
    {.name = "req",
     .type = TN_OPT_STR,
     TN_OPT_AT(struct extra, req),
     .flags = TN_OPT_REQUIRED,
     .env = "TN_TEST_OPT_REQ"},
};

static int parse_two(struct vals *v, struct extra *x, struct tn_opt_parser *p,
                     int argc, char **argv, struct tn_errmsg *em)
{
    const struct tn_opt_table a = TN_OPT_TABLE(rows, v);
    const struct tn_opt_table b = TN_OPT_TABLE(extra_rows, x);
    memset(v, 0, sizeof(*v));
    memset(x, 0, sizeof(*x));
    tn_opt_parser_init(p, 0);
    tn_opt_parser_add(p, &a);
    tn_opt_parser_add(p, &b);
    int rc = tn_opt_env(p, em);
    return rc < 0 ? rc : tn_opt_parse(p, argc, argv, em);
}

static void test_opt__tables_required_given(void **state)
{
    (void)state;
    struct vals v;
    struct extra x;
    struct tn_opt_parser p;
    struct tn_errmsg em = {{0}};
    char s0[] = "prog", s1[] = "--str", s2[] = "s", s3[] = "--req=r";
    char s4[] = "-f";
    char *a1[] = {s0, s1, s2, s3, NULL};
    assert_int_equal(parse_two(&v, &x, &p, 4, a1, &em), 0);
    assert_string_equal(v.str, "s");
    assert_null(x.str);
    assert_string_equal(x.req, "r");
    assert_true(tn_opt_given(&p, "req"));
    assert_true(tn_opt_given(&p, "str"));
    assert_false(tn_opt_given(&p, "flag"));
    char *a2[] = {s0, s4, NULL};
    assert_int_equal(parse_two(&v, &x, &p, 2, a2, &em), TN_EINVAL);
    assert_string_equal(em.text, "--req: is required");
    setenv("TN_TEST_OPT_REQ", "from-env", 1);
    assert_int_equal(parse_two(&v, &x, &p, 2, a2, &em), 0);
    assert_string_equal(x.req, "from-env");
    assert_false(tn_opt_given(&p, "req")); /* the environment, not argv */
    unsetenv("TN_TEST_OPT_REQ");
}

/* Variables: a table's prefix names every row, .env one row; a bad value
 * is refused naming the variable; with TN_OPT_ENV_SKIP_EMPTY "" is unset. */
static void test_opt__environment(void **state)
{
    (void)state;
    struct vals v;
    memset(&v, 0, sizeof(v));
    struct tn_opt_table t = TN_OPT_TABLE(rows, &v);
    t.env_prefix = "TN_TEST_";
    struct tn_opt_parser p;
    struct tn_errmsg em = {{0}};
    char name[64];
    /* rows[6] is --i32, rows[12] --help: an action has no variable */
    assert_true(tn_opt_env_name(&t, &rows[6], name, sizeof(name)));
    assert_string_equal(name, "TN_TEST_I32");
    assert_false(tn_opt_env_name(&t, &rows[12], name, sizeof(name)));
    setenv("TN_TEST_I32", "12", 1);
    setenv("TN_TEST_STR", "", 1);
    tn_opt_parser_init(&p, 0);
    tn_opt_parser_add(&p, &t);
    assert_int_equal(tn_opt_env(&p, &em), 0);
    assert_int_equal(v.i32, 12);
    assert_string_equal(v.str, "");
    v.str = NULL;
    tn_opt_parser_init(&p, TN_OPT_ENV_SKIP_EMPTY);
    tn_opt_parser_add(&p, &t);
    assert_int_equal(tn_opt_env(&p, &em), 0);
    assert_null(v.str);
    setenv("TN_TEST_I32", "0", 1);
    assert_int_equal(tn_opt_env(&p, &em), TN_EINVAL);
    assert_string_equal(
        em.text, "TN_TEST_I32: expected an integer in [1, 1000], got '0'");
    unsetenv("TN_TEST_I32");
    unsetenv("TN_TEST_STR");
}

static char *printed(void (*print)(FILE *f, const struct tn_opt_table *t),
                     const struct tn_opt_table *t)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    print(f, t);
    (void)fclose(f);
    return text;
}

/* A small table of what the layout must handle: a short alias, a
 * placeholder, a default and a variable, a text that wraps, an entry too
 * wide for the column, and rows left out. */
static const struct tn_opt help_rows[] = {
    {.name = "verbose",
     .short_name = 'v',
     .type = TN_OPT_BOOL,
     .help = "say more"},
    {.name = "ttl",
     .type = TN_OPT_DURATION,
     .def = "10s",
     .arg = "DUR",
     .help = "time to live"},
    {.name = "store",
     .type = TN_OPT_STR,
     .def = "",
     .env = "X_STORE",
     .help = "where the leases live: empty for the embedded store, or a "
             "postgresql:// URL naming the database"},
    {.name = "a-very-long-option-name",
     .type = TN_OPT_STR,
     .arg = "VALUE",
     .help = "text on the next line"},
    {.name = "secret", .type = TN_OPT_STR, .flags = TN_OPT_HIDDEN, .help = "x"},
    {.name = "old", .type = TN_OPT_REFUSED, .help = "gone"},
    {.name = "help", .type = TN_OPT_ACTION, .help = "this text"},
};

static void rows_of(FILE *f, const struct tn_opt_table *t)
{
    tn_opt_help_rows(f, t, 1);
}

static void test_opt__help_format(void **state)
{
    (void)state;
    const struct tn_opt_table t = TN_OPT_TABLE(help_rows, NULL);
    char *text = printed(rows_of, &t);
    assert_string_equal(
        text,
        "  -v, --verbose             say more\n"
        "  --ttl DUR                 time to live\n"
        "                            (default: 10s)\n"
        "  --store                   where the leases live: empty for the "
        "embedded\n"
        "                            store, or a postgresql:// URL naming the "
        "database\n"
        "                            (default: (empty); env X_STORE)\n"
        "  --a-very-long-option-name VALUE\n"
        "                            text on the next line\n"
        "  --help                    this text\n");
    free(text);
    /* usage, about and footer around the rows, a blank line between */
    static const struct tn_opt one[] = {
        {.name = "x", .type = TN_OPT_BOOL, .help = "an x"}};
    const struct tn_opt_table t1 = TN_OPT_TABLE(one, NULL);
    const struct tn_opt_help h = {"usage: p [-x]\n", "About p.\n",
                                  "Exit: 0.\n"};
    char *all = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&all, &len);
    assert_non_null(f);
    tn_opt_help(f, &h, &t1);
    (void)fclose(f);
    assert_string_equal(all,
                        "usage: p [-x]\n\nAbout p.\n\nOptions:\n  --x  an x\n\n"
                        "Exit: 0.\n");
    free(all);
}

static void test_opt__markdown(void **state)
{
    (void)state;
    struct tn_opt_table t = TN_OPT_TABLE(help_rows, NULL);
    t.env_prefix = "X_";
    char *text = printed(tn_opt_markdown, &t);
    assert_string_equal(
        text,
        "| flag | environment | default | meaning | why this default |\n"
        "|---|---|---|---|---|\n"
        "| `--verbose` | `X_VERBOSE` | `` | say more |  |\n"
        "| `--ttl` | `X_TTL` | `10s` | time to live |  |\n"
        "| `--store` | `X_STORE` | `` | where the leases live: empty for the "
        "embedded store, or a postgresql:// URL naming the database |  |\n"
        "| `--a-very-long-option-name` | `X_A_VERY_LONG_OPTION_NAME` | `` | "
        "text on the next line |  |\n");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opt__unknown_and_missing),
        cmocka_unit_test(test_opt__operands_and_double_dash),
        cmocka_unit_test(test_opt__action_stops),
        cmocka_unit_test(test_opt__tables_required_given),
        cmocka_unit_test(test_opt__environment),
        cmocka_unit_test(test_opt__help_format),
        cmocka_unit_test(test_opt__markdown),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
