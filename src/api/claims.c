/* SPDX-License-Identifier: MIT */
/* The batch routes of a session (docs/SESSIONS.md): claim many names
 * (POST /v1/sessions/{id}/leases) and release many leases (DELETE) in one
 * request and one durable commit.  Their bodies are the only ones that
 * may be large (--max-batch-body-bytes) and hold arrays; what they decode
 * is bounded by --max-batch-names and kept with the call until the reply,
 * which names each lease again.  Every name is checked, and permitted to
 * the caller, before the store sees any: a refused batch changes nothing.
 * The allocations here are the batch's own, freed with its call; the
 * single-lease routes make none. */
#include <stdio.h>
#include <string.h>

#include <tenure/err.h>
#include <tenure/fence.h>

#include "api_int.h"
#include "common/alloc.h"
#include "common/assert.h"
#include "common/name.h"
#include "common/rand.h"
#include "decode.h"
#include "reply.h"

/* What a batch request keeps until its reply. */
struct tn_api_batch {
    struct tn_body body;          /* the decoded request: names point in */
    struct tn_name_ref *names;    /* claim: n of them (tn_decode_names) */
    struct tn_name_token *leases; /* release: n of them */
    size_t n;                     /* names or leases */
    uint8_t *secrets;             /* claim: n * TN_SECRET_BYTES */
};

static void batch_free(struct tn_api_batch *b)
{
    tn_decode_done(&b->body);
    tn_free(b->names);
    tn_free(b->leases);
    tn_free(b->secrets);
    tn_free(b);
}

/* The name of item i of c's batch. */
static const char *name_at(const struct tn_api_call *c, size_t i)
{
    const struct tn_api_batch *b = c->batch;
    TN_ASSERT(i < b->n);
    return b->names != NULL ? b->names[i].name : b->leases[i].name;
}

/* The principal a batch is bound to (the session's opener): NULL with
 * auth off or for an admin. */
static const char *bound_principal(const struct tn_api_call *c)
{
    if (c->principal == NULL || tn_auth_principal_is_admin(c->principal))
        return NULL;
    return tn_auth_principal_name(c->principal);
}

/* Every name of the batch is one the caller may acquire; else 403 for the
 * whole request (answered; false), before the store sees any. */
static bool permitted(struct tn_api_call *c)
{
    const struct tn_api_batch *b = c->batch;
    for (size_t i = 0; i < b->n; i++) {
        const char *name = name_at(c, i);
        size_t len = b->names != NULL ? b->names[i].len : b->leases[i].len;
        if (tn_api_authorize(c, TN_AUTH_ACQUIRE, name, len) == 0)
            continue;
        char msg[160];
        int shown = (int)tn_utf8_prefix(name, len, 64);
        (void)snprintf(msg, sizeof(msg),
                       "not permitted to acquire \"%.*s\"; nothing was done",
                       shown, name);
        tn_api_fail(c, TN_EFORBIDDEN, msg);
        return false;
    }
    return true;
}

static void put_proof(const struct tn_api_call *c, struct tn_buf *b,
                      const char *name, uint64_t token)
{
    const uint8_t *sk = c->api->cfg.signing_key;
    char proof[TN_PROOF_HEX_LEN + 1];
    if (sk != NULL && tn_proof_sign(sk, name, strlen(name), token, proof) == 0)
        tn_reply_kv_str(b, "proof", proof, false);
}

/* One item's members after its "name". */
static void put_item(const struct tn_api_call *c, struct tn_buf *b,
                     const struct tn_claim_item *it, const char *name)
{
    char secret[2 * TN_SECRET_BYTES + 1];
    switch (it->outcome) {
    case TN_CLAIM_GRANTED:
        tn_hex_encode(it->secret, TN_SECRET_BYTES, secret);
        tn_reply_kv_uint(b, "token", it->token, false);
        tn_reply_kv_str(b, "lease_secret", secret, false);
        put_proof(c, b, name, it->token);
        break;
    case TN_CLAIM_HELD:
        tn_reply_key(b, "holder", false);
        (void)tn_buf_append(b, "{", 1);
        tn_reply_kv_str(b, "owner_id", it->holder, true);
        tn_reply_kv_uint(b, "token", it->token, false);
        tn_reply_kv_int(b, "expires_in_ms", it->expires_in_ms, false);
        (void)tn_buf_append(b, "}", 1);
        break;
    case TN_CLAIM_LOCK_DELAY:
        tn_reply_kv_int(b, "retry_after_ms", it->retry_after_ms, false);
        break;
    case TN_CLAIM_RELEASED:
    case TN_CLAIM_LOST:
        tn_reply_kv_uint(b, "token", it->token, false);
        break;
    }
}

/* The member key (the reply's first when first): an array of the items
 * whose outcome is o; their count in *n. */
static void put_items(const struct tn_api_call *c, struct tn_buf *b,
                      const char *key, bool first, enum tn_claim_outcome o,
                      size_t *n)
{
    const struct tn_store_result *r = &c->result;
    tn_reply_key(b, key, first);
    (void)tn_buf_append(b, "[", 1);
    *n = 0;
    for (size_t i = 0; i < r->n_claims; i++) {
        const struct tn_claim_item *it = &r->claims[i];
        if (it->outcome != o)
            continue;
        const char *name = name_at(c, it->index);
        (void)tn_buf_append(b, *n == 0 ? "{" : ",{", *n == 0 ? 1 : 2);
        tn_reply_kv_str(b, "name", name, true);
        put_item(c, b, it, name);
        (void)tn_buf_append(b, "}", 1);
        (*n)++;
    }
    (void)tn_buf_append(b, "]", 1);
}

static void claimed(void *arg)
{
    struct tn_api_call *c = arg;
    size_t granted = 0, other = 0;
    if (c->result.rc != TN_OK) {
        tn_api_fail_session(c);
        return;
    }
    struct tn_buf b;
    tn_api_body_begin(&b);
    put_items(c, &b, "granted", true, TN_CLAIM_GRANTED, &granted);
    put_items(c, &b, "held", false, TN_CLAIM_HELD, &other);
    put_items(c, &b, "lock_delay", false, TN_CLAIM_LOCK_DELAY, &other);
    tn_reply_kv_int(&b, "expires_in_ms", c->result.session.expires_in_ms,
                    false);
    c->api->grants += granted;
    tn_api_body_send(c, 200, &b);
}

static void released(void *arg)
{
    struct tn_api_call *c = arg;
    size_t n = 0, lost = 0;
    if (c->result.rc != TN_OK) {
        tn_api_fail_session(c);
        return;
    }
    struct tn_buf b;
    tn_api_body_begin(&b);
    put_items(c, &b, "released", true, TN_CLAIM_RELEASED, &n);
    put_items(c, &b, "lost", false, TN_CLAIM_LOST, &lost);
    c->api->releases += n;
    tn_api_body_send(c, 200, &b);
}

/* Start a batch request of c: its batch, its session and the secret.
 * 0, or an error with msg (the call still to be answered). */
static int batch_start(struct tn_api_call *c, const struct tn_route_match *m,
                       size_t max_items, struct tn_session_req *sr, char *msg,
                       size_t msglen)
{
    memcpy(c->session_id, m->id, sizeof(c->session_id));
    sr->id = c->session_id;
    if ((c->batch = tn_calloc(1, sizeof(*c->batch))) == NULL)
        return TN_ENOMEM;
    c->batch_free = batch_free; /* with the call, after its reply */
    int rc =
        tn_decode_body_items(c->req, max_items, &c->batch->body, msg, msglen);
    if (rc == 0)
        rc = tn_decode_secret(&c->batch->body, "session_secret", sr->secret,
                              msg, msglen);
    return rc;
}

/* The fields of a claim past the session: names, owner_id, lock delay,
 * and a fresh lease secret per name.  0, or an error with msg. */
static int claim_fields(struct tn_api_call *c, struct tn_claim_req *r,
                        char *msg, size_t msglen)
{
    const struct tn_api_config *cfg = &c->api->cfg;
    struct tn_api_batch *b = c->batch;
    int rc = tn_decode_names(&b->body, "names", cfg->max_batch_names, &b->names,
                             &b->n, msg, msglen);
    if (rc == 0)
        rc = tn_decode_name(&b->body, "owner_id", TN_OWNER_MAX_BYTES, false,
                            &r->owner_id, NULL, msg, msglen);
    if (rc == 0)
        rc = tn_decode_int(&b->body, "lock_delay_ms", 0, cfg->max_ttl_ms, false,
                           &r->lock_delay_ms, msg, msglen);
    if (rc < 0)
        return rc;
    if ((b->secrets = tn_calloc(b->n, TN_SECRET_BYTES)) == NULL)
        return TN_ENOMEM;
    if (tn_rand_bytes(b->secrets, b->n * TN_SECRET_BYTES) < 0) {
        (void)snprintf(msg, msglen, "no randomness for the lease secrets");
        return TN_EINTERNAL;
    }
    r->names = b->names;
    r->n_names = b->n;
    r->secrets = b->secrets;
    return TN_OK;
}

/* POST /v1/sessions/{id}/leases {"session_secret", "names"[, "owner_id",
 * "lock_delay_ms"]} */
void tn_api_session_claim(struct tn_api_call *c, struct tn_route_match *m)
{
    char msg[200] = "bad request";
    struct tn_claim_req r = {0};
    size_t max = c->api->cfg.max_batch_names;
    int rc = batch_start(c, m, max + 1, &r.session, msg, sizeof(msg));
    if (rc == 0)
        rc = claim_fields(c, &r, msg, sizeof(msg));
    if (rc < 0) {
        tn_api_fail(c, rc, rc == TN_ENOMEM ? "out of memory" : msg);
        return;
    }
    if (!permitted(c))
        return;
    r.session.principal = bound_principal(c);
    struct tn_store *s = c->api->cfg.store;
    s->ops->claim(s, &r, &c->result, claimed, c);
}

/* DELETE /v1/sessions/{id}/leases {"session_secret", "leases": [{"name",
 * "token"}]} */
void tn_api_session_release(struct tn_api_call *c, struct tn_route_match *m)
{
    char msg[200] = "bad request";
    struct tn_unclaim_req r = {0};
    size_t max = c->api->cfg.max_batch_names;
    /* An element {"name","token"} is three items; room for a few more
     * members of each, which are ignored. */
    int rc = batch_start(c, m, 4 * (max + 1), &r.session, msg, sizeof(msg));
    struct tn_api_batch *b = c->batch;
    if (rc == 0)
        rc = tn_decode_name_tokens(&b->body, "leases", max, &b->leases, &b->n,
                                   msg, sizeof(msg));
    if (rc < 0) {
        tn_api_fail(c, rc, rc == TN_ENOMEM ? "out of memory" : msg);
        return;
    }
    if (!permitted(c))
        return;
    r.session.principal = bound_principal(c);
    r.leases = b->leases;
    r.n_leases = b->n;
    struct tn_store *s = c->api->cfg.store;
    s->ops->unclaim(s, &r, &c->result, released, c);
}
