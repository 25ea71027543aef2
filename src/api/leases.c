/* SPDX-License-Identifier: MIT */
/* The lease routes of CONTRACT §3: strict decoding (every rejected request
 * leaves state unchanged because nothing reaches the store before it is
 * fully validated), store calls, and the reply shapes. */
#include <stdio.h>
#include <string.h>

#include <tenure/err.h>
#include <tenure/fence.h>

#include "api_int.h"
#include "common/name.h"
#include "common/rand.h"
#include "decode.h"
#include "errmap.h"
#include "events.h"
#include "reply.h"

#define REPLY_MAX_BYTES (4u << 20)
#define TOKEN_MAX ((int64_t)1 << 53)
#define REQUEST_ID_MAX_BYTES 128

void tn_api_body_begin(struct tn_buf *b)
{
    tn_buf_init(b, REPLY_MAX_BYTES);
    (void)tn_buf_append(b, "{", 1);
}

bool tn_api_result_begin(struct tn_api_call *c, struct tn_buf *b)
{
    if (c->result.rc != TN_OK) {
        tn_api_fail_result(c);
        return false;
    }
    tn_api_body_begin(b);
    return true;
}

static void put_lease(struct tn_buf *b, const struct tn_lease_view *v,
                      bool first)
{
    tn_reply_kv_str(b, "name", v->name, first);
    tn_reply_kv_str(b, "owner_id", v->owner_id, false);
    tn_reply_kv_uint(b, "token", v->token, false);
}

void tn_api_body_send(struct tn_api_call *c, unsigned status, struct tn_buf *b)
{
    (void)tn_buf_append(b, "}", 1);
    tn_api_send(c, status, b, 0);
    tn_buf_release(b);
}

void tn_api_fail_result(struct tn_api_call *c)
{
    const struct tn_store_result *r = &c->result;
    if (r->rc == TN_ECAPACITY) {
        tn_api_fail_capacity(c, r->capacity);
        return;
    }
    const struct tn_errmap_entry *e = tn_errmap_find(r->rc);
    char msg[160];
    const char *text = r->reason != NULL ? r->reason : e->store_message;
    if (text == NULL) {
        (void)snprintf(msg, sizeof(msg), "store: %s", tn_strerror(r->rc));
        text = msg;
    }
    if (r->rc != TN_ECONFLICT && r->rc != TN_ELOCKDELAY) {
        tn_api_fail(c, r->rc, text);
        return;
    }
    /* held and lock_delay say more: who holds it, or how long to wait. */
    struct tn_buf b;
    tn_api_body_begin(&b);
    tn_reply_kv_str(&b, "error", e->code, true);
    tn_reply_kv_str(&b, "message", text, false);
    if (r->rc == TN_ELOCKDELAY) {
        tn_reply_kv_int(&b, "retry_after_ms", r->retry_after_ms, false);
    } else {
        tn_reply_key(&b, "holder", false);
        (void)tn_buf_append(&b, "{", 1);
        tn_reply_kv_str(&b, "owner_id", r->lease.owner_id, true);
        tn_reply_kv_uint(&b, "token", r->lease.token, false);
        tn_reply_kv_int(&b, "expires_in_ms", r->lease.expires_in_ms, false);
        (void)tn_buf_append(&b, "}", 1);
    }
    tn_api_body_send(c, e->status, &b);
}

/* The session routes' .is_on (routes.def); an acquire under a session
 * asks it too. */
bool tn_api_sessions_is_on(const struct tn_api *api)
{
    const struct tn_store *s = api->cfg.store;
    return s->backend->caps.sessions && s->ops->session_open != NULL;
}

void tn_api_fail_session(struct tn_api_call *c)
{
    const struct tn_store_result *r = &c->result;
    const char *text = r->reason;
    if (text == NULL && r->rc == TN_ELOST)
        text = "the session has ended, or never existed";
    else if (text == NULL && r->rc == TN_EFORBIDDEN)
        text = "session_secret does not match, or the session was opened "
               "by another principal";
    else if (text == NULL && r->rc == TN_ENOTFOUND)
        text = "no live session with that id";
    if (text == NULL || r->rc == TN_ECAPACITY) {
        tn_api_fail_result(c);
        return;
    }
    tn_api_fail(c, r->rc, text);
}

/* "session_id" of a lease under a session; nothing for the others. */
static void put_session_id(struct tn_buf *b, const struct tn_lease_view *v)
{
    if (v->session_id[0] != '\0')
        tn_reply_kv_str(b, "session_id", v->session_id, false);
}

static void put_proof(struct tn_api_call *c, struct tn_buf *b)
{
    const uint8_t *sk = c->api->cfg.signing_key;
    char proof[TN_PROOF_HEX_LEN + 1];
    if (sk == NULL ||
        tn_proof_sign(sk, c->result.lease.name, strlen(c->result.lease.name),
                      c->result.lease.token, proof) < 0)
        return;
    tn_reply_kv_str(b, "proof", proof, false);
}

static void acquired(void *arg)
{
    struct tn_api_call *c = arg;
    const struct tn_store_result *r = &c->result;
    tn_api_waiter_done(c); /* a blocking acquire's room is free again */
    if (r->rc == TN_ECANCELED) {
        /* Its client left while it waited, and nobody reads this; or an
         * HTTP/1.0 client half-closed, which cannot be told from leaving
         * (docs/API.md).  No server error: not counted as a reply. */
        static const char left[] =
            "{\"error\":\"bad_request\",\"message\":\"wait cancelled: "
            "the client closed its side of an HTTP/1.0 connection; wait "
            "over HTTP/1.1\"}";
        tn_http_reply(c->req, 400, "application/json", left, sizeof(left) - 1,
                      0);
        tn_api_call_free(c);
        return;
    }
    if (r->rc != TN_OK && c->session_id[0] != '\0') {
        tn_api_fail_session(c); /* lost, forbidden: the session's */
        return;
    }
    if (r->rc != TN_OK) {
        tn_api_fail_result(c);
        return;
    }
    if (!r->replayed)
        c->api->grants++;
    char secret[2 * TN_SECRET_BYTES + 1];
    tn_hex_encode(r->lease.secret, TN_SECRET_BYTES, secret);
    struct tn_buf b;
    tn_api_body_begin(&b);
    put_lease(&b, &r->lease, true);
    tn_reply_kv_str(&b, "lease_secret", secret, false);
    tn_reply_kv_int(&b, "ttl_ms", r->lease.ttl_ms, false);
    tn_reply_kv_int(&b, "expires_in_ms", r->lease.expires_in_ms, false);
    put_session_id(&b, &r->lease);
    put_proof(c, &b);
    tn_api_body_send(c, r->replayed ? 200 : 201, &b);
}

/* An acquire under a session (docs/SESSIONS.md): "session_id" (32
 * lowercase hex digits, kept in c) and "session_secret", and no "ttl_ms",
 * which is the session's.  0, or TN_EINVAL with msg, or TN_ENOTIMPL. */
static int decode_session(struct tn_api_call *c, const struct tn_body *o,
                          struct tn_acquire_req *r, uint8_t *secret, char *msg,
                          size_t msglen)
{
    const char *id = NULL;
    size_t len = 0;
    bool hex = tn_decode_str(o, "session_id", &id, &len, msg, msglen) == 0 &&
               len == TN_SESSION_ID_HEX;
    for (size_t i = 0; hex && i < len; i++)
        hex = (id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f');
    if (!tn_api_sessions_is_on(c->api)) {
        (void)snprintf(msg, msglen, "this store has no sessions yet");
        return TN_ENOTIMPL;
    }
    if (!hex) {
        (void)snprintf(msg, msglen,
                       "field \"session_id\" must be 32 lowercase hex digits "
                       "(with \"session_secret\")");
        return TN_EINVAL;
    }
    if (tn_decode_field(o, "ttl_ms") != NULL) {
        (void)snprintf(msg, msglen,
                       "field \"ttl_ms\" must be absent under a session: its "
                       "leases live as long as it does");
        return TN_EINVAL;
    }
    int rc = tn_decode_secret(o, "session_secret", secret, msg, msglen);
    memcpy(c->session_id, id, TN_SESSION_ID_HEX + 1);
    r->session_id = c->session_id;
    r->session_secret = secret;
    return rc;
}

/* A blocked acquire is granted only to a client that is still there. */
static bool still_there(void *req)
{
    return tn_http_req_is_connected(req);
}

/* A blocked acquire's client went away: its slot is freed at once. */
static void client_left(void *arg)
{
    struct tn_api_call *c = arg;
    struct tn_store *s = c->api->cfg.store;
    s->ops->cancel_wait(s, c->req);
}

/* POST /v1/leases */
void tn_api_acquire(struct tn_api_call *c, struct tn_route_match *m)
{
    char msg[200] = "bad request";
    struct tn_body o;
    struct tn_acquire_req r = {0};
    uint8_t secret[TN_SECRET_BYTES];
    uint8_t session_secret[TN_SECRET_BYTES];
    const struct tn_api_config *cfg = &c->api->cfg;
    int rc = tn_decode_body(c->req, false, &o, msg, sizeof(msg));
    if (rc == 0)
        rc = tn_decode_name(&o, "name", TN_NAME_MAX_BYTES, true, &r.name,
                            &r.name_len, msg, sizeof(msg));
    if (rc == 0)
        rc = tn_decode_name(&o, "owner_id", TN_OWNER_MAX_BYTES, true,
                            &r.owner_id, NULL, msg, sizeof(msg));
    if (rc == 0 && tn_decode_field(&o, "session_id") == NULL &&
        tn_decode_field(&o, "session_secret") == NULL)
        rc = tn_decode_int(&o, "ttl_ms", cfg->min_ttl_ms, cfg->max_ttl_ms, true,
                           &r.ttl_ms, msg, sizeof(msg));
    else if (rc == 0)
        rc = decode_session(c, &o, &r, session_secret, msg, sizeof(msg));
    if (rc == 0)
        rc = tn_decode_int(&o, "lock_delay_ms", 0, cfg->max_ttl_ms, false,
                           &r.lock_delay_ms, msg, sizeof(msg));
    if (rc == 0)
        rc = tn_decode_name(&o, "request_id", REQUEST_ID_MAX_BYTES, false,
                            &r.request_id, NULL, msg, sizeof(msg));
    if (rc == 0)
        rc = tn_decode_int(&o, "wait_ms", 0, cfg->max_wait_ms, false,
                           &r.wait_ms, msg, sizeof(msg));
    if (rc == 0 && r.wait_ms > 0 && !cfg->store->backend->caps.waits) {
        /* Refused, never silently ignored. */
        (void)snprintf(msg, sizeof(msg),
                       "field \"wait_ms\" is not supported by the %s store "
                       "yet",
                       cfg->store->backend->name);
        rc = TN_EINVAL;
    }
    if (rc == 0 && tn_rand_small(secret, sizeof(secret)) < 0) {
        tn_decode_done(&o);
        tn_api_fail(c, TN_EINTERNAL, "no randomness for the lease secret");
        return;
    }
    if (rc < 0) {
        tn_decode_done(&o);
        tn_api_fail(c, rc, msg); /* TN_EINVAL, or TN_ENOMEM */
        return;
    }
    if (tn_api_admit(c, m, r.name, r.name_len) < 0) {
        tn_decode_done(&o);
        return;
    }
    r.principal =
        c->principal != NULL ? tn_auth_principal_name(c->principal) : NULL;
    r.secret = secret;
    r.wanted = still_there;
    r.wanted_ctx = c->req;
    if (r.wait_ms > 0 &&
        tn_api_waiter_admit(c, cfg->events != NULL
                                   ? tn_events_subscribers(cfg->events)
                                   : 0) < 0) {
        tn_decode_done(&o);
        return; /* answered 503 or 429: no room to wait */
    }
    struct tn_store *s = cfg->store;
    if (r.wait_ms > 0 && s->ops->cancel_wait != NULL)
        tn_http_req_on_disconnect(c->req, client_left, c);
    s->ops->acquire(s, &r, &c->result, acquired, c);
    tn_decode_done(&o); /* the store copied what it keeps */
}

static void renewed(void *arg)
{
    struct tn_api_call *c = arg;
    const struct tn_store_result *r = &c->result;
    if (r->rc != TN_OK) {
        tn_api_fail_result(c);
        return;
    }
    c->api->renews++;
    struct tn_buf b;
    tn_api_body_begin(&b);
    put_lease(&b, &r->lease, true);
    tn_reply_kv_int(&b, "ttl_ms", r->lease.ttl_ms, false);
    tn_reply_kv_int(&b, "expires_in_ms", r->lease.expires_in_ms, false);
    tn_api_body_send(c, 200, &b);
}

static void released(void *arg)
{
    struct tn_api_call *c = arg;
    if (c->result.rc != TN_OK) {
        tn_api_fail_result(c);
        return;
    }
    c->api->releases++;
    struct tn_buf b;
    tn_buf_init(&b, 16);
    tn_api_send(c, 204, &b, 0);
}

/* Decode {"token","lease_secret"[,"ttl_ms"]} into r. */
static int decode_token_req(struct tn_api_call *c, const struct tn_body *o,
                            bool renew, struct tn_token_req *r, char *msg,
                            size_t msglen)
{
    const struct tn_api_config *cfg = &c->api->cfg;
    int64_t token = 0;
    int rc =
        tn_decode_int(o, "token", 1, TOKEN_MAX - 1, true, &token, msg, msglen);
    const char *secret = NULL;
    size_t slen = 0;
    if (rc == 0 &&
        tn_decode_str(o, "lease_secret", &secret, &slen, msg, msglen) < 0) {
        (void)snprintf(msg, msglen,
                       "field \"lease_secret\" is required and "
                       "must be a string");
        rc = TN_EINVAL;
    }
    if (rc == 0 &&
        tn_hex_decode(secret, slen, r->secret, TN_SECRET_BYTES) < 0) {
        (void)snprintf(msg, msglen,
                       "field \"lease_secret\" must be %d hex "
                       "digits",
                       2 * TN_SECRET_BYTES);
        rc = TN_EINVAL;
    }
    if (rc == 0 && renew)
        rc = tn_decode_int(o, "ttl_ms", cfg->min_ttl_ms, cfg->max_ttl_ms, false,
                           &r->ttl_ms, msg, msglen);
    r->token = (uint64_t)token;
    return rc;
}

static void token_op(struct tn_api_call *c, const struct tn_route_match *m,
                     bool renew)
{
    char msg[200] = "bad request";
    struct tn_token_req r = {.name = m->name, .name_len = m->name_len};
    int rc = TN_OK;
    r.force = !renew && m->force;
    struct tn_body o;
    rc = tn_decode_body(c->req, r.force, &o, msg, sizeof(msg));
    if (rc == 0 && !r.force)
        rc = decode_token_req(c, &o, renew, &r, msg, sizeof(msg));
    tn_decode_done(&o);
    if (rc < 0) {
        tn_api_fail(c, rc, msg);
        return;
    }
    if (tn_api_admit(c, m, m->name, m->name_len) < 0)
        return;
    /* Renew and release are bound to the acquiring principal (admins
     * excepted); the store compares it with the grant's. */
    if (c->principal != NULL && !tn_auth_principal_is_admin(c->principal))
        r.principal = tn_auth_principal_name(c->principal);
    struct tn_store *s = c->api->cfg.store;
    if (renew)
        s->ops->renew(s, &r, &c->result, renewed, c);
    else
        s->ops->release(s, &r, &c->result, released, c);
}

static void got(void *arg)
{
    struct tn_api_call *c = arg;
    const struct tn_store_result *r = &c->result;
    struct tn_buf b;
    if (!tn_api_result_begin(c, &b))
        return;
    put_lease(&b, &r->lease, true);
    tn_reply_kv_int(&b, "expires_in_ms", r->lease.expires_in_ms, false);
    tn_reply_kv_int(&b, "lock_delay_ms", r->lease.lock_delay_ms, false);
    put_session_id(&b, &r->lease);
    tn_api_body_send(c, 200, &b);
}

static void checked(void *arg)
{
    struct tn_api_call *c = arg;
    const struct tn_store_result *r = &c->result;
    struct tn_buf b;
    if (!tn_api_result_begin(c, &b))
        return;
    tn_reply_key(&b, "current", true);
    (void)tn_buf_printf(&b, "%s", r->current ? "true" : "false");
    if (r->has_live)
        tn_reply_kv_uint(&b, "token", r->lease.token, false);
    else
        (void)tn_buf_printf(&b, ",\"token\":null");
    tn_reply_kv_uint(&b, "floor", r->floor, false);
    if (r->has_live)
        put_session_id(&b, &r->lease);
    tn_api_body_send(c, 200, &b);
}

static void listed(void *arg)
{
    struct tn_api_call *c = arg;
    const struct tn_store_result *r = &c->result;
    struct tn_buf b;
    if (!tn_api_result_begin(c, &b))
        return;
    tn_reply_key(&b, "leases", true);
    (void)tn_buf_append(&b, "[", 1);
    for (size_t i = 0; i < r->n_items; i++) {
        (void)tn_buf_append(&b, i == 0 ? "{" : ",{", i == 0 ? 1 : 2);
        put_lease(&b, &r->items[i], true);
        tn_reply_kv_int(&b, "expires_in_ms", r->items[i].expires_in_ms, false);
        tn_reply_kv_int(&b, "lock_delay_ms", r->items[i].lock_delay_ms, false);
        put_session_id(&b, &r->items[i]);
        (void)tn_buf_append(&b, "}", 1);
    }
    (void)tn_buf_append(&b, "]", 1);
    if (r->more && r->n_items > 0)
        tn_reply_kv_str(&b, "next", r->items[r->n_items - 1].name, false);
    else
        (void)tn_buf_printf(&b, ",\"next\":null");
    tn_api_body_send(c, 200, &b);
}

/* GET /v1/leases?prefix=&after=&limit= */
void tn_api_list(struct tn_api_call *c, struct tn_route_match *m)
{
    struct tn_list_req r = {.prefix = m->prefix,
                            .prefix_len = m->prefix_len,
                            .after = m->after,
                            .after_len = m->after_len,
                            .limit = m->limit};
    struct tn_store *s = c->api->cfg.store;
    s->ops->list(s, &r, &c->result, listed, c);
}

/* PATCH /v1/leases/{name} */
void tn_api_renew(struct tn_api_call *c, struct tn_route_match *m)
{
    token_op(c, m, true);
}

/* DELETE /v1/leases/{name}[?force=true] */
void tn_api_release(struct tn_api_call *c, struct tn_route_match *m)
{
    token_op(c, m, false);
}

/* GET /v1/leases/{name} */
void tn_api_get(struct tn_api_call *c, struct tn_route_match *m)
{
    struct tn_store *s = c->api->cfg.store;
    s->ops->get(s, m->name, m->name_len, &c->result, got, c);
}

/* GET /v1/leases/{name}/check?token= */
void tn_api_check(struct tn_api_call *c, struct tn_route_match *m)
{
    struct tn_store *s = c->api->cfg.store;
    s->ops->check(s, m->name, m->name_len, m->token, &c->result, checked, c);
}
