/* SPDX-License-Identifier: MIT */
/* Shared pieces of the tenure CLI: the exit codes, the parse of a
 * command's table of options with the options every command accepts
 * (args.c), and output helpers.  The CLI talks to tenured only through
 * libtenure's client API. */
#ifndef TN_CLI_H
#define TN_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <tenure/client.h>

#include "common/opt.h"

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
    const char *server;            /* --server, TENURE_SERVER or the
                                      default, as given */
    char servers[1280];            /* server's URLs, each NUL-terminated,
                                      http:// added to a bare host:port */
    bool json;                     /* --json */
    bool verbose;                  /* -v: progress on stderr */
    char bearer[4096];             /* from TENURE_TOKEN_FILE */
    const char *prog;              /* "tenure" */
};

/* Use the first line of file as the bearer token; 0 or -1 (printed). */
int tn_cli_read_token(struct tn_cli *cli, const char *file);

/* Set the server list from a comma-separated string of URLs or host:port
 * (http:// implied); 0 or -1 (printed). */
int tn_cli_set_servers(struct tn_cli *cli, const char *list);

/* A command's options: its table (src/common/opt.h; the offsets point
 * into the struct the command hands tn_cli_parse) and its --help. */
struct tn_cli_cmd {
    const char *name;          /* "acquire", for usage lines */
    struct tn_opt_help help;   /* usage, about, footer of --help */
    const struct tn_opt *opts; /* the command's own options */
    size_t n_opts;             /* how many */
};
#define TN_CLI_CMD(name, usage, about, footer, rows)                           \
    {                                                                          \
        (name), {(usage), (about), (footer)}, (rows),                          \
            sizeof(rows) / sizeof((rows)[0])                                   \
    }

/* Fill cli from the defaults and the environment of the options every
 * command takes (TENURE_SERVER, TENURE_AUTH_TOKEN, TENURE_TOKEN_FILE,
 * TENURE_CACERT).  0 or TN_CLI_USAGE (printed). */
int tn_cli_init(struct tn_cli *cli);

/* The options before the command: every command's shared options and
 * --version, up to the first operand (the command), whose index is put in
 * *first.  0, -1 after --help (usage(stdout) printed it) or --version, or
 * TN_CLI_USAGE (printed). */
int tn_cli_parse_global(struct tn_cli *cli, int argc, char **argv,
                        void (*usage)(FILE *f), int *first);
/* The rows of the options accepted before the command, for tenure --help. */
void tn_cli_help_global(FILE *f);

/* Parse the arguments of cmd (argv[0] is its name): its own options into
 * args (their defaults first), the shared ones into cli, anywhere among
 * the operands, which p->first_operand then indexes.  0, -1 after --help
 * (printed), or TN_CLI_USAGE (printed, one line). */
int tn_cli_parse(struct tn_cli *cli, const struct tn_cli_cmd *cmd, void *args,
                 int argc, char **argv, struct tn_opt_parser *p);

/* The operands from argv[*next]: with name, the next one becomes *name
 * unless --name gave it, and a name is required; without more, nothing
 * may follow.  0 or TN_CLI_USAGE (printed). */
int tn_cli_operands(const struct tn_cli *cli, const char *cmd, int argc,
                    char **argv, int *next, const char **name, bool more);

/* What a command does with its parse's result: 0 sets *out to a new
 * client (NULL and an exit code when that fails); otherwise *out is NULL
 * and the exit code is returned (0 after --help). */
int tn_cli_connect(struct tn_cli *cli, int parsed, struct tn_client **out);

/* Usage error: print msg and the --help hint on one line, return
 * TN_CLI_USAGE (cmd NULL: the global --help). */
int tn_cli_usage(const struct tn_cli *cli, const char *cmd, const char *msg);

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
/* After a page of a listing: true when it stops here, at its last page
 * or after the one page --limit asked for (whose cursor is then printed:
 * {"next"} with --json, else "more follow: --after" on stderr). */
bool tn_cli_page_last(const struct tn_cli *cli, bool more, unsigned limit,
                      const char *after);
/* A lease info as JSON (new reference). */
json_t *tn_cli_info_json(const struct tn_lease_info *info);

/* The credentials of renew and release (the options of both fill it). */
struct tn_cli_cred {
    const char *name;    /* --name or first argument */
    uint64_t token;      /* --token */
    bool has_token;      /* --token given */
    const char *secret;  /* --secret or $TENURE_SECRET */
    bool force;          /* release --force (admin) */
    int64_t ttl_ms;      /* --ttl (renew only), 0 = keep */
    const char *session; /* release --session ID (NAME=TOKEN operands) */
};

/* A command on a lease given by its credentials (renew, release). */
struct tn_cli_cred_cmd {
    const char *name; /* "renew" or "release" */
    /* The call, on the lease adopted from cred (NULL with --force); a
     * tn_err, with em set on failure. */
    int (*call)(struct tn_client *c, const struct tn_cli_cred *cred,
                struct tn_lease *l, struct tn_errmsg *em);
    /* Print the answer of a call that succeeded. */
    void (*print)(const struct tn_cli *cli, const struct tn_cli_cred *cred,
                  struct tn_lease *l);
};

/* After cmd's options were parsed into cred by p: check the name operand
 * and the credentials, adopt the lease and make the call; the exit
 * code. */
int tn_cli_cred_main(struct tn_cli *cli, const struct tn_cli_cred_cmd *cmd,
                     int argc, char **argv, const struct tn_opt_parser *p,
                     struct tn_cli_cred *cred);

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
