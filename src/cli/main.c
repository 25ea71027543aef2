/* SPDX-License-Identifier: MIT */
/* tenure: the command line client of tenured.  The command table, --help
 * and the exit codes; the options every command takes are in args.c, each
 * command in cmd_<verb>.c.  Output is for humans by default and one JSON
 * object per line with --json. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

struct command {
    const char *name;                         /* verb */
    int (*fn)(struct tn_cli *, int, char **); /* runs it */
    const char *summary;                      /* one line for --help */
};

static const struct command commands[] = {
    {"acquire", tn_cmd_acquire, "take a lease; prints its token and secret"},
    {"renew", tn_cmd_renew, "extend a lease (needs --token and --secret)"},
    {"release", tn_cmd_release, "give a lease back (or many of a session)"},
    {"get", tn_cmd_get, "show the live lease of a name"},
    {"list", tn_cmd_list, "list live leases"},
    {"check", tn_cmd_check, "is a token the live grant of a name?"},
    {"run", tn_cmd_run, "hold a lease while a command runs"},
    {"watch", tn_cmd_watch, "print lease events as they happen"},
    {"session", tn_cmd_session,
     "open, renew, end, get or list sessions (one renew, many leases)"},
    {"claim", tn_cmd_claim, "take many names under a session at once"},
    {"migrate", tn_cmd_migrate,
     "move a stopped embedded store into PostgreSQL (tenure-migrate)"},
};

static void usage(FILE *f)
{
    /* One usage line: the manual page's synopsis is made from it. */
    (void)fprintf(f, "Usage: tenure [GLOBAL OPTIONS] COMMAND [OPTIONS]\n\n"
                     "Commands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        (void)fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    (void)fprintf(f, "\nGlobal options (also accepted after the command):\n");
    tn_cli_help_global(f);
    (void)fprintf(
        f, "\nDurations take a unit: 500ms, 10s, 2m, 1h.\n"
           "\nExit codes:\n"
           "  0  success\n"
           "  1  error (network, server, forbidden, protocol)\n"
           "  2  usage error\n"
           "  3  held: the lease is held by another owner (or in lock delay)\n"
           "  4  lost: the lease is no longer live (renew, release), the token "
           "is\n"
           "     not current (check), or 'run' lost its lease and killed the\n"
           "     command\n"
           "  5  not found: the name is free (get)\n"
           "  'run' otherwise exits with its command's status (128+N when it "
           "died\n"
           "  of signal N).\n");
}

int main(int argc, char **argv)
{
    struct tn_cli cli;
    int first = 0;
    int ex = tn_cli_init(&cli);
    if (ex == 0)
        ex = tn_cli_parse_global(&cli, argc, argv, usage, &first);
    if (ex != 0)
        return ex < 0 ? TN_CLI_OK : ex;
    if (first >= argc) {
        usage(stderr);
        return TN_CLI_USAGE;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(argv[first], commands[i].name) == 0)
            return commands[i].fn(&cli, argc - first, argv + first);
    }
    char msg[160];
    (void)snprintf(msg, sizeof(msg), "unknown command \"%.100s\"", argv[first]);
    return tn_cli_usage(&cli, NULL, msg);
}
