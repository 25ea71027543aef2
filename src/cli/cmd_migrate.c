/* SPDX-License-Identifier: MIT */
/* tenure migrate: run tenure-migrate (installed next to tenure), which
 * moves a stopped embedded store into PostgreSQL with live leases and
 * tokens continuing above every token issued before. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static const char help[] =
    "Usage: tenure migrate --data-dir DIR --to postgresql://...\n"
    "\n"
    "Move the embedded store in DIR into the PostgreSQL database at the\n"
    "URL: every name keeps its floor, live leases keep their holder, secret\n"
    "and remaining TTL, and new tokens continue above every token the\n"
    "embedded store issued.  tenured must be stopped; a database that\n"
    "already holds leases is refused.  Runs tenure-migrate (next to tenure,\n"
    "else from the PATH).\n"
    "\n"
    "  --data-dir DIR  the stopped embedded store (tenured --data-dir)\n"
    "  --to URL        the target database (a libpq connection string)\n"
    "\n"
    "Exit: 0 migrated, 1 error, 2 usage.\n";

struct migrate_args {
    char *data_dir; /* --data-dir */
    char *to;       /* --to */
};

static int migrate_opt(struct tn_cli *cli, int opt, const char *arg, void *ctx)
{
    struct migrate_args *a = ctx;
    if (opt == 'd')
        a->data_dir = (char *)arg;
    else if (opt == 't')
        a->to = (char *)arg;
    else
        return tn_cli_usage(cli, "migrate", "unknown option");
    return 0;
}

static int parse(struct tn_cli *cli, int argc, char **argv,
                 struct migrate_args *a)
{
    static const struct option opts[] = {
        {"data-dir", required_argument, NULL, 'd'},
        {"to", required_argument, NULL, 't'},
        TN_CLI_COMMON_OPTS,
        {0}};
    static const struct tn_cli_cmd cmd = {"migrate", help, opts, migrate_opt};
    int ex = tn_cli_parse_opts(cli, argc, argv, &cmd, a);
    if (ex == 0)
        ex = tn_cli_operands(cli, "migrate", argc, argv, NULL, false);
    if (ex != 0)
        return ex;
    if (a->data_dir == NULL || a->to == NULL)
        return tn_cli_usage(cli, "migrate", "--data-dir and --to are required");
    return 0;
}

/* The directory of the running tenure binary, with a trailing '/'. */
static int self_dir(char *out, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", out, len - 1);
    if (n <= 0)
        return -1;
    out[n] = '\0';
    char *slash = strrchr(out, '/');
    if (slash == NULL)
        return -1;
    slash[1] = '\0';
    return 0;
}

int tn_cmd_migrate(struct tn_cli *cli, int argc, char **argv)
{
    struct migrate_args a = {0};
    int ex = parse(cli, argc, argv, &a);
    if (ex != 0)
        return ex < 0 ? TN_CLI_OK : ex;
    static char prog[] = "tenure-migrate";
    static char opt_dir[] = "--data-dir";
    static char opt_to[] = "--to";
    char *args[] = {prog, opt_dir, a.data_dir, opt_to, a.to, NULL};
    char path[PATH_MAX];
    if (self_dir(path, sizeof(path) - 16) == 0) {
        strncat(path, "tenure-migrate", sizeof(path) - strlen(path) - 1);
        (void)execv(path, args);
    }
    (void)execvp("tenure-migrate", args); /* then the PATH */
    tn_cli_err(cli, "cannot run tenure-migrate: %s", strerror(errno));
    return TN_CLI_ERROR;
}
