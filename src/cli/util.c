/* SPDX-License-Identifier: MIT */
/* CLI helpers: common options, durations, errors and JSON output. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static int add_url(struct tn_cli *cli, char *url)
{
    if (*url == '\0')
        return 0;
    if (cli->opts.n_urls == TN_CLIENT_MAX_URLS) {
        tn_cli_err(cli, "at most %d server URLs", TN_CLIENT_MAX_URLS);
        return -1;
    }
    cli->opts.urls[cli->opts.n_urls++] = url;
    return 0;
}

int tn_cli_read_token(struct tn_cli *cli, const char *file)
{
    FILE *f = fopen(file, "re");
    if (f == NULL || fgets(cli->token, sizeof(cli->token), f) == NULL) {
        if (f != NULL)
            (void)fclose(f);
        tn_cli_err(cli, "cannot read a token from \"%s\"", file);
        return -1;
    }
    (void)fclose(f);
    cli->token[strcspn(cli->token, "\r\n")] = '\0';
    cli->opts.auth_token = cli->token;
    return 0;
}

int tn_cli_set_servers(struct tn_cli *cli, const char *list)
{
    size_t len = strlen(list);
    if (len == 0 || len >= sizeof(cli->servers)) {
        tn_cli_err(cli, "--server: expected one or more URLs");
        return -1;
    }
    memcpy(cli->servers, list, len + 1);
    cli->opts.n_urls = 0;
    char *p = cli->servers;
    while (p != NULL) {
        char *comma = strchr(p, ',');
        if (comma != NULL)
            *comma = '\0';
        if (add_url(cli, p) < 0)
            return -1;
        p = comma != NULL ? comma + 1 : NULL;
    }
    if (cli->opts.n_urls == 0) {
        tn_cli_err(cli, "--server: expected one or more URLs");
        return -1;
    }
    return 0;
}

int tn_cli_common_opt(struct tn_cli *cli, int opt, const char *arg)
{
    int64_t ms = 0;
    switch (opt) {
    case TN_CLI_OPT_SERVER:
        return tn_cli_set_servers(cli, arg) == 0 ? 1 : -1;
    case TN_CLI_OPT_JSON:
        cli->json = true;
        return 1;
    case 'v':
        cli->verbose = true;
        return 1;
    case TN_CLI_OPT_TOKEN:
        cli->opts.auth_token = arg;
        return 1;
    case TN_CLI_OPT_CACERT:
        cli->opts.ca_file = arg;
        return 1;
    case TN_CLI_OPT_CERT:
        cli->opts.cert_file = arg;
        return 1;
    case TN_CLI_OPT_KEY:
        cli->opts.key_file = arg;
        return 1;
    case TN_CLI_OPT_TIMEOUT:
        if (tn_cli_parse_duration(arg, &ms) < 0 || ms <= 0) {
            tn_cli_err(cli, "--timeout: bad duration \"%s\"", arg);
            return -1;
        }
        cli->opts.request_timeout_ms = ms;
        return 1;
    default:
        return 0;
    }
}

int tn_cli_next_opt(struct tn_cli *cli, int argc, char **argv,
                    const struct option *opts, const char *help)
{
    int opt = 0;
    while ((opt = getopt_long(argc, argv, "hv", opts, NULL)) != -1) {
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

struct unit {
    const char *suffix; /* as typed */
    int64_t ms;         /* milliseconds per unit */
};

int tn_cli_parse_duration(const char *s, int64_t *out_ms)
{
    static const struct unit units[] = {
        {"", 1}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || v < 0)
        return -1;
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
    tn_cli_err(cli, "%s", msg);
    (void)fprintf(stderr, "Try '%s %s --help'.\n", cli->prog,
                  cmd != NULL ? cmd : "");
    return TN_CLI_USAGE;
}
