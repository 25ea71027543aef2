/* SPDX-License-Identifier: MIT */
/* Parsing against option tables (opt.h): the walk over argv (GNU-style
 * permutation, "--", clustered short options), the environment and
 * settings by name.  The values themselves are read by opt_value.c, one
 * setter per type; --help and the Markdown table are printed by
 * opt_help.c from the same rows.  Nothing is printed here: every error is
 * one line, "SUBJECT: what is wrong", in em. */
#include "common/opt.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/assert.h"

/* A row found by name: its table and its index there. */
struct hit {
    size_t t; /* index in p->tables */
    size_t r; /* index in that table's rows */
};

/* Long names and variables are cut to this in messages. */
#define SUBJECT_MAX 64

static bool is_settable(const struct tn_opt *o)
{
    return o->type != TN_OPT_ACTION && o->type != TN_OPT_REFUSED;
}

void tn_opt_parser_init(struct tn_opt_parser *p, unsigned flags)
{
    memset(p, 0, sizeof(*p));
    p->flags = flags;
}

void tn_opt_parser_add(struct tn_opt_parser *p, const struct tn_opt_table *t)
{
    TN_ASSERT(p->n_tables < TN_OPT_MAX_TABLES);
    TN_ASSERT(t->n_opts <= TN_OPT_MAX_ROWS);
    p->tables[p->n_tables++] = *t;
}

int tn_opt_defaults(const struct tn_opt_table *t, struct tn_errmsg *em)
{
    for (size_t i = 0; i < t->n_opts; i++) {
        const struct tn_opt *o = &t->opts[i];
        if (o->def == NULL || !is_settable(o))
            continue;
        char subject[SUBJECT_MAX + 16];
        (void)snprintf(subject, sizeof(subject), "--%.64s default", o->name);
        int rc = tn_opt_set(t, o, o->def, subject, em);
        if (rc < 0)
            return rc;
    }
    return TN_OK;
}

bool tn_opt_env_name(const struct tn_opt_table *t, const struct tn_opt *o,
                     char *out, size_t cap)
{
    if (o->env != NULL) {
        (void)snprintf(out, cap, "%s", o->env);
        return true;
    }
    if (t->env_prefix == NULL || !is_settable(o) ||
        (o->flags & TN_OPT_ARGV_ONLY) != 0)
        return false;
    int n = snprintf(out, cap, "%s%s", t->env_prefix, o->name);
    for (size_t i = strlen(t->env_prefix); n > 0 && i < (size_t)n && i < cap;
         i++)
        out[i] = out[i] == '-' ? '_' : (char)toupper((unsigned char)out[i]);
    return true;
}

static int env_table(struct tn_opt_parser *p, size_t ti, struct tn_errmsg *em)
{
    const struct tn_opt_table *t = &p->tables[ti];
    for (size_t i = 0; i < t->n_opts; i++) {
        char name[SUBJECT_MAX + 32];
        if (!is_settable(&t->opts[i]) ||
            !tn_opt_env_name(t, &t->opts[i], name, sizeof(name)))
            continue;
        const char *v = getenv(name);
        if (v == NULL ||
            ((p->flags & TN_OPT_ENV_SKIP_EMPTY) != 0 && v[0] == '\0'))
            continue;
        int rc = tn_opt_set(t, &t->opts[i], v, name, em);
        if (rc < 0)
            return rc;
        p->from[ti][i] |= TN_OPT_FROM_ENV;
    }
    return TN_OK;
}

int tn_opt_env(struct tn_opt_parser *p, struct tn_errmsg *em)
{
    int rc = TN_OK;
    for (size_t t = 0; rc == 0 && t < p->n_tables; t++)
        rc = env_table(p, t, em);
    return rc;
}

static bool find_long(const struct tn_opt_parser *p, const char *name,
                      size_t len, struct hit *out)
{
    for (size_t t = 0; t < p->n_tables; t++) {
        for (size_t r = 0; r < p->tables[t].n_opts; r++) {
            const char *n = p->tables[t].opts[r].name;
            if (strlen(n) == len && strncmp(n, name, len) == 0) {
                *out = (struct hit){t, r};
                return true;
            }
        }
    }
    return false;
}

static bool find_short(const struct tn_opt_parser *p, char c, struct hit *out)
{
    for (size_t t = 0; t < p->n_tables; t++) {
        for (size_t r = 0; r < p->tables[t].n_opts; r++) {
            if (p->tables[t].opts[r].short_name == c) {
                *out = (struct hit){t, r};
                return true;
            }
        }
    }
    return false;
}

/* Row h given on argv with value v (NULL for none): the rows without a
 * value end the parse or are refused here, the others are set. */
static int take(struct tn_opt_parser *p, struct hit h, const char *v,
                const char *subject, struct tn_errmsg *em)
{
    const struct tn_opt *o = &p->tables[h.t].opts[h.r];
    if (o->type == TN_OPT_REFUSED) {
        tn_errmsg_set(em, "%s: %s", subject, o->help);
        return TN_EINVAL;
    }
    if (o->type == TN_OPT_ACTION && v != NULL) {
        tn_errmsg_set(em, "%s: takes no value", subject);
        return TN_EINVAL;
    }
    if (o->type == TN_OPT_ACTION) {
        p->action = o;
        return TN_OK;
    }
    if (v == NULL) {
        tn_errmsg_set(em, "%s: needs a value", subject);
        return TN_EINVAL;
    }
    int rc = tn_opt_set(&p->tables[h.t], o, v, subject, em);
    if (rc == 0)
        p->from[h.t][h.r] |= TN_OPT_FROM_ARGV;
    return rc;
}

/* Whether row h takes its value from the next argument when none is
 * attached. */
static bool wants_value(const struct tn_opt_parser *p, struct hit h)
{
    enum tn_opt_type type = p->tables[h.t].opts[h.r].type;
    return type != TN_OPT_BOOL && type != TN_OPT_ACTION &&
           type != TN_OPT_REFUSED;
}

/* The long option argv[i] ("--name" or "--name=value"): the argv slots it
 * took (1 or 2), or TN_EINVAL. */
static int long_opt(struct tn_opt_parser *p, int argc, char **argv, int i,
                    struct tn_errmsg *em)
{
    const char *a = argv[i];
    const char *eq = strchr(a, '=');
    size_t len = eq != NULL ? (size_t)(eq - a) : strlen(a);
    char subject[SUBJECT_MAX + 1];
    (void)snprintf(subject, sizeof(subject), "%.*s",
                   (int)(len < SUBJECT_MAX ? len : SUBJECT_MAX), a);
    struct hit h;
    if (!find_long(p, a + 2, len - 2, &h)) {
        tn_errmsg_set(em, "%s: unknown option", subject);
        return TN_EINVAL;
    }
    const char *v = eq != NULL ? eq + 1 : NULL;
    int used = 1;
    if (v == NULL && p->tables[h.t].opts[h.r].type == TN_OPT_BOOL) {
        v = "true";
    } else if (v == NULL && wants_value(p, h) && i + 1 < argc) {
        v = argv[i + 1];
        used = 2;
    }
    int rc = take(p, h, v, subject, em);
    return rc < 0 ? rc : used;
}

/* The short options of argv[i] ("-v", "-hv", "-xVALUE", "-x VALUE"): the
 * argv slots they took, or TN_EINVAL. */
static int short_opts(struct tn_opt_parser *p, int argc, char **argv, int i,
                      struct tn_errmsg *em)
{
    const char *a = argv[i];
    for (size_t j = 1; a[j] != '\0' && p->action == NULL; j++) {
        char subject[3] = {'-', a[j], '\0'};
        struct hit h;
        if (!find_short(p, a[j], &h)) {
            tn_errmsg_set(em, "%s: unknown option", subject);
            return TN_EINVAL;
        }
        const char *v =
            p->tables[h.t].opts[h.r].type == TN_OPT_BOOL ? "true" : NULL;
        int used = 1;
        if (wants_value(p, h) && a[j + 1] != '\0') {
            v = a + j + 1;
        } else if (wants_value(p, h) && i + 1 < argc) {
            v = argv[i + 1];
            used = 2;
        }
        int rc = take(p, h, v, subject, em);
        if (rc < 0 || wants_value(p, h))
            return rc < 0 ? rc : used;
    }
    return 1;
}

static void reverse(char **v, int a, int b)
{
    for (b--; a < b; a++, b--) {
        char *x = v[a];
        v[a] = v[b];
        v[b] = x;
    }
}

/* Move v[mid..end) before v[start..mid), keeping the order of each. */
static void rotate(char **v, int start, int mid, int end)
{
    if (start == mid || mid == end)
        return;
    reverse(v, start, mid);
    reverse(v, mid, end);
    reverse(v, start, end);
}

static int check_required(const struct tn_opt_parser *p, struct tn_errmsg *em)
{
    for (size_t t = 0; t < p->n_tables; t++) {
        for (size_t r = 0; r < p->tables[t].n_opts; r++) {
            const struct tn_opt *o = &p->tables[t].opts[r];
            if ((o->flags & TN_OPT_REQUIRED) != 0 && p->from[t][r] == 0) {
                tn_errmsg_set(em, "--%s: is required", o->name);
                return TN_EINVAL;
            }
        }
    }
    return TN_OK;
}

/* The end of the options at argv[first]: operands from there on. */
static int finish(struct tn_opt_parser *p, int argc, char **argv, int first,
                  struct tn_errmsg *em)
{
    p->first_operand = first;
    if ((p->flags & TN_OPT_NO_OPERANDS) != 0 && first < argc) {
        tn_errmsg_set(em, "unexpected argument '%.64s'", argv[first]);
        return TN_EINVAL;
    }
    return check_required(p, em);
}

int tn_opt_parse(struct tn_opt_parser *p, int argc, char **argv,
                 struct tn_errmsg *em)
{
    int start = 1; /* argv[start..i) are operands put off so far */
    int i = 1;
    p->action = NULL;
    while (i < argc) {
        const char *a = argv[i];
        bool operand = a[0] != '-' || a[1] == '\0';
        if (operand && (p->flags & TN_OPT_STOP_AT_OPERAND) != 0)
            return finish(p, argc, argv, i, em);
        if (operand && (p->flags & TN_OPT_NO_OPERANDS) != 0)
            return finish(p, argc, argv, i, em);
        if (operand) {
            i++;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            rotate(argv, start, i, i + 1);
            return finish(p, argc, argv, start + 1, em);
        }
        int used = a[1] == '-' ? long_opt(p, argc, argv, i, em)
                               : short_opts(p, argc, argv, i, em);
        if (used < 0)
            return used;
        if (p->action != NULL)
            return TN_OK;
        rotate(argv, start, i, i + used);
        start += used;
        i += used;
    }
    return finish(p, argc, argv, start, em);
}

int tn_opt_set_named(const struct tn_opt_table *t, const char *name,
                     const char *value, const char *subject,
                     struct tn_errmsg *em)
{
    for (size_t i = 0; i < t->n_opts; i++) {
        const struct tn_opt *o = &t->opts[i];
        if (strcmp(o->name, name) != 0 || !is_settable(o) ||
            (o->flags & TN_OPT_ARGV_ONLY) != 0)
            continue;
        return tn_opt_set(t, o, value, subject, em);
    }
    tn_errmsg_set(em, "%s: unknown option", subject);
    return TN_EINVAL;
}

bool tn_opt_given(const struct tn_opt_parser *p, const char *name)
{
    struct hit h;
    return find_long(p, name, strlen(name), &h) &&
           (p->from[h.t][h.r] & TN_OPT_FROM_ARGV) != 0;
}
