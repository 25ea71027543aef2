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
#include "errmap.h"
#include "events.h"
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
    size_t i = 0;
    while (i < TN_API_LAT_BUCKETS && us > (int64_t)(50u << i))
        i++;
    api->lat[c->route][i]++;
    api->lat_sum[c->route] += (double)us / 1e6;
}

void tn_api_send(struct tn_api_call *c, unsigned status, const struct tn_buf *b,
                 int64_t retry_after_ms)
{
    account(c, status);
    const char *type = c->route == TN_ROUTE_METRICS
                           ? "text/plain; version=0.0.4"
                           : "application/json";
    tn_http_reply(c->req, status, type, b->data != NULL ? b->data : "", b->len,
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
        e->status == 503
            ? (c->result.retry_after_ms > 0 ? c->result.retry_after_ms : 1000)
            : 0;
    tn_api_send(c, e->status, &b, retry);
    tn_buf_release(&b);
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
        const char *rn = tn_route_name((enum tn_route)r);
        uint64_t cum = 0;
        for (int i = 0; i <= TN_API_LAT_BUCKETS; i++) {
            cum += api->lat[r][i];
            if (i < TN_API_LAT_BUCKETS)
                (void)tn_buf_printf(
                    b,
                    "tenure_http_request_seconds_bucket{route=\"%s\","
                    "le=\"%g\"} %llu\n",
                    rn, (double)(50u << i) / 1e6, (unsigned long long)cum);
        }
        (void)tn_buf_printf(
            b,
            "tenure_http_request_seconds_bucket{route=\"%s\",le=\"+Inf\"} "
            "%llu\ntenure_http_request_seconds_sum{route=\"%s\"} %.6f\n"
            "tenure_http_request_seconds_count{route=\"%s\"} %llu\n",
            rn, (unsigned long long)cum, rn, api->lat_sum[r], rn,
            (unsigned long long)cum);
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
        tn_api_fail(c, rc, "too many event subscribers");
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
        tn_api_fail(c, early,
                    early == TN_ETOOBIG ? "request body too large"
                                        : "request header fields too large");
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
    if (c->route != TN_ROUTE_HEALTHZ && c->route != TN_ROUTE_READYZ &&
        authenticate(c) < 0)
        return;
    if (!tn_http_req_query_valid(req)) {
        tn_api_fail(c, TN_EINVAL, "query arguments must be percent-encoded");
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
