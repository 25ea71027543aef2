/* SPDX-License-Identifier: MIT */
/* Fuzz target for what the fence reads from Kafka records: the token
 * parser (tn_fence_parse_token), the record check (key, lease-token,
 * lease-claim and lease-proof headers: tn_fence_record_check) and proof
 * verification (tn_proof_verify) on arbitrary hex.  The input is split at
 * NUL bytes into key, token, claim and proof fields; a first byte with bit
 * 0 set asks for proofs.  Checked: a parsed token is canonical (it formats
 * back to the same digits) and at most 2^53; an admitted record has a valid
 * key and token; no arbitrary proof verifies except a real signature; a
 * real signature over (key, token) verifies and stops verifying when any
 * byte changes. */
#include <string.h>

#include <tenure/fence.h>

#include "common/assert.h"
#include "fuzz.h"

/* One key pair per process, made on first use. */
static uint8_t pk[TN_PROOF_PK_BYTES];
static uint8_t sk[TN_PROOF_SK_BYTES];
static bool have_keys;

static void keys(void)
{
    if (have_keys)
        return;
    TN_ASSERT(tn_proof_keypair(pk, sk) == 0);
    have_keys = true;
}

/* Split data at NULs into up to n fields. */
static size_t split(const char *p, size_t len, const char **f, size_t *fl,
                    size_t n)
{
    size_t k = 0;
    const char *start = p;
    for (size_t i = 0; i <= len && k < n; i++) {
        if (i == len || p[i] == '\0') {
            f[k] = start;
            fl[k] = (size_t)(p + i - start);
            k++;
            start = p + i + 1;
        }
    }
    return k;
}

static void token_checks(const char *s, size_t len)
{
    uint64_t t = 0;
    int rc = tn_fence_parse_token(s, len, &t);
    TN_ASSERT(rc == 0 || rc == TN_EINVAL);
    if (rc != 0)
        return;
    TN_ASSERT(t <= TN_FENCE_TOKEN_MAX);
    char back[21];
    size_t n = tn_fence_format_token(t, back);
    TN_ASSERT(n == len && memcmp(back, s, len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    keys();
    bool want_proof = (data[0] & 1) != 0;
    const char *f[4] = {NULL, NULL, NULL, NULL};
    size_t fl[4] = {0, 0, 0, 0};
    size_t k = split((const char *)data + 1, size - 1, f, fl, 4);

    for (size_t i = 0; i < k; i++)
        token_checks(f[i], fl[i]);

    struct tn_fence_record r = {0};
    r.key = f[0];
    r.key_len = fl[0];
    r.token = f[1];
    r.token_len = fl[1];
    r.token_count = f[1] != NULL ? 1 : 0;
    r.claim = f[2] != NULL && fl[2] > 0 ? f[2] : NULL;
    r.claim_len = fl[2];
    r.proof = f[3];
    r.proof_len = fl[3];
    r.proof_count = f[3] != NULL ? 1 : 0;
    uint64_t tok = 0;
    bool claim = false;
    enum tn_fence_reason why =
        tn_fence_record_check(&r, want_proof ? pk : NULL, &tok, &claim);
    TN_ASSERT(tn_fence_reason_name(why) != NULL);
    if (why == TN_FENCE_OK) {
        TN_ASSERT(tn_fence_name_is_valid(r.key, r.key_len));
        uint64_t t2 = 0;
        TN_ASSERT(tn_fence_parse_token(r.token, r.token_len, &t2) == 0);
        TN_ASSERT(t2 == tok);
    }

    /* Arbitrary proofs never verify for a valid (key, token). */
    if (f[0] != NULL && tn_fence_name_is_valid(f[0], fl[0])) {
        uint64_t t = 0;
        if (f[1] == NULL || tn_fence_parse_token(f[1], fl[1], &t) != 0)
            t = 7;
        if (f[3] != NULL)
            TN_ASSERT(tn_proof_verify(pk, f[0], fl[0], t, f[3], fl[3]) ==
                      TN_ESIGNATURE);
        /* A real signature verifies, and any change breaks it. */
        char sig[TN_PROOF_HEX_LEN + 1];
        TN_ASSERT(tn_proof_sign(sk, f[0], fl[0], t, sig) == 0);
        TN_ASSERT(tn_proof_verify(pk, f[0], fl[0], t, sig, TN_PROOF_HEX_LEN) ==
                  0);
        uint64_t other = t < TN_FENCE_TOKEN_MAX ? t + 1 : t - 1;
        TN_ASSERT(tn_proof_verify(pk, f[0], fl[0], other, sig,
                                  TN_PROOF_HEX_LEN) == TN_ESIGNATURE);
        size_t at = (size_t)data[0] % TN_PROOF_HEX_LEN;
        sig[at] = sig[at] == '0' ? '1' : '0';
        TN_ASSERT(tn_proof_verify(pk, f[0], fl[0], t, sig, TN_PROOF_HEX_LEN) ==
                  TN_ESIGNATURE);
    }
    return 0;
}
