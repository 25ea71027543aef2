/* SPDX-License-Identifier: MIT */
/* The command line of tenure: the table of the options every command
 * takes (before or after the command), and the parse of a command's own
 * table with it (src/common/opt.h).  Usage errors are one line on stderr,
 * "tenure: SUBJECT: what is wrong (see 'tenure CMD --help')", exit 2. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#ifndef TN_VERSION
#    define TN_VERSION "0"
#endif

enum { ACT_HELP = 1, ACT_VERSION };

#define AT(f) TN_OPT_AT(struct tn_cli, f)

/* Accepted before and after the command. */
static const struct tn_opt shared[] = {
    {.name = "server",
     .type = TN_OPT_STR,
     AT(server),
     .def = TN_CLI_DEFAULT_SERVER,
     .env = "TENURE_SERVER",
     .arg = "URL[,URL...]",
     .help = "tenured base URL(s) or host:port (http:// implied); the next "
             "one is tried when a connection fails"},
    {.name = "json",
     .type = TN_OPT_BOOL,
     AT(json),
     .help = "print JSON (one object per line)"},
    {.name = "timeout",
     .type = TN_OPT_DURATION,
     AT(opts.request_timeout_ms),
     .min = 1,
     .arg = "DUR",
     .help = "per-request timeout (default 5s)"},
    {.name = "bearer",
     .type = TN_OPT_STR,
     AT(opts.auth_token),
     .env = "TENURE_AUTH_TOKEN",
     .arg = "TOKEN",
     .help = "bearer token for --auth-file servers (or the first line of "
             "$TENURE_TOKEN_FILE); --token is always a fencing token (renew, "
             "release, check)"},
    {.name = "cacert",
     .type = TN_OPT_STR,
     AT(opts.ca_file),
     .env = "TENURE_CACERT",
     .arg = "FILE",
     .help = "CA bundle for https:// servers"},
    {.name = "cert",
     .type = TN_OPT_STR,
     AT(opts.cert_file),
     .arg = "FILE",
     .help = "client certificate (mutual TLS)"},
    {.name = "key",
     .type = TN_OPT_STR,
     AT(opts.key_file),
     .arg = "FILE",
     .help = "the private key of --cert"},
    {.name = "verbose",
     .short_name = 'v',
     .type = TN_OPT_BOOL,
     AT(verbose),
     .help = "progress on stderr"},
    {.name = "help",
     .short_name = 'h',
     .type = TN_OPT_ACTION,
     .action = ACT_HELP,
     .help = "this help; 'tenure COMMAND --help' for a command"},
    /* Up to 0.1 the bearer token was a global --token: refused, not taken
     * for the fencing token of the commands that have one (docs/CLI.md). */
    {.name = "token",
     .type = TN_OPT_REFUSED,
     .help = "is the fencing token of renew, release and check; the bearer "
             "token is --bearer (or $TENURE_AUTH_TOKEN)"},
};

/* Accepted before the command only. */
static const struct tn_opt global[] = {
    {.name = "version",
     .type = TN_OPT_ACTION,
     .action = ACT_VERSION,
     .help = "print the version"},
};

static struct tn_opt_table shared_table(struct tn_cli *cli)
{
    struct tn_opt_table t = TN_OPT_TABLE(shared, cli);
    return t;
}

int tn_cli_init(struct tn_cli *cli)
{
    memset(cli, 0, sizeof(*cli));
    cli->prog = "tenure";
    tn_client_options_init(&cli->opts);
    struct tn_opt_table t = shared_table(cli);
    struct tn_opt_parser p;
    struct tn_errmsg em = {{0}};
    tn_opt_parser_init(&p, TN_OPT_ENV_SKIP_EMPTY);
    tn_opt_parser_add(&p, &t);
    int rc = tn_opt_defaults(&t, &em);
    if (rc == 0)
        rc = tn_opt_env(&p, &em);
    if (rc < 0) {
        tn_cli_err(cli, "%s", em.text);
        return TN_CLI_USAGE;
    }
    /* The token file wins over TENURE_AUTH_TOKEN, --bearer over both. */
    const char *file = getenv("TENURE_TOKEN_FILE");
    if (file != NULL && file[0] != '\0' && tn_cli_read_token(cli, file) < 0)
        return TN_CLI_USAGE;
    return 0;
}

void tn_cli_help_global(FILE *f)
{
    const struct tn_opt_table t[] = {TN_OPT_TABLE(shared, NULL),
                                     TN_OPT_TABLE(global, NULL)};
    tn_opt_help_rows(f, t, 2);
}

int tn_cli_parse_global(struct tn_cli *cli, int argc, char **argv,
                        void (*usage)(FILE *f), int *first)
{
    const struct tn_opt_table t[] = {shared_table(cli),
                                     TN_OPT_TABLE(global, NULL)};
    struct tn_opt_parser p;
    struct tn_errmsg em = {{0}};
    tn_opt_parser_init(&p, TN_OPT_STOP_AT_OPERAND);
    tn_opt_parser_add(&p, &t[0]);
    tn_opt_parser_add(&p, &t[1]);
    if (tn_opt_parse(&p, argc, argv, &em) < 0)
        return tn_cli_usage(cli, NULL, em.text);
    if (p.action != NULL && p.action->action == ACT_HELP)
        usage(stdout);
    else if (p.action != NULL)
        (void)printf("tenure %s\n", TN_VERSION);
    *first = p.first_operand;
    return p.action != NULL ? -1 : 0;
}

int tn_cli_parse(struct tn_cli *cli, const struct tn_cli_cmd *cmd, void *args,
                 int argc, char **argv, struct tn_opt_parser *p)
{
    const struct tn_opt_table own = {cmd->opts, cmd->n_opts, args, NULL};
    const struct tn_opt_table common = shared_table(cli);
    struct tn_errmsg em = {{0}};
    tn_opt_parser_init(p, 0);
    tn_opt_parser_add(p, &own);
    tn_opt_parser_add(p, &common);
    int rc = tn_opt_defaults(&own, &em);
    if (rc == 0)
        rc = tn_opt_parse(p, argc, argv, &em);
    if (rc < 0)
        return tn_cli_usage(cli, cmd->name, em.text);
    if (p->action != NULL) {
        tn_opt_help(stdout, &cmd->help, &own);
        return -1;
    }
    return tn_cli_set_servers(cli, cli->server) == 0 ? 0 : TN_CLI_USAGE;
}

int tn_cli_operands(const struct tn_cli *cli, const char *cmd, int argc,
                    char **argv, int *next, const char **name, bool more)
{
    if (name != NULL && *name == NULL && *next < argc)
        *name = argv[(*next)++];
    if (!more && *next != argc)
        return tn_cli_usage(cli, cmd, "unexpected argument");
    if (name != NULL && *name == NULL)
        return tn_cli_usage(cli, cmd, "a lease name is required");
    return 0;
}

int tn_cli_connect(struct tn_cli *cli, int parsed, struct tn_client **out)
{
    *out = NULL;
    if (parsed != 0)
        return parsed < 0 ? TN_CLI_OK : parsed;
    return tn_cli_client(cli, out);
}

int tn_cli_usage(const struct tn_cli *cli, const char *cmd, const char *msg)
{
    if (cmd != NULL)
        tn_cli_err(cli, "%s (see '%s %s --help')", msg, cli->prog, cmd);
    else
        tn_cli_err(cli, "%s (see '%s --help')", msg, cli->prog);
    return TN_CLI_USAGE;
}
