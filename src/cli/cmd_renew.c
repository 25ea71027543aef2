/* SPDX-License-Identifier: MIT */
/* tenure renew: extend a lease acquired by another invocation, given its
 * name, token and secret.  Also what renew and release share: parsing
 * the credentials, adopting the lease, reporting the answer. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

static const char usage[] =
    "Usage: tenure renew [--name] NAME --token T --secret S [--ttl DUR]\n";
static const char about[] =
    "Extend the lease NAME granted with token T.  The secret is the one\n"
    "printed by 'tenure acquire'; it may come from $TENURE_SECRET instead\n"
    "of the command line.  --ttl changes the TTL (default: keep it).\n";
static const char footer[] =
    "Exit: 0 renewed, 4 lost (the grant is no longer live: acquire again),\n"
    "1 error (e.g. wrong secret), 2 usage.\n";

#define AT(f) TN_OPT_AT(struct tn_cli_cred, f)
static const struct tn_opt opts[] = {
    {.name = "name",
     .type = TN_OPT_STR,
     AT(name),
     .arg = "NAME",
     .help = "lease name (or the first argument)"},
    {.name = "token",
     .type = TN_OPT_U64,
     AT(token),
     .arg = "T",
     .help = "the fencing token of the grant"},
    {.name = "secret",
     .type = TN_OPT_STR,
     AT(secret),
     .arg = "S",
     .help = "its lease secret (or $TENURE_SECRET)"},
    {.name = "ttl",
     .type = TN_OPT_DURATION,
     AT(ttl_ms),
     .min = 1,
     .arg = "DUR",
     .help = "the new TTL (default: keep it)"},
    {.name = "force", .type = TN_OPT_REFUSED, .help = "is for release only"},
};

static const struct tn_cli_cmd command =
    TN_CLI_CMD("renew", usage, about, footer, opts);

/* After the options of renew or release without --session: the name
 * operand, and either --force alone or the token and the secret. */
static int finish_cred(struct tn_cli *cli, const char *cmd, int argc,
                       char **argv, const struct tn_opt_parser *p,
                       struct tn_cli_cred *out)
{
    int next = p->first_operand;
    int ex = tn_cli_operands(cli, cmd, argc, argv, &next, &out->name, false);
    if (ex != 0)
        return ex;
    out->has_token = tn_opt_given(p, "token");
    if (out->force) {
        /* Whatever grant is live ends: no credential of it is needed. */
        if (out->has_token || out->secret != NULL)
            return tn_cli_usage(cli, cmd,
                                "--force: ends whatever grant is live; it "
                                "takes no --token or --secret");
        return 0;
    }
    if (out->secret == NULL)
        out->secret = getenv("TENURE_SECRET");
    if (!out->has_token || out->secret == NULL)
        return tn_cli_usage(cli, cmd,
                            "--token and --secret (or $TENURE_SECRET) are "
                            "required");
    return 0;
}

int tn_cli_cred_main(struct tn_cli *cli, const struct tn_cli_cred_cmd *cmd,
                     int argc, char **argv, const struct tn_opt_parser *p,
                     struct tn_cli_cred *cred)
{
    struct tn_client *c = NULL;
    int ex = finish_cred(cli, cmd->name, argc, argv, p, cred);
    ex = tn_cli_connect(cli, ex, &c);
    if (c == NULL)
        return ex;
    struct tn_lease *l = NULL;
    struct tn_errmsg em = {{0}};
    int rc = 0;
    if (!cred->force)
        rc =
            tn_client_lease_adopt(c, cred->name, cred->token, cred->secret, &l);
    if (rc == 0)
        rc = cmd->call(c, cred, l, &em);
    if (rc < 0)
        ex = tn_cli_fail(cli, cmd->name, rc, &em);
    else
        cmd->print(cli, cred, l);
    tn_lease_free(l);
    tn_client_free(c);
    return ex;
}

static int renew_call(struct tn_client *c, const struct tn_cli_cred *cred,
                      struct tn_lease *l, struct tn_errmsg *em)
{
    return tn_client_renew(c, l, cred->ttl_ms, em);
}

static void print_renewed(const struct tn_cli *cli,
                          const struct tn_cli_cred *cred, struct tn_lease *l)
{
    (void)cred;
    if (cli->json) {
        tn_cli_print_json(
            json_pack("{s:s,s:I,s:I,s:I}", "name", tn_lease_name(l), "token",
                      (json_int_t)tn_lease_token(l), "ttl_ms",
                      (json_int_t)tn_lease_ttl_ms(l), "safe_for_ms",
                      (json_int_t)tn_lease_safe_for_ms(l)));
        return;
    }
    (void)printf("renewed %s token=%" PRIu64 " ttl_ms=%" PRId64 "\n",
                 tn_lease_name(l), tn_lease_token(l), tn_lease_ttl_ms(l));
}

int tn_cmd_renew(struct tn_cli *cli, int argc, char **argv)
{
    static const struct tn_cli_cred_cmd renew = {"renew", renew_call,
                                                 print_renewed};
    struct tn_cli_cred cred = {0};
    struct tn_opt_parser p;
    int ex = tn_cli_parse(cli, &command, &cred, argc, argv, &p);
    if (ex != 0)
        return ex < 0 ? TN_CLI_OK : ex;
    return tn_cli_cred_main(cli, &renew, argc, argv, &p, &cred);
}
