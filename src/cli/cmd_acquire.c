/* SPDX-License-Identifier: MIT */
/* tenure acquire: take a lease and print its token and secret (the secret
 * is what a later `tenure renew` / `tenure release` needs). */
#include <inttypes.h>
#include <stdio.h>

#include "cli/cli.h"

static const char usage[] =
    "Usage: tenure acquire [--name] NAME --ttl DUR [--wait DUR] [--owner ID]\n"
    "                      [--request-id ID] [--lock-delay DUR] [--json]\n";
static const char about[] =
    "Take the lease NAME for DUR.  Prints the name, token, owner, TTL and\n"
    "the lease secret: keep the secret to renew or release the lease later\n"
    "(tenure renew --name NAME --token T --secret S).\n";
static const char footer[] =
    "Exit: 0 acquired, 3 held by another owner (holder printed) or in lock\n"
    "delay, 1 error, 2 usage.\n";

#define AT(f) TN_OPT_AT(struct tn_acquire_args, f)
static const struct tn_opt opts[] = {
    {.name = "name",
     .type = TN_OPT_STR,
     AT(name),
     .arg = "NAME",
     .help = "lease name (or the first argument)"},
    {.name = "ttl",
     .type = TN_OPT_DURATION,
     AT(ttl_ms),
     .min = 1,
     .arg = "DUR",
     .help = "lease time to live (required)"},
    {.name = "wait",
     .type = TN_OPT_DURATION,
     AT(wait_ms),
     .arg = "DUR",
     .help = "queue for the lease up to DUR when it is held"},
    {.name = "owner",
     .type = TN_OPT_STR,
     AT(owner_id),
     .arg = "ID",
     .help = "owner_id (default HOST:PID)"},
    {.name = "request-id",
     .type = TN_OPT_STR,
     AT(request_id),
     .arg = "ID",
     .help = "idempotency key: a retry with the same key gets the same grant "
             "back"},
    {.name = "lock-delay",
     .type = TN_OPT_DURATION,
     AT(lock_delay_ms),
     .arg = "DUR",
     .help = "after this lease expires the name stays blocked for DUR"},
};

static const struct tn_cli_cmd command =
    TN_CLI_CMD("acquire", usage, about, footer, opts);

static int parse(struct tn_cli *cli, int argc, char **argv,
                 struct tn_acquire_args *a)
{
    struct tn_opt_parser p;
    int ex = tn_cli_parse(cli, &command, a, argc, argv, &p);
    if (ex == 0)
        ex = tn_cli_operands(cli, "acquire", argc, argv, &p.first_operand,
                             &a->name, false);
    if (ex == 0 && a->ttl_ms <= 0)
        ex =
            tn_cli_usage(cli, "acquire", "--ttl: is required (e.g. --ttl 10s)");
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
