/* SPDX-License-Identifier: MIT */
/* tenure session open|renew|end|get|list: sessions from a shell.  open
 * prints the id and the secret that renew, end, `tenure claim` and
 * `tenure release --session` need; the others act on a session by its id.
 * A session opened here is kept alive by nobody: renew it yourself within
 * its TTL, or let `tenure run --session` hold one for a command. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/session.h>

#include "cli/cli.h"

static const char help[] =
    "Usage: tenure session open --ttl DUR [--owner ID] [--json]\n"
    "       tenure session renew ID --secret S [--ttl DUR]\n"
    "       tenure session end ID --secret S\n"
    "       tenure session end ID --force\n"
    "       tenure session get ID\n"
    "       tenure session list [--prefix P] [--limit N] [--after ID]\n"
    "\n"
    "A session keeps many leases alive with one renew (take leases under it\n"
    "with 'tenure claim').  open prints the session's id and secret; the\n"
    "secret may come from $TENURE_SESSION_SECRET instead of --secret.\n"
    "Nothing renews a session opened here: renew it within its TTL, or its\n"
    "leases end with it.\n"
    "\n"
    "  --ttl DUR        the session's time to live (open; renew: a new one)\n"
    "  --owner ID       owner_id (default HOST:PID); the fair-share recipe\n"
    "                   uses GROUP/WORKER\n"
    "  --secret S       the session's secret (renew, end)\n"
    "  --force          end: admin force end; every lease of it is revoked\n"
    "  --prefix P       list: sessions whose owner_id starts with P\n"
    "  --limit N        list: one page of N\n"
    "  --after ID       list: start after this session id\n"
    "\n"
    "Exit: 0 done, 4 lost (renew, end: the session is no longer live), 5 not\n"
    "found (get), 1 error, 2 usage.\n";

struct sess_args {
    const char *verb;                 /* open, renew, end, get, list */
    const char *id;                   /* the session (all but open, list) */
    const char *secret;               /* --secret or $TENURE_SESSION_SECRET */
    const char *owner;                /* --owner */
    int64_t ttl_ms;                   /* --ttl */
    bool force;                       /* end --force */
    struct tn_session_list_args list; /* list's options */
};

static int sess_opt(struct tn_cli *cli, int opt, const char *arg, void *ctx)
{
    struct sess_args *a = ctx;
    uint64_t v = 0;
    switch (opt) {
    case 't':
        return tn_cli_duration_arg(cli, "session", "--ttl", arg, true,
                                   &a->ttl_ms);
    case 'o':
        a->owner = arg;
        return 0;
    case 's':
        a->secret = arg;
        return 0;
    case 'f':
        a->force = true;
        return 0;
    case 'p':
        a->list.prefix = arg;
        return 0;
    case 'a':
        a->list.after = arg;
        return 0;
    case 'l':
        if (tn_cli_parse_u64(arg, &v) == 0 && v > 0 && v <= 1000) {
            a->list.limit = (unsigned)v;
            return 0;
        }
        return tn_cli_usage(cli, "session",
                            "--limit: expected a number from 1 to 1000");
    default:
        return tn_cli_usage(cli, "session", "unknown option");
    }
}

/* What each verb takes: an id operand, and which options. */
static int check_verb(const struct tn_cli *cli, struct sess_args *a)
{
    bool open = strcmp(a->verb, "open") == 0;
    bool list = strcmp(a->verb, "list") == 0;
    bool cred = strcmp(a->verb, "renew") == 0 || strcmp(a->verb, "end") == 0;
    if (!open && !list && !cred && strcmp(a->verb, "get") != 0)
        return tn_cli_usage(cli, "session",
                            "expected open, renew, end, get or list");
    if ((open || list) != (a->id == NULL))
        return tn_cli_usage(cli, "session",
                            open || list ? "unexpected argument"
                                         : "a session id is required");
    if (open && a->ttl_ms <= 0)
        return tn_cli_usage(cli, "session",
                            "open: --ttl is required (e.g. --ttl 10s)");
    if (a->secret == NULL)
        a->secret = getenv("TENURE_SESSION_SECRET");
    if (cred && !a->force && a->secret == NULL)
        return tn_cli_usage(cli, "session",
                            "--secret (or $TENURE_SESSION_SECRET) is required");
    if (a->force && strcmp(a->verb, "end") != 0)
        return tn_cli_usage(cli, "session", "--force is for end only");
    return 0;
}

static int parse(struct tn_cli *cli, int argc, char **argv, struct sess_args *a)
{
    static const struct option opts[] = {
        {"ttl", required_argument, NULL, 't'},
        {"owner", required_argument, NULL, 'o'},
        {"secret", required_argument, NULL, 's'},
        {"force", no_argument, NULL, 'f'},
        {"prefix", required_argument, NULL, 'p'},
        {"limit", required_argument, NULL, 'l'},
        {"after", required_argument, NULL, 'a'},
        TN_CLI_COMMON_OPTS,
        {0}};
    static const struct tn_cli_cmd cmd = {"session", help, opts, sess_opt};
    int ex = tn_cli_parse_opts(cli, argc, argv, &cmd, a);
    if (ex != 0)
        return ex;
    if (optind >= argc)
        return tn_cli_usage(cli, "session",
                            "expected open, renew, end, get or list");
    a->verb = argv[optind++];
    if (optind < argc)
        a->id = argv[optind++];
    if (optind < argc)
        return tn_cli_usage(cli, "session", "unexpected argument");
    return check_verb(cli, a);
}

static void print_open(const struct tn_cli *cli, struct tn_session *s)
{
    if (cli->json) {
        tn_cli_print_json(json_pack(
            "{s:s,s:s,s:s,s:I,s:I}", "session_id", tn_client_session_id(s),
            "owner_id", tn_client_session_owner_id(s), "session_secret",
            tn_client_session_secret(s), "ttl_ms",
            (json_int_t)tn_client_session_ttl_ms(s), "safe_for_ms",
            (json_int_t)tn_client_session_safe_for_ms(s)));
        return;
    }
    (void)printf("session_id: %s\nowner:      %s\nttl_ms:     %" PRId64
                 "\nsecret:     %s\n",
                 tn_client_session_id(s), tn_client_session_owner_id(s),
                 tn_client_session_ttl_ms(s), tn_client_session_secret(s));
}

static int do_open(struct tn_cli *cli, struct tn_client *c,
                   const struct sess_args *a)
{
    struct tn_session_args sa = {.owner_id = a->owner, .ttl_ms = a->ttl_ms};
    struct tn_session *s = NULL;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_session_open(c, &sa, &s, &em);
    if (rc < 0)
        return tn_cli_fail(cli, "session open", rc, &em);
    print_open(cli, s);
    tn_client_session_free(s);
    return TN_CLI_OK;
}

static int do_cred(struct tn_cli *cli, struct tn_client *c,
                   const struct sess_args *a)
{
    struct tn_errmsg em = {{0}};
    bool renew = strcmp(a->verb, "renew") == 0;
    if (a->force) {
        int rc = tn_client_session_force_end(c, a->id, &em);
        if (rc < 0)
            return tn_cli_fail(cli, "session end", rc, &em);
    } else {
        struct tn_session *s = NULL;
        int rc = tn_client_session_adopt(c, a->id, a->secret, &s);
        if (rc == 0)
            rc = renew ? tn_client_session_renew(s, a->ttl_ms, &em)
                       : tn_client_session_end(s, &em);
        tn_client_session_free(s);
        if (rc < 0)
            return tn_cli_fail(cli, renew ? "session renew" : "session end", rc,
                               &em);
    }
    const char *did = renew ? "renewed" : a->force ? "ended (forced)" : "ended";
    if (cli->json)
        tn_cli_print_json(json_pack("{s:s,s:b}", "session_id", a->id,
                                    renew ? "renewed" : "ended", 1));
    else
        (void)printf("%s session %s\n", did, a->id);
    return TN_CLI_OK;
}

static json_t *info_json(const struct tn_session_info *i)
{
    json_t *o =
        json_pack("{s:s,s:s,s:I,s:I}", "session_id", i->session_id, "owner_id",
                  i->owner_id, "expires_in_ms", (json_int_t)i->expires_in_ms,
                  "leases", (json_int_t)i->leases);
    if (o != NULL && i->ttl_ms >= 0)
        (void)json_object_set_new(o, "ttl_ms", json_integer(i->ttl_ms));
    return o;
}

static int do_get(struct tn_cli *cli, struct tn_client *c,
                  const struct sess_args *a)
{
    struct tn_session_info info;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_session_get(c, a->id, &info, &em);
    if (rc == TN_ENOTFOUND) {
        if (cli->json)
            tn_cli_print_json(json_pack("{s:s,s:s}", "error", "not_found",
                                        "session_id", a->id));
        tn_cli_err(cli, "session %s is not live", a->id);
        return TN_CLI_NOTFOUND;
    }
    if (rc < 0)
        return tn_cli_fail(cli, "session get", rc, &em);
    if (cli->json)
        tn_cli_print_json(info_json(&info));
    else
        (void)printf("session_id:    %s\nowner:         %s\nttl_ms:        "
                     "%" PRId64 "\nexpires_in_ms: %" PRId64
                     "\nleases:        %" PRIu64 "\n",
                     info.session_id, info.owner_id, info.ttl_ms,
                     info.expires_in_ms, info.leases);
    return TN_CLI_OK;
}

static void print_page(const struct tn_cli *cli,
                       const struct tn_session_list *page)
{
    for (size_t i = 0; i < page->count; i++) {
        const struct tn_session_info *it = &page->items[i];
        if (cli->json)
            tn_cli_print_json(info_json(it));
        else
            (void)printf("%-32s %8" PRId64 "ms %7" PRIu64 "  %s\n",
                         it->session_id, it->expires_in_ms, it->leases,
                         it->owner_id);
    }
}

static int do_list(struct tn_cli *cli, struct tn_client *c,
                   const struct sess_args *a)
{
    char after[TN_SESSION_ID_MAX + 1] = {0};
    struct tn_session_list_args q = a->list;
    if (!cli->json)
        (void)printf("%-32s %10s %7s  %s\n", "SESSION", "EXPIRES", "LEASES",
                     "OWNER");
    for (;;) {
        struct tn_session_list *page = NULL;
        struct tn_errmsg em = {{0}};
        int rc = tn_client_session_list(c, &q, &page, &em);
        if (rc < 0)
            return tn_cli_fail(cli, "session list", rc, &em);
        print_page(cli, page);
        bool more = page->has_next;
        if (more)
            (void)snprintf(after, sizeof(after), "%s", page->next);
        tn_client_session_list_free(page);
        if (!more)
            return TN_CLI_OK;
        if (a->list.limit > 0) {
            if (cli->json)
                tn_cli_print_json(json_pack("{s:s}", "next", after));
            else
                tn_cli_err(cli, "more follow: --after %s", after);
            return TN_CLI_OK;
        }
        q.after = after;
    }
}

int tn_cmd_session(struct tn_cli *cli, int argc, char **argv)
{
    struct sess_args a = {0};
    struct tn_client *c = NULL;
    int ex = tn_cli_connect(cli, parse(cli, argc, argv, &a), &c);
    if (c == NULL)
        return ex;
    if (strcmp(a.verb, "open") == 0)
        ex = do_open(cli, c, &a);
    else if (strcmp(a.verb, "get") == 0)
        ex = do_get(cli, c, &a);
    else if (strcmp(a.verb, "list") == 0)
        ex = do_list(cli, c, &a);
    else
        ex = do_cred(cli, c, &a);
    tn_client_free(c);
    return ex;
}
