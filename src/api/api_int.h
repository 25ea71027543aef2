/* SPDX-License-Identifier: MIT */
/* Internals shared by the API's files: one struct tn_api_call per HTTP
 * request, from routing to reply. */
#ifndef TN_API_API_INT_H
#define TN_API_API_INT_H

#include "api.h"
#include "auth.h"
#include "common/buf.h"
#include "route.h"
#include "store/store.h"

#define TN_API_LAT_BUCKETS 14 /* log2 buckets from 50 us */

/* The capacity limits, in the order of tn_api.capacity_refused. */
#define TN_API_N_LIMITS 5
extern const char *const tn_api_limits[TN_API_N_LIMITS];

struct tn_api {
    struct tn_api_config cfg;             /* copy */
    bool draining;                        /* SIGTERM: refuse new work */
    struct tn_auth *auth;                 /* NULL when authentication is off */
    struct tn_http *http;                 /* for its counters, or NULL */
    uint64_t requests[TN_ROUTE_COUNT][6]; /* by route and status class */
    uint64_t lat[TN_ROUTE_COUNT][TN_API_LAT_BUCKETS + 1]; /* histogram */
    double lat_sum[TN_ROUTE_COUNT];                       /* seconds */
    uint64_t grants;                            /* new tokens handed out */
    uint64_t renews;                            /* successful renews */
    uint64_t releases;                          /* successful releases */
    uint64_t capacity_refused[TN_API_N_LIMITS]; /* 503 capacity, by limit */
    struct tn_api_call *spare; /* finished calls kept for reuse */
    size_t n_spare;            /* how many */
};

struct tn_api_call {
    struct tn_api *api;                        /* owner */
    struct tn_http_req *req;                   /* until replied */
    enum tn_route route;                       /* what was asked */
    int64_t start_ns;                          /* for the latency histogram */
    char name[TN_NAME_MAX_BYTES + 1];          /* decoded {name} */
    size_t name_len;                           /* bytes */
    struct tn_store_result result;             /* filled by the store */
    struct tn_auth *auth;                      /* reference held for the call */
    const struct tn_auth_principal *principal; /* NULL: auth off */
    struct tn_api_call *next_spare;            /* in tn_api.spare */
};

/* Reply with the error of rc and a message; frees the call. */
void tn_api_fail(struct tn_api_call *c, int rc, const char *message);
/* Reply 503 capacity for the limit named (counted); frees the call. */
void tn_api_fail_capacity(struct tn_api_call *c, const char *limit);
/* 405 with an Allow header listing methods; frees the call. */
void tn_api_fail_method(struct tn_api_call *c, const char *methods);
/* Reply with status and body; frees the call. */
void tn_api_send(struct tn_api_call *c, unsigned status, const struct tn_buf *b,
                 int64_t retry_after_ms);

/* Reply with status and a body of the given media type; frees the call. */
void tn_api_send_typed(struct tn_api_call *c, unsigned status, const char *type,
                       const void *body, size_t len);

/* ui.c: GET /ui and /ui/<file>, the console's built-in files.  Replies and
 * frees the call. */
void tn_api_ui(struct tn_api_call *c, struct tn_route_match *m);

/* 0 when the call's principal may do act on name (a prefix for lists and
 * events), or when auth is off; TN_EFORBIDDEN otherwise. */
int tn_api_authorize(struct tn_api_call *c, enum tn_auth_action act,
                     const char *name, size_t len);
/* Free the call (after its reply). */
void tn_api_call_free(struct tn_api_call *c);

/* api_lease.c: the lease routes.  Each replies or hands the call to the
 * store, whose completion replies. */
void tn_api_lease_dispatch(struct tn_api_call *c, struct tn_route_match *m);
/* tn_route_query_fn over a request's query arguments. */
const char *tn_api_req_query(void *req, const char *key, size_t *len_out);

#endif
