/* SPDX-License-Identifier: MIT */
/* tenure list: live leases in name order, following pages unless --limit
 * asks for one page. */
#include <inttypes.h>
#include <stdio.h>

#include "cli/cli.h"

static const char help[] =
    "Usage: tenure list [--prefix P] [--limit N] [--after NAME] [--json]\n"
    "\n"
    "List live leases in name order.  Without --limit every page is\n"
    "fetched; with --limit one page is printed.  --json prints one object\n"
    "per line per lease "
    "({\"name\",\"owner_id\",\"token\",\"expires_in_ms\"});\n"
    "with --limit, when more leases follow, a last line {\"next\":NAME}\n"
    "gives the name to pass as --after.\n"
    "\n"
    "Exit: 0 listed (possibly none), 1 error, 2 usage.\n";

static int list_opt(struct tn_cli *cli, int opt, const char *arg, void *ctx)
{
    struct tn_list_args *a = ctx;
    uint64_t v = 0;
    if (opt == 'p')
        a->prefix = arg;
    else if (opt == 'a')
        a->after = arg;
    else if (opt == 'l' && tn_cli_parse_u64(arg, &v) == 0 && v > 0 &&
             v <= 100000)
        a->limit = (unsigned)v;
    else
        return tn_cli_usage(cli, "list",
                            "--limit: expected a number from 1 to 100000");
    return 0;
}

static int parse(struct tn_cli *cli, int argc, char **argv,
                 struct tn_list_args *a)
{
    static const struct option opts[] = {
        {"prefix", required_argument, NULL, 'p'},
        {"limit", required_argument, NULL, 'l'},
        {"after", required_argument, NULL, 'a'},
        TN_CLI_COMMON_OPTS,
        {0}};
    static const struct tn_cli_cmd cmd = {"list", help, opts, list_opt};
    int ex = tn_cli_parse_opts(cli, argc, argv, &cmd, a);
    return ex != 0 ? ex : tn_cli_operands(cli, "list", argc, argv, NULL, false);
}

static void print_page(const struct tn_cli *cli,
                       const struct tn_lease_list *page)
{
    for (size_t i = 0; i < page->count; i++) {
        const struct tn_lease_info *it = &page->items[i];
        if (cli->json)
            tn_cli_print_json(tn_cli_info_json(it));
        else
            (void)printf("%-32s %10" PRIu64 " %8" PRId64 "ms  %s\n", it->name,
                         it->token, it->expires_in_ms, it->owner_id);
    }
}

static int run_list(struct tn_cli *cli, struct tn_client *c,
                    const struct tn_list_args *a)
{
    char after[TN_CLIENT_NAME_MAX + 1] = {0};
    struct tn_list_args q = *a;
    for (;;) {
        struct tn_lease_list *page = NULL;
        struct tn_errmsg em = {{0}};
        int rc = tn_client_list(c, &q, &page, &em);
        if (rc < 0)
            return tn_cli_fail(cli, "list", rc, &em);
        print_page(cli, page);
        bool more = page->has_next;
        if (more)
            (void)snprintf(after, sizeof(after), "%s", page->next);
        tn_lease_list_free(page);
        if (!more)
            return TN_CLI_OK;
        if (a->limit > 0) {
            if (cli->json)
                tn_cli_print_json(json_pack("{s:s}", "next", after));
            else
                tn_cli_err(cli, "more follow: --after %s", after);
            return TN_CLI_OK;
        }
        q.after = after;
    }
}

int tn_cmd_list(struct tn_cli *cli, int argc, char **argv)
{
    struct tn_list_args a = {0};
    struct tn_client *c = NULL;
    int ex = tn_cli_connect(cli, parse(cli, argc, argv, &a), &c);
    if (c == NULL)
        return ex;
    if (!cli->json)
        (void)printf("%-32s %10s %10s  %s\n", "NAME", "TOKEN", "EXPIRES",
                     "OWNER");
    ex = run_list(cli, c, &a);
    tn_client_free(c);
    return ex;
}
