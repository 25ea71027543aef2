/* SPDX-License-Identifier: MIT */
/* tenure get: show the live lease of a name. */
#include <inttypes.h>
#include <stdio.h>

#include "cli/cli.h"

static const char usage[] = "Usage: tenure get [--name] NAME [--json]\n";
static const char about[] =
    "Show the live lease of NAME: owner, token and time left.\n";
static const char footer[] =
    "Exit: 0 held (printed), 5 not found (the name is free), 1 error,\n"
    "2 usage.\n";

struct get_args {
    const char *name; /* --name or the argument */
};

static const struct tn_opt opts[] = {
    {.name = "name",
     .type = TN_OPT_STR,
     TN_OPT_AT(struct get_args, name),
     .arg = "NAME",
     .help = "lease name (or the first argument)"},
};

static const struct tn_cli_cmd command =
    TN_CLI_CMD("get", usage, about, footer, opts);

static int parse(struct tn_cli *cli, int argc, char **argv, const char **name)
{
    struct get_args a = {NULL};
    struct tn_opt_parser p;
    int ex = tn_cli_parse(cli, &command, &a, argc, argv, &p);
    if (ex == 0)
        ex = tn_cli_operands(cli, "get", argc, argv, &p.first_operand, &a.name,
                             false);
    *name = a.name;
    return ex;
}

int tn_cmd_get(struct tn_cli *cli, int argc, char **argv)
{
    const char *name = NULL;
    struct tn_client *c = NULL;
    int ex = tn_cli_connect(cli, parse(cli, argc, argv, &name), &c);
    if (c == NULL)
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
