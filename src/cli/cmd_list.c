/* SPDX-License-Identifier: MIT */
/* tenure list: live leases in name order, following pages unless --limit
 * asks for one page. */
#include <inttypes.h>
#include <stdio.h>

#include "cli/cli.h"

static const char usage[] =
    "Usage: tenure list [--prefix P] [--limit N] [--after NAME] [--json]\n";
static const char about[] =
    "List live leases in name order.  Without --limit every page is\n"
    "fetched; with --limit one page is printed.  --json prints one object\n"
    "per line per lease "
    "({\"name\",\"owner_id\",\"token\",\"expires_in_ms\"});\n"
    "with --limit, when more leases follow, a last line {\"next\":NAME}\n"
    "gives the name to pass as --after.\n";
static const char footer[] =
    "Exit: 0 listed (possibly none), 1 error, 2 usage.\n";

#define AT(f) TN_OPT_AT(struct tn_list_args, f)
static const struct tn_opt opts[] = {
    {.name = "prefix",
     .type = TN_OPT_STR,
     AT(prefix),
     .arg = "P",
     .help = "only names starting with P"},
    {.name = "limit",
     .type = TN_OPT_INT,
     AT(limit),
     .min = 1,
     .max = 100000,
     .arg = "N",
     .help = "print one page of at most N leases"},
    {.name = "after",
     .type = TN_OPT_STR,
     AT(after),
     .arg = "NAME",
     .help = "start after this name"},
};

static const struct tn_cli_cmd command =
    TN_CLI_CMD("list", usage, about, footer, opts);

static int parse(struct tn_cli *cli, int argc, char **argv,
                 struct tn_list_args *a)
{
    struct tn_opt_parser p;
    int ex = tn_cli_parse(cli, &command, a, argc, argv, &p);
    return ex != 0 ? ex
                   : tn_cli_operands(cli, "list", argc, argv, &p.first_operand,
                                     NULL, false);
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
        if (tn_cli_page_last(cli, more, a->limit, after))
            return TN_CLI_OK;
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
