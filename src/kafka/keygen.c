/* SPDX-License-Identifier: MIT */
/* tenure-keygen: makes the Ed25519 key pair for signed grants.  The
 * signing key goes to tenured --signing-key, the verify key to
 * tenure-materializer --verify-key.  Never overwrites a file. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>

#include <tenure/fence.h>

#include "common/opt.h"

struct keygen_args {
    const char *sk_path; /* --signing-key */
    const char *pk_path; /* --verify-key */
};

#define AT(f) TN_OPT_AT(struct keygen_args, f)
static const struct tn_opt options[] = {
    {.name = "signing-key",
     .type = TN_OPT_STR,
     AT(sk_path),
     .flags = TN_OPT_REQUIRED | TN_OPT_NONEMPTY,
     .arg = "FILE",
     .help = "where to write the signing key (created with mode 0600), for "
             "tenured --signing-key"},
    {.name = "verify-key",
     .type = TN_OPT_STR,
     AT(pk_path),
     .flags = TN_OPT_REQUIRED | TN_OPT_NONEMPTY,
     .arg = "FILE",
     .help = "where to write the verify key, for tenure-materializer "
             "--verify-key"},
    {.name = "help", .type = TN_OPT_ACTION, .help = "this text"},
};

static void usage(FILE *out)
{
    static const struct tn_opt_help h = {
        "usage: tenure-keygen --signing-key FILE --verify-key FILE\n",
        "Writes a new Ed25519 key pair as hex (see docs/FENCING.md); neither\n"
        "file may exist.\n",
        NULL};
    const struct tn_opt_table t = TN_OPT_TABLE(options, NULL);
    tn_opt_help(out, &h, &t);
}

/* -1 to go on with a, else the exit status (after --help, or a usage
 * error said on stderr). */
static int parse(int argc, char **argv, struct keygen_args *a)
{
    const struct tn_opt_table t = TN_OPT_TABLE(options, a);
    struct tn_opt_parser p;
    struct tn_errmsg em = {{0}};
    tn_opt_parser_init(&p, TN_OPT_NO_OPERANDS);
    tn_opt_parser_add(&p, &t);
    if (tn_opt_parse(&p, argc, argv, &em) < 0) {
        (void)fprintf(stderr, "tenure-keygen: %s\n", em.text);
        return 2;
    }
    if (p.action != NULL) {
        usage(stdout);
        return 0;
    }
    return -1;
}

int main(int argc, char **argv)
{
    struct keygen_args a = {NULL, NULL};
    int status = parse(argc, argv, &a);
    if (status >= 0)
        return status;
    uint8_t pk[TN_PROOF_PK_BYTES];
    uint8_t sk[TN_PROOF_SK_BYTES];
    struct tn_errmsg em = {{0}};
    int rc = tn_proof_keypair(pk, sk);
    if (rc == 0)
        rc = tn_proof_write_keys(a.sk_path, a.pk_path, pk, sk, &em);
    sodium_memzero(sk, sizeof(sk));
    if (rc < 0) {
        (void)fprintf(stderr, "tenure-keygen: %s: %s\n", tn_strerror(rc),
                      em.text);
        return 1;
    }
    return 0;
}
