/* SPDX-License-Identifier: MIT */
/* Request routing of the v1 API, without I/O.  The routes are one table,
 * tn_routes (routes.c): a row per method and path pattern, with what the
 * row needs to be authorized and the handler that answers it.  This module
 * matches a method, a raw (still percent-encoded) path and the query
 * arguments against that table: which row they name, the decoded {name}
 * of the path, the methods the path accepts (the Allow header of a 405)
 * and the query parameters the row reads, checked.  Pure functions over a
 * constant table, so the fuzzer and the unit tests drive them directly. */
#ifndef TN_API_ROUTE_H
#define TN_API_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "common/name.h"
#include "http/http.h"
#include "store/store.h" /* TN_LIST_MAX */

/* Largest token accepted in a query (exclusive): 2^53. */
#define TN_ROUTE_TOKEN_LIMIT ((uint64_t)1 << 53)
/* Entries of a list or history page when "limit" is absent. */
#define TN_ROUTE_LIMIT_DEFAULT 100
/* Longest encoded {name} segment looked at (bytes). */
#define TN_ROUTE_SEGMENT_MAX (3 * TN_NAME_MAX_BYTES)
/* Rows the table may hold; metrics keep one slot per row and one more for
 * requests that name no route ("other"). */
#define TN_ROUTE_MAX 32
#define TN_ROUTE_SLOT_OTHER TN_ROUTE_MAX

/* The bit of a method in a set of allowed methods. */
#define TN_ROUTE_BIT(m) (1u << (unsigned)(m))

struct tn_api;
struct tn_api_call;
struct tn_route_match;

/* What the row's action is checked against (the 403 of CONTRACT §9). */
enum tn_route_target {
    TN_ROUTE_NOBODY,    /* nothing: any authenticated principal may */
    TN_ROUTE_PATH_NAME, /* the {name} of the path */
    TN_ROUTE_PREFIX,    /* the "prefix" query parameter */
    TN_ROUTE_BODY_NAME, /* a name in the body: the handler calls
                           tn_api_admit once it has decoded it */
    TN_ROUTE_SOME,      /* some prefix: the principal may do the action
                           on at least one (the sessions); the handler
                           checks each name it is given */
};

/* Flags of a row.  PUBLIC, RAW_QUERY, WORK and SLASH are properties of
 * the path, so every row of one pattern has the same ones. */
enum tn_route_flags {
    TN_ROUTE_PUBLIC = 1u << 0,      /* no authentication at all */
    TN_ROUTE_BODY = 1u << 1,        /* reads a JSON body: a PATH_NAME row
                                       is authorized once the headers are
                                       in (401/403 cost no body), or by
                                       its handler after decoding */
    TN_ROUTE_WORK = 1u << 2,        /* lease work: the media type is
                                       checked and 503 while draining */
    TN_ROUTE_RAW_QUERY = 1u << 3,   /* the query is not validated */
    TN_ROUTE_SLASH = 1u << 4,       /* the path may end in one more '/' */
    TN_ROUTE_FORCE_ADMIN = 1u << 5, /* ?force=true makes the action admin */
    TN_ROUTE_BATCH = 1u << 6,       /* its body may be up to
                                       --max-batch-body-bytes */
};

/* Query parameters a row reads, checked in this order. */
enum tn_route_query {
    TN_ROUTE_Q_LIMIT = 1u << 0,      /* 1..TN_LIST_MAX, default 100 */
    TN_ROUTE_Q_PREFIX = 1u << 1,     /* at most 256 bytes */
    TN_ROUTE_Q_AFTER = 1u << 2,      /* at most 256 bytes */
    TN_ROUTE_Q_TOKEN = 1u << 3,      /* required, a decimal below 2^53 */
    TN_ROUTE_Q_FORCE = 1u << 4,      /* true or false */
    TN_ROUTE_Q_ANY_PREFIX = 1u << 5, /* "prefix" of any length */
};

/* Answers the request; replies now or hands the call to the store. */
typedef void (*tn_route_handler_fn)(struct tn_api_call *c,
                                    struct tn_route_match *m);
/* False when the route is unavailable on this server (a 404). */
typedef bool (*tn_route_available_fn)(const struct tn_api *api);

/* One row of the route table. */
struct tn_route {
    enum tn_http_method method;  /* HEAD is a row of its own */
    const char *pattern;         /* the OpenAPI path: literal text,
                                    {name} (one segment, a lease name),
                                    {id} (one segment, a session id: 32
                                    lowercase hex digits) and {file} (the
                                    rest of the path) */
    const char *name;            /* the metrics label; rows may share */
    enum tn_auth_action action;  /* checked against target */
    enum tn_route_target target; /* what action is checked on */
    unsigned flags;              /* enum tn_route_flags */
    unsigned query;              /* enum tn_route_query */
    const char *forbidden;       /* message of its 403 */
    tn_route_available_fn is_on; /* NULL: always available */
    const char *off_message;     /* message of its answer when not */
    int off_rc;                  /* that answer: TN_ENOTFOUND when 0 */
    tn_route_handler_fn handler; /* the answer */
};

/* The table (routes.c), and its length. */
extern const struct tn_route tn_routes[];
extern const size_t tn_routes_count;

/* A query argument by key, percent-decoded, or NULL when absent; *len_out
 * is its length.  The value stays valid while the match is used. */
typedef const char *(*tn_route_query_fn)(void *arg, const char *key,
                                         size_t *len_out);

struct tn_route_match {
    const struct tn_route *path_row;  /* first row of the path, NULL when
                                         it names none */
    const struct tn_route *row;       /* the row of the method, NULL until
                                         resolved */
    unsigned allow;                   /* TN_ROUTE_BIT set of methods */
    char allow_header[48];            /* the same, as an Allow value */
    char name[TN_NAME_MAX_BYTES + 1]; /* decoded {name}, NUL-terminated */
    size_t name_len;                  /* 0 when the path has no {name} */
    char id[TN_SESSION_ID_HEX + 1];   /* {id}, NUL-terminated, or "" */
    bool bad_id;                      /* TN_EINVAL for the {id} */
    const char *file;                 /* {file}: the raw rest, or NULL */
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
 * than TN_ROUTE_SEGMENT_MAX; or, with out->bad_id, the {id} segment is
 * not 32 lowercase hex digits).  out is filled in every case (path_row
 * NULL on error). */
int tn_route_path(const char *path, struct tn_route_match *out);

/* Resolve the row of a matched path by method.  Returns 0 or TN_EMETHOD
 * (m->row stays NULL; m->allow_header lists what the path accepts). */
int tn_route_method(struct tn_route_match *m, enum tn_http_method method);

/* Read and check the query parameters of the resolved row.  Returns 0 or
 * TN_EINVAL with m->bad_query set. */
int tn_route_query(struct tn_route_match *m, tn_route_query_fn query,
                   void *arg);

/* The message of a 400 for the rejected parameter m->bad_query. */
const char *tn_route_query_message(const char *param);

/* All three in order; the first error is returned. */
int tn_route_match(enum tn_http_method method, const char *path,
                   tn_route_query_fn query, void *arg,
                   struct tn_route_match *out);

/* True when every row of the pattern of row checks a name of the path and
 * reads no body: such a path answers 403 before 405, so that a principal
 * who may not read the name learns nothing of it. */
bool tn_route_path_is_read(const struct tn_route *row);

/* The metrics slot of row (the first row of its name), or
 * TN_ROUTE_SLOT_OTHER for NULL. */
size_t tn_route_slot(const struct tn_route *row);

/* The request method's name ("GET", ...; "OTHER"). */
const char *tn_route_method_name(enum tn_http_method method);

#endif
