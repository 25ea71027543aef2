/* SPDX-License-Identifier: MIT */
/* Internals shared by the API's files: one struct tn_api_call per HTTP
 * request, from routing to reply. */
#ifndef TN_API_API_INT_H
#define TN_API_API_INT_H

#include "api.h"
#include "auth.h"
#include "common/buf.h"
#include "common/map.h"
#include "route.h"
#include "store/store.h"

#define TN_API_LAT_BUCKETS 14 /* log2 buckets from 50 us */

struct tn_api_batch;

/* The capacity limits, in the order of tn_api.capacity_refused (5, 6 and
 * 7 are waiters.c's). */
#define TN_API_N_LIMITS 9
extern const char *const tn_api_limits[TN_API_N_LIMITS];

struct tn_api {
    struct tn_api_config cfg; /* copy */
    bool draining;            /* SIGTERM: refuse new work */
    struct tn_auth *auth;     /* NULL when authentication is off */
    struct tn_http *http;     /* for its counters, or NULL */
    /* By metrics slot of the route (tn_route_slot) and status class. */
    uint64_t requests[TN_ROUTE_MAX + 1][6];
    uint64_t lat[TN_ROUTE_MAX + 1][TN_API_LAT_BUCKETS + 1]; /* histogram */
    double lat_sum[TN_ROUTE_MAX + 1];                       /* seconds */
    uint64_t grants;                            /* new tokens handed out */
    uint64_t renews;                            /* successful renews */
    uint64_t releases;                          /* successful releases */
    uint64_t capacity_refused[TN_API_N_LIMITS]; /* 503 capacity, by limit */
    struct tn_api_call *spare; /* finished calls kept for reuse */
    size_t n_spare;            /* how many */
    size_t parked;             /* blocking acquires admitted, unanswered */
    struct tn_map waiter_keys; /* their addresses and principals
                                  (waiters.c), empty until the first */
};

struct tn_api_call {
    struct tn_api *api;                        /* owner */
    struct tn_http_req *req;                   /* until replied */
    size_t slot;                               /* metrics slot of the route */
    const struct tn_route *row;                /* the route, once resolved */
    int64_t start_ns;                          /* for the latency histogram */
    struct tn_route_match route;               /* its path's match, made
                                                  once (api.c call_route):
                                                  route.name is the decoded
                                                  {name} */
    int route_rc;                              /* tn_route_path's answer */
    bool routed;                               /* route is made */
    struct tn_store_result result;             /* filled by the store */
    struct tn_auth *auth;                      /* reference held for the call */
    const struct tn_auth_principal *principal; /* NULL: auth off */
    bool authenticated;                        /* principal is decided */
    bool admitted;                             /* the row's action on its
                                                  name was allowed */
    char session_id[TN_SESSION_ID_HEX + 1];    /* its session, or "" */
    struct tn_api_batch *batch;                /* a batch request's names,
                                                  until its reply */
    void (*batch_free)(struct tn_api_batch *); /* frees batch (claims.c) */
    bool parked;                               /* counted by waiters.c */
    struct tn_api_waiter_key *wait_addr;       /* its address's count */
    struct tn_api_waiter_key *wait_principal;  /* its principal's count */
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

/* 0 when the call's principal may do act on name (a prefix for lists and
 * events), or when auth is off; TN_EFORBIDDEN otherwise. */
int tn_api_authorize(struct tn_api_call *c, enum tn_auth_action act,
                     const char *name, size_t len);
/* The authorization the route table asks of c's route, on name: 0, or
 * TN_EFORBIDDEN after answering 403 (the call is then freed).  For rows
 * whose target is in the body, called by the handler once decoded; a
 * no-op when already decided at the headers. */
int tn_api_admit(struct tn_api_call *c, const struct tn_route_match *m,
                 const char *name, size_t len);
/* Free the call (after its reply). */
void tn_api_call_free(struct tn_api_call *c);

/* waiters.c: the connections parked requests may hold, and the blocking
 * acquires of one client.  Admit c, a blocking acquire about to go to the
 * store while `streams` event streams are open: 0, or TN_ECAPACITY /
 * TN_ETOOMANY after answering 503 / 429 (the call is then freed).  An
 * admitted one is counted until tn_api_waiter_done (its completion). */
int tn_api_waiter_admit(struct tn_api_call *c, size_t streams);
void tn_api_waiter_done(struct tn_api_call *c);
/* Blocking acquires and event streams may hold this many connections
 * together: --max-connections minus the reserve. */
size_t tn_api_parked_room(const struct tn_api_config *cfg);
/* Answer 503 capacity for the reserve (counted); frees the call. */
void tn_api_refuse_reserved(struct tn_api_call *c);
/* Count a reply of status in c's route metrics (tn_api_send does). */
void tn_api_account(struct tn_api_call *c, unsigned status);
/* Reply with status and the JSON text json; frees the call. */
void tn_api_send_text(struct tn_api_call *c, unsigned status, const char *json);

/* The handlers, one for each line of routes.def (defined in the file of
 * their resource: leases.c, history.c, events.c, admin.c).  Each replies
 * or hands the call to the store, whose completion replies. */
#define TN_ROUTE(handler, ...)                                                 \
    void handler(struct tn_api_call *c, struct tn_route_match *m);
#include "api/routes.def"
#undef TN_ROUTE
/* The .is_on predicates of routes.def: is the route served here? */
bool tn_api_history_is_on(const struct tn_api *api);  /* history.c */
bool tn_api_events_is_on(const struct tn_api *api);   /* events.c */
bool tn_api_sessions_is_on(const struct tn_api *api); /* leases.c */

/* Reply with the error of a store result about c's session (a session
 * route, or an acquire under a session): the store's reason, else the
 * session's own message for lost, forbidden and not found; frees the
 * call (sessions.c). */
void tn_api_fail_session(struct tn_api_call *c);

/* Shared by the lease resources (leases.c, history.c): reply with the
 * error of a store result; frees the call. */
void tn_api_fail_result(struct tn_api_call *c);
/* A reply body: "{" in a capped buffer, and "}" then send and release. */
void tn_api_body_begin(struct tn_buf *b);
/* The store answered c: on an error reply it (false); else begin the
 * JSON body in b (true). */
bool tn_api_result_begin(struct tn_api_call *c, struct tn_buf *b);
void tn_api_body_send(struct tn_api_call *c, unsigned status, struct tn_buf *b);

#endif
