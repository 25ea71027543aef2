/* SPDX-License-Identifier: MIT */
/* tenure acquire: take a lease and print its token and secret (the secret
 * is what a later `tenure renew` / `tenure release` needs). */
#include <inttypes.h>
#include <stdio.h>

#include "cli/cli.h"

static const char help[] =
    "Usage: tenure acquire [--name] NAME --ttl DUR [--wait DUR] [--owner ID]\n"
    "                      [--request-id ID] [--lock-delay DUR] [--json]\n"
    "\n"
    "Take the lease NAME for DUR.  Prints the name, token, owner, TTL and\n"
    "the lease secret: keep the secret to renew or release the lease later\n"
    "(tenure renew --name NAME --token T --secret S).\n"
    "\n"
    "  --name NAME        lease name (or the first argument)\n"
    "  --ttl DUR          lease time to live (required)\n"
    "  --wait DUR         queue for the lease up to DUR when it is held\n"
    "  --owner ID         owner_id (default HOST:PID)\n"
    "  --request-id ID    idempotency key: a retry with the same key gets\n"
    "                     the same grant back\n"
    "  --lock-delay DUR   after this lease expires the name stays blocked\n"
    "                     for DUR\n"
    "\n"
    "Exit: 0 acquired, 3 held by another owner (holder printed) or in lock\n"
    "delay, 1 error, 2 usage.\n";

static int acquire_opt(struct tn_cli *cli, int opt, const char *arg, void *ctx)
{
    struct tn_acquire_args *a = ctx;
    switch (opt) {
    case 'n':
        a->name = arg;
        return 0;
    case 't':
        return tn_cli_duration_arg(cli, "acquire", "--ttl", arg, true,
                                   &a->ttl_ms);
    case 'w':
        return tn_cli_duration_arg(cli, "acquire", "--wait", arg, false,
                                   &a->wait_ms);
    case 'd':
        return tn_cli_duration_arg(cli, "acquire", "--lock-delay", arg, false,
                                   &a->lock_delay_ms);
    case 'o':
        a->owner_id = arg;
        return 0;
    case 'r':
        a->request_id = arg;
        return 0;
    default:
        return tn_cli_usage(cli, "acquire", "unknown option");
    }
}

static int parse(struct tn_cli *cli, int argc, char **argv,
                 struct tn_acquire_args *a)
{
    static const struct option opts[] = {
        {"name", required_argument, NULL, 'n'},
        {"ttl", required_argument, NULL, 't'},
        {"wait", required_argument, NULL, 'w'},
        {"owner", required_argument, NULL, 'o'},
        {"request-id", required_argument, NULL, 'r'},
        {"lock-delay", required_argument, NULL, 'd'},
        TN_CLI_COMMON_OPTS,
        {0}};
    static const struct tn_cli_cmd cmd = {"acquire", help, opts, acquire_opt};
    int ex = tn_cli_parse_opts(cli, argc, argv, &cmd, a);
    if (ex == 0)
        ex = tn_cli_operands(cli, "acquire", argc, argv, &a->name, false);
    if (ex == 0 && a->ttl_ms <= 0)
        ex = tn_cli_usage(cli, "acquire", "--ttl is required (e.g. --ttl 10s)");
    return ex;
}

static void print_lease(const struct tn_cli *cli, struct tn_lease *l)
{
    if (cli->json) {
        json_t *o = json_pack(
            "{s:s,s:s,s:I,s:s,s:I,s:I}", "name", tn_lease_name(l), "owner_id",
            tn_lease_owner_id(l), "token", (json_int_t)tn_lease_token(l),
            "lease_secret", tn_lease_secret(l), "ttl_ms",
            (json_int_t)tn_lease_ttl_ms(l), "safe_for_ms",
            (json_int_t)tn_lease_safe_for_ms(l));
        if (o != NULL && tn_lease_proof(l) != NULL)
            (void)json_object_set_new(o, "proof",
                                      json_string(tn_lease_proof(l)));
        tn_cli_print_json(o);
        return;
    }
    (void)printf("name:   %s\ntoken:  %" PRIu64 "\nowner:  %s\nttl_ms: %" PRId64
                 "\nsecret: %s\n",
                 tn_lease_name(l), tn_lease_token(l), tn_lease_owner_id(l),
                 tn_lease_ttl_ms(l), tn_lease_secret(l));
    if (tn_lease_proof(l) != NULL)
        (void)printf("proof:  %s\n", tn_lease_proof(l));
}

static int report_held(const struct tn_cli *cli, int rc,
                       const struct tn_lease_info *h,
                       const struct tn_errmsg *em, int64_t wait_ms)
{
    char waited[80] = "";
    if (wait_ms > 0)
        (void)snprintf(waited, sizeof(waited),
                       "the wait of %" PRId64 " ms ended: ", wait_ms);
    if (cli->json) {
        json_t *o = json_pack("{s:s,s:s}", "error",
                              rc == TN_ELOCKDELAY ? "lock_delay" : "held",
                              "message", em->text);
        if (o != NULL && rc == TN_ECONFLICT)
            (void)json_object_set_new(o, "holder", tn_cli_info_json(h));
        if (o != NULL && wait_ms > 0)
            (void)json_object_set_new(o, "waited_ms", json_integer(wait_ms));
        if (o != NULL && h->retry_after_ms >= 0)
            (void)json_object_set_new(o, "retry_after_ms",
                                      json_integer(h->retry_after_ms));
        tn_cli_print_json(o);
    }
    if (rc == TN_ELOCKDELAY)
        tn_cli_err(cli, "%slease is in lock delay for %" PRId64 " ms", waited,
                   h->retry_after_ms);
    else
        tn_cli_err(cli,
                   "%slease is %sheld by \"%s\" (token %" PRIu64
                   ", expires in %" PRId64 " ms)",
                   waited, wait_ms > 0 ? "still " : "", h->owner_id, h->token,
                   h->expires_in_ms);
    return TN_CLI_HELD;
}

int tn_cmd_acquire(struct tn_cli *cli, int argc, char **argv)
{
    struct tn_acquire_args a = {0};
    struct tn_client *c = NULL;
    int ex = tn_cli_connect(cli, parse(cli, argc, argv, &a), &c);
    if (c == NULL)
        return ex;
    struct tn_lease *l = NULL;
    struct tn_lease_info holder;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_acquire(c, &a, &l, &holder, &em);
    if (rc == TN_ECONFLICT || rc == TN_ELOCKDELAY)
        ex = report_held(cli, rc, &holder, &em, a.wait_ms);
    else if (rc < 0)
        ex = tn_cli_fail(cli, "acquire", rc, &em);
    else
        print_lease(cli, l);
    tn_lease_free(l);
    tn_client_free(c);
    return ex;
}
