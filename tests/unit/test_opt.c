/* SPDX-License-Identifier: MIT */
/* The option parser (src/common/opt.c, opt_help.c) that every binary's
 * table goes through: each type takes what it documents and refuses the
 * rest with one message "SUBJECT: what is wrong"; bounds are inclusive;
 * --opt=value and --opt value are the same; an unknown option, a missing
 * value and an operand where none is allowed are refused; argv is permuted
 * as GNU getopt does ("--" ends the options); the environment, defaults
 * and named settings go through the same setters; --help and the Markdown
 * table have the documented layout. */
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

/* Every type, as a binary's table would have it. */
struct vals {
    bool flag;        /* --flag, -f */
    const char *str;  /* --str */
    char text[8];     /* --text: at most 7 bytes */
    char choice[8];   /* --choice a|bb|ccc */
    char list[16];    /* --list, repeatable */
    int64_t i64;      /* --i64 in [-5, 5] */
    int32_t i32;      /* --i32 in [1, 1000] */
    uint64_t u64;     /* --u64 */
    int64_t dur_ms;   /* --dur, 0 allowed */
    int64_t pos_ms;   /* --pos, more than 0 */
    const char *need; /* --need: not empty */
};

enum { ACT_HELP = 1 };

#define AT(f) TN_OPT_AT(struct vals, f)
static const struct tn_opt rows[] = {
    {.name = "flag",
     .short_name = 'f',
     .type = TN_OPT_BOOL,
     AT(flag),
     .help = "a flag"},
    {.name = "str",
     .short_name = 's',
     .type = TN_OPT_STR,
     AT(str),
     .arg = "S",
     .help = "borrowed text"},
    {.name = "text",
     .type = TN_OPT_TEXT,
     AT(text),
     .arg = "T",
     .help = "copied"},
    {.name = "choice",
     .type = TN_OPT_CHOICE,
     AT(choice),
     .choices = "a|bb|ccc",
     .def = "bb",
     .help = "one of three"},
    {.name = "list", .type = TN_OPT_LIST, AT(list), .help = "repeatable"},
    {.name = "i64",
     .type = TN_OPT_INT,
     AT(i64),
     .min = -5,
     .max = 5,
     .help = "small"},
    {.name = "i32",
     .type = TN_OPT_INT,
     AT(i32),
     .min = 1,
     .max = 1000,
     .def = "7",
     .help = "into an int32_t"},
    {.name = "u64", .type = TN_OPT_U64, AT(u64), .help = "a token"},
    {.name = "dur", .type = TN_OPT_DURATION, AT(dur_ms), .help = "0 or more"},
    {.name = "pos",
     .type = TN_OPT_DURATION,
     AT(pos_ms),
     .min = 1,
     .help = "more than 0"},
    {.name = "need",
     .type = TN_OPT_STR,
     AT(need),
     .flags = TN_OPT_NONEMPTY,
     .help = "not empty"},
    {.name = "old", .type = TN_OPT_REFUSED, .help = "is gone; use --str"},
    {.name = "help",
     .short_name = 'h',
     .type = TN_OPT_ACTION,
     .action = ACT_HELP,
     .help = "this text"},
};

/* One parse of the arguments given (NULL-terminated, argv[0] added). */
struct run {
    struct vals v;          /* the values */
    struct tn_opt_parser p; /* the parse */
    struct tn_errmsg em;    /* its message */
    char args[16][64];      /* the arguments' text */
    char *argv[16];         /* argv as the parse left it */
    int argc;               /* its length */
};

static int parse_flags(struct run *r, unsigned flags, ...)
{
    memset(r, 0, sizeof(*r));
    va_list ap;
    va_start(ap, flags);
    const char *a = "prog";
    while (a != NULL && r->argc < 15) {
        (void)snprintf(r->args[r->argc], sizeof(r->args[0]), "%s", a);
        r->argv[r->argc] = r->args[r->argc];
        r->argc++;
        a = va_arg(ap, const char *);
    }
    va_end(ap);
    const struct tn_opt_table t = TN_OPT_TABLE(rows, &r->v);
    tn_opt_parser_init(&r->p, flags);
    tn_opt_parser_add(&r->p, &t);
    int rc = tn_opt_defaults(&t, &r->em);
    return rc < 0 ? rc : tn_opt_parse(&r->p, r->argc, r->argv, &r->em);
}

#define PARSE(r, ...) parse_flags((r), 0, __VA_ARGS__, (const char *)NULL)

/* The message of a refused parse of one argument. */
static const char *refused(struct run *r, const char *arg)
{
    assert_int_equal(PARSE(r, arg), TN_EINVAL);
    return r->em.text;
}

static void test_opt__bool(void **state)
{
    (void)state;
    struct run r;
    assert_int_equal(PARSE(&r, "--flag"), 0);
    assert_true(r.v.flag);
    assert_int_equal(PARSE(&r, "-f"), 0);
    assert_true(r.v.flag);
    assert_int_equal(PARSE(&r, "--flag=true", "--flag=0"), 0);
    assert_false(r.v.flag);
    assert_int_equal(PARSE(&r, "--flag=1"), 0);
    assert_true(r.v.flag);
    /* a flag never takes the next argument as its value */
    assert_int_equal(PARSE(&r, "--flag", "false"), 0);
    assert_true(r.v.flag);
    assert_int_equal(r.p.first_operand, 2);
    assert_string_equal(refused(&r, "--flag=yes"),
                        "--flag: expected true or false, got 'yes'");
}

static void test_opt__strings(void **state)
{
    (void)state;
    struct run r;
    assert_int_equal(PARSE(&r, "--str=abc"), 0);
    assert_ptr_equal(r.v.str, r.args[1] + 6); /* borrowed, not copied */
    assert_int_equal(PARSE(&r, "--str", "-x"), 0);
    assert_string_equal(r.v.str, "-x"); /* a value may start with '-' */
    assert_int_equal(PARSE(&r, "--str="), 0);
    assert_string_equal(r.v.str, "");
    assert_int_equal(PARSE(&r, "-sVAL"), 0);
    assert_string_equal(r.v.str, "VAL");
    assert_int_equal(PARSE(&r, "-fs", "VAL"), 0);
    assert_true(r.v.flag);
    assert_string_equal(r.v.str, "VAL");
    /* text is copied, 7 bytes fit in char[8], 8 do not */
    assert_int_equal(PARSE(&r, "--text", "1234567"), 0);
    assert_string_equal(r.v.text, "1234567");
    assert_string_equal(refused(&r, "--text=12345678"),
                        "--text: too long (at most 7 bytes)");
    assert_string_equal(refused(&r, "--need="), "--need: must not be empty");
    assert_int_equal(PARSE(&r, "--need", "x"), 0);
}

static void test_opt__choice(void **state)
{
    (void)state;
    struct run r;
    assert_int_equal(PARSE(&r, "--flag"), 0);
    assert_string_equal(r.v.choice, "bb"); /* the default */
    assert_int_equal(PARSE(&r, "--choice=ccc"), 0);
    assert_string_equal(r.v.choice, "ccc");
    assert_int_equal(PARSE(&r, "--choice", "a"), 0);
    assert_string_equal(r.v.choice, "a");
    assert_string_equal(refused(&r, "--choice=b"),
                        "--choice: expected a, bb or ccc, got 'b'");
    assert_string_equal(refused(&r, "--choice=cccc"),
                        "--choice: expected a, bb or ccc, got 'cccc'");
}

static void test_opt__list(void **state)
{
    (void)state;
    struct run r;
    assert_int_equal(PARSE(&r, "--list=a", "--list", "b,c"), 0);
    assert_string_equal(r.v.list, "a\nb,c\n");
    /* an empty value clears what came before */
    assert_int_equal(PARSE(&r, "--list=a", "--list=", "--list=d"), 0);
    assert_string_equal(r.v.list, "d\n");
    /* 16 bytes hold 15 of values and line breaks, and the NUL */
    assert_int_equal(PARSE(&r, "--list=123456", "--list=1234567"), 0);
    assert_int_equal(PARSE(&r, "--list=12345678901234"), 0);
    assert_string_equal(refused(&r, "--list=123456789012345"),
                        "--list: too long or repeated too often (the values "
                        "and a line break after each: at most 15 bytes)");
    assert_string_equal(refused(&r, "--list=a\nb"),
                        "--list: a value may not hold a line break");
}

static void test_opt__integer_bounds(void **state)
{
    (void)state;
    struct run r;
    assert_int_equal(PARSE(&r, "--i64=-5", "--i32=1"), 0);
    assert_int_equal(r.v.i64, -5);
    assert_int_equal(r.v.i32, 1);
    assert_int_equal(PARSE(&r, "--i64", "5", "--i32", "1000"), 0);
    assert_int_equal(r.v.i64, 5);
    assert_int_equal(r.v.i32, 1000);
    assert_int_equal(PARSE(&r, "--i64=+3"), 0);
    assert_int_equal(r.v.i64, 3);
    assert_string_equal(refused(&r, "--i64=-6"),
                        "--i64: expected an integer in [-5, 5], got '-6'");
    assert_string_equal(refused(&r, "--i64=6"),
                        "--i64: expected an integer in [-5, 5], got '6'");
    assert_string_equal(refused(&r, "--i32=0"),
                        "--i32: expected an integer in [1, 1000], got '0'");
    assert_string_equal(refused(&r, "--i32=1001"),
                        "--i32: expected an integer in [1, 1000], got '1001'");
    static const char *const bad[] = {
        "--i64=",    "--i64=x",   "--i64=1x",  "--i64=1.5",
        "--i64=0x1", "--i64=1e1", "--i64=- 1", "--i64=99999999999999999999",
    };
    static const char want[] = "--i64: expected an integer in [-5, 5], got '";
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *msg = refused(&r, bad[i]);
        if (strncmp(msg, want, strlen(want)) != 0)
            fail_msg("%s: %s", bad[i], msg);
    }
}

static void test_opt__u64(void **state)
{
    (void)state;
    struct run r;
    assert_int_equal(PARSE(&r, "--u64=0"), 0);
    assert_int_equal(r.v.u64, 0);
    assert_int_equal(PARSE(&r, "--u64", "18446744073709551615"), 0);
    assert_true(r.v.u64 == UINT64_MAX);
    static const char *const bad[] = {"--u64=18446744073709551616",
                                      "--u64=-1",
                                      "--u64=+1",
                                      "--u64= 1",
                                      "--u64=12x",
                                      "--u64="};
    static const char want[] = "--u64: expected a non-negative integer, got '";
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *msg = refused(&r, bad[i]);
        if (strncmp(msg, want, strlen(want)) != 0)
            fail_msg("%s: %s", bad[i], msg);
    }
    uint64_t v = 0;
    assert_int_equal(tn_opt_parse_u64("403", &v), 0);
    assert_int_equal(v, 403);
    assert_int_equal(tn_opt_parse_u64("", &v), TN_EINVAL);
}

static void test_opt__durations(void **state)
{
    (void)state;
    static const struct {
        const char *text; /* as typed */
        int64_t ms;       /* expected; -1 bad, -2 without a unit */
    } cases[] = {
        {"250", -2},
        {"10", -2},
        {"500ms", 500},
        {"10s", 10000},
        {"2m", 120000},
        {"1h", 3600000},
        {"0", 0},
        {"0s", 0},
        {"", -1},
        {"10parsecs", -1},
        {"-1s", -1},
        {"1.5s", -1},
        {"s", -1},
        {" 5s", -1},
        {"99999999999999999999h", -1},
        {"9223372036854775807h", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct run r;
        char arg[64];
        (void)snprintf(arg, sizeof(arg), "--dur=%s", cases[i].text);
        int rc = PARSE(&r, arg);
        const char *want = cases[i].ms == -2   ? "with a unit (ms, s, m or h)"
                           : cases[i].ms == -1 ? "such as 500ms, 10s, 2m or 1h"
                                               : NULL;
        if (want == NULL ? rc != 0 || r.v.dur_ms != cases[i].ms
                         : rc == 0 || strstr(r.em.text, want) == NULL)
            fail_msg("\"%s\": rc %d ms %lld: %s", cases[i].text, rc,
                     (long long)r.v.dur_ms, r.em.text);
    }
    struct run r;
    assert_string_equal(refused(&r, "--dur=10"),
                        "--dur: expected a duration with a unit (ms, s, m or "
                        "h), got '10' (e.g. 10s)");
    assert_string_equal(refused(&r, "--pos=0"),
                        "--pos: expected a duration more than 0, got '0' "
                        "(e.g. 10s)");
    assert_int_equal(PARSE(&r, "--pos", "1ms"), 0);
    assert_int_equal(r.v.pos_ms, 1);
}

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

/* A config file's "name = value": the same setters, its own subject; rows
 * that are not settings are not names. */
static void test_opt__set_named(void **state)
{
    (void)state;
    struct vals v;
    memset(&v, 0, sizeof(v));
    const struct tn_opt_table t = TN_OPT_TABLE(rows, &v);
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_opt_set_named(&t, "i64", "-2", "f:1: i64", &em), 0);
    assert_int_equal(v.i64, -2);
    assert_int_equal(tn_opt_set_named(&t, "i64", "9", "f:2: i64", &em),
                     TN_EINVAL);
    assert_string_equal(em.text,
                        "f:2: i64: expected an integer in [-5, 5], got '9'");
    assert_int_equal(tn_opt_set_named(&t, "help", "1", "f:3: help", &em),
                     TN_EINVAL);
    assert_string_equal(em.text, "f:3: help: unknown option");
    assert_int_equal(tn_opt_set_named(&t, "nope", "1", "f:4: nope", &em),
                     TN_EINVAL);
    assert_string_equal(em.text, "f:4: nope: unknown option");
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
    assert_string_equal(all, "usage: p [-x]\n\nAbout p.\n\n  --x  an x\n\n"
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
        cmocka_unit_test(test_opt__bool),
        cmocka_unit_test(test_opt__strings),
        cmocka_unit_test(test_opt__choice),
        cmocka_unit_test(test_opt__list),
        cmocka_unit_test(test_opt__integer_bounds),
        cmocka_unit_test(test_opt__u64),
        cmocka_unit_test(test_opt__durations),
        cmocka_unit_test(test_opt__unknown_and_missing),
        cmocka_unit_test(test_opt__operands_and_double_dash),
        cmocka_unit_test(test_opt__action_stops),
        cmocka_unit_test(test_opt__tables_required_given),
        cmocka_unit_test(test_opt__environment),
        cmocka_unit_test(test_opt__set_named),
        cmocka_unit_test(test_opt__help_format),
        cmocka_unit_test(test_opt__markdown),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
