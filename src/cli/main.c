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
    (void)fprintf(
        f,
        "\nGlobal options (also accepted after the command):\n"
        "  --server URL[,URL...]  tenured base URL(s) or host:port "
        "(http:// implied);\n"
        "                         the next one is tried when a connection "
        "fails\n"
        "                         (default $TENURE_SERVER "
        "or " TN_CLI_DEFAULT_SERVER ")\n"
        "  --json                 print JSON (one object per line)\n"
        "  --timeout DUR          per-request timeout (default 5s)\n"
        "  --bearer TOKEN         bearer token for --auth-file servers (or\n"
        "                         $TENURE_AUTH_TOKEN, or the first line of\n"
        "                         $TENURE_TOKEN_FILE); --token is always a\n"
        "                         fencing token (renew, release, check)\n"
        "  --cacert FILE          CA bundle for https:// servers "
        "($TENURE_CACERT)\n"
        "  --cert FILE, --key FILE  client certificate and key (mutual TLS)\n"
        "  -v, --verbose          progress on stderr\n"
        "  -h, --help             this help; 'tenure COMMAND --help' for a "
        "command\n"
        "  --version              print the version\n"
        "\nDurations take a unit: 500ms, 10s, 2m, 1h.\n"
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
    opterr = 0; /* every message is ours, one line each */
    while ((opt = getopt_long(argc, argv, "+:hv", opts, NULL)) != -1) {
        if (opt == '?' || opt == ':')
            return -tn_cli_bad_opt(cli, NULL, opt, argc, argv);
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
        return -tn_cli_usage(cli, NULL, "unknown option");
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
    char msg[160];
    (void)snprintf(msg, sizeof(msg), "unknown command \"%.100s\"", argv[first]);
    return tn_cli_usage(&cli, NULL, msg);
}
