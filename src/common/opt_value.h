/* SPDX-License-Identifier: MIT */
/* The rows of an option table (opt.h parses argv, the environment and
 * files with them) and the setting of one row's field from a value's text
 * (opt_value.c), which is all the parser and the config files share. */
#ifndef TN_COMMON_OPT_VALUE_H
#define TN_COMMON_OPT_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Set row o of t (a row with a value: no ACTION or REFUSED) to value;
 * subject starts the error message ("--name", "TENURE_NAME").  0 or
 * TN_EINVAL, the field unchanged. */
int tn_opt_set(const struct tn_opt_table *t, const struct tn_opt *o,
               const char *value, const char *subject, struct tn_errmsg *em);

/* Parse a decimal 0..UINT64_MAX (digits only).  0 or TN_EINVAL. */
int tn_opt_parse_u64(const char *s, uint64_t *out);

#endif
