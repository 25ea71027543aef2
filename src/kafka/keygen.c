/* SPDX-License-Identifier: MIT */
/* tenure-keygen: makes the Ed25519 key pair for signed grants.  The
 * signing key goes to tenured --signing-key, the verify key to
 * tenure-materializer --verify-key.  Never overwrites a file. */
#include <getopt.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>

#include <tenure/fence.h>

static void usage(FILE *out)
{
    (void)fprintf(out,
                  "usage: tenure-keygen --signing-key FILE --verify-key FILE\n"
                  "  writes a new Ed25519 key pair as hex (see "
                  "docs/FENCING.md);\n"
                  "  the signing key file is created with mode 0600\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"signing-key", required_argument, NULL, 's'},
        {"verify-key", required_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *sk_path = NULL;
    const char *pk_path = NULL;
    int o = 0;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (o == 's') {
            sk_path = optarg;
        } else if (o == 'v') {
            pk_path = optarg;
        } else if (o == 'h') {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (sk_path == NULL || pk_path == NULL || optind != argc) {
        usage(stderr);
        return 2;
    }
    uint8_t pk[TN_PROOF_PK_BYTES];
    uint8_t sk[TN_PROOF_SK_BYTES];
    struct tn_errmsg em = {{0}};
    int rc = tn_proof_keypair(pk, sk);
    if (rc == 0)
        rc = tn_proof_write_keys(sk_path, pk_path, pk, sk, &em);
    sodium_memzero(sk, sizeof(sk));
    if (rc < 0) {
        (void)fprintf(stderr, "tenure-keygen: %s: %s\n", tn_strerror(rc),
                      em.text);
        return 1;
    }
    return 0;
}
