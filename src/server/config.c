/* SPDX-License-Identifier: MIT */
/* tenured's options: the table made of the lines of options.def (each
 * option declared once, with its default, its bounds, its help, and why
 * the default is what it is) parsed by the one option parser
 * (common/opt.h), plus what only tenured has: --config FILE, TENURE_*
 * variables for every option, --config-markdown, and the checks that
 * involve more than one option. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/opt.h"
#include "common/url.h"

/* The kinds of options.def: how a value is read, and its field. */
#define STR(f) .type = TN_OPT_TEXT, TN_OPT_AT(struct tn_config, f)
#define INT(f) .type = TN_OPT_INT, TN_OPT_AT(struct tn_config, f)
#define BOOL(f) .type = TN_OPT_BOOL, TN_OPT_AT(struct tn_config, f)
#define LIST(f) .type = TN_OPT_LIST, TN_OPT_AT(struct tn_config, f)
#define CHOICE(f, values)                                                      \
    .type = TN_OPT_CHOICE, .choices = values, TN_OPT_AT(struct tn_config, f)

#define TN_OPTION(name_, kind, def_, min_, max_, help_, why_)                  \
    {.name = name_,                                                            \
     kind,                                                                     \
     .def = def_,                                                              \
     .min = min_,                                                              \
     .max = max_,                                                              \
     .help = help_,                                                            \
     .why = why_},
static const struct tn_opt settings[] = {
#include "server/options.def"
};
#undef TN_OPTION

/* What the command line says about reading the rest. */
struct meta {
    const char *config; /* --config FILE or TENURE_CONFIG, or NULL */
};

enum { ACT_HELP = 1, ACT_VERSION, ACT_MARKDOWN };

static const struct tn_opt meta_rows[] = {
    {.name = "config",
     .type = TN_OPT_STR,
     TN_OPT_AT(struct meta, config),
     .flags = TN_OPT_ARGV_ONLY | TN_OPT_NONEMPTY,
     .arg = "FILE",
     .env = "TENURE_CONFIG",
     .help = "read options from FILE: lines of \"name = value\" (flag names "
             "without --); the environment overrides the file, flags "
             "override both"},
    {.name = "help",
     .short_name = 'h',
     .type = TN_OPT_ACTION,
     .action = ACT_HELP,
     .help = "this text"},
    {.name = "version",
     .type = TN_OPT_ACTION,
     .action = ACT_VERSION,
     .help = "print the version"},
    {.name = "config-markdown",
     .type = TN_OPT_ACTION,
     .flags = TN_OPT_HIDDEN,
     .action = ACT_MARKDOWN,
     .help = "print the option table as Markdown (docs/CONFIG.md)"},
};

static struct tn_opt_table settings_table(struct tn_config *c)
{
    struct tn_opt_table t = TN_OPT_TABLE(settings, c);
    t.env_prefix = "TENURE_";
    return t;
}

static void print_help(FILE *f)
{
    /* Printing reads the rows only: no struct behind them. */
    const struct tn_opt_table t[] = {settings_table(NULL),
                                     TN_OPT_TABLE(meta_rows, NULL)};
    (void)fprintf(f, "usage: tenured [OPTIONS]\n\n"
                     "The tenure lease server (HTTP/1.1 + JSON).  Every option "
                     "can also be set\nthrough the environment variable shown; "
                     "flags win.\n\nOptions:\n");
    tn_opt_help_rows(f, t, 2);
}

void tn_config_print_markdown(FILE *f)
{
    const struct tn_opt_table t = settings_table(NULL);
    tn_opt_markdown(f, &t);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' ||
                     s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

/* One "name = value" line of a config file; blank and # lines skipped. */
static int config_line(const struct tn_opt_table *t, char *line,
                       const char *path, int lineno, struct tn_errmsg *em)
{
    char *s = trim(line);
    if (*s == '\0' || *s == '#')
        return TN_OK;
    char *eq = strchr(s, '=');
    if (eq == NULL) {
        tn_errmsg_set(em, "%s:%d: expected \"name = value\"", path, lineno);
        return TN_EINVAL;
    }
    *eq = '\0';
    char *name = trim(s);
    char subject[1200];
    (void)snprintf(subject, sizeof(subject), "%s:%d: %.64s", path, lineno,
                   name);
    return tn_opt_set_named(t, name, trim(eq + 1), subject, em);
}

static int load_file(const struct tn_opt_table *t, const char *path,
                     struct tn_errmsg *em)
{
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        tn_errmsg_set(em, "cannot read config file \"%s\"", path);
        return TN_EINVAL;
    }
    char line[2048];
    int rc = TN_OK;
    for (int n = 1; rc == 0 && fgets(line, sizeof(line), f) != NULL; n++)
        rc = config_line(t, line, path, n, em);
    (void)fclose(f);
    return rc;
}

/* The command line alone, into c (reset afterwards): a bad flag is
 * reported, and --help or --version answered, before any file is read;
 * m gets the --config FILE (or TENURE_CONFIG). */
static int first_pass(struct tn_config *c, struct meta *m, int argc,
                      char **argv, enum tn_config_action *action,
                      struct tn_errmsg *em)
{
    const struct tn_opt_table st = settings_table(c);
    const struct tn_opt_table mt = TN_OPT_TABLE(meta_rows, m);
    struct tn_opt_parser p;
    tn_opt_parser_init(&p, TN_OPT_NO_OPERANDS);
    tn_opt_parser_add(&p, &mt);
    int rc = tn_opt_env(&p, em); /* TENURE_CONFIG only */
    tn_opt_parser_add(&p, &st);
    if (rc == 0)
        rc = tn_opt_parse(&p, argc, argv, em);
    if (rc < 0 || p.action == NULL)
        return rc;
    *action = TN_CONFIG_EXIT_OK;
    if (p.action->action == ACT_HELP)
        print_help(stdout);
    else if (p.action->action == ACT_VERSION)
        (void)printf("tenured %s\n", TN_VERSION);
    else
        tn_config_print_markdown(stdout);
    return TN_OK;
}

/* Defaults, then the file, then TENURE_*, then the flags. */
static int second_pass(struct tn_config *c, const char *path, int argc,
                       char **argv, struct tn_errmsg *em)
{
    struct meta m = {0};
    const struct tn_opt_table st = settings_table(c);
    const struct tn_opt_table mt = TN_OPT_TABLE(meta_rows, &m);
    struct tn_opt_parser p;
    tn_opt_parser_init(&p, TN_OPT_NO_OPERANDS);
    tn_opt_parser_add(&p, &st);
    tn_opt_parser_add(&p, &mt);
    memset(c, 0, sizeof(*c));
    int rc = tn_opt_defaults(&st, em);
    if (rc == 0 && path != NULL)
        rc = load_file(&st, path, em);
    if (rc == 0)
        rc = tn_opt_env(&p, em);
    if (rc == 0)
        rc = tn_opt_parse(&p, argc, argv, em);
    return rc;
}

/* --listen is host:port (common/url.h) with a decimal port in 0..65535
 * (0 picks a free one): getaddrinfo would take 99999 modulo 65536, and a
 * name as port. */
static int check_listen(const char *listen, struct tn_errmsg *em)
{
    struct tn_hostport hp;
    if (tn_url_parse_hostport(listen, strlen(listen), 0,
                              TN_URL_NEED_PORT | TN_URL_PORT_ZERO, &hp) < 0) {
        tn_errmsg_set(em,
                      "--listen: expected host:port with a port in 1..65535 "
                      "(0 picks a free one, an IPv6 address in brackets), "
                      "got '%s'",
                      listen);
        return TN_EINVAL;
    }
    return TN_OK;
}

/* What involves more than one option. */
static int check(const struct tn_config *c, struct tn_errmsg *em)
{
    int rc = check_listen(c->listen, em);
    if (rc == 0 && c->require_sync_standby && c->store[0] == '\0') {
        tn_errmsg_set(em,
                      "--require-sync-standby: needs --store postgresql://");
        rc = TN_EINVAL;
    }
    if (rc == 0 && c->min_ttl_ms > c->max_ttl_ms) {
        tn_errmsg_set(em, "--min-ttl-ms: above --max-ttl-ms");
        rc = TN_EINVAL;
    }
    return rc;
}

int tn_config_parse(struct tn_config *c, int argc, char **argv,
                    enum tn_config_action *action, struct tn_errmsg *em)
{
    struct meta m = {0};
    *action = TN_CONFIG_RUN;
    memset(c, 0, sizeof(*c));
    int rc = first_pass(c, &m, argc, argv, action, em);
    if (rc < 0 || *action != TN_CONFIG_RUN)
        return rc;
    rc = second_pass(c, m.config, argc, argv, em);
    if (rc == 0)
        rc = check(c, em);
    return rc;
}
