/* SPDX-License-Identifier: MIT */
/* The fixture of tests/unit/test_opt.c and test_opt_parse.c: a table with
 * a row of every type, and one parse of a NULL-terminated list of
 * arguments into it. */
#ifndef TN_OPT_FIXTURE_H
#define TN_OPT_FIXTURE_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

static inline int parse_flags(struct run *r, unsigned flags, ...)
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
static inline const char *refused(struct run *r, const char *arg)
{
    assert_int_equal(PARSE(r, arg), TN_EINVAL);
    return r->em.text;
}

#endif
