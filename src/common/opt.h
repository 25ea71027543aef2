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

#include "common/opt_value.h" /* the rows, and setting one */

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
