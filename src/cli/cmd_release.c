/* SPDX-License-Identifier: MIT */
/* tenure release: give a lease back, given its name, token and secret. */
#include <inttypes.h>
#include <stdio.h>

#include "cli/cli.h"

static const char help[] =
    "Usage: tenure release [--name] NAME --token T --secret S\n"
    "       tenure release [--name] NAME --force\n"
    "\n"
    "Release the lease NAME granted with token T (secret from the command\n"
    "line or $TENURE_SECRET).  A release never touches a newer grant.\n"
    "\n"
    "  --force   admin force release: end whatever grant of NAME is live,\n"
    "            whoever holds it (with --auth-file, an admin's --bearer);\n"
    "            watchers see a \"revoked\" event and the next grant gets a\n"
    "            higher token, as always\n"
    "\n"
    "Exit: 0 released, 4 lost (it was no longer live; with --force: nothing\n"
    "was live), 1 error (e.g. wrong secret, not an admin), 2 usage.\n";

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

int tn_cmd_release(struct tn_cli *cli, int argc, char **argv)
{
    static const struct tn_cli_cred_cmd cmd = {
        "release", help, false, true, release_call, print_released};
    return tn_cli_cred_main(cli, &cmd, argc, argv);
}
