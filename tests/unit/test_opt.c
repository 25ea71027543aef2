/* SPDX-License-Identifier: MIT */
/* The values of the option parser (src/common/opt_value.c) that every
 * binary's table goes through: each type takes what it documents and
 * refuses the rest with one message "SUBJECT: expected ..., got 'V'";
 * integer bounds are inclusive; --opt=value and --opt value are the same;
 * a config file's "name = value" goes through the same setters.  The argv
 * walk, the environment and --help are in test_opt_parse.c. */
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
        cmocka_unit_test(test_opt__set_named),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
