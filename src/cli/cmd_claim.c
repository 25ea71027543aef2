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

static const char help[] =
    "Usage: tenure claim --session ID --secret S [--owner ID]\n"
    "                    [--lock-delay DUR] NAME...\n"
    "\n"
    "Claim every NAME under the session ID in one request (at most 1024):\n"
    "each is granted, or held by another, or in lock delay, decided on its\n"
    "own.  Prints one line per name: 'granted NAME token=T secret=S', "
    "'held\n"
    "NAME owner=O token=T' or 'lock_delay NAME retry_after_ms=N' (--json:\n"
    "one object per name, {\"name\",\"status\",...}).  A name the session\n"
    "already holds answers the same grant, so a claim may be repeated.\n"
    "The secret may come from $TENURE_SESSION_SECRET.\n"
    "\n"
    "  --session ID       the session (from 'tenure session open')\n"
    "  --secret S         its secret\n"
    "  --owner ID         owner_id of the grants (default: the session's)\n"
    "  --lock-delay DUR   after a grant expires its name stays blocked DUR\n"
    "\n"
    "Exit: 0 every name granted, 3 some held or in lock delay, 4 the\n"
    "session is no longer live, 1 error, 2 usage.\n";

struct claim_cli {
    const char *session;       /* --session */
    const char *secret;        /* --secret */
    struct tn_claim_args args; /* names from the operands */
};

static int claim_opt(struct tn_cli *cli, int opt, const char *arg, void *ctx)
{
    struct claim_cli *a = ctx;
    switch (opt) {
    case 'S':
        a->session = arg;
        return 0;
    case 's':
        a->secret = arg;
        return 0;
    case 'o':
        a->args.owner_id = arg;
        return 0;
    case 'd':
        return tn_cli_duration_arg(cli, "claim", "--lock-delay", arg, false,
                                   &a->args.lock_delay_ms);
    default:
        return tn_cli_usage(cli, "claim", "unknown option");
    }
}

static int parse(struct tn_cli *cli, int argc, char **argv, struct claim_cli *a)
{
    static const struct option opts[] = {
        {"session", required_argument, NULL, 'S'},
        {"secret", required_argument, NULL, 's'},
        {"owner", required_argument, NULL, 'o'},
        {"lock-delay", required_argument, NULL, 'd'},
        TN_CLI_COMMON_OPTS,
        {0}};
    static const struct tn_cli_cmd cmd = {"claim", help, opts, claim_opt};
    int ex = tn_cli_parse_opts(cli, argc, argv, &cmd, a);
    if (ex != 0)
        return ex;
    if (a->secret == NULL)
        a->secret = getenv("TENURE_SESSION_SECRET");
    if (a->session == NULL || a->secret == NULL)
        return tn_cli_usage(cli, "claim",
                            "--session and --secret (or "
                            "$TENURE_SESSION_SECRET) are required");
    size_t n = (size_t)(argc - optind);
    if (n == 0 || n > TN_SESSION_CLAIM_MAX)
        return tn_cli_usage(cli, "claim", "expected 1 to 1024 names");
    a->args.names = (const char *const *)(argv + optind);
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
