/* SPDX-License-Identifier: MIT */
/* The record check shared by every sink: everything the fence decides
 * before it looks at the mark (key, token, claim flag, proof).  Above both
 * token.c and proof.c, so neither needs the other's caller.  Pure, no
 * allocation. */
#include <tenure/fence.h>

static enum tn_fence_reason check_claim(const struct tn_fence_record *r,
                                        bool *is_claim_out)
{
    *is_claim_out = false;
    if (r->claim == NULL)
        return TN_FENCE_OK;
    if (r->claim_len != 1 || r->claim[0] != '1')
        return TN_FENCE_BAD_CLAIM;
    *is_claim_out = true;
    return TN_FENCE_OK;
}

enum tn_fence_reason tn_fence_record_check(const struct tn_fence_record *r,
                                           const uint8_t *pk,
                                           uint64_t *token_out,
                                           bool *is_claim_out)
{
    if (r->key == NULL)
        return TN_FENCE_NO_KEY;
    if (!tn_fence_name_is_valid(r->key, r->key_len))
        return TN_FENCE_BAD_KEY;
    if (r->token == NULL || r->token_count == 0)
        return TN_FENCE_NO_TOKEN;
    uint64_t token = 0;
    if (r->token_count > 1 ||
        tn_fence_parse_token(r->token, r->token_len, &token) < 0)
        return TN_FENCE_BAD_TOKEN;
    enum tn_fence_reason why = check_claim(r, is_claim_out);
    if (why != TN_FENCE_OK)
        return why;
    if (pk != NULL &&
        (r->proof_count > 1 || tn_proof_verify(pk, r->key, r->key_len, token,
                                               r->proof, r->proof_len) < 0))
        return TN_FENCE_BAD_PROOF;
    *token_out = token;
    return TN_FENCE_OK;
}
