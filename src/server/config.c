/* SPDX-License-Identifier: MIT */
/* The option table, built from the lines of options.def (each option
 * declared once, with its default, its bounds, its help, and why the
 * default is what it is), and the parsing of flags, environment and
 * --config files against it. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/url.h"

/* OPT_LIST: repeatable; each value is appended as one line (an empty
 * value clears the list). */
enum opt_type { OPT_STR, OPT_INT, OPT_BOOL, OPT_LIST };

struct option_def {
    const char *name;   /* flag without dashes; env is TENURE_<NAME> */
    enum opt_type type; /* how to parse */
    size_t offset;      /* into struct tn_config */
    size_t size;        /* bytes of a string field */
    const char *def;    /* default, as text */
    int64_t min, max;   /* bounds of an integer */
    const char *help;   /* one line for --help */
    const char *why;    /* why the default, for docs/CONFIG.md */
};

#define STR(f)                                                                 \
    OPT_STR, offsetof(struct tn_config, f), sizeof(((struct tn_config *)0)->f)
#define INT(f) OPT_INT, offsetof(struct tn_config, f), 0
#define BOOL(f) OPT_BOOL, offsetof(struct tn_config, f), 0
#define LIST(f)                                                                \
    OPT_LIST, offsetof(struct tn_config, f), sizeof(((struct tn_config *)0)->f)

#define TN_OPTION(name, kind, def, min, max, help, why)                        \
    {name, kind, def, min, max, help, why},
static const struct option_def options[] = {
#include "server/options.def"
};
#undef TN_OPTION

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

static int set_value(struct tn_config *c, const struct option_def *o,
                     const char *v, struct tn_errmsg *em)
{
    char *field = (char *)c + o->offset;
    if (o->type == OPT_STR) {
        if (strlen(v) >= o->size) {
            tn_errmsg_set(em, "option \"%s\" is too long", o->name);
            return TN_EINVAL;
        }
        memcpy(field, v, strlen(v) + 1);
        return TN_OK;
    }
    if (o->type == OPT_LIST) {
        size_t used = strlen(field), n = strlen(v);
        if (n == 0) {
            field[0] = '\0';
            return TN_OK;
        }
        if (strchr(v, '\n') != NULL || used + n + 2 > o->size) {
            tn_errmsg_set(em, "option \"%s\" is too long or repeated too often",
                          o->name);
            return TN_EINVAL;
        }
        memcpy(field + used, v, n);
        memcpy(field + used + n, "\n", 2);
        return TN_OK;
    }
    if (o->type == OPT_BOOL) {
        bool b = strcmp(v, "true") == 0 || strcmp(v, "1") == 0;
        if (!b && strcmp(v, "false") != 0 && strcmp(v, "0") != 0) {
            tn_errmsg_set(em, "option \"%s\" takes true or false", o->name);
            return TN_EINVAL;
        }
        memcpy(field, &b, sizeof(b));
        return TN_OK;
    }
    char *end = NULL;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < o->min || n > o->max) {
        tn_errmsg_set(em, "option \"%s\" takes an integer in [%lld, %lld]",
                      o->name, (long long)o->min, (long long)o->max);
        return TN_EINVAL;
    }
    int64_t i = n;
    memcpy(field, &i, sizeof(i));
    return TN_OK;
}

static void env_name(const struct option_def *o, char *out, size_t len)
{
    int n = snprintf(out, len, "TENURE_%s", o->name);
    for (int i = 0; i < n && (size_t)i < len; i++)
        out[i] = out[i] == '-' ? '_' : (char)toupper((unsigned char)out[i]);
}

static void print_help(FILE *f)
{
    (void)fprintf(f, "usage: tenured [OPTIONS]\n\n"
                     "The tenure lease server (HTTP/1.1 + JSON).  Every option "
                     "can also be set\nthrough the environment variable shown; "
                     "flags win.\n\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        char env[64];
        env_name(&options[i], env, sizeof(env));
        (void)fprintf(f, "  --%-20s %s\n  %-22s (default: %s; env %s)\n",
                      options[i].name, options[i].help, "",
                      options[i].def[0] ? options[i].def : "(empty)", env);
    }
    (void)fprintf(f,
                  "  --%-20s %s\n  %-22s env TENURE_CONFIG; lines of "
                  "\"name = value\" (flag names without --); the\n"
                  "  %-22s environment overrides the file, flags override "
                  "both\n",
                  "config FILE", "read options from FILE", "", "");
    (void)fprintf(f, "  --%-20s %s\n  --%-20s %s\n", "help", "this text",
                  "version", "print the version");
}

void tn_config_print_markdown(FILE *f)
{
    (void)fprintf(f, "| flag | environment | default | meaning | why this "
                     "default |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        char env[64];
        env_name(&options[i], env, sizeof(env));
        (void)fprintf(f, "| `--%s` | `%s` | `%s` | %s | %s |\n",
                      options[i].name, env, options[i].def, options[i].help,
                      options[i].why);
    }
}

static const struct option_def *find(const char *name, size_t len)
{
    for (size_t i = 0; i < N_OPTIONS; i++) {
        if (strlen(options[i].name) == len &&
            strncmp(options[i].name, name, len) == 0)
            return &options[i];
    }
    return NULL;
}

static int parse_flags(struct tn_config *c, int argc, char **argv,
                       enum tn_config_action *action, struct tn_errmsg *em)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_help(stdout);
            *action = TN_CONFIG_EXIT_OK;
            return TN_OK;
        }
        if (strcmp(a, "--version") == 0) {
            (void)printf("tenured %s\n", TN_VERSION);
            *action = TN_CONFIG_EXIT_OK;
            return TN_OK;
        }
        if (strcmp(a, "--config-markdown") == 0) {
            tn_config_print_markdown(stdout);
            *action = TN_CONFIG_EXIT_OK;
            return TN_OK;
        }
        if (strcmp(a, "--config") == 0) {
            i++; /* read before the flags, see config_path */
            continue;
        }
        if (strncmp(a, "--config=", 9) == 0)
            continue;
        if (strncmp(a, "--", 2) != 0) {
            tn_errmsg_set(em, "unexpected argument \"%s\"", a);
            return TN_EINVAL;
        }
        const char *eq = strchr(a + 2, '=');
        size_t nlen = eq != NULL ? (size_t)(eq - a - 2) : strlen(a + 2);
        const struct option_def *o = find(a + 2, nlen);
        if (o == NULL) {
            tn_errmsg_set(em, "unknown option \"%s\" (see --help)", a);
            return TN_EINVAL;
        }
        const char *v = eq != NULL ? eq + 1 : NULL;
        if (v == NULL && o->type == OPT_BOOL)
            v = "true";
        if (v == NULL && (v = i + 1 < argc ? argv[++i] : NULL) == NULL) {
            tn_errmsg_set(em, "option \"%s\" needs a value", a);
            return TN_EINVAL;
        }
        int rc = set_value(c, o, v, em);
        if (rc < 0)
            return rc;
    }
    return TN_OK;
}

/* The --config FILE (or TENURE_CONFIG) named on the command line. */
static const char *config_path(int argc, char **argv)
{
    const char *path = getenv("TENURE_CONFIG");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
            path = argv[i + 1];
        else if (strncmp(argv[i], "--config=", 9) == 0)
            path = argv[i] + 9;
    }
    return path;
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
static int config_line(struct tn_config *c, char *line, const char *path,
                       int lineno, struct tn_errmsg *em)
{
    char *t = trim(line);
    if (*t == '\0' || *t == '#')
        return TN_OK;
    char *eq = strchr(t, '=');
    if (eq == NULL) {
        tn_errmsg_set(em, "%s:%d: expected \"name = value\"", path, lineno);
        return TN_EINVAL;
    }
    *eq = '\0';
    char *name = trim(t);
    const struct option_def *o = find(name, strlen(name));
    if (o == NULL || strcmp(name, "config") == 0) {
        tn_errmsg_set(em, "%s:%d: unknown option \"%s\"", path, lineno, name);
        return TN_EINVAL;
    }
    struct tn_errmsg inner = {{0}};
    int rc = set_value(c, o, trim(eq + 1), &inner);
    if (rc < 0)
        tn_errmsg_set(em, "%s:%d: %s", path, lineno, inner.text);
    return rc;
}

static int load_file(struct tn_config *c, const char *path,
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
        rc = config_line(c, line, path, n, em);
    (void)fclose(f);
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
                      "option \"listen\" takes host:port with a port in "
                      "1..65535 (0 picks a free one) and an IPv6 address "
                      "in brackets, not \"%s\"",
                      listen);
        return TN_EINVAL;
    }
    return TN_OK;
}

int tn_config_parse(struct tn_config *c, int argc, char **argv,
                    enum tn_config_action *action, struct tn_errmsg *em)
{
    memset(c, 0, sizeof(*c));
    *action = TN_CONFIG_RUN;
    int rc = TN_OK;
    for (size_t i = 0; rc == 0 && i < N_OPTIONS; i++)
        rc = set_value(c, &options[i], options[i].def, em);
    const char *path = config_path(argc, argv);
    if (rc == 0 && path != NULL)
        rc = load_file(c, path, em);
    for (size_t i = 0; rc == 0 && i < N_OPTIONS; i++) {
        char env[64];
        env_name(&options[i], env, sizeof(env));
        const char *v = getenv(env);
        if (v != NULL)
            rc = set_value(c, &options[i], v, em);
    }
    if (rc == 0)
        rc = parse_flags(c, argc, argv, action, em);
    if (rc == 0)
        rc = check_listen(c->listen, em);
    if (rc == 0 && c->require_sync_standby && c->store[0] == '\0') {
        tn_errmsg_set(em, "require-sync-standby needs --store postgresql://");
        rc = TN_EINVAL;
    }
    if (rc == 0 && c->min_ttl_ms > c->max_ttl_ms) {
        tn_errmsg_set(em, "min-ttl-ms is above max-ttl-ms");
        rc = TN_EINVAL;
    }
    return rc;
}
