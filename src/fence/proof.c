/* SPDX-License-Identifier: MIT */
/* Ed25519 proofs over (name, token) with libsodium, and the key files.
 * The signed message is "tenure-proof-v1" NUL name NUL decimal(token): the
 * prefix separates it from any other use of the key, and the NUL after the
 * name (which cannot contain NUL) makes the encoding unambiguous. */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <tenure/fence.h>

#include "common/rand.h"

#define PROOF_DOMAIN "tenure-proof-v1"
/* domain + NUL + name + NUL + 20 digits */
#define PROOF_MSG_MAX (sizeof(PROOF_DOMAIN) + TN_FENCE_NAME_MAX + 1 + 21)

static int ensure_sodium(void)
{
    return sodium_init() < 0 ? TN_EINTERNAL : TN_OK;
}

static int build_message(const char *name, size_t name_len, uint64_t token,
                         unsigned char *msg, size_t *msg_len)
{
    if (!tn_fence_name_is_valid(name, name_len) || token > TN_FENCE_TOKEN_MAX)
        return TN_EINVAL;
    size_t n = sizeof(PROOF_DOMAIN); /* includes the NUL separator */
    memcpy(msg, PROOF_DOMAIN, n);
    memcpy(msg + n, name, name_len);
    n += name_len;
    msg[n++] = '\0';
    char digits[21];
    size_t dlen = tn_fence_format_token(token, digits);
    memcpy(msg + n, digits, dlen);
    *msg_len = n + dlen;
    return TN_OK;
}

int tn_proof_sign(const uint8_t sk[64], const char *name, size_t name_len,
                  uint64_t token, char out_hex[129])
{
    int rc = ensure_sodium();
    if (rc < 0)
        return rc;
    unsigned char msg[PROOF_MSG_MAX];
    size_t msg_len = 0;
    rc = build_message(name, name_len, token, msg, &msg_len);
    if (rc < 0)
        return rc;
    unsigned char sig[crypto_sign_BYTES];
    if (crypto_sign_detached(sig, NULL, msg, msg_len, sk) != 0)
        return TN_EINTERNAL;
    tn_hex_encode(sig, sizeof(sig), out_hex);
    return TN_OK;
}

int tn_proof_verify(const uint8_t pk[32], const char *name, size_t name_len,
                    uint64_t token, const char *proof_hex, size_t proof_len)
{
    if (proof_hex == NULL || proof_len != TN_PROOF_HEX_LEN)
        return TN_ESIGNATURE;
    if (ensure_sodium() < 0)
        return TN_EINTERNAL;
    unsigned char sig[crypto_sign_BYTES];
    if (tn_hex_decode(proof_hex, proof_len, sig, sizeof(sig)) < 0)
        return TN_ESIGNATURE;
    unsigned char msg[PROOF_MSG_MAX];
    size_t msg_len = 0;
    if (build_message(name, name_len, token, msg, &msg_len) < 0)
        return TN_ESIGNATURE;
    if (crypto_sign_verify_detached(sig, msg, msg_len, pk) != 0)
        return TN_ESIGNATURE;
    return TN_OK;
}

int tn_proof_keypair(uint8_t pk_out[32], uint8_t sk_out[64])
{
    if (ensure_sodium() < 0)
        return TN_EINTERNAL;
    if (crypto_sign_keypair(pk_out, sk_out) != 0)
        return TN_EINTERNAL;
    return TN_OK;
}

/* Read a whole small file (at most cap bytes) into buf; length or < 0. */
static int read_small(const char *path, char *buf, size_t cap, size_t *len,
                      struct tn_errmsg *em)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        tn_errmsg_set(em, "cannot open key file \"%s\": %s", path,
                      strerror(errno));
        return TN_EIO;
    }
    size_t n = fread(buf, 1, cap, f);
    int rc = ferror(f) ? TN_EIO : TN_OK;
    if (fclose(f) != 0)
        rc = TN_EIO;
    if (rc < 0) {
        tn_errmsg_set(em, "cannot read key file \"%s\"", path);
        return rc;
    }
    *len = n;
    return TN_OK;
}

static int load_hex_key(const char *path, uint8_t *out, size_t out_len,
                        struct tn_errmsg *em)
{
    char buf[TN_PROOF_HEX_LEN + 8];
    size_t n = 0;
    int rc = read_small(path, buf, sizeof(buf), &n, em);
    if (rc < 0)
        return rc;
    if (n > 0 && buf[n - 1] == '\n')
        n--;
    if (n != 2 * out_len || tn_hex_decode(buf, n, out, out_len) < 0) {
        tn_errmsg_set(em, "key file \"%s\": expected %zu hex digits", path,
                      2 * out_len);
        sodium_memzero(buf, sizeof(buf));
        return TN_EINVAL;
    }
    sodium_memzero(buf, sizeof(buf));
    return TN_OK;
}

int tn_proof_load_signing_key(const char *path, uint8_t sk_out[64],
                              struct tn_errmsg *em)
{
    int rc = load_hex_key(path, sk_out, TN_PROOF_SK_BYTES, em);
    if (rc < 0)
        return rc;
    /* The last 32 bytes are the public key of the seed: check it, so that a
     * corrupted file fails here and not as signatures nobody can verify. */
    if (ensure_sodium() < 0)
        return TN_EINTERNAL;
    uint8_t pk[TN_PROOF_PK_BYTES];
    if (crypto_sign_ed25519_sk_to_pk(pk, sk_out) != 0)
        return TN_EINTERNAL;
    uint8_t seed[32];
    uint8_t pk2[32];
    uint8_t sk2[64];
    crypto_sign_ed25519_sk_to_seed(seed, sk_out);
    crypto_sign_seed_keypair(pk2, sk2, seed);
    int same = sodium_memcmp(pk, pk2, sizeof(pk)) == 0;
    sodium_memzero(seed, sizeof(seed));
    sodium_memzero(sk2, sizeof(sk2));
    if (!same) {
        tn_errmsg_set(em, "key file \"%s\": not an Ed25519 secret key", path);
        return TN_EINVAL;
    }
    return TN_OK;
}

int tn_proof_load_verify_key(const char *path, uint8_t pk_out[32],
                             struct tn_errmsg *em)
{
    return load_hex_key(path, pk_out, TN_PROOF_PK_BYTES, em);
}

static int write_hex_file(const char *path, const uint8_t *key, size_t len,
                          mode_t mode, struct tn_errmsg *em)
{
    char hex[2 * TN_PROOF_SK_BYTES + 2];
    tn_hex_encode(key, len, hex);
    size_t n = 2 * len;
    hex[n++] = '\n';
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) {
        tn_errmsg_set(em, "cannot create key file \"%s\": %s", path,
                      strerror(errno));
        sodium_memzero(hex, sizeof(hex));
        return TN_EIO;
    }
    ssize_t w = write(fd, hex, n);
    int rc = (w == (ssize_t)n && fsync(fd) == 0) ? TN_OK : TN_EIO;
    if (close(fd) != 0)
        rc = TN_EIO;
    sodium_memzero(hex, sizeof(hex));
    if (rc < 0)
        tn_errmsg_set(em, "cannot write key file \"%s\"", path);
    return rc;
}

int tn_proof_write_keys(const char *signing_path, const char *verify_path,
                        const uint8_t pk[32], const uint8_t sk[64],
                        struct tn_errmsg *em)
{
    int rc = write_hex_file(signing_path, sk, TN_PROOF_SK_BYTES, 0600, em);
    if (rc < 0)
        return rc;
    return write_hex_file(verify_path, pk, TN_PROOF_PK_BYTES, 0644, em);
}
