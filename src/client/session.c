/* SPDX-License-Identifier: MIT */
/* Sessions on the callers' connection: open, adopt, renew, end, free, and
 * one acquire under a session (claims of many names: claim.c; the
 * keepalive: renew.c).  A session's safe time is counted like a lease's,
 * from the sending of its open or last acknowledged renew; only those set
 * it (a claim's answer reports the time left but does not move it, so no
 * answer can stretch what a renew with a shorter TTL cut). */
#include <pthread.h>
#include <string.h>

#include <tenure/client.h>
#include <tenure/session.h>

#include "client/client_internal.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/json.h"

char *tn_client_session_path(const char *id, const char *suffix)
{
    char *esc = tn_client_http_escape(id);
    if (esc == NULL)
        return NULL;
    struct tn_buf b;
    tn_buf_init(&b, 4096);
    int rc = tn_buf_printf(&b, "/v1/sessions/%s%s", esc, suffix);
    tn_free(esc);
    if (rc < 0) {
        tn_buf_release(&b);
        return NULL;
    }
    return b.data;
}

/* A server without sessions answers their routes 404 (no such route),
 * 405 or 501: all mean the same to the caller. */
static int map_open_error(const struct tn_client_http_resp *r,
                          struct tn_errmsg *em)
{
    int rc = tn_client_map_error(r->status, r->body, r->body_len, NULL, em);
    if (r->status == 404 || r->status == 405 || r->status == 501) {
        tn_errmsg_set(em, "the server has no sessions (HTTP %ld)", r->status);
        return TN_ENOTIMPL;
    }
    return rc;
}

static int new_session(struct tn_client *c, json_t *o, int64_t sent_ms,
                       const struct tn_session_args *a, struct tn_session **out,
                       struct tn_errmsg *em)
{
    const char *id = NULL;
    const char *secret = NULL;
    const char *owner = NULL;
    size_t n = 0;
    int64_t ttl = a->ttl_ms;
    int64_t left = 0;
    if (tn_json_get_str(o, "session_id", &id, &n, em) < 0 ||
        n > TN_SESSION_ID_MAX ||
        tn_json_get_str(o, "session_secret", &secret, &n, em) < 0 ||
        tn_json_get_int(o, "expires_in_ms", 0, INT64_MAX, &left, em) < 0) {
        tn_errmsg_set(em, "session without session_id, session_secret or "
                          "expires_in_ms");
        return TN_EPROTO;
    }
    if (tn_json_get_str(o, "owner_id", &owner, &n, NULL) < 0)
        owner = a->owner_id != NULL ? a->owner_id : c->owner_id;
    (void)tn_json_get_int(o, "ttl_ms", 1, INT64_MAX, &ttl, NULL);
    struct tn_session *s = tn_client_session_new(c, id, owner, secret);
    if (s == NULL)
        return TN_ENOMEM;
    (void)pthread_mutex_lock(&c->mu);
    tn_client_session_granted_locked(s, sent_ms, ttl, left);
    (void)pthread_mutex_unlock(&c->mu);
    *out = s;
    return TN_OK;
}

int tn_client_session_open(struct tn_client *c, const struct tn_session_args *a,
                           struct tn_session **out, struct tn_errmsg *em)
{
    *out = NULL;
    const char *owner = a->owner_id != NULL ? a->owner_id : c->owner_id;
    if (a->ttl_ms <= 0 || owner[0] == '\0' ||
        strlen(owner) > TN_CLIENT_OWNER_MAX) {
        tn_errmsg_set(em, "ttl_ms must be positive, owner_id 1 to %d bytes",
                      TN_CLIENT_OWNER_MAX);
        return TN_EINVAL;
    }
    json_t *body = json_pack("{s:s,s:I}", "owner_id", owner, "ttl_ms",
                             (json_int_t)a->ttl_ms);
    if (body == NULL)
        return TN_ENOMEM;
    struct tn_client_http_resp r;
    struct tn_client_call ca = {"POST", "/v1/sessions", body, 0};
    int rc = tn_client_call(c, &ca, &r, em);
    if (rc < 0)
        return rc;
    json_t *o = NULL;
    if (r.status == 201 || r.status == 200)
        rc = tn_client_parse_ok(&r, &o, em);
    else
        rc = map_open_error(&r, em);
    if (o != NULL) {
        rc = new_session(c, o, r.sent_ms, a, out, em);
        json_decref(o);
    }
    tn_client_http_resp_release(&r);
    return rc;
}

int tn_client_session_adopt(struct tn_client *c, const char *session_id,
                            const char *secret, struct tn_session **out)
{
    *out = NULL;
    size_t n = session_id != NULL ? strlen(session_id) : 0;
    if (n == 0 || n > TN_SESSION_ID_MAX || secret == NULL || secret[0] == '\0')
        return TN_EINVAL;
    *out = tn_client_session_new(c, session_id, "", secret);
    return *out != NULL ? TN_OK : TN_ENOMEM;
}

int tn_client_session_lease_adopt(struct tn_session *s, const char *name,
                                  uint64_t token, struct tn_lease **out)
{
    *out = NULL;
    struct tn_client *c = s->client;
    if (tn_client_valid_name(name, NULL) < 0)
        return TN_EINVAL;
    struct tn_lease *l = tn_client_lease_new(c, name, "", "");
    if (l == NULL)
        return TN_ENOMEM;
    l->token = token;
    (void)pthread_mutex_lock(&c->mu);
    l->ttl_ms = s->ttl_ms;
    tn_client_session_list_locked(s, l);
    (void)pthread_mutex_unlock(&c->mu);
    *out = l;
    return TN_OK;
}

char *tn_client_session_renew_body(const struct tn_session *s, int64_t ttl_ms)
{
    json_t *o = json_pack("{s:s}", "session_secret", s->secret);
    if (o != NULL && ttl_ms > 0 &&
        json_object_set_new(o, "ttl_ms", json_integer(ttl_ms)) != 0) {
        json_decref(o);
        return NULL;
    }
    char *text = o != NULL ? tn_json_dump(o, NULL) : NULL;
    json_decref(o);
    return text;
}

static int renewable_locked(struct tn_session *s, struct tn_errmsg *em)
{
    if (s->deadline_known)
        (void)tn_client_session_safe_at_locked(s, s->client->now_ms());
    switch (s->state) {
    case TN_LEASE_HELD:
        return TN_OK;
    case TN_LEASE_EXPIRED:
        tn_errmsg_set(em, "the safe time of session %s ran out", s->id);
        return TN_EEXPIRED;
    case TN_LEASE_LOST:
        tn_errmsg_set(em, "session %s was lost", s->id);
        return TN_ELOST;
    default:
        tn_errmsg_set(em, "session %s was ended", s->id);
        return TN_EINVAL;
    }
}

/* PATCH or DELETE of s with its secret on the callers' connection. */
static int send_session(struct tn_session *s, const char *method,
                        int64_t ttl_ms, struct tn_client_http_resp *r,
                        struct tn_errmsg *em)
{
    struct tn_client *c = s->client;
    char *path = tn_client_session_path(s->id, "");
    char *text = tn_client_session_renew_body(s, ttl_ms);
    int rc = TN_ENOMEM;
    struct tn_client_http_req req = {method, path, text,
                                     c->now_ms() + c->request_timeout_ms};
    if (path != NULL && text != NULL) {
        (void)pthread_mutex_lock(&c->http_mu);
        rc = tn_client_http_do(&c->http, &req, r, em);
        (void)pthread_mutex_unlock(&c->http_mu);
    }
    tn_free(path);
    tn_free(text);
    return rc;
}

/* The end of s may end its keepalive: tell the thread. */
static void note_session_locked(struct tn_session *s)
{
    if (s->kept)
        tn_client_wake_locked(s->client);
}

int tn_client_session_renew(struct tn_session *s, int64_t ttl_ms,
                            struct tn_errmsg *em)
{
    struct tn_client *c = s->client;
    struct tn_renew_io ro = {.ttl_send_ms = ttl_ms};
    (void)pthread_mutex_lock(&c->mu);
    int rc = renewable_locked(s, em);
    ro.ttl_ms = s->ttl_ms;
    (void)pthread_mutex_unlock(&c->mu);
    if (rc < 0)
        return rc;
    struct tn_client_http_resp r;
    rc = send_session(s, "PATCH", ttl_ms, &r, em);
    if (rc == 0) {
        rc = tn_client_decode_renew(r.status, r.body, r.body_len, &ro, em);
        ro.sent_ms = r.sent_ms;
        tn_client_http_resp_release(&r);
    }
    (void)pthread_mutex_lock(&c->mu);
    rc = tn_client_session_apply_renew_locked(s, rc, &ro);
    note_session_locked(s);
    (void)pthread_mutex_unlock(&c->mu);
    return rc;
}

int tn_client_session_end(struct tn_session *s, struct tn_errmsg *em)
{
    struct tn_client *c = s->client;
    (void)pthread_mutex_lock(&c->mu);
    /* From here on nothing renews s, and no lease of it reads held. */
    if (s->state == TN_LEASE_HELD)
        s->state = TN_LEASE_RELEASED;
    (void)pthread_mutex_unlock(&c->mu);
    struct tn_client_http_resp r;
    int rc = send_session(s, "DELETE", 0, &r, em);
    if (rc == 0) {
        if (r.status != 204 && r.status != 200)
            rc = tn_client_map_error(r.status, r.body, r.body_len, NULL, em);
        tn_client_http_resp_release(&r);
    }
    (void)pthread_mutex_lock(&c->mu);
    if (s->state == TN_LEASE_RELEASED) {
        s->end_rc = rc;
        s->end_done = true;
    }
    note_session_locked(s);
    (void)pthread_mutex_unlock(&c->mu);
    return rc;
}

int tn_client_session_force_end(struct tn_client *c, const char *session_id,
                                struct tn_errmsg *em)
{
    if (session_id == NULL || session_id[0] == '\0')
        return TN_EINVAL;
    char *path = tn_client_session_path(session_id, "?force=true");
    if (path == NULL)
        return TN_ENOMEM;
    struct tn_client_http_resp r;
    struct tn_client_call ca = {"DELETE", path, NULL, 0};
    int rc = tn_client_call(c, &ca, &r, em);
    tn_free(path);
    if (rc < 0)
        return rc;
    if (r.status != 204 && r.status != 200)
        rc = tn_client_map_error(r.status, r.body, r.body_len, NULL, em);
    tn_client_http_resp_release(&r);
    return rc;
}

void tn_client_session_free(struct tn_session *s)
{
    if (s == NULL)
        return;
    struct tn_client *c = s->client;
    (void)pthread_mutex_lock(&c->mu);
    tn_client_session_unref_locked(s);
    (void)pthread_mutex_unlock(&c->mu);
}

int tn_client_session_acquire(struct tn_session *s,
                              const struct tn_acquire_args *a,
                              struct tn_lease **out,
                              struct tn_lease_info *holder_out,
                              struct tn_errmsg *em)
{
    *out = NULL;
    struct tn_client *c = s->client;
    int rc = tn_client_valid_name(a->name, em);
    if (rc < 0)
        return rc;
    if (a->ttl_ms != 0 || a->wait_ms < 0 || a->lock_delay_ms < 0) {
        tn_errmsg_set(em, "under a session ttl_ms must be 0 (the "
                          "session's applies), wait and delay >= 0");
        return TN_EINVAL;
    }
    const char *owner = a->owner_id != NULL ? a->owner_id : s->owner_id;
    return tn_client_post_acquire(c, a, s, owner, out, holder_out, em);
}
