/* SPDX-License-Identifier: MIT */
/* The session routes of docs/SESSIONS.md: open, renew, end, read and list
 * sessions (the batch claim and release under one are claims.c's).  The
 * API draws each session's id and secret; the store decides and keeps
 * every invariant.  As for leases, nothing reaches the store before the
 * request is fully validated, so a refused request changes nothing. */
#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "api_int.h"
#include "common/name.h"
#include "common/rand.h"
#include "decode.h"
#include "reply.h"

/* The principal a session operation is bound to: NULL with auth off or
 * for an admin (who may act on any session), else the caller's name. */
static const char *bound_principal(const struct tn_api_call *c)
{
    if (c->principal == NULL || tn_auth_principal_is_admin(c->principal))
        return NULL;
    return tn_auth_principal_name(c->principal);
}

/* "session_id", "owner_id", "ttl_ms", "expires_in_ms" and "leases" of the
 * session id, the answer of renew and get. */
static void put_session(struct tn_buf *b, const char *id,
                        const struct tn_session_view *v)
{
    tn_reply_kv_str(b, "session_id", id, true);
    tn_reply_kv_str(b, "owner_id", v->owner_id, false);
    tn_reply_kv_int(b, "ttl_ms", v->ttl_ms, false);
    tn_reply_kv_int(b, "expires_in_ms", v->expires_in_ms, false);
    tn_reply_kv_uint(b, "leases", v->n_leases, false);
}

static void opened(void *arg)
{
    struct tn_api_call *c = arg;
    const struct tn_session_view *v = &c->result.session;
    if (c->result.rc != TN_OK) {
        tn_api_fail_session(c);
        return;
    }
    char secret[2 * TN_SECRET_BYTES + 1];
    tn_hex_encode(v->secret, TN_SECRET_BYTES, secret);
    struct tn_buf b;
    tn_api_body_begin(&b);
    tn_reply_kv_str(&b, "session_id", c->session_id, true);
    tn_reply_kv_str(&b, "session_secret", secret, false);
    tn_reply_kv_str(&b, "owner_id", v->owner_id, false);
    tn_reply_kv_int(&b, "ttl_ms", v->ttl_ms, false);
    tn_reply_kv_int(&b, "expires_in_ms", v->expires_in_ms, false);
    tn_api_body_send(c, 201, &b);
}

/* POST /v1/sessions {"owner_id", "ttl_ms"} */
void tn_api_session_open(struct tn_api_call *c, struct tn_route_match *m)
{
    char msg[200] = "bad request";
    const struct tn_api_config *cfg = &c->api->cfg;
    struct tn_session_open_req r = {0};
    uint8_t raw_id[TN_SESSION_ID_BYTES];
    uint8_t secret[TN_SECRET_BYTES];
    struct tn_body o;
    (void)m;
    int rc = tn_decode_body(c->req, false, &o, msg, sizeof(msg));
    if (rc == 0)
        rc = tn_decode_name(&o, "owner_id", TN_OWNER_MAX_BYTES, true,
                            &r.owner_id, NULL, msg, sizeof(msg));
    if (rc == 0)
        rc = tn_decode_int(&o, "ttl_ms", cfg->min_ttl_ms, cfg->max_ttl_ms, true,
                           &r.ttl_ms, msg, sizeof(msg));
    if (rc < 0) {
        tn_decode_done(&o);
        tn_api_fail(c, rc, msg);
        return;
    }
    if (tn_rand_small(raw_id, sizeof(raw_id)) < 0 ||
        tn_rand_small(secret, sizeof(secret)) < 0) {
        tn_decode_done(&o);
        tn_api_fail(c, TN_EINTERNAL, "no randomness for the session");
        return;
    }
    tn_hex_encode(raw_id, sizeof(raw_id), c->session_id);
    r.id = c->session_id;
    r.secret = secret;
    /* Bound to its opener, admins included, as a lease is. */
    r.principal =
        c->principal != NULL ? tn_auth_principal_name(c->principal) : NULL;
    struct tn_store *s = cfg->store;
    s->ops->session_open(s, &r, &c->result, opened, c);
    tn_decode_done(&o); /* the store copied what it keeps */
}

static void renewed(void *arg)
{
    struct tn_api_call *c = arg;
    struct tn_buf b;
    if (c->result.rc != TN_OK) {
        tn_api_fail_session(c);
        return;
    }
    tn_api_body_begin(&b);
    put_session(&b, c->session_id, &c->result.session);
    tn_api_body_send(c, 200, &b);
}

static void ended(void *arg)
{
    struct tn_api_call *c = arg;
    if (c->result.rc != TN_OK) {
        tn_api_fail_session(c);
        return;
    }
    struct tn_buf b;
    tn_buf_init(&b, 16);
    tn_api_send(c, 204, &b, 0);
}

/* PATCH (renew) or DELETE (end, or with force an admin's end) of
 * /v1/sessions/{id}. */
static void session_op(struct tn_api_call *c, const struct tn_route_match *m,
                       bool renew)
{
    char msg[200] = "bad request";
    const struct tn_api_config *cfg = &c->api->cfg;
    memcpy(c->session_id, m->id, sizeof(c->session_id));
    struct tn_session_req r = {.id = c->session_id};
    r.force = !renew && m->force;
    struct tn_body o;
    int rc = tn_decode_body(c->req, r.force, &o, msg, sizeof(msg));
    if (rc == 0 && !r.force)
        rc = tn_decode_secret(&o, "session_secret", r.secret, msg, sizeof(msg));
    if (rc == 0 && renew)
        rc = tn_decode_int(&o, "ttl_ms", cfg->min_ttl_ms, cfg->max_ttl_ms,
                           false, &r.ttl_ms, msg, sizeof(msg));
    tn_decode_done(&o);
    if (rc < 0) {
        tn_api_fail(c, rc, msg);
        return;
    }
    r.principal = r.force ? NULL : bound_principal(c);
    struct tn_store *s = cfg->store;
    if (renew)
        s->ops->session_renew(s, &r, &c->result, renewed, c);
    else
        s->ops->session_end(s, &r, &c->result, ended, c);
}

/* PATCH /v1/sessions/{id} {"session_secret"[, "ttl_ms"]} */
void tn_api_session_renew(struct tn_api_call *c, struct tn_route_match *m)
{
    session_op(c, m, true);
}

/* DELETE /v1/sessions/{id} {"session_secret"}, or ?force=true (admin) */
void tn_api_session_end(struct tn_api_call *c, struct tn_route_match *m)
{
    session_op(c, m, false);
}

static void got(void *arg)
{
    struct tn_api_call *c = arg;
    struct tn_buf b;
    if (c->result.rc != TN_OK) {
        tn_api_fail_session(c);
        return;
    }
    tn_api_body_begin(&b);
    put_session(&b, c->session_id, &c->result.session);
    tn_api_body_send(c, 200, &b);
}

/* GET /v1/sessions/{id}: never its secret. */
void tn_api_session_get(struct tn_api_call *c, struct tn_route_match *m)
{
    struct tn_store *s = c->api->cfg.store;
    memcpy(c->session_id, m->id, sizeof(c->session_id));
    s->ops->session_get(s, c->session_id, &c->result, got, c);
}

static void listed(void *arg)
{
    struct tn_api_call *c = arg;
    const struct tn_store_result *r = &c->result;
    struct tn_buf b;
    if (!tn_api_result_begin(c, &b))
        return;
    tn_reply_key(&b, "sessions", true);
    (void)tn_buf_append(&b, "[", 1);
    for (size_t i = 0; i < r->n_sessions; i++) {
        const struct tn_session_view *v = &r->sessions[i];
        (void)tn_buf_append(&b, i == 0 ? "{" : ",{", i == 0 ? 1 : 2);
        tn_reply_kv_str(&b, "session_id", v->id, true);
        tn_reply_kv_str(&b, "owner_id", v->owner_id, false);
        tn_reply_kv_int(&b, "expires_in_ms", v->expires_in_ms, false);
        tn_reply_kv_uint(&b, "leases", v->n_leases, false);
        (void)tn_buf_append(&b, "}", 1);
    }
    (void)tn_buf_append(&b, "]", 1);
    if (r->more && r->n_sessions > 0)
        tn_reply_kv_str(&b, "next", r->sessions[r->n_sessions - 1].id, false);
    else
        (void)tn_buf_printf(&b, ",\"next\":null");
    tn_api_body_send(c, 200, &b);
}

/* GET /v1/sessions?prefix=&limit=&after=: live sessions whose owner_id
 * starts with prefix, in id order after "after". */
void tn_api_session_list(struct tn_api_call *c, struct tn_route_match *m)
{
    struct tn_list_req r = {.prefix = m->prefix,
                            .prefix_len = m->prefix_len,
                            .after = m->after,
                            .after_len = m->after_len,
                            .limit = m->limit};
    struct tn_store *s = c->api->cfg.store;
    s->ops->session_list(s, &r, &c->result, listed, c);
}
