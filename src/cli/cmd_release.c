/* SPDX-License-Identifier: MIT */
/* tenure release: give a lease back, given its name, token and secret;
 * with --session, give many leases of a session back in one request. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/session.h>

#include "cli/cli.h"

static const char usage[] =
    "Usage: tenure release [--name] NAME --token T --secret S\n"
    "       tenure release [--name] NAME --force\n"
    "       tenure release --session ID --secret S NAME=TOKEN...\n";
static const char about[] =
    "Release the lease NAME granted with token T (secret from the command\n"
    "line or $TENURE_SECRET).  A release never touches a newer grant.\n";
static const char footer[] =
    "Exit: 0 released, 4 lost (it was no longer live; with --force: nothing\n"
    "was live), 1 error (e.g. wrong secret, not an admin), 2 usage.\n";

#define AT(f) TN_OPT_AT(struct tn_cli_cred, f)
static const struct tn_opt opts[] = {
    {.name = "name",
     .type = TN_OPT_STR,
     AT(name),
     .arg = "NAME",
     .help = "lease name (or the first argument)"},
    {.name = "token",
     .type = TN_OPT_U64,
     AT(token),
     .arg = "T",
     .help = "the fencing token of the grant"},
    {.name = "secret",
     .type = TN_OPT_STR,
     AT(secret),
     .arg = "S",
     .help = "its lease secret (or $TENURE_SECRET); with --session, the "
             "session's (or $TENURE_SESSION_SECRET)"},
    {.name = "force",
     .type = TN_OPT_BOOL,
     AT(force),
     .help = "admin force release: end whatever grant of NAME is live, "
             "whoever holds it (with --auth-file, an admin's --bearer); "
             "watchers see a \"revoked\" event and the next grant gets a "
             "higher token, as always"},
    {.name = "session",
     .type = TN_OPT_STR,
     AT(session),
     .arg = "ID",
     .help = "release leases of the session ID in one request, each given as "
             "NAME=TOKEN (split at the last '='); prints 'released NAME "
             "token=T' or 'lost NAME token=T' per lease; exit 4 when any was "
             "no longer live"},
    {.name = "ttl", .type = TN_OPT_REFUSED, .help = "is for renew only"},
};

static const struct tn_cli_cmd command =
    TN_CLI_CMD("release", usage, about, footer, opts);

static int release_call(struct tn_client *c, const struct tn_cli_cred *cred,
                        struct tn_lease *l, struct tn_errmsg *em)
{
    if (!cred->force)
        return tn_client_release(c, l, em);
    int rc = tn_client_force_release(c, cred->name, em);
    if (rc == TN_ELOST)
        tn_errmsg_set(em, "no grant of \"%s\" is live", cred->name);
    return rc;
}

static void print_released(const struct tn_cli *cli,
                           const struct tn_cli_cred *cred, struct tn_lease *l)
{
    (void)l;
    if (cred->force && cli->json)
        tn_cli_print_json(json_pack("{s:s,s:b,s:b}", "name", cred->name,
                                    "released", 1, "forced", 1));
    else if (cred->force)
        (void)printf("released %s (forced)\n", cred->name);
    else if (cli->json)
        tn_cli_print_json(json_pack("{s:s,s:I,s:b}", "name", cred->name,
                                    "token", (json_int_t)cred->token,
                                    "released", 1));
    else
        (void)printf("released %s token=%" PRIu64 "\n", cred->name,
                     cred->token);
}

/* ---- release --session ID --secret S NAME=TOKEN... ---- */

/* With --session: the operands are NAME=TOKEN, the secret the session's. */
static int batch_check(struct tn_cli *cli, const struct tn_opt_parser *p,
                       struct tn_cli_cred *b, int n)
{
    if (tn_opt_given(p, "name") || tn_opt_given(p, "token") ||
        tn_opt_given(p, "force"))
        return tn_cli_usage(cli, "release",
                            "with --session: --secret and "
                            "NAME=TOKEN operands only");
    if (b->secret == NULL)
        b->secret = getenv("TENURE_SESSION_SECRET");
    if (b->secret == NULL)
        return tn_cli_usage(cli, "release",
                            "--session needs --secret (or "
                            "$TENURE_SESSION_SECRET)");
    if (n == 0 || n > TN_SESSION_CLAIM_MAX)
        return tn_cli_usage(cli, "release", "expected 1 to 1024 NAME=TOKEN");
    return 0;
}

/* The leases NAME=TOKEN of argv, as handles of session s. */
static int adopt_all(struct tn_cli *cli, struct tn_session *s, char **ops,
                     size_t n, struct tn_lease **out)
{
    for (size_t i = 0; i < n; i++) {
        char *eq = strrchr(ops[i], '=');
        uint64_t token = 0;
        if (eq == NULL || eq == ops[i] ||
            tn_opt_parse_u64(eq + 1, &token) < 0) {
            char msg[160];
            (void)snprintf(msg, sizeof(msg), "\"%.100s\": expected NAME=TOKEN",
                           ops[i]);
            return tn_cli_usage(cli, "release", msg);
        }
        *eq = '\0';
        int rc = tn_client_session_lease_adopt(s, ops[i], token, &out[i]);
        if (rc < 0)
            return tn_cli_fail(cli, "release", rc, NULL);
    }
    return 0;
}

static void print_batch(const struct tn_cli *cli, struct tn_lease **l,
                        const int *rcs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *what = rcs[i] == 0 ? "released" : "lost";
        if (cli->json)
            tn_cli_print_json(json_pack(
                "{s:s,s:I,s:b}", "name", tn_lease_name(l[i]), "token",
                (json_int_t)tn_lease_token(l[i]), "released", rcs[i] == 0));
        else
            (void)printf("%s %s token=%" PRIu64 "\n", what, tn_lease_name(l[i]),
                         tn_lease_token(l[i]));
    }
}

static int release_batch(struct tn_cli *cli, struct tn_client *c,
                         const struct tn_cli_cred *b, char **ops, size_t n)
{
    struct tn_session *s = NULL;
    struct tn_lease **l = calloc(n, sizeof(*l));
    int *rcs = calloc(n, sizeof(*rcs));
    struct tn_errmsg em = {{0}};
    int rc = l != NULL && rcs != NULL ? 0 : TN_ENOMEM;
    if (rc == 0)
        rc = tn_client_session_adopt(c, b->session, b->secret, &s);
    int ex = rc < 0 ? tn_cli_fail(cli, "release", rc, NULL) : 0;
    if (ex == 0)
        ex = adopt_all(cli, s, ops, n, l);
    if (ex == 0)
        rc = tn_client_session_release(s, l, n, rcs, &em);
    if (ex == 0 && rc < 0)
        ex = tn_cli_fail(cli, "release", rc, &em);
    if (ex == 0) {
        print_batch(cli, l, rcs, n);
        for (size_t i = 0; i < n; i++)
            ex = rcs[i] != 0 ? TN_CLI_LOST : ex;
    }
    for (size_t i = 0; l != NULL && i < n; i++)
        tn_lease_free(l[i]);
    tn_client_session_free(s);
    free(l);
    free(rcs);
    return ex;
}

int tn_cmd_release(struct tn_cli *cli, int argc, char **argv)
{
    static const struct tn_cli_cred_cmd release = {"release", release_call,
                                                   print_released};
    struct tn_cli_cred cred = {0};
    struct tn_opt_parser p;
    int ex = tn_cli_parse(cli, &command, &cred, argc, argv, &p);
    if (ex != 0)
        return ex < 0 ? TN_CLI_OK : ex;
    if (cred.session == NULL)
        return tn_cli_cred_main(cli, &release, argc, argv, &p, &cred);
    int n = argc - p.first_operand;
    struct tn_client *c = NULL;
    ex = tn_cli_connect(cli, batch_check(cli, &p, &cred, n), &c);
    if (c == NULL)
        return ex;
    ex = release_batch(cli, c, &cred, argv + p.first_operand, (size_t)n);
    tn_client_free(c);
    return ex;
}
