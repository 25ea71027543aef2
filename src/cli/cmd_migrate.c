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

static const char usage[] =
    "Usage: tenure migrate --data-dir DIR --to postgresql://...\n";
static const char about[] =
    "Move the embedded store in DIR into the PostgreSQL database at the\n"
    "URL: every name keeps its floor, live leases keep their holder, secret\n"
    "and remaining TTL, and new tokens continue above every token the\n"
    "embedded store issued.  tenured must be stopped; a database that\n"
    "already holds leases is refused.  Runs tenure-migrate (next to tenure,\n"
    "else from the PATH).\n";
static const char footer[] = "Exit: 0 migrated, 1 error, 2 usage.\n";

struct migrate_args {
    const char *data_dir; /* --data-dir */
    const char *to;       /* --to */
};

#define AT(f) TN_OPT_AT(struct migrate_args, f)
static const struct tn_opt opts[] = {
    {.name = "data-dir",
     .type = TN_OPT_STR,
     AT(data_dir),
     .flags = TN_OPT_REQUIRED | TN_OPT_NONEMPTY,
     .arg = "DIR",
     .help = "the stopped embedded store (tenured --data-dir)"},
    {.name = "to",
     .type = TN_OPT_STR,
     AT(to),
     .flags = TN_OPT_REQUIRED | TN_OPT_NONEMPTY,
     .arg = "URL",
     .help = "the target database (a libpq connection string)"},
};

static const struct tn_cli_cmd command =
    TN_CLI_CMD("migrate", usage, about, footer, opts);

static int parse(struct tn_cli *cli, int argc, char **argv,
                 struct migrate_args *a)
{
    struct tn_opt_parser p;
    int ex = tn_cli_parse(cli, &command, a, argc, argv, &p);
    return ex != 0 ? ex
                   : tn_cli_operands(cli, "migrate", argc, argv,
                                     &p.first_operand, NULL, false);
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
    /* execv takes char *const[]; the strings are argv's, never written. */
    char *args[] = {prog,   opt_dir,      (char *)a.data_dir,
                    opt_to, (char *)a.to, NULL};
    char path[PATH_MAX];
    if (self_dir(path, sizeof(path) - 16) == 0) {
        strncat(path, "tenure-migrate", sizeof(path) - strlen(path) - 1);
        (void)execv(path, args);
    }
    (void)execvp("tenure-migrate", args); /* then the PATH */
    tn_cli_err(cli, "cannot run tenure-migrate: %s", strerror(errno));
    return TN_CLI_ERROR;
}
