/* SPDX-License-Identifier: MIT */
/* The client API: options, acquire, renew, release (the read-only queries:
 * list.c).
 * Requests from callers go through one reused connection under http_mu; the
 * keepalive thread (renew.c) has its own.  Safe time is counted from the
 * monotonic instant taken just before a request was sent and never grows
 * back once it has run out. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <tenure/client.h>

#include "client/client_internal.h"
#include "common/alloc.h"
#include "common/assert.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/rand.h"

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_OK;

static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

void tn_client_options_init(struct tn_client_options *o)
{
    memset(o, 0, sizeof(*o));
    o->connect_timeout_ms = 1000;
    o->request_timeout_ms = 5000;
    o->safety_margin_ms = -1;
}

static int check_options(const struct tn_client_options *o,
                         struct tn_errmsg *em)
{
    if (o->n_urls == 0 || o->n_urls > TN_CLIENT_MAX_URLS) {
        tn_errmsg_set(em, "between 1 and %d server URLs are needed",
                      TN_CLIENT_MAX_URLS);
        return TN_EINVAL;
    }
    for (size_t i = 0; i < o->n_urls; i++) {
        const char *u = o->urls[i];
        if (u == NULL ||
            (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0)) {
            tn_errmsg_set(em, "server URL \"%s\" must start with http://",
                          u != NULL ? u : "(null)");
            return TN_EINVAL;
        }
    }
    const char *ev = o->events_url;
    if (ev != NULL && !tn_client_events_redis_url_ok(ev)) {
        tn_errmsg_set(em, "events_url must be redis[s]://HOST:PORT[/DB]/STREAM"
                          "[?tls_KEY=VALUE&...]");
        return TN_EINVAL;
    }
    if (o->connect_timeout_ms <= 0 || o->request_timeout_ms <= 0) {
        tn_errmsg_set(em, "timeouts must be positive");
        return TN_EINVAL;
    }
    if (o->owner_id != NULL &&
        (o->owner_id[0] == '\0' || strlen(o->owner_id) > TN_CLIENT_OWNER_MAX)) {
        tn_errmsg_set(em, "owner_id must be 1 to %d bytes",
                      TN_CLIENT_OWNER_MAX);
        return TN_EINVAL;
    }
    return TN_OK;
}

static char *default_owner(void)
{
    char host[64] = {0};
    if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0')
        memcpy(host, "localhost", sizeof("localhost"));
    struct tn_buf b;
    tn_buf_init(&b, TN_CLIENT_OWNER_MAX);
    if (tn_buf_printf(&b, "%s:%ld", host, (long)getpid()) < 0) {
        tn_buf_release(&b);
        return NULL;
    }
    return b.data;
}

static int init_sync(struct tn_client *c)
{
    int rc = tn_clock_cond_init(&c->cond);
    if (rc < 0)
        return rc;
    (void)pthread_mutex_init(&c->mu, NULL);
    (void)pthread_mutex_init(&c->http_mu, NULL);
    return TN_OK;
}

static int init_fields(struct tn_client *c, const struct tn_client_options *o)
{
    c->owner_id =
        o->owner_id != NULL ? tn_strdup(o->owner_id) : default_owner();
    if (c->owner_id == NULL)
        return TN_ENOMEM;
    if (o->auth_token != NULL) {
        struct tn_buf b;
        tn_buf_init(&b, 4096);
        if (tn_buf_printf(&b, "Authorization: Bearer %s", o->auth_token) < 0)
            return TN_EINVAL;
        c->auth_header = b.data;
    }
    const char *files[3] = {o->ca_file, o->cert_file, o->key_file};
    for (size_t i = 0; i < 3; i++) {
        if (files[i] != NULL && (c->tls_files[i] = tn_strdup(files[i])) == NULL)
            return TN_ENOMEM;
    }
    if (o->events_url != NULL &&
        (c->events_url = tn_strdup(o->events_url)) == NULL)
        return TN_ENOMEM;
    c->request_timeout_ms = o->request_timeout_ms;
    c->safety_margin_ms = o->safety_margin_ms;
    c->log = o->log;
    c->log_ud = o->log_ud;
    c->now_ms = tn_clock_mono_ms;
    /* Both connections use our own copies of the TLS file names. */
    c->opts = *o;
    c->opts.ca_file = c->tls_files[0];
    c->opts.cert_file = c->tls_files[1];
    c->opts.key_file = c->tls_files[2];
    c->opts.events_url = c->events_url;
    int rc = tn_client_http_init(&c->http, &c->opts, c->auth_header, NULL,
                                 tn_clock_mono_ms);
    /* The renewer's connection is built later from our own URL copies. */
    for (size_t i = 0; i < TN_CLIENT_MAX_URLS; i++)
        c->opts.urls[i] = c->http.urls[i];
    c->opts.owner_id = NULL;
    c->opts.auth_token = NULL;
    return rc;
}

int tn_client_new(const struct tn_client_options *o, struct tn_client **out,
                  struct tn_errmsg *em)
{
    *out = NULL;
    int rc = check_options(o, em);
    if (rc < 0)
        return rc;
    (void)pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK) {
        tn_errmsg_set(em, "libcurl failed to initialise");
        return TN_EIO;
    }
    struct tn_client *c = tn_calloc(1, sizeof(*c));
    if (c == NULL)
        return TN_ENOMEM;
    atomic_init(&c->abort_io, false);
    rc = init_sync(c);
    if (rc < 0) {
        tn_free(c);
        return rc;
    }
    rc = init_fields(c, o);
    if (rc < 0) {
        tn_client_free(c);
        return rc;
    }
    *out = c;
    return TN_OK;
}

void tn_client_free(struct tn_client *c)
{
    if (c == NULL)
        return;
    (void)pthread_mutex_lock(&c->mu);
    bool started = c->thread_started;
    c->stopping = true;
    atomic_store(&c->abort_io, true);
    (void)pthread_cond_signal(&c->cond);
    (void)pthread_mutex_unlock(&c->mu);
    if (started)
        (void)pthread_join(c->thread, NULL);
    tn_client_events_join(c);
    TN_ASSERT(c->n_leases == 0);
    tn_client_http_release(&c->http);
    tn_client_http_release(&c->ka_http);
    (void)pthread_cond_destroy(&c->cond);
    (void)pthread_mutex_destroy(&c->mu);
    (void)pthread_mutex_destroy(&c->http_mu);
    tn_free(c->owner_id);
    tn_free(c->auth_header);
    for (size_t i = 0; i < 3; i++)
        tn_free(c->tls_files[i]);
    tn_free(c->events_url);
    tn_free(c);
}

/* ---- requests ---- */

struct call_args {
    const char *method; /* HTTP method */
    const char *path;   /* escaped path */
    json_t *body;       /* consumed; may be NULL */
    int64_t extra_ms;   /* added to the request timeout (wait_ms) */
};

/* Send on the callers' connection, under http_mu. */
static int call(struct tn_client *c, const struct call_args *a,
                struct tn_client_http_resp *resp, struct tn_errmsg *em)
{
    char *text = NULL;
    if (a->body != NULL) {
        text = tn_json_dump(a->body, NULL);
        json_decref(a->body);
        if (text == NULL)
            return TN_ENOMEM;
    }
    (void)pthread_mutex_lock(&c->http_mu);
    struct tn_client_http_req req = {a->method, a->path, text, 0};
    req.deadline_ms = c->now_ms() + c->request_timeout_ms + a->extra_ms;
    int rc = tn_client_http_do(&c->http, &req, resp, em);
    (void)pthread_mutex_unlock(&c->http_mu);
    tn_free(text);
    return rc;
}

static int parse_ok(const struct tn_client_http_resp *r, json_t **out,
                    struct tn_errmsg *em)
{
    int rc = tn_json_parse_object(r->body, r->body_len, false, out, em);
    return rc < 0 ? TN_EPROTO : TN_OK;
}

/* Random bytes of the request_id drawn for an acquire without one. */
#define REQUEST_ID_BYTES 16

static json_t *acquire_body(const struct tn_client *c,
                            const struct tn_acquire_args *a,
                            const char *request_id)
{
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    const char *owner = a->owner_id != NULL ? a->owner_id : c->owner_id;
    int bad = json_object_set_new(o, "name", json_string(a->name));
    bad |= json_object_set_new(o, "owner_id", json_string(owner));
    bad |= json_object_set_new(o, "ttl_ms", json_integer(a->ttl_ms));
    if (a->wait_ms > 0)
        bad |= json_object_set_new(o, "wait_ms", json_integer(a->wait_ms));
    bad |= json_object_set_new(o, "request_id", json_string(request_id));
    if (a->lock_delay_ms > 0)
        bad |= json_object_set_new(o, "lock_delay_ms",
                                   json_integer(a->lock_delay_ms));
    if (bad != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

struct grant {
    const char *owner;     /* borrowed from the JSON */
    const char *secret;    /* borrowed */
    const char *proof;     /* borrowed or NULL */
    int64_t token;         /* fencing token */
    int64_t ttl_ms;        /* granted TTL */
    int64_t expires_in_ms; /* time left at the server */
};

static int decode_grant(json_t *o, int64_t ttl_asked, struct grant *g,
                        struct tn_errmsg *em)
{
    size_t n = 0;
    memset(g, 0, sizeof(*g));
    g->ttl_ms = ttl_asked;
    if (tn_json_get_int(o, "token", 0, INT64_MAX, &g->token, em) < 0 ||
        tn_json_get_str(o, "lease_secret", &g->secret, &n, em) < 0 ||
        tn_json_get_int(o, "expires_in_ms", 0, INT64_MAX, &g->expires_in_ms,
                        em) < 0) {
        tn_errmsg_set(em, "grant without token, lease_secret or expiry");
        return TN_EPROTO;
    }
    (void)tn_json_get_int(o, "ttl_ms", 1, INT64_MAX, &g->ttl_ms, NULL);
    if (tn_json_get_str(o, "owner_id", &g->owner, &n, NULL) < 0)
        g->owner = "";
    if (tn_json_get_str(o, "proof", &g->proof, &n, NULL) < 0)
        g->proof = NULL;
    return TN_OK;
}

static int make_lease(struct tn_client *c, const struct tn_acquire_args *a,
                      const struct tn_client_http_resp *r,
                      struct tn_lease **out, struct tn_errmsg *em)
{
    json_t *o = NULL;
    int rc = parse_ok(r, &o, em);
    if (rc < 0)
        return rc;
    struct grant g;
    rc = decode_grant(o, a->ttl_ms, &g, em);
    if (rc < 0)
        goto out_json;
    struct tn_lease *l = tn_client_lease_new(c, a->name, g.owner, g.secret);
    if (l == NULL ||
        (g.proof != NULL && (l->proof = tn_strdup(g.proof)) == NULL)) {
        tn_lease_free(l);
        rc = TN_ENOMEM;
        goto out_json;
    }
    l->token = (uint64_t)g.token;
    (void)pthread_mutex_lock(&c->mu);
    tn_lease_granted_locked(l, r->sent_ms, g.ttl_ms, g.expires_in_ms);
    (void)pthread_mutex_unlock(&c->mu);
    *out = l;
out_json:
    json_decref(o);
    return rc;
}

/* A waiting acquire's safe time counts from its send, as every request's
 * does, and so the wait used it up: a grant after waiting the TTL had none
 * left.  When more than half of it went, one renew (safe time from its own
 * send) restarts the count; if the renew fails the lease stays as the grant
 * left it (run out, or lost when the server says so).  Meanwhile its safe
 * time is unknown, as an adopted lease's: renewable, never writable. */
static void refresh_waited(struct tn_client *c, struct tn_lease *l)
{
    (void)pthread_mutex_lock(&c->mu);
    int64_t left = l->deadline_ms - c->now_ms();
    bool spent =
        l->state == TN_LEASE_HELD && 2 * left < l->deadline_ms - l->sent_ms;
    if (spent)
        l->deadline_known = false;
    (void)pthread_mutex_unlock(&c->mu);
    if (!spent)
        return;
    struct tn_errmsg em = {0};
    (void)tn_client_renew(c, l, 0, &em);
    (void)pthread_mutex_lock(&c->mu);
    l->deadline_known = true; /* the grant's count, or the renew's */
    (void)pthread_mutex_unlock(&c->mu);
}

int tn_client_acquire(struct tn_client *c, const struct tn_acquire_args *a,
                      struct tn_lease **out, struct tn_lease_info *holder_out,
                      struct tn_errmsg *em)
{
    *out = NULL;
    int rc = tn_client_valid_name(a->name, em);
    if (rc < 0)
        return rc;
    if (a->ttl_ms <= 0 || a->wait_ms < 0 || a->lock_delay_ms < 0) {
        tn_errmsg_set(em, "ttl_ms must be positive, wait and delay >= 0");
        return TN_EINVAL;
    }
    /* Every acquire carries a request_id, the caller's or one drawn here:
     * the transport may send it again after a 503, which does not prove
     * that nothing was done (src/client/http.c); with the same request_id
     * the next server answers the grant the first one made, not 409. */
    char drawn[2 * REQUEST_ID_BYTES + 1];
    const char *rid = a->request_id != NULL ? a->request_id : drawn;
    uint8_t b[REQUEST_ID_BYTES] = {0};
    if (a->request_id == NULL && tn_rand_small(b, sizeof(b)) < 0)
        return TN_EIO;
    tn_hex_encode(b, sizeof(b), drawn);
    json_t *body = acquire_body(c, a, rid);
    if (body == NULL)
        return TN_ENOMEM;
    struct tn_client_http_resp r;
    struct call_args ca = {"POST", "/v1/leases", body, a->wait_ms};
    rc = call(c, &ca, &r, em);
    if (rc < 0)
        return rc;
    if (r.status == 200 || r.status == 201)
        rc = make_lease(c, a, &r, out, em);
    else
        rc = tn_client_map_error(r.status, r.body, r.body_len, holder_out, em);
    tn_client_http_resp_release(&r);
    if (rc == TN_OK && a->wait_ms > 0)
        refresh_waited(c, *out);
    return rc;
}

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

struct cred_req {
    const char *method;  /* PATCH or DELETE */
    int64_t ttl_ms;      /* ttl_ms to send, 0 = none */
    int64_t deadline_ms; /* monotonic end of the request */
};

/* Send l's credentials (renew or release) over h. */
static int send_cred(struct tn_client_http *h, const struct tn_lease *l,
                     const struct cred_req *cr, struct tn_client_http_resp *r,
                     struct tn_errmsg *em)
{
    char *path = tn_client_lease_path(l->name, "");
    json_t *body = cred_body(l, cr->ttl_ms);
    char *text = body != NULL ? tn_json_dump(body, NULL) : NULL;
    json_decref(body);
    int rc = TN_ENOMEM;
    struct tn_client_http_req req = {cr->method, path, text, cr->deadline_ms};
    if (path != NULL && text != NULL)
        rc = tn_client_http_do(h, &req, r, em);
    tn_free(path);
    tn_free(text);
    return rc;
}

int tn_client_renew_raw(struct tn_client_http *h, const struct tn_lease *l,
                        struct tn_renew_io *io, struct tn_errmsg *em)
{
    struct tn_client_http_resp r;
    struct cred_req cr = {"PATCH", io->ttl_send_ms, io->deadline_ms};
    int rc = send_cred(h, l, &cr, &r, em);
    if (rc < 0)
        return rc;
    if (r.status != 200) {
        rc = tn_client_map_error(r.status, r.body, r.body_len, NULL, em);
        goto out_resp;
    }
    json_t *o = NULL;
    rc = parse_ok(&r, &o, em);
    if (rc < 0)
        goto out_resp;
    io->sent_ms = r.sent_ms;
    if (io->ttl_send_ms > 0)
        io->ttl_ms = io->ttl_send_ms;
    (void)tn_json_get_int(o, "ttl_ms", 1, INT64_MAX, &io->ttl_ms, NULL);
    if (tn_json_get_int(o, "expires_in_ms", 0, INT64_MAX, &io->expires_in_ms,
                        em) < 0) {
        tn_errmsg_set(em, "renew answer without expires_in_ms");
        rc = TN_EPROTO;
    }
    json_decref(o);
out_resp:
    tn_client_http_resp_release(&r);
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

static int renew_allowed_locked(struct tn_client *c, struct tn_lease *l,
                                struct tn_errmsg *em)
{
    if (l->deadline_known)
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
    (void)pthread_mutex_lock(&c->http_mu);
    ro.deadline_ms = c->now_ms() + c->request_timeout_ms;
    rc = tn_client_renew_raw(&c->http, l, &ro, em);
    (void)pthread_mutex_unlock(&c->http_mu);
    (void)pthread_mutex_lock(&c->mu);
    rc = tn_lease_apply_renew_locked(l, rc, &ro);
    if (rc == TN_ELOST || rc == TN_EFORBIDDEN)
        (void)pthread_cond_signal(&c->cond);
    (void)pthread_mutex_unlock(&c->mu);
    return rc;
}

int tn_client_release(struct tn_client *c, struct tn_lease *l,
                      struct tn_errmsg *em)
{
    (void)pthread_mutex_lock(&c->mu);
    /* From here on the keepalive thread never sends a renew for l. */
    l->state = TN_LEASE_RELEASED;
    (void)pthread_mutex_unlock(&c->mu);
    struct tn_client_http_resp r;
    (void)pthread_mutex_lock(&c->http_mu);
    struct cred_req cr = {"DELETE", 0, c->now_ms() + c->request_timeout_ms};
    int rc = send_cred(&c->http, l, &cr, &r, em);
    (void)pthread_mutex_unlock(&c->http_mu);
    if (rc == 0) {
        if (r.status != 204 && r.status != 200)
            rc = tn_client_map_error(r.status, r.body, r.body_len, NULL, em);
        tn_client_http_resp_release(&r);
    }
    (void)pthread_mutex_lock(&c->mu);
    l->end_rc = rc;
    l->release_done = true;
    (void)pthread_cond_signal(&c->cond);
    (void)pthread_mutex_unlock(&c->mu);
    return rc;
}

int tn_client_force_release(struct tn_client *c, const char *name,
                            struct tn_errmsg *em)
{
    int rc = tn_client_valid_name(name, em);
    if (rc < 0)
        return rc;
    char *path = tn_client_lease_path(name, "?force=true");
    if (path == NULL)
        return TN_ENOMEM;
    struct tn_client_http_resp r;
    struct call_args ca = {"DELETE", path, NULL, 0};
    rc = call(c, &ca, &r, em);
    tn_free(path);
    if (rc < 0)
        return rc;
    if (r.status != 204 && r.status != 200)
        rc = tn_client_map_error(r.status, r.body, r.body_len, NULL, em);
    tn_client_http_resp_release(&r);
    return rc;
}
