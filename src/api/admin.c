/* SPDX-License-Identifier: MIT */
/* The operations routes: health, readiness, metrics, this API's
 * description, and the operator console.
 *
 * GET /ui: the operator console.  Its files are built into the binary and
 * served as they are; the page holds no data of its own and talks only to
 * the public API (with the operator's bearer token, when auth is on), so
 * the files need no authentication.  Each is sent with a strict
 * Content-Security-Policy: the page may load nothing from elsewhere. */
#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "api_int.h"
#include "common/embed.h"
#include "common/metrics.h"
#include "events.h"

#define REPLY_MAX_BYTES (4u << 20)

extern const struct tn_embed tn_ui_assets[];
/* docs/openapi.yaml as JSON (src/api/CMakeLists.txt). */
extern const struct tn_embed tn_openapi_assets[];

/* The page may load and talk to nothing but this server, may not be
 * framed, and sends no referrer; index.html repeats the policy in a meta
 * element for a copy saved to disk. */
#define UI_FIELDS                                                              \
    "Content-Security-Policy: default-src 'none'; script-src 'self'; "         \
    "style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; "  \
    "form-action 'none'; frame-ancestors 'none'\r\n"                           \
    "X-Content-Type-Options: nosniff\r\n"                                      \
    "Referrer-Policy: no-referrer\r\n"                                         \
    "Cache-Control: no-cache\r\n"

void tn_api_ui(struct tn_api_call *c, struct tn_route_match *m)
{
    const char *file = m->file != NULL ? m->file : ""; /* after "/ui/" */
    if (*file == '\0')
        file = "index.html";
    const struct tn_embed *e = tn_embed_find(tn_ui_assets, file, strlen(file));
    if (e == NULL) {
        tn_api_fail(c, TN_ENOTFOUND, "no such console file");
        return;
    }
    tn_http_req_set_fields(c->req, UI_FIELDS);
    tn_api_send_typed(c, 200, e->type, e->data, e->len);
}

void tn_api_healthz(struct tn_api_call *c, struct tn_route_match *m)
{
    (void)m;
    tn_api_send_text(c, 200, "{\"status\":\"ok\"}");
}

void tn_api_readyz(struct tn_api_call *c, struct tn_route_match *m)
{
    struct tn_store *s = c->api->cfg.store;
    bool ready = !c->api->draining && s->ops->is_ready(s);
    (void)m;
    tn_api_send_text(c, ready ? 200 : 503,
                     ready ? "{\"status\":\"ready\"}"
                           : "{\"error\":\"unavailable\",\"message\":"
                             "\"store not writable or server draining\"}");
}

void tn_api_openapi(struct tn_api_call *c, struct tn_route_match *m)
{
    (void)m;
    tn_api_send_typed(c, 200, tn_openapi_assets[0].type,
                      tn_openapi_assets[0].data, tn_openapi_assets[0].len);
}

/* The metrics label of a slot: the name of the route whose first row it
 * is, "other" for the last, NULL for the rest. */
static const char *slot_name(size_t slot)
{
    if (slot == TN_ROUTE_SLOT_OTHER)
        return "other";
    if (slot >= tn_routes_count || tn_route_slot(&tn_routes[slot]) != slot)
        return NULL;
    return tn_routes[slot].name;
}

static void print_metrics(struct tn_api *api, struct tn_buf *b)
{
    static const char *const cls[] = {"other", "1xx", "2xx",
                                      "3xx",   "4xx", "5xx"};
    (void)tn_buf_printf(b, "# TYPE tenure_http_requests_total counter\n");
    for (size_t r = 0; r <= TN_ROUTE_SLOT_OTHER; r++) {
        for (int k = 1; k < 6 && slot_name(r) != NULL; k++) {
            if (api->requests[r][k] == 0)
                continue;
            (void)tn_buf_printf(
                b,
                "tenure_http_requests_total{route=\"%s\",code=\"%s\"} %llu\n",
                slot_name(r), cls[k], (unsigned long long)api->requests[r][k]);
        }
    }
    (void)tn_buf_printf(b, "# TYPE tenure_http_request_seconds histogram\n");
    for (size_t r = 0; r <= TN_ROUTE_SLOT_OTHER; r++) {
        const char *rn = slot_name(r);
        if (rn == NULL)
            continue;
        char labels[96];
        (void)snprintf(labels, sizeof(labels), "route=\"%s\"", rn);
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
        "tenure_http_streams_cut_total",
        "tenure_http_slow_readers_closed_total",
        "tenure_http_cross_site_refused_total"};
    const uint64_t vals[] = {
        st.accepted,         st.evicted,       st.refused,
        st.request_timeouts, st.idle_timeouts, st.protocol_errors,
        st.early_replies,    st.disconnects,   st.streams_cut,
        st.slow_readers,     st.cross_site};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
        (void)tn_buf_printf(b, "# TYPE %s counter\n%s %llu\n", names[i],
                            names[i], (unsigned long long)vals[i]);
    (void)tn_buf_printf(b,
                        "# TYPE tenure_http_connections gauge\n"
                        "tenure_http_connections %llu\n"
                        "# TYPE tenure_http_stream_buffered_bytes gauge\n"
                        "tenure_http_stream_buffered_bytes %llu\n"
                        "# TYPE tenure_http_reply_buffered_bytes gauge\n"
                        "tenure_http_reply_buffered_bytes %llu\n",
                        (unsigned long long)st.open,
                        (unsigned long long)st.stream_bytes,
                        (unsigned long long)st.reply_bytes);
}

void tn_api_set_http(struct tn_api *api, struct tn_http *http)
{
    api->http = http;
}

void tn_api_metrics(struct tn_api_call *c, struct tn_route_match *m)
{
    struct tn_store *s = c->api->cfg.store;
    struct tn_buf b;
    (void)m;
    tn_buf_init(&b, REPLY_MAX_BYTES);
    print_metrics(c->api, &b);
    s->ops->metrics(s, &b);
    if (c->api->cfg.events != NULL)
        tn_events_metrics(c->api->cfg.events, &b);
    if (c->api->http != NULL)
        print_http_metrics(c->api->http, &b);
    if (c->api->cfg.more_metrics != NULL)
        c->api->cfg.more_metrics(c->api->cfg.more_metrics_ctx, &b);
    tn_api_send_typed(c, 200, "text/plain; version=0.0.4",
                      b.data != NULL ? b.data : "", b.len);
    tn_buf_release(&b);
}
