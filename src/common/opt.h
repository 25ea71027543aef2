/* SPDX-License-Identifier: MIT */
/* The option parser of every tenure binary.  A binary declares its options
 * once, as a table of rows (name, type, the field the value goes to,
 * default, bounds, environment variable, help); the same rows parse argv,
 * the environment and "name = value" lines, and print --help and the
 * Markdown reference.  It never prints an error or exits: a failure comes
 * back as TN_EINVAL with one line in the one shape "SUBJECT: what is
 * wrong" (SUBJECT is the option as spelled, the variable or FILE:LINE:
 * name), which the caller prefixes with its name. */
#ifndef TN_COMMON_OPT_H
#define TN_COMMON_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <tenure/err.h>

enum tn_opt_type {
    TN_OPT_BOOL,     /* bool: --x is true, --x=true|false|1|0 */
    TN_OPT_STR,      /* const char *: the value itself, borrowed (argv,
                        environ or the default) */
    TN_OPT_TEXT,     /* char[size]: a copy; too long is an error */
    TN_OPT_CHOICE,   /* char[size]: one of .choices ("a|b|c") */
    TN_OPT_LIST,     /* char[size]: repeatable, each value one line; an
                        empty value clears the list */
    TN_OPT_INT,      /* int32_t or int64_t (by size): decimal in [min, max] */
    TN_OPT_U64,      /* uint64_t: decimal, 0 or more */
    TN_OPT_DURATION, /* int64_t ms: 500ms, 10s, 2m, 1h (or 0), >= min */
    TN_OPT_ACTION,   /* no field: --help, --version; parsing stops there
                        and the row is handed back (.action says which) */
    TN_OPT_REFUSED,  /* no field: a spelling refused with .help as why */
};

enum tn_opt_flags {
    TN_OPT_REQUIRED = 1u << 0,  /* must be given, on argv or by .env */
    TN_OPT_NONEMPTY = 1u << 1,  /* "" is refused: an unset shell variable
                                   is a mistake, never a default */
    TN_OPT_HIDDEN = 1u << 2,    /* left out of --help and the Markdown */
    TN_OPT_ARGV_ONLY = 1u << 3, /* not a config file key, not in the
                                   Markdown (e.g. --config itself) */
};

/* One option.  Rows are usually written with designated initializers and
 * TN_OPT_AT for the field. */
struct tn_opt {
    const char *name;      /* long name without "--", unique in its table */
    char short_name;       /* one-letter alias ('v'), or 0 */
    enum tn_opt_type type; /* how the value is read and stored */
    unsigned flags;        /* enum tn_opt_flags */
    size_t offset;         /* of the field in the table's struct */
    size_t size;           /* of the field, in bytes */
    const char *def;       /* default as text (tn_opt_defaults), or NULL */
    int64_t min;           /* INT: smallest; DURATION: smallest ms */
    int64_t max;           /* INT: largest */
    const char *choices;   /* CHOICE: the values, '|' between them */
    const char *arg;       /* placeholder in --help ("DUR"), or NULL */
    const char *env;       /* environment variable, or NULL (see
                              tn_opt_table.env_prefix) */
    const char *help;      /* --help text; REFUSED: the reason */
    const char *why;       /* why the default, for the Markdown, or NULL */
    int action;            /* ACTION: the caller's code for it */
};

/* The field a row fills: .offset and .size of MEMBER in TYPE. */
#define TN_OPT_AT(type, member)                                                \
    .offset = offsetof(type, member), .size = sizeof(((type *)0)->member)

/* Rows and the struct their offsets point into. */
struct tn_opt_table {
    const struct tn_opt *opts; /* the rows */
    size_t n_opts;             /* how many, at most TN_OPT_MAX_ROWS */
    void *base;                /* the struct the values go into */
    const char *env_prefix;    /* rows without .env read PREFIX + NAME in
                                  upper case, '-' as '_'; or NULL */
};

#define TN_OPT_TABLE(rows, base)                                               \
    {                                                                          \
        (rows), sizeof(rows) / sizeof((rows)[0]), (base), NULL                 \
    }

#define TN_OPT_MAX_TABLES 4
#define TN_OPT_MAX_ROWS 128

enum tn_opt_parse_flags {
    TN_OPT_STOP_AT_OPERAND = 1u << 0, /* options end at the first operand
                                         (a command name follows) */
    TN_OPT_NO_OPERANDS = 1u << 1,     /* any operand is an error */
    TN_OPT_ENV_SKIP_EMPTY = 1u << 2,  /* tn_opt_env: "" counts as unset */
};

/* Where a row's value came from (bits of tn_opt_parser.from). */
enum tn_opt_source {
    TN_OPT_FROM_ENV = 1u << 0,
    TN_OPT_FROM_ARGV = 1u << 1,
};

/* The state of one parse over one or more tables. */
struct tn_opt_parser {
    struct tn_opt_table tables[TN_OPT_MAX_TABLES]; /* searched in order */
    size_t n_tables;                               /* in use */
    unsigned flags;                                /* tn_opt_parse_flags */
    int first_operand;           /* after tn_opt_parse: argv index of the
                                    first operand, argc when none */
    const struct tn_opt *action; /* the ACTION row that ended parsing */
    unsigned char from[TN_OPT_MAX_TABLES][TN_OPT_MAX_ROWS]; /* sources */
};

/* Start a parse with flags (enum tn_opt_parse_flags) and no table. */
void tn_opt_parser_init(struct tn_opt_parser *p, unsigned flags);
/* Add a table (copied); a name is looked up in the order tables were
 * added, so a command's own table goes before the shared one. */
void tn_opt_parser_add(struct tn_opt_parser *p, const struct tn_opt_table *t);

/* Set every row of t that has a default.  0, or TN_EINVAL when a default
 * does not parse (a bug in the table; the message says which). */
int tn_opt_defaults(const struct tn_opt_table *t, struct tn_errmsg *em);

/* Set every row whose environment variable is set (the table's rows in
 * order).  0 or TN_EINVAL. */
int tn_opt_env(struct tn_opt_parser *p, struct tn_errmsg *em);

/* Parse argv[1..argc): long options (--name VALUE, --name=VALUE), short
 * ones (-v, clustered -hv, -xVALUE), "--" ending the options, operands
 * anywhere (unless TN_OPT_STOP_AT_OPERAND).  argv is permuted as GNU
 * getopt does: options first, then (after "--" when given) the operands,
 * from p->first_operand.  On an ACTION row, stops and sets p->action.
 * Then checks TN_OPT_REQUIRED rows.  0 or TN_EINVAL with em set. */
int tn_opt_parse(struct tn_opt_parser *p, int argc, char **argv,
                 struct tn_errmsg *em);

/* Set row o of t (a row with a value: no ACTION or REFUSED) to value;
 * subject starts the error message ("--name", "TENURE_NAME").  0 or
 * TN_EINVAL, the field unchanged. */
int tn_opt_set(const struct tn_opt_table *t, const struct tn_opt *o,
               const char *value, const char *subject, struct tn_errmsg *em);

/* Set the row named name (a settable row: no ACTION, REFUSED or
 * TN_OPT_ARGV_ONLY) to value; subject starts the error message ("FILE:3:
 * name").  0 or TN_EINVAL (also for an unknown name). */
int tn_opt_set_named(const struct tn_opt_table *t, const char *name,
                     const char *value, const char *subject,
                     struct tn_errmsg *em);

/* Whether the row named name was given on the command line. */
bool tn_opt_given(const struct tn_opt_parser *p, const char *name);

/* The environment variable of row o of t into out; false when it has
 * none. */
bool tn_opt_env_name(const struct tn_opt_table *t, const struct tn_opt *o,
                     char *out, size_t cap);

/* Parse a decimal 0..UINT64_MAX (digits only).  0 or TN_EINVAL. */
int tn_opt_parse_u64(const char *s, uint64_t *out);

/* --help: the rows of tables[0..n) that are not TN_OPT_HIDDEN, one entry
 * each ("  -v, --name ARG   help (default: D; env E)"), wrapped at 79
 * columns with the help text aligned. */
void tn_opt_help_rows(FILE *f, const struct tn_opt_table *tables, size_t n);

/* A whole --help: usage, a blank line and about (when not NULL), a blank
 * line, "Options:" and the rows (help2man makes the OPTIONS section of
 * them), a blank line and footer (when not NULL).  Each text ends with a
 * newline. */
struct tn_opt_help {
    const char *usage;  /* the usage line(s) */
    const char *about;  /* what the program does, or NULL */
    const char *footer; /* after the options (exit codes), or NULL */
};
void tn_opt_help(FILE *f, const struct tn_opt_help *h,
                 const struct tn_opt_table *t);

/* The settable rows of t as a Markdown table: flag, environment, default,
 * meaning, why this default. */
void tn_opt_markdown(FILE *f, const struct tn_opt_table *t);

#endif
