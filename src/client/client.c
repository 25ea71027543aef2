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
#include "common/url.h"

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
    o->keepalive_connections = TN_CLIENT_KEEPALIVE_CONNECTIONS;
}

/* http:// or https://, then a host and port common/url.h takes. */
static bool is_server_url(const char *s)
{
    struct tn_url u;
    return tn_url_parse(s, strlen(s), 80, 0, &u) == 0 &&
           (tn_url_is_scheme(&u, "http") || tn_url_is_scheme(&u, "https"));
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
        if (u == NULL || !is_server_url(u)) {
            tn_errmsg_set(em,
                          "server URL \"%s\" must be http[s]://HOST[:PORT]"
                          "[/PATH] (an IPv6 address in brackets)",
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
    if (o->keepalive_connections > TN_CLIENT_KEEPALIVE_CONNECTIONS_MAX) {
        tn_errmsg_set(em, "keepalive_connections must be at most %d",
                      TN_CLIENT_KEEPALIVE_CONNECTIONS_MAX);
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

static void init_sync(struct tn_client *c)
{
    (void)pthread_mutex_init(&c->mu, NULL);
    (void)pthread_mutex_init(&c->http_mu, NULL);
    tn_sched_init(c);
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
    c->ka_conns = o->keepalive_connections != 0
                      ? o->keepalive_connections
                      : TN_CLIENT_KEEPALIVE_CONNECTIONS;
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
    init_sync(c);
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
    tn_client_wake_locked(c);
    (void)pthread_mutex_unlock(&c->mu);
    if (started)
        (void)pthread_join(c->thread, NULL);
    tn_client_events_join(c);
    TN_ASSERT(c->n_leases == 0 && c->n_sessions == 0);
    tn_xfer_pool_release(&c->ka);
    tn_sched_release(c);
    tn_client_http_release(&c->http);
    tn_client_http_release(&c->ka_http);
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

int tn_client_call(struct tn_client *c, const struct tn_client_call *a,
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

int tn_client_parse_ok(const struct tn_client_http_resp *r, json_t **out,
                       struct tn_errmsg *em)
{
    int rc = tn_json_parse_object(r->body, r->body_len, false, out, em);
    return rc < 0 ? TN_EPROTO : TN_OK;
}

/* Random bytes of the request_id drawn for an acquire without one. */
#define REQUEST_ID_BYTES 16

int tn_client_draw_request_id(char out[2 * REQUEST_ID_BYTES + 1])
{
    uint8_t b[REQUEST_ID_BYTES] = {0};
    if (tn_rand_small(b, sizeof(b)) < 0)
        return TN_EIO;
    tn_hex_encode(b, sizeof(b), out);
    return TN_OK;
}

json_t *tn_client_acquire_body(const struct tn_client *c,
                               const struct tn_acquire_args *a,
                               const char *request_id,
                               const struct tn_session *s)
{
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    /* Under a session the session's owner, unless it was adopted (its
     * owner unknown here). */
    const char *owner = a->owner_id != NULL                   ? a->owner_id
                        : s != NULL && s->owner_id[0] != '\0' ? s->owner_id
                                                              : c->owner_id;
    int bad = json_object_set_new(o, "name", json_string(a->name));
    bad |= json_object_set_new(o, "owner_id", json_string(owner));
    if (a->ttl_ms > 0)
        bad |= json_object_set_new(o, "ttl_ms", json_integer(a->ttl_ms));
    if (a->wait_ms > 0)
        bad |= json_object_set_new(o, "wait_ms", json_integer(a->wait_ms));
    bad |= json_object_set_new(o, "request_id", json_string(request_id));
    if (a->lock_delay_ms > 0)
        bad |= json_object_set_new(o, "lock_delay_ms",
                                   json_integer(a->lock_delay_ms));
    if (s != NULL) {
        bad |= json_object_set_new(o, "session_id", json_string(s->id));
        bad |= json_object_set_new(o, "session_secret", json_string(s->secret));
    }
    if (bad != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
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

/* Every acquire carries a request_id, the caller's or one drawn here: the
 * transport may send it again after a 503, which does not prove that
 * nothing was done (src/client/http.c); with the same request_id the next
 * server answers the grant the first one made, not 409. */
int tn_client_post_acquire(struct tn_client *c, const struct tn_acquire_args *a,
                           struct tn_session *s, const char *owner,
                           struct tn_lease **out,
                           struct tn_lease_info *holder_out,
                           struct tn_errmsg *em)
{
    char drawn[2 * REQUEST_ID_BYTES + 1];
    const char *rid = a->request_id != NULL ? a->request_id : drawn;
    if (a->request_id == NULL && tn_client_draw_request_id(drawn) < 0)
        return TN_EIO;
    json_t *body = tn_client_acquire_body(c, a, rid, s);
    if (body == NULL)
        return TN_ENOMEM;
    struct tn_client_http_resp r;
    struct tn_client_call ca = {"POST", "/v1/leases", body, a->wait_ms};
    int rc = tn_client_call(c, &ca, &r, em);
    if (rc < 0)
        return rc;
    json_t *o = NULL;
    if (r.status == 200 || r.status == 201)
        rc = tn_client_parse_ok(&r, &o, em);
    else
        rc = tn_client_map_error(r.status, r.body, r.body_len, holder_out, em);
    if (o != NULL) {
        /* a->ttl_ms is 0 under a session (the callers check it) */
        struct tn_grant_in in = {a->name, owner, a->ttl_ms, r.sent_ms, s};
        rc = tn_client_grant_lease(c, o, &in, out, em);
        json_decref(o);
    }
    tn_client_http_resp_release(&r);
    return rc;
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
    rc = tn_client_post_acquire(c, a, NULL, "", out, holder_out, em);
    if (rc == TN_OK && a->wait_ms > 0)
        refresh_waited(c, *out);
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
    struct tn_client_call ca = {"DELETE", path, NULL, 0};
    rc = tn_client_call(c, &ca, &r, em);
    tn_free(path);
    if (rc < 0)
        return rc;
    if (r.status != 204 && r.status != 200)
        rc = tn_client_map_error(r.status, r.body, r.body_len, NULL, em);
    tn_client_http_resp_release(&r);
    return rc;
}
