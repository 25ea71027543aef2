/* SPDX-License-Identifier: MIT */
/* CLI helpers: the server list, the token file, errors and JSON output. */
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
        tn_cli_err(cli, "--server: at most %d URLs", TN_CLIENT_MAX_URLS);
        return -1;
    }
    struct tn_url u;
    struct tn_hostport hp;
    bool is_url = tn_url_parse(url, len, 80, 0, &u) == 0;
    bool ok =
        is_url ? tn_url_is_scheme(&u, "http") || tn_url_is_scheme(&u, "https")
               : tn_url_parse_hostport(url, len, 80, 0, &hp) == 0;
    if (!ok) {
        tn_cli_err(cli,
                   "--server: expected http:// or https:// URLs or "
                   "host:port, got '%.*s'",
                   (int)len, url);
        return -1;
    }
    const char *scheme = is_url ? "" : "http://";
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

bool tn_cli_page_last(const struct tn_cli *cli, bool more, unsigned limit,
                      const char *after)
{
    if (!more)
        return true;
    if (limit == 0)
        return false;
    if (cli->json)
        tn_cli_print_json(json_pack("{s:s}", "next", after));
    else
        tn_cli_err(cli, "more follow: --after %s", after);
    return true;
}
