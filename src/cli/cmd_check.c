/* SPDX-License-Identifier: MIT */
/* tenure check: is a token the live grant of a name (and what is the
 * name's floor)? */
#include <inttypes.h>
#include <stdio.h>

#include "cli/cli.h"

static const char usage[] =
    "Usage: tenure check [--name] NAME [--token] T [--json]\n";
static const char about[] =
    "Ask whether fencing token T is the live grant of NAME.  Prints the\n"
    "token asked about, current (yes or no), the live token (none when the\n"
    "name is free) and the floor: the highest token ever issued for NAME (a\n"
    "sink admits a token only if it is >= the floor).\n"
    "\n"
    "  tenure check shard:8841 4\n"
    "  tenure check --name shard:8841 --token 4\n";
static const char footer[] =
    "Exit: 0 current, 4 not current, 1 error, 2 usage.\n";

struct check_args {
    const char *name; /* lease name */
    uint64_t token;   /* token to check */
};

#define AT(f) TN_OPT_AT(struct check_args, f)
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
     .help = "the fencing token to check (or the argument after NAME)"},
};

static const struct tn_cli_cmd command =
    TN_CLI_CMD("check", usage, about, footer, opts);

static int parse(struct tn_cli *cli, int argc, char **argv,
                 struct check_args *a)
{
    struct tn_opt_parser p;
    int ex = tn_cli_parse(cli, &command, a, argc, argv, &p);
    int next = p.first_operand;
    if (ex == 0)
        ex = tn_cli_operands(cli, "check", argc, argv, &next, &a->name, true);
    if (ex != 0)
        return ex;
    bool has_token = tn_opt_given(&p, "token");
    if (!has_token && next < argc) {
        if (tn_opt_parse_u64(argv[next], &a->token) < 0)
            return tn_cli_usage(cli, "check", "the token must be a number");
        has_token = true;
        next++;
    }
    if (next != argc)
        return tn_cli_usage(cli, "check", "unexpected argument");
    if (!has_token)
        return tn_cli_usage(cli, "check", "a token to check is required");
    return 0;
}

/* The token asked about and the live token are two numbers: each has its
 * own label, so "current: no" never sits beside a token that looks like
 * the one asked about. */
static void print_check(const struct tn_cli *cli, const struct check_args *a,
                        const struct tn_check_result *r)
{
    if (cli->json) {
        json_t *o = json_pack("{s:s,s:I,s:b,s:I}", "name", a->name, "token",
                              (json_int_t)a->token, "current", r->current,
                              "floor", (json_int_t)r->floor);
        if (o != NULL)
            (void)json_object_set_new(o, "live_token",
                                      r->has_token
                                          ? json_integer((json_int_t)r->token)
                                          : json_null());
        tn_cli_print_json(o);
        return;
    }
    (void)printf("name:       %s\n", a->name);
    (void)printf("token:      %" PRIu64 "\n", a->token);
    (void)printf("current:    %s\n", r->current ? "yes" : "no");
    if (r->has_token)
        (void)printf("live token: %" PRIu64 "\n", r->token);
    else
        (void)printf("live token: none\n");
    (void)printf("floor:      %" PRIu64 "\n", r->floor);
}

int tn_cmd_check(struct tn_cli *cli, int argc, char **argv)
{
    struct check_args a = {0};
    struct tn_client *c = NULL;
    int ex = tn_cli_connect(cli, parse(cli, argc, argv, &a), &c);
    if (c == NULL)
        return ex;
    struct tn_check_result r;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_check(c, a.name, a.token, &r, &em);
    if (rc < 0) {
        ex = tn_cli_fail(cli, "check", rc, &em);
    } else {
        print_check(cli, &a, &r);
        ex = r.current ? TN_CLI_OK : TN_CLI_LOST;
    }
    tn_client_free(c);
    return ex;
}
