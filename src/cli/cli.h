/* SPDX-License-Identifier: MIT */
/* Shared pieces of the tenure CLI: the exit codes, the options every
 * command accepts, duration parsing and output helpers.  The CLI talks to
 * tenured only through libtenure's client API. */
#ifndef TN_CLI_H
#define TN_CLI_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include <tenure/client.h>

/* Exit codes, documented in --help and docs/CLI.md. */
enum tn_cli_exit {
    TN_CLI_OK = 0,       /* success */
    TN_CLI_ERROR = 1,    /* any other failure (network, server, forbidden) */
    TN_CLI_USAGE = 2,    /* bad command line */
    TN_CLI_HELD = 3,     /* acquire: held by another owner or lock delay */
    TN_CLI_LOST = 4,     /* renew/release: no longer live; check: not
                            current; run: the lease was lost or ran out */
    TN_CLI_NOTFOUND = 5, /* get: the name is free */
};

#define TN_CLI_DEFAULT_SERVER "http://127.0.0.1:7300"

struct tn_cli {
    struct tn_client_options opts; /* URLs point into servers */
    char servers[1280];            /* --server / TENURE_SERVER: each URL
                                      NUL-terminated, http:// added to a
                                      bare host:port */
    bool json;                     /* --json */
    bool verbose;                  /* -v: progress on stderr */
    char bearer[4096];             /* from TENURE_TOKEN_FILE */
    const char *prog;              /* "tenure" */
};

/* Long options every command accepts; the codes are above any short one. */
enum {
    TN_CLI_OPT_SERVER = 1000,
    TN_CLI_OPT_JSON,
    TN_CLI_OPT_TIMEOUT,
    TN_CLI_OPT_HELP,
    TN_CLI_OPT_BEARER,
    TN_CLI_OPT_CACERT,
    TN_CLI_OPT_CERT,
    TN_CLI_OPT_KEY,
};
#define TN_CLI_COMMON_OPTS                                                     \
    {"server", required_argument, NULL, TN_CLI_OPT_SERVER},                    \
        {"json", no_argument, NULL, TN_CLI_OPT_JSON},                          \
        {"timeout", required_argument, NULL, TN_CLI_OPT_TIMEOUT},              \
        {"bearer", required_argument, NULL, TN_CLI_OPT_BEARER},                \
        {"cacert", required_argument, NULL, TN_CLI_OPT_CACERT},                \
        {"cert", required_argument, NULL, TN_CLI_OPT_CERT},                    \
        {"key", required_argument, NULL, TN_CLI_OPT_KEY},                      \
        {"help", no_argument, NULL, 'h'},                                      \
    {                                                                          \
        "verbose", no_argument, NULL, 'v'                                      \
    }

/* Handle a common option; returns 1 when handled, 0 when not common, or
 * -1 (usage error already printed). */
int tn_cli_common_opt(struct tn_cli *cli, int opt, const char *arg);

/* Use the first line of file as the bearer token; 0 or -1 (printed). */
int tn_cli_read_token(struct tn_cli *cli, const char *file);

/* Set the server list from a comma-separated string of URLs or host:port
 * (http:// implied); 0 or -1 (printed). */
int tn_cli_set_servers(struct tn_cli *cli, const char *list);

/* Parse "10s", "500ms", "2m", "1h" (or "0") into *out_ms.  0, -2 for a
 * number without a unit, -1 otherwise. */
int tn_cli_parse_duration(const char *s, int64_t *out_ms);
/* Parse the duration arg of flag; on a bad one (no unit, garbage, or 0
 * when positive) print one usage line and return TN_CLI_USAGE, else 0. */
int tn_cli_duration_arg(const struct tn_cli *cli, const char *cmd,
                        const char *flag, const char *arg, bool positive,
                        int64_t *out_ms);
/* Parse a non-negative decimal integer (token, limit). 0 or -1. */
int tn_cli_parse_u64(const char *s, uint64_t *out);

/* Print "tenure: <msg>" on stderr. */
void tn_cli_err(const struct tn_cli *cli, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Report a failed call: message on stderr (or a JSON error object on
 * stdout with --json) and the exit code for rc. */
int tn_cli_fail(const struct tn_cli *cli, const char *what, int rc,
                const struct tn_errmsg *em);
/* Exit code for a tn_err. */
int tn_cli_exit_for(int rc);

/* Create the client from cli->opts; prints the error. */
int tn_cli_client(struct tn_cli *cli, struct tn_client **out);

/* Print a JSON value (steals the reference) on stdout, one line. */
void tn_cli_print_json(json_t *v);
/* A lease info as JSON (new reference). */
json_t *tn_cli_info_json(const struct tn_lease_info *info);

/* Results of tn_cli_next_opt other than an option of the command's own. */
enum {
    TN_CLI_OPTS_END = -1,  /* no more options (optind is the next argument) */
    TN_CLI_OPTS_HELP = -2, /* --help was printed: exit 0 */
    TN_CLI_OPTS_BAD = -3,  /* a common option was bad (already said) */
};
/* The next option of a command's own: getopt_long over opts ("hv" short),
 * with the common options applied and --help printed from help on the way.
 * Returns the option's value (> 0) or one of TN_CLI_OPTS_*. */
int tn_cli_next_opt(struct tn_cli *cli, int argc, char **argv,
                    const struct option *opts, const char *help);
/* Print the one usage line for a '?' (unknown option) or ':' (option
 * without its value) from getopt; returns TN_CLI_USAGE. */
int tn_cli_bad_opt(const struct tn_cli *cli, const char *cmd, int opt, int argc,
                   char **argv);
/* What a command's parse returns for a TN_CLI_OPTS_* result other than
 * TN_CLI_OPTS_END: -1 (help printed) or TN_CLI_USAGE. */
int tn_cli_opts_exit(int r);

/* A command's options: its getopt_long table (with TN_CLI_COMMON_OPTS),
 * its --help text and what to do with each option of its own. */
struct tn_cli_cmd {
    const char *name;          /* "acquire", for usage lines */
    const char *help;          /* --help text */
    const struct option *opts; /* ends with TN_CLI_COMMON_OPTS, {0} */
    int (*on_opt)(struct tn_cli *cli, int opt, const char *arg, void *ctx);
    /* 0 or an exit code (usage printed) */
};
/* Read all options of cmd, handing each of its own to cmd->on_opt(ctx).
 * 0 when they were all read (optind is the first operand), -1 after
 * --help, else an exit code. */
int tn_cli_parse_opts(struct tn_cli *cli, int argc, char **argv,
                      const struct tn_cli_cmd *cmd, void *ctx);
/* The operands after the options: with name, argv[optind] becomes *name
 * unless --name gave it, and a name is required; without more, nothing
 * may follow.  0 or TN_CLI_USAGE (printed). */
int tn_cli_operands(const struct tn_cli *cli, const char *cmd, int argc,
                    char **argv, const char **name, bool more);
/* What a command does with its parse's result: 0 sets *out to a new
 * client (NULL and an exit code when that fails); otherwise *out is NULL
 * and the exit code is returned (0 after --help). */
int tn_cli_connect(struct tn_cli *cli, int parsed, struct tn_client **out);

/* Usage error: print msg and the --help hint on one line, return
 * TN_CLI_USAGE (cmd NULL: the global --help). */
int tn_cli_usage(const struct tn_cli *cli, const char *cmd, const char *msg);

/* The credentials of renew and release. */
struct tn_cli_cred {
    const char *name;   /* --name or first argument */
    uint64_t token;     /* --token */
    bool has_token;     /* --token given */
    const char *secret; /* --secret or $TENURE_SECRET */
    bool force;         /* release --force (admin) */
    int64_t ttl_ms;     /* --ttl (renew only), 0 = keep */
};

/* A command on a lease given by its credentials (renew, release). */
struct tn_cli_cred_cmd {
    const char *name; /* "renew" or "release" */
    const char *help; /* its --help text */
    bool with_ttl;    /* accepts --ttl (renew) */
    bool with_force;  /* accepts --force (release) */
    /* The call, on the lease adopted from cred (NULL with --force); a
     * tn_err, with em set on failure. */
    int (*call)(struct tn_client *c, const struct tn_cli_cred *cred,
                struct tn_lease *l, struct tn_errmsg *em);
    /* Print the answer of a call that succeeded. */
    void (*print)(const struct tn_cli *cli, const struct tn_cli_cred *cred,
                  struct tn_lease *l);
};

/* Parse cmd's arguments, adopt the lease and make the call; the exit
 * code. */
int tn_cli_cred_main(struct tn_cli *cli, const struct tn_cli_cred_cmd *cmd,
                     int argc, char **argv);

int tn_cmd_acquire(struct tn_cli *cli, int argc, char **argv);
int tn_cmd_renew(struct tn_cli *cli, int argc, char **argv);
int tn_cmd_release(struct tn_cli *cli, int argc, char **argv);
int tn_cmd_get(struct tn_cli *cli, int argc, char **argv);
int tn_cmd_list(struct tn_cli *cli, int argc, char **argv);
int tn_cmd_check(struct tn_cli *cli, int argc, char **argv);
int tn_cmd_run(struct tn_cli *cli, int argc, char **argv);
int tn_cmd_watch(struct tn_cli *cli, int argc, char **argv);
int tn_cmd_migrate(struct tn_cli *cli, int argc, char **argv);
int tn_cmd_session(struct tn_cli *cli, int argc, char **argv);
int tn_cmd_claim(struct tn_cli *cli, int argc, char **argv);

#endif
