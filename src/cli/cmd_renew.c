/* SPDX-License-Identifier: MIT */
/* tenure renew: extend a lease acquired by another invocation, given its
 * name, token and secret.  Also the credential parsing shared with
 * release. */
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

static int cred_opt(struct tn_cli *cli, const char *cmd, int opt,
                    struct tn_cli_cred *out)
{
    switch (opt) {
    case 'n':
        out->name = optarg;
        return 0;
    case 'T':
        if (tn_cli_parse_u64(optarg, &out->token) < 0)
            return tn_cli_usage(cli, cmd, "--token: expected a number");
        out->has_token = true;
        return 0;
    case 's':
        out->secret = optarg;
        return 0;
    case 't':
        return tn_cli_duration_arg(cli, cmd, "--ttl", optarg, true,
                                   &out->ttl_ms);
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
    if (out->name == NULL && optind < argc)
        out->name = argv[optind++];
    if (optind != argc)
        return tn_cli_usage(cli, cmd, "unexpected argument");
    if (out->name == NULL)
        return tn_cli_usage(cli, cmd, "a lease name is required");
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

int tn_cli_parse_cred(struct tn_cli *cli, const struct tn_cli_cred_cmd *cmd,
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
    int opt = 0;
    while ((opt = tn_cli_next_opt(cli, argc, argv, opts, cmd->help)) > 0) {
        if (opt == 't' && !cmd->with_ttl)
            return tn_cli_usage(cli, cmd->name, "--ttl is for renew only");
        if (opt == 'f' && !cmd->with_force)
            return tn_cli_usage(cli, cmd->name, "--force is for release only");
        int ex = cred_opt(cli, cmd->name, opt, out);
        if (ex != 0)
            return ex;
    }
    if (opt != TN_CLI_OPTS_END)
        return tn_cli_opts_exit(opt);
    return finish_cred(cli, cmd->name, argc, argv, out);
}

static void print_renewed(const struct tn_cli *cli, struct tn_lease *l)
{
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
    struct tn_cli_cred cred = {0};
    static const struct tn_cli_cred_cmd cmd = {"renew", help, true, false};
    int ex = tn_cli_parse_cred(cli, &cmd, argc, argv, &cred);
    if (ex != 0)
        return ex < 0 ? TN_CLI_OK : ex;
    struct tn_client *c = NULL;
    ex = tn_cli_client(cli, &c);
    if (ex != 0)
        return ex;
    struct tn_lease *l = NULL;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_lease_adopt(c, cred.name, cred.token, cred.secret, &l);
    if (rc == 0)
        rc = tn_client_renew(c, l, cred.ttl_ms, &em);
    if (rc < 0)
        ex = tn_cli_fail(cli, "renew", rc, &em);
    else
        print_renewed(cli, l);
    tn_lease_free(l);
    tn_client_free(c);
    return ex;
}
