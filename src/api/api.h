/* SPDX-License-Identifier: MIT */
/* The v1 HTTP API of CONTRACT §3: routing, strict decoding of requests,
 * replies in the documented JSON shapes, and request metrics.  Decisions
 * belong to the store; the API never answers before the store says the
 * state it reveals is durable.  Loop thread only. */
#ifndef TN_API_API_H
#define TN_API_API_H

#include <stdbool.h>
#include <stdint.h>

#include "http/http.h"
#include "store/store.h"

struct tn_api_config {
    struct tn_store *store;      /* borrowed, outlives the api */
    int64_t min_ttl_ms;          /* smallest ttl_ms accepted */
    int64_t max_ttl_ms;          /* largest ttl_ms (and lock_delay_ms) */
    const uint8_t *signing_key;  /* 64-byte Ed25519 secret key, or NULL */
    int64_t max_wait_ms;         /* largest wait_ms accepted */
    struct tn_events *events;    /* event hub, borrowed, or NULL */
    bool client_certs;           /* principals come from verified client
                                    certificate CNs instead of tokens */
    size_t max_batch_names;      /* names (leases) of one batch request */
    size_t max_batch_body_bytes; /* body of a batch request (the others:
                                    the front end's max_body_bytes) */
    /* More Prometheus lines for /metrics (the publisher's), or NULL. */
    void (*more_metrics)(void *ctx, struct tn_buf *out);
    void *more_metrics_ctx; /* its argument */

    /* Room for requests that hold their connection (waiters.c). */
    size_t max_connections;           /* the front end's cap */
    size_t reserved_connections;      /* of it, kept from blocking acquires
                                         and event streams (at most half) */
    size_t max_waiters_per_address;   /* blocking acquires of one client
                                         address at once; 0: no limit */
    size_t max_waiters_per_principal; /* of one principal; 0: no limit */
};

struct tn_api;
struct tn_events;
struct tn_auth;

struct tn_api *tn_api_new(const struct tn_api_config *cfg);
void tn_api_free(struct tn_api *api);

/* The tn_http_handler_fn of the server. */
void tn_api_handle(void *api, struct tn_http_req *req);
/* The tn_http_headers_fn of the server: authentication is decided as soon
 * as the headers are complete, so that a 401 costs no body. */
bool tn_api_headers(void *api, struct tn_http_req *req);
/* The tn_http_body_cap_fn of the server: the batch routes' bodies may
 * be up to max_batch_body_bytes (0 for the others: the usual cap). */
size_t tn_api_body_cap(void *api, struct tn_http_req *req);
/* The front end whose counters /metrics shows (borrowed), or NULL. */
void tn_api_set_http(struct tn_api *api, struct tn_http *http);

/* Turn authentication on with auth (takes ownership; NULL turns it off).
 * Requests already in flight keep the table they started with. */
void tn_api_set_auth(struct tn_api *api, struct tn_auth *auth);

/* Refuse new work with 503 (the server is draining). */
void tn_api_set_draining(struct tn_api *api, bool draining);

#endif
