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

static const char usage[] =
    "Usage: tenure session open --ttl DUR [--owner ID] [--json]\n"
    "       tenure session renew ID --secret S [--ttl DUR]\n"
    "       tenure session end ID --secret S\n"
    "       tenure session end ID --force\n"
    "       tenure session get ID\n"
    "       tenure session list [--prefix P] [--limit N] [--after ID]\n";
static const char about[] =
    "A session keeps many leases alive with one renew (take leases under it\n"
    "with 'tenure claim').  open prints the session's id and secret; the\n"
    "secret may come from $TENURE_SESSION_SECRET instead of --secret.\n"
    "Nothing renews a session opened here: renew it within its TTL, or its\n"
    "leases end with it.\n";
static const char footer[] =
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

#define AT(f) TN_OPT_AT(struct sess_args, f)
static const struct tn_opt opts[] = {
    {.name = "ttl",
     .type = TN_OPT_DURATION,
     AT(ttl_ms),
     .min = 1,
     .arg = "DUR",
     .help = "the session's time to live (open; renew: a new one)"},
    {.name = "owner",
     .type = TN_OPT_STR,
     AT(owner),
     .arg = "ID",
     .help = "owner_id (default HOST:PID); the fair-share recipe uses "
             "GROUP/WORKER"},
    {.name = "secret",
     .type = TN_OPT_STR,
     AT(secret),
     .arg = "S",
     .help = "the session's secret (renew, end)"},
    {.name = "force",
     .type = TN_OPT_BOOL,
     AT(force),
     .help = "end: admin force end; every lease of it is revoked"},
    {.name = "prefix",
     .type = TN_OPT_STR,
     AT(list.prefix),
     .arg = "P",
     .help = "list: sessions whose owner_id starts with P"},
    {.name = "limit",
     .type = TN_OPT_INT,
     AT(list.limit),
     .min = 1,
     .max = 1000,
     .arg = "N",
     .help = "list: one page of N"},
    {.name = "after",
     .type = TN_OPT_STR,
     AT(list.after),
     .arg = "ID",
     .help = "list: start after this session id"},
};

static const struct tn_cli_cmd command =
    TN_CLI_CMD("session", usage, about, footer, opts);

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
                            "--ttl: is required by open (e.g. --ttl 10s)");
    if (a->secret == NULL)
        a->secret = getenv("TENURE_SESSION_SECRET");
    if (cred && !a->force && a->secret == NULL)
        return tn_cli_usage(
            cli, "session",
            "--secret: is required (or $TENURE_SESSION_SECRET)");
    if (a->force && strcmp(a->verb, "end") != 0)
        return tn_cli_usage(cli, "session", "--force: is for end only");
    return 0;
}

static int parse(struct tn_cli *cli, int argc, char **argv, struct sess_args *a)
{
    struct tn_opt_parser p;
    int ex = tn_cli_parse(cli, &command, a, argc, argv, &p);
    if (ex != 0)
        return ex;
    int next = p.first_operand;
    if (next >= argc)
        return tn_cli_usage(cli, "session",
                            "expected open, renew, end, get or list");
    a->verb = argv[next++];
    if (next < argc)
        a->id = argv[next++];
    if (next < argc)
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
        if (tn_cli_page_last(cli, more, a->list.limit, after))
            return TN_CLI_OK;
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
