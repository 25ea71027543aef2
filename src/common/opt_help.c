/* SPDX-License-Identifier: MIT */
/* --help and the Markdown reference, printed from the option tables
 * (opt.h).  The layout is what help2man reads into a manual page: one
 * entry per option starting "  --name ARG", its text aligned in a column
 * and wrapped at 79 columns. */
#include <string.h>

#include "common/opt.h"

#define WIDTH 79
/* The text column is the widest entry plus two, but at most this; a
 * wider entry puts its text on the next line. */
#define COLUMN_MAX 28

static bool is_listed(const struct tn_opt *o)
{
    return (o->flags & TN_OPT_HIDDEN) == 0 && o->type != TN_OPT_REFUSED;
}

/* "  -v, --name ARG" into out; its length. */
static size_t entry(const struct tn_opt *o, char *out, size_t cap)
{
    char alias[8] = "";
    if (o->short_name != 0)
        (void)snprintf(alias, sizeof(alias), "-%c, ", o->short_name);
    int n = snprintf(out, cap, "  %s--%s%s%s", alias, o->name,
                     o->arg != NULL ? " " : "", o->arg != NULL ? o->arg : "");
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

static size_t column(const struct tn_opt_table *tables, size_t n)
{
    size_t col = 0;
    for (size_t t = 0; t < n; t++) {
        for (size_t i = 0; i < tables[t].n_opts; i++) {
            char e[128];
            size_t len = entry(&tables[t].opts[i], e, sizeof(e)) + 2;
            if (is_listed(&tables[t].opts[i]) && len > col)
                col = len;
        }
    }
    return col < COLUMN_MAX ? col : COLUMN_MAX;
}

static void indent(FILE *f, size_t n)
{
    (void)fprintf(f, "%*s", (int)n, "");
}

/* text from column x on, its words wrapped at WIDTH, the lines after the
 * first (and after each '\n' of text) starting at column col. */
static void wrap(FILE *f, const char *text, size_t col, size_t x)
{
    const char *p = text;
    while (*p == ' ')
        p++;
    while (*p != '\0') {
        size_t n = strcspn(p, " \n");
        if (x > col && x + 1 + n > WIDTH) {
            (void)fputc('\n', f);
            indent(f, col);
            x = col;
        } else if (x > col) {
            (void)fputc(' ', f);
            x++;
        }
        (void)fwrite(p, 1, n, f);
        x += n;
        p += n;
        if (*p == '\n') {
            (void)fputc('\n', f);
            indent(f, col);
            x = col;
        }
        while (*p == ' ' || *p == '\n')
            p++;
    }
    (void)fputc('\n', f);
}

/* The help of o, and on a line of its own its default and variable:
 * "(default: D; env E)". */
static void text_of(const struct tn_opt_table *t, const struct tn_opt *o,
                    char *out, size_t cap)
{
    char env[96];
    bool has_env = tn_opt_env_name(t, o, env, sizeof(env));
    const char *def = o->type == TN_OPT_ACTION ? NULL : o->def;
    const char *help = o->help != NULL ? o->help : "";
    int n = snprintf(out, cap, "%s", help);
    if (n < 0 || (size_t)n >= cap || (def == NULL && !has_env))
        return;
    (void)snprintf(out + n, cap - (size_t)n, "%s(%s%s%s%s%s)",
                   help[0] != '\0' ? "\n" : "", def != NULL ? "default: " : "",
                   def == NULL      ? ""
                   : def[0] != '\0' ? def
                                    : "(empty)",
                   def != NULL && has_env ? "; " : "", has_env ? "env " : "",
                   has_env ? env : "");
}

void tn_opt_help_rows(FILE *f, const struct tn_opt_table *tables, size_t n)
{
    size_t col = column(tables, n);
    for (size_t t = 0; t < n; t++) {
        for (size_t i = 0; i < tables[t].n_opts; i++) {
            const struct tn_opt *o = &tables[t].opts[i];
            if (!is_listed(o))
                continue;
            char e[128];
            char text[1024];
            size_t len = entry(o, e, sizeof(e));
            (void)fputs(e, f);
            if (len + 2 > col)
                (void)fputc('\n', f);
            indent(f, len + 2 > col ? col : col - len);
            text_of(&tables[t], o, text, sizeof(text));
            wrap(f, text, col, col);
        }
    }
}

void tn_opt_help(FILE *f, const struct tn_opt_help *h,
                 const struct tn_opt_table *t)
{
    (void)fputs(h->usage, f);
    if (h->about != NULL)
        (void)fprintf(f, "\n%s", h->about);
    (void)fputs("\nOptions:\n", f);
    tn_opt_help_rows(f, t, 1);
    if (h->footer != NULL)
        (void)fprintf(f, "\n%s", h->footer);
}

void tn_opt_markdown(FILE *f, const struct tn_opt_table *t)
{
    (void)fprintf(f, "| flag | environment | default | meaning | why this "
                     "default |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < t->n_opts; i++) {
        const struct tn_opt *o = &t->opts[i];
        char env[96] = "";
        if (!is_listed(o) || o->type == TN_OPT_ACTION ||
            (o->flags & TN_OPT_ARGV_ONLY) != 0)
            continue;
        (void)tn_opt_env_name(t, o, env, sizeof(env));
        (void)fprintf(f, "| `--%s` | `%s` | `%s` | %s | %s |\n", o->name, env,
                      o->def != NULL ? o->def : "",
                      o->help != NULL ? o->help : "",
                      o->why != NULL ? o->why : "");
    }
}
