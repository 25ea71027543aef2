/* SPDX-License-Identifier: MIT */
/* Request routing of the v1 API, without I/O: which route a method, a raw
 * (still percent-encoded) path and the query arguments name, the decoded
 * {name} of the path, the methods the path accepts (the Allow header of a
 * 405) and the query parameters of the route, checked.  Pure functions,
 * so the fuzzer and the unit tests drive them directly. */
#ifndef TN_API_ROUTE_H
#define TN_API_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/name.h"
#include "http/http.h"
#include "store/store.h" /* TN_LIST_MAX */

/* The routes of the API (metrics are kept per route). */
enum tn_route {
    TN_ROUTE_ACQUIRE,
    TN_ROUTE_LIST,
    TN_ROUTE_GET,
    TN_ROUTE_RENEW,
    TN_ROUTE_RELEASE,
    TN_ROUTE_CHECK,
    TN_ROUTE_HISTORY,
    TN_ROUTE_EVENTS,
    TN_ROUTE_HEALTHZ,
    TN_ROUTE_READYZ,
    TN_ROUTE_METRICS,
    TN_ROUTE_UI, /* the operator console's files, /ui and /ui/<file> */
    TN_ROUTE_OPENAPI,
    TN_ROUTE_OTHER,
    TN_ROUTE_COUNT,
};

/* Largest token accepted in a query (exclusive): 2^53. */
#define TN_ROUTE_TOKEN_LIMIT ((uint64_t)1 << 53)
/* Entries of a list or history page when "limit" is absent. */
#define TN_ROUTE_LIMIT_DEFAULT 100
/* Longest encoded {name} segment looked at (bytes). */
#define TN_ROUTE_SEGMENT_MAX (3 * TN_NAME_MAX_BYTES)

/* The bit of a method in a set of allowed methods. */
#define TN_ROUTE_BIT(m) (1u << (unsigned)(m))

/* A query argument by key, percent-decoded, or NULL when absent; *len_out
 * is its length.  The value stays valid while the match is used. */
typedef const char *(*tn_route_query_fn)(void *arg, const char *key,
                                         size_t *len_out);

struct tn_route_match {
    enum tn_route path_route;         /* the path alone: ACQUIRE for the
                                         collection, GET for a {name},
                                         OTHER when it names nothing */
    enum tn_route route;              /* after the method (LIST, RENEW,
                                         ...), OTHER until resolved */
    unsigned allow;                   /* TN_ROUTE_BIT set of methods */
    const char *allow_header;         /* the same, as an Allow value */
    char name[TN_NAME_MAX_BYTES + 1]; /* decoded {name}, NUL-terminated */
    size_t name_len;                  /* 0 when the path has no {name} */
    const char *prefix;               /* list, events: "" when absent */
    size_t prefix_len;                /* bytes */
    const char *after;                /* list: NULL when absent */
    size_t after_len;                 /* bytes */
    size_t limit;                     /* list, history: 1..TN_LIST_MAX */
    uint64_t token;                   /* check: below 2^53 */
    bool force;                       /* release: ?force=true */
    const char *bad_query;            /* the rejected parameter, or NULL */
};

/* Match a raw path.  Returns 0, TN_ENOTFOUND (no such path) or TN_EINVAL
 * (the {name} segment is not a percent-encoded valid name, or is longer
 * than TN_ROUTE_SEGMENT_MAX).  out is filled in every case (path_route
 * OTHER on error). */
int tn_route_path(const char *path, struct tn_route_match *out);

/* Resolve the route of a matched path by method.  Returns 0 or TN_EMETHOD
 * (m->route stays OTHER; m->allow_header lists what the path accepts). */
int tn_route_method(struct tn_route_match *m, enum tn_http_method method);

/* Read and check the query parameters of the resolved route (list:
 * limit, prefix, after; history: limit; check: token; release: force;
 * events: prefix).  Returns 0 or TN_EINVAL with m->bad_query set. */
int tn_route_query(struct tn_route_match *m, tn_route_query_fn query,
                   void *arg);

/* All three in order; the first error is returned. */
int tn_route_match(enum tn_http_method method, const char *path,
                   tn_route_query_fn query, void *arg,
                   struct tn_route_match *out);

/* Stable name of a route ("acquire", "list", ..., "other"). */
const char *tn_route_name(enum tn_route route);

/* The request method's name ("GET", ...; "OTHER"). */
const char *tn_route_method_name(enum tn_http_method method);

#endif
