/* SPDX-License-Identifier: MIT */
/* tenure get: show the live lease of a name. */
#include <inttypes.h>
#include <stdio.h>

#include "cli/cli.h"

static const char help[] =
    "Usage: tenure get [--name] NAME [--json]\n"
    "\n"
    "Show the live lease of NAME: owner, token and time left.\n"
    "\n"
    "Exit: 0 held (printed), 5 not found (the name is free), 1 error,\n"
    "2 usage.\n";

static int parse(struct tn_cli *cli, int argc, char **argv, const char **name)
{
    static const struct option opts[] = {
        {"name", required_argument, NULL, 'n'}, TN_CLI_COMMON_OPTS, {0}};
    int opt = 0;
    while ((opt = tn_cli_next_opt(cli, argc, argv, opts, help)) > 0) {
        if (opt != 'n')
            return tn_cli_usage(cli, "get", "unknown option");
        *name = optarg;
    }
    if (opt != TN_CLI_OPTS_END)
        return tn_cli_opts_exit(opt);
    if (*name == NULL && optind < argc)
        *name = argv[optind++];
    if (optind != argc)
        return tn_cli_usage(cli, "get", "unexpected argument");
    if (*name == NULL)
        return tn_cli_usage(cli, "get", "a lease name is required");
    return 0;
}

int tn_cmd_get(struct tn_cli *cli, int argc, char **argv)
{
    const char *name = NULL;
    int ex = parse(cli, argc, argv, &name);
    if (ex != 0)
        return ex < 0 ? TN_CLI_OK : ex;
    struct tn_client *c = NULL;
    ex = tn_cli_client(cli, &c);
    if (ex != 0)
        return ex;
    struct tn_lease_info info;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_get(c, name, &info, &em);
    if (rc == TN_ENOTFOUND) {
        if (cli->json)
            tn_cli_print_json(
                json_pack("{s:s,s:s}", "error", "not_found", "name", name));
        tn_cli_err(cli, "lease \"%s\" is not held", name);
        ex = TN_CLI_NOTFOUND;
    } else if (rc < 0) {
        ex = tn_cli_fail(cli, "get", rc, &em);
    } else if (cli->json) {
        tn_cli_print_json(tn_cli_info_json(&info));
    } else {
        (void)printf("name:          %s\nowner:         %s\ntoken:         "
                     "%" PRIu64 "\nexpires_in_ms: %" PRId64 "\n",
                     info.name, info.owner_id, info.token, info.expires_in_ms);
    }
    tn_client_free(c);
    return ex;
}
