/* SPDX-License-Identifier: MIT */
/* Routing, media types, health, metrics and the reply path. */
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
#include "events.h"
#include "openapi.h"
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

/* Calls are about 900 bytes, past what malloc keeps per thread for quick
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

static void account(struct tn_api_call *c, unsigned status)
{
    struct tn_api *api = c->api;
    unsigned cls = status / 100;
    api->requests[c->route][cls < 6 ? cls : 0]++;
    int64_t us = (tn_clock_mono_ns() - c->start_ns) / 1000;
    tn_metrics_hist_observe(api->lat[c->route], TN_API_LAT_BUCKETS, 50,
                            us > 0 ? (uint64_t)us : 0);
    api->lat_sum[c->route] += (double)us / 1e6;
}

void tn_api_send_typed(struct tn_api_call *c, unsigned status, const char *type,
                       const void *body, size_t len)
{
    account(c, status);
    tn_http_reply(c->req, status, type, body, len, 0);
    tn_api_call_free(c);
}

static void send_bytes(struct tn_api_call *c, unsigned status, const char *p,
                       size_t len, int64_t retry_after_ms)
{
    account(c, status);
    /* Errors are JSON on every route, /metrics included. */
    const char *type = c->route == TN_ROUTE_METRICS && status == 200
                           ? "text/plain; version=0.0.4"
                           : "application/json";
    tn_http_reply(c->req, status, type, p, len,
                  retry_after_ms > 0 ? (retry_after_ms + 999) / 1000 : 0);
    tn_api_call_free(c);
}

void tn_api_send(struct tn_api_call *c, unsigned status, const struct tn_buf *b,
                 int64_t retry_after_ms)
{
    send_bytes(c, status, b->data != NULL ? b->data : "", b->len,
               retry_after_ms);
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
        e->status == 503
            ? (c->result.retry_after_ms > 0 ? c->result.retry_after_ms : 1000)
            : 0;
    tn_api_send(c, e->status, &b, retry);
    tn_buf_release(&b);
}

const char *const tn_api_limits[TN_API_N_LIMITS] = {
    "leases", "names", "waiters", "waiters_per_name", "subscribers"};

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

static void send_text(struct tn_api_call *c, unsigned status, const char *json)
{
    struct tn_buf b;
    tn_buf_init(&b, REPLY_MAX_BYTES);
    (void)tn_buf_append(&b, json, strlen(json));
    tn_api_send(c, status, &b, status == 503 ? 1000 : 0);
    tn_buf_release(&b);
}

static void print_metrics(struct tn_api *api, struct tn_buf *b)
{
    static const char *const cls[] = {"other", "1xx", "2xx",
                                      "3xx",   "4xx", "5xx"};
    (void)tn_buf_printf(b, "# TYPE tenure_http_requests_total counter\n");
    for (int r = 0; r < TN_ROUTE_COUNT; r++) {
        for (int k = 1; k < 6; k++) {
            if (api->requests[r][k] == 0)
                continue;
            (void)tn_buf_printf(
                b,
                "tenure_http_requests_total{route=\"%s\",code=\"%s\"} %llu\n",
                tn_route_name((enum tn_route)r), cls[k],
                (unsigned long long)api->requests[r][k]);
        }
    }
    (void)tn_buf_printf(b, "# TYPE tenure_http_request_seconds histogram\n");
    for (int r = 0; r < TN_ROUTE_COUNT; r++) {
        char labels[96];
        (void)snprintf(labels, sizeof(labels), "route=\"%s\"",
                       tn_route_name((enum tn_route)r));
        struct tn_metrics_hist m = {.name = "tenure_http_request_seconds",
                                    .labels = labels,
                                    .counts = api->lat[r],
                                    .n = TN_API_LAT_BUCKETS,
                                    .base = 50,
                                    .scale = 1e-6,
                                    .sum = &api->lat_sum[r]};
        tn_metrics_hist_write(b, &m);
    }
    (void)tn_buf_printf(b,
                        "# TYPE tenure_grants_total counter\n"
                        "tenure_grants_total %llu\n"
                        "# TYPE tenure_renews_total counter\n"
                        "tenure_renews_total %llu\n"
                        "# TYPE tenure_releases_total counter\n"
                        "tenure_releases_total %llu\n",
                        (unsigned long long)api->grants,
                        (unsigned long long)api->renews,
                        (unsigned long long)api->releases);
    (void)tn_buf_printf(b, "# TYPE tenure_capacity_refused_total counter\n");
    for (size_t i = 0; i < TN_API_N_LIMITS; i++)
        (void)tn_buf_printf(b,
                            "tenure_capacity_refused_total{limit=\"%s\"} "
                            "%llu\n",
                            tn_api_limits[i],
                            (unsigned long long)api->capacity_refused[i]);
}

void tn_api_set_http(struct tn_api *api, struct tn_http *http)
{
    api->http = http;
}

static void print_http_metrics(struct tn_http *http, struct tn_buf *b)
{
    struct tn_http_stats st;
    tn_http_get_stats(http, &st);
    static const char *const names[] = {
        "tenure_http_connections_accepted_total",
        "tenure_http_connections_evicted_total",
        "tenure_http_connections_refused_total",
        "tenure_http_request_timeouts_total",
        "tenure_http_idle_timeouts_total",
        "tenure_http_protocol_errors_total",
        "tenure_http_early_replies_total",
        "tenure_http_parked_disconnects_total",
        "tenure_http_streams_cut_total"};
    const uint64_t vals[] = {
        st.accepted,         st.evicted,       st.refused,
        st.request_timeouts, st.idle_timeouts, st.protocol_errors,
        st.early_replies,    st.disconnects,   st.streams_cut};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
        (void)tn_buf_printf(b, "# TYPE %s counter\n%s %llu\n", names[i],
                            names[i], (unsigned long long)vals[i]);
    (void)tn_buf_printf(b,
                        "# TYPE tenure_http_connections gauge\n"
                        "tenure_http_connections %llu\n"
                        "# TYPE tenure_http_stream_buffered_bytes gauge\n"
                        "tenure_http_stream_buffered_bytes %llu\n",
                        (unsigned long long)st.open,
                        (unsigned long long)st.stream_bytes);
}

static void handle_ops(struct tn_api_call *c, struct tn_route_match *m)
{
    struct tn_store *s = c->api->cfg.store;
    if (tn_route_method(m, tn_http_req_method(c->req)) < 0) {
        tn_api_fail_method(c, m->allow_header);
        return;
    }
    if (c->route == TN_ROUTE_HEALTHZ) {
        send_text(c, 200, "{\"status\":\"ok\"}");
    } else if (c->route == TN_ROUTE_OPENAPI) {
        send_bytes(c, 200, (const char *)tn_openapi_json, tn_openapi_json_len,
                   0);
    } else if (c->route == TN_ROUTE_READYZ) {
        bool ready = !c->api->draining && s->ops->is_ready(s);
        send_text(c, ready ? 200 : 503,
                  ready ? "{\"status\":\"ready\"}"
                        : "{\"error\":\"unavailable\",\"message\":\"store "
                          "not writable or server draining\"}");
    } else {
        struct tn_buf b;
        tn_buf_init(&b, REPLY_MAX_BYTES);
        print_metrics(c->api, &b);
        s->ops->metrics(s, &b);
        if (c->api->cfg.events != NULL)
            tn_events_metrics(c->api->cfg.events, &b);
        if (c->api->http != NULL)
            print_http_metrics(c->api->http, &b);
        if (c->api->cfg.more_metrics != NULL)
            c->api->cfg.more_metrics(c->api->cfg.more_metrics_ctx, &b);
        tn_api_send(c, 200, &b, 0);
        tn_buf_release(&b);
    }
}

const char *tn_api_req_query(void *req, const char *key, size_t *len_out)
{
    return tn_http_req_query(req, key, len_out);
}

/* GET /v1/events?prefix=: a server-sent-events stream. */
static void handle_events(struct tn_api_call *c, struct tn_route_match *m)
{
    struct tn_events *hub = c->api->cfg.events;
    if (tn_route_method(m, tn_http_req_method(c->req)) < 0) {
        tn_api_fail_method(c, m->allow_header);
        return;
    }
    if (hub == NULL || !c->api->cfg.store->ops->has_events) {
        tn_api_fail(c, TN_ENOTFOUND, "this store has no event stream yet");
        return;
    }
    (void)tn_route_query(m, tn_api_req_query, c->req); /* events: cannot fail */
    const char *prefix = m->prefix;
    size_t plen = m->prefix_len;
    if (tn_api_authorize(c, TN_AUTH_READ, prefix, plen) < 0) {
        tn_api_fail(c, TN_EFORBIDDEN, "not permitted to read this prefix");
        return;
    }
    const char *last = tn_http_req_header(c->req, "Last-Event-ID");
    account(c, 200);
    int rc = tn_events_subscribe(hub, c->req, prefix, plen, last);
    if (rc < 0) {
        c->api->requests[c->route][2]--; /* counted as 2xx above */
        if (rc == TN_ECAPACITY)
            tn_api_fail_capacity(c, "subscribers");
        else
            tn_api_fail(c, rc, "cannot subscribe");
        return;
    }
    tn_api_call_free(c);
}

/* Who is asking: a verified client certificate's CN (--tls-client-ca) or
 * a bearer token (--auth-file).  Replies 401 and returns TN_EUNAUTH when
 * neither is good. */
static int authenticate(struct tn_api_call *c)
{
    struct tn_api *api = c->api;
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

/* Renew and release name their lease in the path: whether the principal
 * may touch it is known from the headers.  (An acquire names it in the
 * body, and is decided there.)  False when answered 403. */
static bool may_write_name(struct tn_api_call *c, struct tn_route_match *m)
{
    enum tn_http_method method = tn_http_req_method(c->req);
    if (m->path_route != TN_ROUTE_GET ||
        (method != TN_HTTP_PATCH && method != TN_HTTP_DELETE))
        return true;
    size_t len = 0;
    const char *f = tn_http_req_query(c->req, "force", &len);
    bool force =
        method == TN_HTTP_DELETE && f != NULL && strcmp(f, "true") == 0;
    if (tn_api_authorize(c, force ? TN_AUTH_ADMIN : TN_AUTH_ACQUIRE, m->name,
                         m->name_len) == 0)
        return true;
    tn_api_fail(c, TN_EFORBIDDEN,
                force ? "force release is for admins"
                      : "not permitted to hold this name");
    return false;
}

bool tn_api_headers(void *arg, struct tn_http_req *req)
{
    struct tn_api *api = arg;
    if (api->auth == NULL && !api->cfg.client_certs)
        return true;
    struct tn_route_match m;
    if (tn_route_path(tn_http_req_path(req), &m) < 0 ||
        m.path_route == TN_ROUTE_HEALTHZ || m.path_route == TN_ROUTE_READYZ ||
        m.path_route == TN_ROUTE_OPENAPI || m.path_route == TN_ROUTE_UI)
        return true; /* answered when the request is whole */
    struct tn_api_call *c = call_new(api);
    if (c == NULL)
        return true;
    c->api = api;
    c->req = req;
    c->route = m.path_route;
    c->start_ns = tn_clock_mono_ns();
    if (authenticate(c) < 0)
        return false; /* answered 401: the body is never read */
    if (!may_write_name(c, &m))
        return false; /* answered 403 */
    tn_api_call_free(c);
    return true;
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

void tn_api_handle(void *arg, struct tn_http_req *req)
{
    struct tn_api *api = arg;
    struct tn_api_call *c = call_new(api);
    if (c == NULL) {
        tn_http_reply(req, 500, "application/json",
                      "{\"error\":\"internal\",\"message\":\"out of memory\"}",
                      48, 0);
        return;
    }
    c->api = api;
    c->req = req;
    c->start_ns = tn_clock_mono_ns();
    int early = tn_http_req_error(req);
    if (early < 0) {
        tn_api_fail(c, early, tn_http_req_error_message(req));
        return;
    }
    /* The path here; the method and the query of the lease routes are
     * checked by tn_api_lease_dispatch, after authentication. */
    struct tn_route_match m;
    int rc = tn_route_path(tn_http_req_path(req), &m);
    c->route = m.path_route;
    memcpy(c->name, m.name, m.name_len + 1);
    c->name_len = m.name_len;
    if (rc < 0) {
        tn_api_fail(c, rc,
                    rc == TN_EINVAL ? "lease name in path must be 1-256 bytes "
                                      "of printable UTF-8, percent-encoded"
                                    : "no such path");
        return;
    }
    /* Health, readiness, the API's description and the console's files
     * are public (the console holds no data: the API calls it makes
     * carry the operator's token). */
    if (c->route == TN_ROUTE_UI) {
        tn_api_ui(c, &m);
        return;
    }
    if (c->route != TN_ROUTE_HEALTHZ && c->route != TN_ROUTE_READYZ &&
        c->route != TN_ROUTE_OPENAPI && authenticate(c) < 0)
        return;
    if (!tn_http_req_query_valid(req)) {
        tn_api_fail(c, TN_EINVAL,
                    "query arguments must be percent-encoded, without NUL");
        return;
    }
    if (c->route >= TN_ROUTE_HEALTHZ) {
        handle_ops(c, &m);
        return;
    }
    if (!media_ok(req)) {
        tn_api_fail(c, TN_EMEDIA, "request bodies must be application/json");
        return;
    }
    if (api->draining) {
        tn_api_fail(c, TN_EUNAVAIL, "server is shutting down");
        return;
    }
    if (c->route == TN_ROUTE_EVENTS) {
        handle_events(c, &m);
        return;
    }
    tn_api_lease_dispatch(c, &m);
}
