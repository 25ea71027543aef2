/* SPDX-License-Identifier: MIT */
/* tenure renew: extend a lease acquired by another invocation, given its
 * name, token and secret.  Also what renew and release share: parsing
 * the credentials, adopting the lease, reporting the answer. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

static const char help[] =
    "Usage: tenure renew [--name] NAME --token T --secret S [--ttl DUR]\n"
    "\n"
    "Extend the lease NAME granted with token T.  The secret is the one\n"
    "printed by 'tenure acquire'; it may come from $TENURE_SECRET instead\n"
    "of the command line.  --ttl changes the TTL (default: keep it).\n"
    "\n"
    "Exit: 0 renewed, 4 lost (the grant is no longer live: acquire again),\n"
    "1 error (e.g. wrong secret), 2 usage.\n";

/* What tn_cli_parse_cred's options fill in, for which command. */
struct cred_parse {
    const struct tn_cli_cred_cmd *cmd;
    struct tn_cli_cred *out;
};

static int cred_opt(struct tn_cli *cli, int opt, const char *arg, void *ctx)
{
    const struct cred_parse *p = ctx;
    const char *cmd = p->cmd->name;
    struct tn_cli_cred *out = p->out;
    if (opt == 't' && !p->cmd->with_ttl)
        return tn_cli_usage(cli, cmd, "--ttl is for renew only");
    if (opt == 'f' && !p->cmd->with_force)
        return tn_cli_usage(cli, cmd, "--force is for release only");
    switch (opt) {
    case 'n':
        out->name = arg;
        return 0;
    case 'T':
        if (tn_cli_parse_u64(arg, &out->token) < 0)
            return tn_cli_usage(cli, cmd, "--token: expected a number");
        out->has_token = true;
        return 0;
    case 's':
        out->secret = arg;
        return 0;
    case 't':
        return tn_cli_duration_arg(cli, cmd, "--ttl", arg, true, &out->ttl_ms);
    case 'f':
        out->force = true;
        return 0;
    default:
        return tn_cli_usage(cli, cmd, "unknown option");
    }
}

static int finish_cred(struct tn_cli *cli, const char *cmd, int argc,
                       char **argv, struct tn_cli_cred *out)
{
    int ex = tn_cli_operands(cli, cmd, argc, argv, &out->name, false);
    if (ex != 0)
        return ex;
    if (out->force) {
        /* Whatever grant is live ends: no credential of it is needed. */
        if (out->has_token || out->secret != NULL)
            return tn_cli_usage(cli, cmd,
                                "--force ends whatever grant is live; it "
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

static int parse_cred(struct tn_cli *cli, const struct tn_cli_cred_cmd *cmd,
                      int argc, char **argv, struct tn_cli_cred *out)
{
    static const struct option opts[] = {
        {"name", required_argument, NULL, 'n'},
        {"token", required_argument, NULL, 'T'},
        {"secret", required_argument, NULL, 's'},
        {"ttl", required_argument, NULL, 't'},
        {"force", no_argument, NULL, 'f'},
        TN_CLI_COMMON_OPTS,
        {0}};
    const struct tn_cli_cmd parse = {cmd->name, cmd->help, opts, cred_opt};
    struct cred_parse p = {cmd, out};
    int ex = tn_cli_parse_opts(cli, argc, argv, &parse, &p);
    return ex != 0 ? ex : finish_cred(cli, cmd->name, argc, argv, out);
}

int tn_cli_cred_main(struct tn_cli *cli, const struct tn_cli_cred_cmd *cmd,
                     int argc, char **argv)
{
    struct tn_cli_cred cred = {0};
    struct tn_client *c = NULL;
    int ex = tn_cli_connect(cli, parse_cred(cli, cmd, argc, argv, &cred), &c);
    if (c == NULL)
        return ex;
    struct tn_lease *l = NULL;
    struct tn_errmsg em = {{0}};
    int rc = 0;
    if (!cred.force)
        rc = tn_client_lease_adopt(c, cred.name, cred.token, cred.secret, &l);
    if (rc == 0)
        rc = cmd->call(c, &cred, l, &em);
    if (rc < 0)
        ex = tn_cli_fail(cli, cmd->name, rc, &em);
    else
        cmd->print(cli, &cred, l);
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
    static const struct tn_cli_cred_cmd cmd = {
        "renew", help, true, false, renew_call, print_renewed};
    return tn_cli_cred_main(cli, &cmd, argc, argv);
}
