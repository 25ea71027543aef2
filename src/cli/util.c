/* SPDX-License-Identifier: MIT */
/* CLI helpers: common options, durations, errors and JSON output. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/url.h"

/* Append one server to cli->servers (NUL-terminated entries back to back)
 * and point the next URL at it.  "host:port" means "http://host:port", as
 * etcdctl --endpoints takes it; http:// and https:// are kept as given.
 * Both are read by the one parser of addresses (common/url.h). */
static int add_url(struct tn_cli *cli, const char *url, size_t len,
                   size_t *used)
{
    if (len == 0)
        return 0;
    if (cli->opts.n_urls == TN_CLIENT_MAX_URLS) {
        tn_cli_err(cli, "at most %d server URLs", TN_CLIENT_MAX_URLS);
        return -1;
    }
    struct tn_url u;
    struct tn_hostport hp;
    const char *scheme = "";
    if (tn_url_parse(url, len, 80, 0, &u) == 0) {
        if (!tn_url_is_scheme(&u, "http") && !tn_url_is_scheme(&u, "https")) {
            tn_cli_err(cli,
                       "--server: \"%.*s\": only http:// and https:// are "
                       "spoken",
                       (int)len, url);
            return -1;
        }
    } else if (tn_url_parse_hostport(url, len, 80, 0, &hp) == 0) {
        scheme = "http://";
    } else {
        tn_cli_err(cli,
                   "--server: \"%.*s\" is neither a URL nor host:port (an "
                   "IPv6 address in brackets)",
                   (int)len, url);
        return -1;
    }
    char *dst = cli->servers + *used;
    size_t room = sizeof(cli->servers) - *used;
    int n = snprintf(dst, room, "%s%.*s", scheme, (int)len, url);
    if (n < 0 || (size_t)n >= room) {
        tn_cli_err(cli, "--server: the list is too long");
        return -1;
    }
    cli->opts.urls[cli->opts.n_urls++] = dst;
    *used += (size_t)n + 1;
    return 0;
}

int tn_cli_read_token(struct tn_cli *cli, const char *file)
{
    FILE *f = fopen(file, "re");
    if (f == NULL || fgets(cli->bearer, sizeof(cli->bearer), f) == NULL) {
        if (f != NULL)
            (void)fclose(f);
        tn_cli_err(cli, "cannot read a token from \"%s\"", file);
        return -1;
    }
    (void)fclose(f);
    cli->bearer[strcspn(cli->bearer, "\r\n")] = '\0';
    cli->opts.auth_token = cli->bearer;
    return 0;
}

int tn_cli_set_servers(struct tn_cli *cli, const char *list)
{
    cli->opts.n_urls = 0;
    size_t used = 0;
    const char *p = list;
    while (p != NULL) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        if (add_url(cli, p, len, &used) < 0)
            return -1;
        p = comma != NULL ? comma + 1 : NULL;
    }
    if (cli->opts.n_urls == 0) {
        tn_cli_err(cli, "--server: expected one or more URLs or host:port");
        return -1;
    }
    return 0;
}

/* The common options that only keep their argument. */
static const struct {
    int opt;    /* TN_CLI_OPT_* */
    size_t off; /* offset of its const char * in struct tn_client_options */
} str_opts[] = {
    {TN_CLI_OPT_BEARER, offsetof(struct tn_client_options, auth_token)},
    {TN_CLI_OPT_CACERT, offsetof(struct tn_client_options, ca_file)},
    {TN_CLI_OPT_CERT, offsetof(struct tn_client_options, cert_file)},
    {TN_CLI_OPT_KEY, offsetof(struct tn_client_options, key_file)},
};

int tn_cli_common_opt(struct tn_cli *cli, int opt, const char *arg)
{
    int64_t ms = 0;
    for (size_t i = 0; i < sizeof(str_opts) / sizeof(str_opts[0]); i++) {
        if (str_opts[i].opt == opt) {
            char *field = (char *)&cli->opts + str_opts[i].off;
            memcpy(field, &arg, sizeof(arg));
            return 1;
        }
    }
    switch (opt) {
    case TN_CLI_OPT_SERVER:
        return tn_cli_set_servers(cli, arg) == 0 ? 1 : -1;
    case TN_CLI_OPT_JSON:
        cli->json = true;
        return 1;
    case 'v':
        cli->verbose = true;
        return 1;
    case TN_CLI_OPT_TIMEOUT:
        if (tn_cli_duration_arg(cli, NULL, "--timeout", arg, true, &ms) != 0)
            return -1;
        cli->opts.request_timeout_ms = ms;
        return 1;
    default:
        return 0;
    }
}

int tn_cli_bad_opt(const struct tn_cli *cli, const char *cmd, int opt, int argc,
                   char **argv)
{
    char name[64];
    const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : NULL;
    if (arg != NULL && strncmp(arg, "--", 2) == 0)
        (void)snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="), arg);
    else
        (void)snprintf(name, sizeof(name), "-%c", optopt);
    char msg[256];
    if (opt == ':')
        (void)snprintf(msg, sizeof(msg), "option %s needs a value", name);
    else if (strcmp(name, "--token") == 0)
        (void)snprintf(msg, sizeof(msg),
                       "--token is the fencing token of renew, release and "
                       "check; the bearer token is --bearer (or "
                       "$TENURE_AUTH_TOKEN)");
    else
        (void)snprintf(msg, sizeof(msg), "unknown option %s", name);
    return tn_cli_usage(cli, cmd, msg);
}

int tn_cli_next_opt(struct tn_cli *cli, int argc, char **argv,
                    const struct option *opts, const char *help)
{
    int opt = 0;
    opterr = 0; /* every message is ours, one line each */
    while ((opt = getopt_long(argc, argv, ":hv", opts, NULL)) != -1) {
        if (opt == '?' || opt == ':') {
            (void)tn_cli_bad_opt(cli, argv[0], opt, argc, argv);
            return TN_CLI_OPTS_BAD;
        }
        int r = tn_cli_common_opt(cli, opt, optarg);
        if (r < 0)
            return TN_CLI_OPTS_BAD;
        if (r == 1)
            continue;
        if (opt == 'h') {
            (void)fputs(help, stdout);
            return TN_CLI_OPTS_HELP;
        }
        return opt;
    }
    return TN_CLI_OPTS_END;
}

int tn_cli_opts_exit(int r)
{
    return r == TN_CLI_OPTS_HELP ? -1 : TN_CLI_USAGE;
}

int tn_cli_parse_opts(struct tn_cli *cli, int argc, char **argv,
                      const struct tn_cli_cmd *cmd, void *ctx)
{
    int opt = 0;
    while ((opt = tn_cli_next_opt(cli, argc, argv, cmd->opts, cmd->help)) > 0) {
        int ex = cmd->on_opt(cli, opt, optarg, ctx);
        if (ex != 0)
            return ex;
    }
    return opt == TN_CLI_OPTS_END ? 0 : tn_cli_opts_exit(opt);
}

int tn_cli_operands(const struct tn_cli *cli, const char *cmd, int argc,
                    char **argv, const char **name, bool more)
{
    if (name != NULL && *name == NULL && optind < argc)
        *name = argv[optind++];
    if (!more && optind != argc)
        return tn_cli_usage(cli, cmd, "unexpected argument");
    if (name != NULL && *name == NULL)
        return tn_cli_usage(cli, cmd, "a lease name is required");
    return 0;
}

int tn_cli_connect(struct tn_cli *cli, int parsed, struct tn_client **out)
{
    *out = NULL;
    if (parsed != 0)
        return parsed < 0 ? TN_CLI_OK : parsed;
    return tn_cli_client(cli, out);
}

struct unit {
    const char *suffix; /* as typed */
    int64_t ms;         /* milliseconds per unit */
};

int tn_cli_parse_duration(const char *s, int64_t *out_ms)
{
    static const struct unit units[] = {
        {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || v < 0)
        return -1;
    if (*end == '\0' && v != 0)
        return -2; /* a number without a unit: 10 what?  (0 is 0 of any) */
    if (*end == '\0') {
        *out_ms = 0;
        return 0;
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].suffix) != 0)
            continue;
        if (v > INT64_MAX / units[i].ms)
            return -1;
        *out_ms = (int64_t)v * units[i].ms;
        return 0;
    }
    return -1;
}

int tn_cli_duration_arg(const struct tn_cli *cli, const char *cmd,
                        const char *flag, const char *arg, bool positive,
                        int64_t *out_ms)
{
    char msg[256];
    int rc = tn_cli_parse_duration(arg, out_ms);
    if (rc == -2)
        (void)snprintf(msg, sizeof(msg),
                       "%s %s: a duration needs a unit: ms, s, m or h "
                       "(e.g. %ss)",
                       flag, arg, arg);
    else if (rc < 0)
        (void)snprintf(msg, sizeof(msg),
                       "%s: bad duration \"%s\"; write a whole number with "
                       "ms, s, m or h (e.g. 10s)",
                       flag, arg);
    else if (*out_ms == 0 && positive)
        (void)snprintf(msg, sizeof(msg),
                       "%s 0: the duration must be more than 0 (e.g. %s 10s)",
                       flag, flag);
    else
        return 0;
    return tn_cli_usage(cli, cmd, msg);
}

int tn_cli_parse_u64(const char *s, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = (uint64_t)v;
    return 0;
}

void tn_cli_err(const struct tn_cli *cli, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    (void)fprintf(stderr, "%s: %s\n", cli->prog, line);
}

int tn_cli_exit_for(int rc)
{
    switch (rc) {
    case TN_OK:
        return TN_CLI_OK;
    case TN_ECONFLICT:
    case TN_ELOCKDELAY:
        return TN_CLI_HELD;
    case TN_ELOST:
    case TN_EEXPIRED:
        return TN_CLI_LOST;
    case TN_ENOTFOUND:
        return TN_CLI_NOTFOUND;
    default:
        return TN_CLI_ERROR;
    }
}

int tn_cli_fail(const struct tn_cli *cli, const char *what, int rc,
                const struct tn_errmsg *em)
{
    const char *detail = em != NULL && em->text[0] != '\0' ? em->text : "";
    if (cli->json) {
        json_t *o = json_pack("{s:s,s:s,s:s}", "error", tn_errname(rc),
                              "message", tn_strerror(rc), "detail", detail);
        tn_cli_print_json(o);
    }
    tn_cli_err(cli, "%s: %s%s%s", what, tn_strerror(rc),
               detail[0] != '\0' ? ": " : "", detail);
    return tn_cli_exit_for(rc);
}

int tn_cli_client(struct tn_cli *cli, struct tn_client **out)
{
    struct tn_errmsg em = {{0}};
    int rc = tn_client_new(&cli->opts, out, &em);
    if (rc < 0)
        return tn_cli_fail(cli, "client", rc, &em);
    return TN_CLI_OK;
}

void tn_cli_print_json(json_t *v)
{
    if (v == NULL)
        return;
    char *s = json_dumps(v, JSON_COMPACT);
    if (s != NULL) {
        (void)printf("%s\n", s);
        free(s);
    }
    json_decref(v);
    (void)fflush(stdout);
}

json_t *tn_cli_info_json(const struct tn_lease_info *info)
{
    json_t *o = json_pack("{s:s,s:s,s:I}", "name", info->name, "owner_id",
                          info->owner_id, "token", (json_int_t)info->token);
    if (o != NULL && info->expires_in_ms >= 0)
        (void)json_object_set_new(o, "expires_in_ms",
                                  json_integer(info->expires_in_ms));
    if (o != NULL && info->retry_after_ms >= 0)
        (void)json_object_set_new(o, "retry_after_ms",
                                  json_integer(info->retry_after_ms));
    return o;
}

int tn_cli_usage(const struct tn_cli *cli, const char *cmd, const char *msg)
{
    if (cmd != NULL)
        tn_cli_err(cli, "%s (see '%s %s --help')", msg, cli->prog, cmd);
    else
        tn_cli_err(cli, "%s (see '%s --help')", msg, cli->prog);
    return TN_CLI_USAGE;
}
