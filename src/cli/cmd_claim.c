/* SPDX-License-Identifier: MIT */
/* tenure claim: take many names under a session in one request (POST
 * /v1/sessions/{id}/leases); one line per name says what became of it,
 * with the token and lease secret of each grant.  The names live as long
 * as the session: `tenure session renew` keeps them all. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <tenure/session.h>

#include "cli/cli.h"

static const char usage[] =
    "Usage: tenure claim --session ID --secret S [--owner ID]\n"
    "                    [--lock-delay DUR] NAME...\n";
static const char about[] =
    "Claim every NAME under the session ID in one request (at most 1024):\n"
    "each is granted, or held by another, or in lock delay, decided on its\n"
    "own.  Prints one line per name: 'granted NAME token=T secret=S', "
    "'held\n"
    "NAME owner=O token=T' or 'lock_delay NAME retry_after_ms=N' (--json:\n"
    "one object per name, {\"name\",\"status\",...}).  A name the session\n"
    "already holds answers the same grant, so a claim may be repeated.\n"
    "The secret may come from $TENURE_SESSION_SECRET.\n";
static const char footer[] =
    "Exit: 0 every name granted, 3 some held or in lock delay, 4 the\n"
    "session is no longer live, 1 error, 2 usage.\n";

struct claim_cli {
    const char *session;       /* --session */
    const char *secret;        /* --secret */
    struct tn_claim_args args; /* names from the operands */
};

#define AT(f) TN_OPT_AT(struct claim_cli, f)
static const struct tn_opt opts[] = {
    {.name = "session",
     .type = TN_OPT_STR,
     AT(session),
     .arg = "ID",
     .help = "the session (from 'tenure session open')"},
    {.name = "secret",
     .type = TN_OPT_STR,
     AT(secret),
     .arg = "S",
     .help = "its secret"},
    {.name = "owner",
     .type = TN_OPT_STR,
     AT(args.owner_id),
     .arg = "ID",
     .help = "owner_id of the grants (default: the session's)"},
    {.name = "lock-delay",
     .type = TN_OPT_DURATION,
     AT(args.lock_delay_ms),
     .arg = "DUR",
     .help = "after a grant expires its name stays blocked DUR"},
};

static const struct tn_cli_cmd command =
    TN_CLI_CMD("claim", usage, about, footer, opts);

static int parse(struct tn_cli *cli, int argc, char **argv, struct claim_cli *a)
{
    struct tn_opt_parser p;
    int ex = tn_cli_parse(cli, &command, a, argc, argv, &p);
    if (ex != 0)
        return ex;
    if (a->secret == NULL)
        a->secret = getenv("TENURE_SESSION_SECRET");
    if (a->session == NULL || a->secret == NULL)
        return tn_cli_usage(cli, "claim",
                            "--session and --secret (or "
                            "$TENURE_SESSION_SECRET) are required");
    size_t n = (size_t)(argc - p.first_operand);
    if (n == 0 || n > TN_SESSION_CLAIM_MAX)
        return tn_cli_usage(cli, "claim", "expected 1 to 1024 names");
    a->args.names = (const char *const *)(argv + p.first_operand);
    a->args.n_names = n;
    return 0;
}

static void print_item(const struct tn_cli *cli, const struct tn_claim_item *it)
{
    const struct tn_lease_info *h = &it->holder;
    if (it->status == TN_CLAIM_GRANTED && cli->json)
        tn_cli_print_json(
            json_pack("{s:s,s:s,s:I,s:s}", "name", it->name, "status",
                      "granted", "token", (json_int_t)tn_lease_token(it->lease),
                      "lease_secret", tn_lease_secret(it->lease)));
    else if (it->status == TN_CLAIM_GRANTED)
        (void)printf("granted %s token=%" PRIu64 " secret=%s\n", it->name,
                     tn_lease_token(it->lease), tn_lease_secret(it->lease));
    else if (it->status == TN_CLAIM_HELD && cli->json)
        tn_cli_print_json(json_pack("{s:s,s:s,s:o}", "name", it->name, "status",
                                    "held", "holder", tn_cli_info_json(h)));
    else if (it->status == TN_CLAIM_HELD)
        (void)printf("held %s owner=%s token=%" PRIu64 "\n", it->name,
                     h->owner_id, h->token);
    else if (cli->json)
        tn_cli_print_json(json_pack("{s:s,s:s,s:I}", "name", it->name, "status",
                                    "lock_delay", "retry_after_ms",
                                    (json_int_t)h->retry_after_ms));
    else
        (void)printf("lock_delay %s retry_after_ms=%" PRId64 "\n", it->name,
                     h->retry_after_ms);
}

int tn_cmd_claim(struct tn_cli *cli, int argc, char **argv)
{
    struct claim_cli a = {0};
    struct tn_client *c = NULL;
    int ex = tn_cli_connect(cli, parse(cli, argc, argv, &a), &c);
    if (c == NULL)
        return ex;
    struct tn_session *s = NULL;
    struct tn_claim_result *res = NULL;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_session_adopt(c, a.session, a.secret, &s);
    if (rc == 0)
        rc = tn_client_session_claim(s, &a.args, &res, &em);
    if (rc < 0) {
        ex = tn_cli_fail(cli, "claim", rc, &em);
    } else {
        for (size_t i = 0; i < res->count; i++)
            print_item(cli, &res->items[i]);
        ex = res->n_granted == res->count ? TN_CLI_OK : TN_CLI_HELD;
    }
    tn_claim_result_free(res);
    tn_client_session_free(s);
    tn_client_free(c);
    return ex;
}
