/* SPDX-License-Identifier: MIT */
/* The route table of the v1 API, built from the lines of routes.def: one
 * row per method and path.  Routing (route.c), authentication and
 * authorization (api.c), the per-route metrics and the check of
 * docs/openapi.yaml (tests/unit/test_routes.c) are all driven by it.
 * Adding an endpoint: its handler in the file of its resource, its line
 * in routes.def, and its path in docs/openapi.yaml
 * (docs/CONTRIBUTING.md). */
#include <assert.h>

#include "api_int.h"
#include "route.h"

#define READ TN_AUTH_READ
#define ACQUIRE TN_AUTH_ACQUIRE
#define LEASE_WORK (TN_ROUTE_WORK)
#define LEASE_BODY (TN_ROUTE_WORK | TN_ROUTE_BODY)
/* A store without sessions says so (501), rather than "no such path". */
#define SESSIONS                                                               \
    .is_on = tn_api_sessions_is_on,                                            \
    .off_message = "this store has no sessions yet", .off_rc = TN_ENOTIMPL

#define TN_ROUTE(handler_, ...) {.handler = handler_, __VA_ARGS__},
const struct tn_route tn_routes[] = {
#include "api/routes.def"
};
#undef TN_ROUTE

const size_t tn_routes_count = sizeof(tn_routes) / sizeof(tn_routes[0]);

static_assert(sizeof(tn_routes) / sizeof(tn_routes[0]) < TN_ROUTE_MAX,
              "raise TN_ROUTE_MAX");
