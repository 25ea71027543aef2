/* SPDX-License-Identifier: MIT */
/* Renew and release of one lease by its credential (token and secret), on
 * the callers' connection, and the outcome of a renew applied to a lease
 * or a session, shared with the keepalive thread.  Renew and release are
 * conditional on the credential, so sending one again (failover after a
 * 503) can never touch a newer grant. */
#include <pthread.h>
#include <string.h>

#include <tenure/client.h>

#include "client/client_internal.h"
#include "common/alloc.h"
#include "common/json.h"

static json_t *cred_body(const struct tn_lease *l, int64_t ttl_ms)
{
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    int bad =
        json_object_set_new(o, "token", json_integer((json_int_t)l->token));
    bad |= json_object_set_new(o, "lease_secret", json_string(l->secret));
    if (ttl_ms > 0)
        bad |= json_object_set_new(o, "ttl_ms", json_integer(ttl_ms));
    if (bad != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *tn_client_renew_body(const struct tn_lease *l, int64_t ttl_ms)
{
    json_t *body = cred_body(l, ttl_ms);
    char *text = body != NULL ? tn_json_dump(body, NULL) : NULL;
    json_decref(body);
    return text;
}

struct cred_req {
    const char *method;  /* PATCH or DELETE */
    int64_t ttl_ms;      /* ttl_ms to send, 0 = none */
    int64_t deadline_ms; /* monotonic end of the request */
};

/* Send l's credentials (renew or release) on the callers' connection. */
static int send_cred(struct tn_client *c, const struct tn_lease *l,
                     const struct cred_req *cr, struct tn_client_http_resp *r,
                     struct tn_errmsg *em)
{
    char *path = tn_client_lease_path(l->name, "");
    char *text = tn_client_renew_body(l, cr->ttl_ms);
    int rc = TN_ENOMEM;
    struct tn_client_http_req req = {cr->method, path, text, cr->deadline_ms};
    if (path != NULL && text != NULL) {
        (void)pthread_mutex_lock(&c->http_mu);
        rc = tn_client_http_do(&c->http, &req, r, em);
        (void)pthread_mutex_unlock(&c->http_mu);
    }
    tn_free(path);
    tn_free(text);
    return rc;
}

int tn_lease_apply_renew_locked(struct tn_lease *l, int rc,
                                const struct tn_renew_io *ro)
{
    if (rc == TN_ELOST || rc == TN_EFORBIDDEN) {
        if (l->state == TN_LEASE_HELD) {
            l->state = TN_LEASE_LOST;
            l->end_rc = rc;
        }
        return rc;
    }
    if (rc < 0)
        return rc;
    tn_lease_granted_locked(l, ro->sent_ms, ro->ttl_ms, ro->expires_in_ms);
    /* The answer may come after the safe time ran out: still lost. */
    if (tn_lease_safe_at_locked(l, l->client->now_ms()) <= 0)
        return l->state == TN_LEASE_RELEASED ? TN_EINVAL : TN_EEXPIRED;
    return TN_OK;
}

int tn_client_session_apply_renew_locked(struct tn_session *s, int rc,
                                         const struct tn_renew_io *ro)
{
    if (rc == TN_ELOST || rc == TN_EFORBIDDEN) {
        if (s->state == TN_LEASE_HELD) {
            s->state = TN_LEASE_LOST;
            s->end_rc = rc;
        }
        return rc;
    }
    if (rc < 0)
        return rc;
    tn_client_session_granted_locked(s, ro->sent_ms, ro->ttl_ms,
                                     ro->expires_in_ms);
    if (tn_client_session_safe_at_locked(s, s->client->now_ms()) <= 0)
        return s->state == TN_LEASE_RELEASED ? TN_EINVAL : TN_EEXPIRED;
    return TN_OK;
}

static int renew_allowed_locked(struct tn_client *c, struct tn_lease *l,
                                struct tn_errmsg *em)
{
    if (l->deadline_known || l->session != NULL)
        (void)tn_lease_safe_at_locked(l, c->now_ms());
    switch (l->state) {
    case TN_LEASE_HELD:
        return TN_OK;
    case TN_LEASE_EXPIRED:
        tn_errmsg_set(em, "the safe time of lease \"%s\" ran out", l->name);
        return TN_EEXPIRED;
    case TN_LEASE_LOST:
        tn_errmsg_set(em, "lease \"%s\" was lost", l->name);
        return TN_ELOST;
    default:
        tn_errmsg_set(em, "lease \"%s\" was released", l->name);
        return TN_EINVAL;
    }
}

int tn_client_renew(struct tn_client *c, struct tn_lease *l, int64_t ttl_ms,
                    struct tn_errmsg *em)
{
    struct tn_renew_io ro = {.ttl_send_ms = ttl_ms};
    (void)pthread_mutex_lock(&c->mu);
    int rc = renew_allowed_locked(c, l, em);
    ro.ttl_ms = l->ttl_ms; /* unless the answer says otherwise */
    (void)pthread_mutex_unlock(&c->mu);
    if (rc < 0)
        return rc;
    /* A lease of a session is renewed by its session only: the server
     * says so (400), the client does not guess. */
    struct tn_client_http_resp r;
    struct cred_req cr = {"PATCH", ttl_ms, c->now_ms() + c->request_timeout_ms};
    rc = send_cred(c, l, &cr, &r, em);
    if (rc == 0) {
        rc = tn_client_decode_renew(r.status, r.body, r.body_len, &ro, em);
        ro.sent_ms = r.sent_ms;
        tn_client_http_resp_release(&r);
    }
    (void)pthread_mutex_lock(&c->mu);
    if (l->session == NULL || rc < 0)
        rc = tn_lease_apply_renew_locked(l, rc, &ro);
    tn_sched_note_locked(c, l);
    (void)pthread_mutex_unlock(&c->mu);
    return rc;
}

int tn_client_release(struct tn_client *c, struct tn_lease *l,
                      struct tn_errmsg *em)
{
    (void)pthread_mutex_lock(&c->mu);
    /* From here on the keepalive thread never sends a renew for l. */
    l->state = TN_LEASE_RELEASED;
    tn_sched_update_locked(c, l);
    (void)pthread_mutex_unlock(&c->mu);
    struct tn_client_http_resp r;
    struct cred_req cr = {"DELETE", 0, c->now_ms() + c->request_timeout_ms};
    int rc = send_cred(c, l, &cr, &r, em);
    if (rc == 0) {
        if (r.status != 204 && r.status != 200)
            rc = tn_client_map_error(r.status, r.body, r.body_len, NULL, em);
        tn_client_http_resp_release(&r);
    }
    (void)pthread_mutex_lock(&c->mu);
    l->end_rc = rc;
    l->release_done = true;
    tn_sched_note_locked(c, l);
    (void)pthread_mutex_unlock(&c->mu);
    return rc;
}
