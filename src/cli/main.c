/* SPDX-License-Identifier: MIT */
/* tenure: the command line client of tenured.  Global options, the command
 * table and the exit codes; each command lives in cmd_<verb>.c.  Output is
 * for humans by default and one JSON object per line with --json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#ifndef TN_VERSION
#    define TN_VERSION "0"
#endif

struct command {
    const char *name;                         /* verb */
    int (*fn)(struct tn_cli *, int, char **); /* runs it */
    const char *summary;                      /* one line for --help */
};

static const struct command commands[] = {
    {"acquire", tn_cmd_acquire, "take a lease; prints its token and secret"},
    {"renew", tn_cmd_renew, "extend a lease (needs --token and --secret)"},
    {"release", tn_cmd_release, "give a lease back"},
    {"get", tn_cmd_get, "show the live lease of a name"},
    {"list", tn_cmd_list, "list live leases"},
    {"check", tn_cmd_check, "is a token the live grant of a name?"},
    {"run", tn_cmd_run, "hold a lease while a command runs"},
    {"watch", tn_cmd_watch, "print lease events as they happen"},
    {"migrate", tn_cmd_migrate,
     "move a stopped embedded store into PostgreSQL (tenure-migrate)"},
};

static void usage(FILE *f)
{
    (void)fprintf(
        f, "Usage: tenure [--server URL[,URL...]] [--json] [--timeout DUR] "
           "COMMAND [OPTIONS]\n\nCommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        (void)fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    (void)fprintf(
        f,
        "\nGlobal options (also accepted after the command):\n"
        "  --server URL[,URL...]  tenured base URL(s); the next one is tried "
        "when a\n"
        "                         connection fails (default $TENURE_SERVER "
        "or\n"
        "                         " TN_CLI_DEFAULT_SERVER ")\n"
        "  --json                 print JSON (one object per line)\n"
        "  --timeout DUR          per-request timeout (default 5s)\n"
        "  --token TOKEN          bearer token (or $TENURE_AUTH_TOKEN, or the\n"
        "                         first line of $TENURE_TOKEN_FILE); give it\n"
        "                         before renew/release/check, where --token\n"
        "                         after the command is the fencing token\n"
        "  --cacert FILE          CA bundle for https:// servers "
        "($TENURE_CACERT)\n"
        "  --cert FILE, --key FILE  client certificate and key (mutual TLS)\n"
        "  -v, --verbose          progress on stderr\n"
        "  -h, --help             this help; 'tenure COMMAND --help' for a "
        "command\n"
        "  --version              print the version\n"
        "\nDurations: 10s, 500ms, 2m, 1h, or plain milliseconds.\n"
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

static int global_opts(struct tn_cli *cli, int argc, char **argv)
{
    static const struct option opts[] = {
        TN_CLI_COMMON_OPTS, {"version", no_argument, NULL, 'V'}, {0}};
    int opt = 0;
    while ((opt = getopt_long(argc, argv, "+hv", opts, NULL)) != -1) {
        int r = tn_cli_common_opt(cli, opt, optarg);
        if (r < 0)
            return -TN_CLI_USAGE;
        if (r == 1)
            continue;
        if (opt == 'h') {
            usage(stdout);
            return -TN_CLI_OK - 100;
        }
        if (opt == 'V') {
            (void)printf("tenure %s\n", TN_VERSION);
            return -TN_CLI_OK - 100;
        }
        usage(stderr);
        return -TN_CLI_USAGE;
    }
    return optind;
}

static int setup(struct tn_cli *cli)
{
    memset(cli, 0, sizeof(*cli));
    cli->prog = "tenure";
    tn_client_options_init(&cli->opts);
    const char *env = getenv("TENURE_SERVER");
    const char *servers =
        env != NULL && env[0] != '\0' ? env : TN_CLI_DEFAULT_SERVER;
    if (tn_cli_set_servers(cli, servers) < 0)
        return -1;
    const char *auth = getenv("TENURE_AUTH_TOKEN");
    if (auth != NULL && auth[0] != '\0')
        cli->opts.auth_token = auth;
    const char *file = getenv("TENURE_TOKEN_FILE");
    if (file != NULL && file[0] != '\0' && tn_cli_read_token(cli, file) < 0)
        return -1;
    const char *ca = getenv("TENURE_CACERT");
    if (ca != NULL && ca[0] != '\0')
        cli->opts.ca_file = ca;
    return 0;
}

int main(int argc, char **argv)
{
    struct tn_cli cli;
    if (setup(&cli) < 0)
        return TN_CLI_USAGE;
    int first = global_opts(&cli, argc, argv);
    if (first == -TN_CLI_OK - 100)
        return TN_CLI_OK;
    if (first < 0)
        return -first;
    if (first >= argc) {
        usage(stderr);
        return TN_CLI_USAGE;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(argv[first], commands[i].name) != 0)
            continue;
        optind = 0; /* re-initialise getopt for the command's argv */
        return commands[i].fn(&cli, argc - first, argv + first);
    }
    tn_cli_err(&cli, "unknown command \"%s\"", argv[first]);
    usage(stderr);
    return TN_CLI_USAGE;
}
