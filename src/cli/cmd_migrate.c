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
    char path[PATH_MAX];
    static char prog[] = "tenure-migrate";
    char *args[64];
    if (argc > 62)
        return tn_cli_usage(cli, "migrate", "too many arguments");
    args[0] = prog;
    for (int i = 1; i < argc; i++)
        args[i] = argv[i];
    args[argc] = NULL;
    if (self_dir(path, sizeof(path) - 16) == 0) {
        strncat(path, "tenure-migrate", sizeof(path) - strlen(path) - 1);
        (void)execv(path, args);
    }
    (void)execvp("tenure-migrate", args); /* then the PATH */
    tn_cli_err(cli, "cannot run tenure-migrate: %s", strerror(errno));
    return TN_CLI_ERROR;
}
