/* SPDX-License-Identifier: MIT */
/* The request pipeline: the route table (routes.c) decides routing,
 * authentication and authorization; this file runs them in the documented
 * order, holds the calls, and sends every reply. */
#include "api.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <tenure/err.h>

#include "api_int.h"
#include "common/alloc.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "errmap.h"
#include "reply.h"
#include "route.h"

#define REPLY_MAX_BYTES (4u << 20)

struct tn_api *tn_api_new(const struct tn_api_config *cfg)
{
    struct tn_api *api = tn_calloc(1, sizeof(*api));
    if (api != NULL)
        api->cfg = *cfg;
    return api;
}

void tn_api_free(struct tn_api *api)
{
    if (api == NULL)
        return;
    tn_auth_free(api->auth);
    while (api->spare != NULL) {
        struct tn_api_call *c = api->spare;
        api->spare = c->next_spare;
        tn_free(c);
    }
    tn_free(api);
}

void tn_api_set_auth(struct tn_api *api, struct tn_auth *auth)
{
    tn_auth_free(api->auth);
    api->auth = auth;
}

int tn_api_authorize(struct tn_api_call *c, enum tn_auth_action act,
                     const char *name, size_t len)
{
    if (c->principal == NULL)
        return TN_OK;
    return tn_auth_authorize(c->principal, act, name, len);
}

/* Calls are about 1.4 KB, past what malloc keeps per thread for quick
 * reuse; finished ones wait on a list for the next request instead. */
#define SPARE_CALLS 256

static struct tn_api_call *call_new(struct tn_api *api)
{
    struct tn_api_call *c = api->spare;
    if (c == NULL)
        return tn_calloc(1, sizeof(*c));
    api->spare = c->next_spare;
    api->n_spare--;
    memset(c, 0, sizeof(*c));
    return c;
}

void tn_api_call_free(struct tn_api_call *c)
{
    struct tn_api *api = c->api;
    tn_store_result_release(&c->result);
    tn_auth_free(c->auth);
    if (c->batch != NULL)
        c->batch_free(c->batch);
    if (api == NULL || api->n_spare >= SPARE_CALLS) {
        tn_free(c);
        return;
    }
    c->next_spare = api->spare;
    api->spare = c;
    api->n_spare++;
}

void tn_api_set_draining(struct tn_api *api, bool draining)
{
    api->draining = draining;
}

void tn_api_account(struct tn_api_call *c, unsigned status)
{
    struct tn_api *api = c->api;
    unsigned cls = status / 100;
    api->requests[c->slot][cls < 6 ? cls : 0]++;
    int64_t us = (tn_clock_mono_ns() - c->start_ns) / 1000;
    tn_metrics_hist_observe(api->lat[c->slot], TN_API_LAT_BUCKETS, 50,
                            us > 0 ? (uint64_t)us : 0);
    api->lat_sum[c->slot] += (double)us / 1e6;
}

void tn_api_send_typed(struct tn_api_call *c, unsigned status, const char *type,
                       const void *body, size_t len)
{
    tn_api_account(c, status);
    tn_http_reply(c->req, status, type, body, len, 0);
    tn_api_call_free(c);
}

void tn_api_send(struct tn_api_call *c, unsigned status, const struct tn_buf *b,
                 int64_t retry_after_ms)
{
    tn_api_account(c, status);
    tn_http_reply(c->req, status, "application/json",
                  b->data != NULL ? b->data : "", b->len,
                  retry_after_ms > 0 ? (retry_after_ms + 999) / 1000 : 0);
    tn_api_call_free(c);
}

void tn_api_fail(struct tn_api_call *c, int rc, const char *message)
{
    const struct tn_errmap_entry *e = tn_errmap_find(rc);
    struct tn_buf b;
    tn_buf_init(&b, REPLY_MAX_BYTES);
    (void)tn_buf_append(&b, "{", 1);
    tn_reply_kv_str(&b, "error", e->code, true);
    tn_reply_kv_str(&b, "message", message, false);
    (void)tn_buf_append(&b, "}", 1);
    int64_t retry =
        e->status == 503 || e->status == 429
            ? (c->result.retry_after_ms > 0 ? c->result.retry_after_ms : 1000)
            : 0;
    tn_api_send(c, e->status, &b, retry);
    tn_buf_release(&b);
}

const char *const tn_api_limits[TN_API_N_LIMITS] = {"leases",
                                                    "names",
                                                    "waiters",
                                                    "waiters_per_name",
                                                    "subscribers",
                                                    "reserved_connections",
                                                    "waiters_per_address",
                                                    "waiters_per_principal",
                                                    "sessions"};

void tn_api_fail_capacity(struct tn_api_call *c, const char *limit)
{
    size_t i = 0;
    while (i < TN_API_N_LIMITS &&
           (limit == NULL || strcmp(tn_api_limits[i], limit) != 0))
        i++;
    if (i < TN_API_N_LIMITS)
        c->api->capacity_refused[i]++;
    char msg[128];
    (void)snprintf(msg, sizeof(msg),
                   "server at capacity (--max-%s), retry later",
                   limit != NULL ? limit : "?");
    for (char *p = msg; *p != '\0'; p++) {
        if (*p == '_')
            *p = '-'; /* the option's spelling */
    }
    tn_api_fail(c, TN_ECAPACITY, msg);
}

void tn_api_fail_method(struct tn_api_call *c, const char *methods)
{
    char msg[96];
    (void)snprintf(msg, sizeof(msg), "allowed methods: %s", methods);
    tn_http_req_set_allow(c->req, methods);
    tn_api_fail(c, TN_EMETHOD, msg);
}

void tn_api_send_text(struct tn_api_call *c, unsigned status, const char *json)
{
    struct tn_buf b;
    tn_buf_init(&b, REPLY_MAX_BYTES);
    (void)tn_buf_append(&b, json, strlen(json));
    tn_api_send(c, status, &b, status == 503 ? 1000 : 0);
    tn_buf_release(&b);
}

/* The query arguments of a request, for tn_route_query. */
static const char *req_query(void *req, const char *key, size_t *len_out)
{
    return tn_http_req_query(req, key, len_out);
}

/* Who is asking: a verified client certificate's CN (--tls-client-ca) or
 * a bearer token (--auth-file).  Runs once per request.  Replies 401 and
 * returns TN_EUNAUTH when neither is good. */
static int authenticate(struct tn_api_call *c)
{
    struct tn_api *api = c->api;
    c->authenticated = true;
    if (api->auth != NULL)
        c->auth = tn_auth_ref(api->auth);
    if (api->cfg.client_certs) {
        char cn[TN_AUTH_NAME_MAX_BYTES + 1];
        if (tn_http_req_peer_cn(c->req, cn, sizeof(cn)) < 0) {
            tn_api_fail(c, TN_EUNAUTH,
                        "a client certificate signed by the "
                        "configured CA is required");
            return TN_EUNAUTH;
        }
        if (c->auth != NULL && (c->principal = tn_auth_find_principal(
                                    c->auth, cn, strlen(cn))) == NULL) {
            tn_api_fail(c, TN_EUNAUTH,
                        "the certificate's CN names no principal");
            return TN_EUNAUTH;
        }
        return TN_OK;
    }
    if (c->auth != NULL &&
        tn_auth_authenticate(c->auth,
                             tn_http_req_header(c->req, "Authorization"),
                             &c->principal) < 0) {
        tn_api_fail(c, TN_EUNAUTH,
                    "a valid \"Authorization: Bearer <token>\" is required");
        return TN_EUNAUTH;
    }
    return TN_OK;
}

int tn_api_admit(struct tn_api_call *c, const struct tn_route_match *m,
                 const char *name, size_t len)
{
    const struct tn_route *row = m->row;
    if (c->admitted)
        return TN_OK;
    bool force = (row->flags & TN_ROUTE_FORCE_ADMIN) != 0 && m->force;
    int rc = TN_OK;
    if (force || row->target != TN_ROUTE_SOME)
        rc =
            tn_api_authorize(c, force ? TN_AUTH_ADMIN : row->action, name, len);
    else if (c->principal != NULL)
        rc = tn_auth_authorize_some(c->principal, row->action);
    if (rc < 0) {
        tn_api_fail(c, TN_EFORBIDDEN,
                    !force                         ? row->forbidden
                    : row->target == TN_ROUTE_SOME ? "force end is for admins"
                                                   : "force release is for "
                                                     "admins");
        return TN_EFORBIDDEN;
    }
    c->admitted = true;
    return TN_OK;
}

static struct tn_api_call *call_start(struct tn_api *api,
                                      struct tn_http_req *req)
{
    struct tn_api_call *c = call_new(api);
    if (c == NULL)
        return NULL;
    c->api = api;
    c->req = req;
    c->start_ns = tn_clock_mono_ns();
    return c;
}

/* A call decided at the headers whose body never came (its client left):
 * freed with its request. */
static void call_drop(void *c)
{
    tn_api_call_free(c);
}

/* The call of req: the one an earlier step (the headers, the body's cap)
 * left on it, now the caller's, or a new one.  NULL when out of memory. */
static struct tn_api_call *call_take(struct tn_api *api,
                                     struct tn_http_req *req)
{
    struct tn_api_call *c = tn_http_req_take_app(req);
    return c != NULL ? c : call_start(api, req);
}

/* Match c's path against the route table once, at the first step that
 * needs it; the later steps of the request read c->route. */
static int call_route(struct tn_api_call *c)
{
    if (!c->routed) {
        c->route_rc = tn_route_path(tn_http_req_path(c->req), &c->route);
        c->routed = true;
    }
    return c->route_rc;
}

/* What the headers decide of a routed, non-public request: who asks,
 * and for a row that names its lease in the path, whether the principal
 * may touch it (an acquire names it in the body).  False when answered
 * (the call is then freed). */
static bool admit_headers(struct tn_api_call *c, struct tn_route_match *m)
{
    c->slot = tn_route_slot(m->path_row);
    if (authenticate(c) < 0)
        return false; /* answered 401: the body is never read */
    if (tn_route_method(m, tn_http_req_method(c->req)) == 0 &&
        (m->row->target == TN_ROUTE_PATH_NAME ||
         m->row->target == TN_ROUTE_SOME) &&
        (m->row->flags & TN_ROUTE_BODY) != 0) {
        (void)tn_route_query(m, req_query, c->req); /* a bad one: 400 later */
        if (tn_api_admit(c, m, m->name, m->name_len) < 0)
            return false; /* answered 403 */
    }
    return true;
}

bool tn_api_headers(void *arg, struct tn_http_req *req)
{
    struct tn_api *api = arg;
    if (api->auth == NULL && !api->cfg.client_certs)
        return true;
    struct tn_api_call *c = call_take(api, req);
    if (c == NULL)
        return true; /* the handler answers 500 */
    if (call_route(c) == TN_OK &&
        (c->route.path_row->flags & TN_ROUTE_PUBLIC) == 0 &&
        !admit_headers(c, &c->route))
        return false; /* answered: the body is never read */
    tn_http_req_set_app(req, c, call_drop); /* for the handler */
    return true;
}

size_t tn_api_body_cap(void *arg, struct tn_http_req *req)
{
    struct tn_api *api = arg;
    struct tn_api_call *c = call_take(api, req);
    if (c == NULL)
        return 0; /* the usual cap; the handler answers 500 */
    tn_http_req_set_app(req, c, call_drop); /* for the handler */
    struct tn_route_match *m = &c->route;
    if (call_route(c) < 0 || tn_route_method(m, tn_http_req_method(req)) < 0 ||
        (m->row->flags & TN_ROUTE_BATCH) == 0)
        return 0; /* the usual cap */
    return api->cfg.max_batch_body_bytes;
}

/* Bodies are JSON: application/json, none, or form-encoded (curl -d). */
static bool media_ok(struct tn_http_req *req)
{
    const char *ct = tn_http_req_header(req, "Content-Type");
    if (ct == NULL)
        return true;
    size_t n = strcspn(ct, "; ");
    return (n == 16 && strncasecmp(ct, "application/json", n) == 0) ||
           (n == 33 &&
            strncasecmp(ct, "application/x-www-form-urlencoded", n) == 0);
}

/* What the path alone decides: who asks, whether the query is valid,
 * the media type and draining.  False when answered. */
static bool admit_path(struct tn_api_call *c, const struct tn_route *path)
{
    unsigned f = path->flags;
    if ((f & TN_ROUTE_PUBLIC) == 0 && !c->authenticated && authenticate(c) < 0)
        return false;
    if ((f & TN_ROUTE_RAW_QUERY) == 0 && !tn_http_req_query_valid(c->req)) {
        tn_api_fail(c, TN_EINVAL,
                    "query arguments must be validly percent-encoded");
        return false;
    }
    if ((f & TN_ROUTE_WORK) == 0)
        return true;
    if (!media_ok(c->req)) {
        tn_api_fail(c, TN_EMEDIA, "request bodies must be application/json");
        return false;
    }
    if (c->api->draining) {
        tn_api_fail(c, TN_EUNAVAIL, "server is shutting down");
        return false;
    }
    return true;
}

/* The row of the method, and the authorization of a name in the path.
 * False when answered. */
static bool admit_method(struct tn_api_call *c, struct tn_route_match *m)
{
    if (tn_route_method(m, tn_http_req_method(c->req)) < 0) {
        /* Read permission before the method: a reader without it learns
         * nothing of the name, not even which methods it takes. */
        if (tn_route_path_is_read(m->path_row) &&
            tn_api_authorize(c, m->path_row->action, m->name, m->name_len) < 0)
            tn_api_fail(c, TN_EFORBIDDEN, m->path_row->forbidden);
        else
            tn_api_fail_method(c, m->allow_header);
        return false;
    }
    c->row = m->row;
    c->slot = tn_route_slot(m->row);
    return m->row->target != TN_ROUTE_PATH_NAME ||
           (m->row->flags & TN_ROUTE_BODY) != 0 ||
           tn_api_admit(c, m, m->name, m->name_len) == 0;
}

/* A session row's authorization (some prefix, or admin with ?force),
 * which needs its query: decided before its availability, as a path
 * name's is.  False when answered. */
static bool admit_some(struct tn_api_call *c, struct tn_route_match *m)
{
    if (tn_route_query(m, req_query, c->req) < 0) {
        tn_api_fail(c, TN_EINVAL, tn_route_query_message(m->bad_query));
        return false;
    }
    return tn_api_admit(c, m, "", 0) == 0;
}

/* The route's availability, its query and a prefix's authorization, then
 * its handler. */
static void run(struct tn_api_call *c, struct tn_route_match *m)
{
    const struct tn_route *row = m->row;
    if (row->target == TN_ROUTE_SOME && !admit_some(c, m))
        return;
    if (row->is_on != NULL && !row->is_on(c->api)) {
        tn_api_fail(c, row->off_rc != 0 ? row->off_rc : TN_ENOTFOUND,
                    row->off_message);
        return;
    }
    if (tn_route_query(m, req_query, c->req) < 0) {
        tn_api_fail(c, TN_EINVAL, tn_route_query_message(m->bad_query));
        return;
    }
    if (row->target == TN_ROUTE_PREFIX &&
        tn_api_admit(c, m, m->prefix, m->prefix_len) < 0)
        return;
    row->handler(c, m);
}

void tn_api_handle(void *arg, struct tn_http_req *req)
{
    struct tn_api *api = arg;
    struct tn_api_call *c = call_take(api, req);
    if (c == NULL) {
        tn_http_reply(req, 500, "application/json",
                      "{\"error\":\"internal\",\"message\":\"out of memory\"}",
                      48, 0);
        return;
    }
    c->start_ns = tn_clock_mono_ns();
    c->slot = 0; /* a refused request counts under the first route */
    int early = tn_http_req_error(req);
    if (early < 0) {
        tn_api_fail(c, early, tn_http_req_error_message(req));
        return;
    }
    struct tn_route_match *m = &c->route;
    int rc = call_route(c);
    c->slot = tn_route_slot(m->path_row);
    if (rc < 0) {
        tn_api_fail(c, rc,
                    rc != TN_EINVAL ? "no such path"
                    : m->bad_id     ? "session id in path must be 32 "
                                      "lowercase hex digits"
                                    : "lease name in path must be 1-256 bytes "
                                      "of printable UTF-8, percent-encoded");
        return;
    }
    if (admit_path(c, m->path_row) && admit_method(c, m))
        run(c, m);
}
