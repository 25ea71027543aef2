/* SPDX-License-Identifier: MIT */
/* Request routing of the v1 API (docs/CONTRACT.md section 3), without I/O. */
#include "route.h"

#include <string.h>

#include <tenure/err.h>

#define GET_HEAD (TN_ROUTE_BIT(TN_HTTP_GET) | TN_ROUTE_BIT(TN_HTTP_HEAD))
#define GET_ONLY TN_ROUTE_BIT(TN_HTTP_GET)
#define GET_POST (TN_ROUTE_BIT(TN_HTTP_GET) | TN_ROUTE_BIT(TN_HTTP_POST))
#define GET_PATCH_DELETE                                                       \
    (TN_ROUTE_BIT(TN_HTTP_GET) | TN_ROUTE_BIT(TN_HTTP_PATCH) |                 \
     TN_ROUTE_BIT(TN_HTTP_DELETE))

const char *tn_route_name(enum tn_route route)
{
    static const char *const names[TN_ROUTE_COUNT] = {
        "acquire", "list",    "get",     "renew",   "release",
        "check",   "history", "events",  "healthz", "readyz",
        "metrics", "ui",      "openapi", "other"};
    return (unsigned)route < TN_ROUTE_COUNT ? names[route] : "other";
}

const char *tn_route_method_name(enum tn_http_method method)
{
    static const char *const names[] = {"GET",   "HEAD",   "POST", "PUT",
                                        "PATCH", "DELETE", "OTHER"};
    return (unsigned)method <= TN_HTTP_OTHER ? names[method] : "OTHER";
}

static void reset(struct tn_route_match *m)
{
    memset(m, 0, sizeof(*m));
    m->path_route = TN_ROUTE_OTHER;
    m->route = TN_ROUTE_OTHER;
    m->allow_header = "";
    m->prefix = "";
    m->limit = TN_ROUTE_LIMIT_DEFAULT;
}

static int fixed(struct tn_route_match *m, enum tn_route r, unsigned allow,
                 const char *header)
{
    m->path_route = r;
    m->allow = allow;
    m->allow_header = header;
    return TN_OK;
}

/* The {name} segment rest[0..seg): percent-decoded, then validated. */
static int decode_name(struct tn_route_match *m, const char *rest, size_t seg)
{
    char tmp[TN_ROUTE_SEGMENT_MAX + 1];
    if (seg > TN_ROUTE_SEGMENT_MAX)
        return TN_EINVAL;
    long n = tn_http_pct_decode(rest, seg, false, tmp);
    if (n < 0 || !tn_name_is_valid(tmp, (size_t)n, TN_NAME_MAX_BYTES))
        return TN_EINVAL;
    memcpy(m->name, tmp, (size_t)n + 1);
    m->name_len = (size_t)n;
    return TN_OK;
}

/* The paths without a {name}, other than the lease collection. */
static const struct {
    const char *path;
    enum tn_route route;
    unsigned allow;
    const char *allow_header;
} fixed_paths[] = {
    {"/healthz", TN_ROUTE_HEALTHZ, GET_HEAD, "GET, HEAD"},
    {"/readyz", TN_ROUTE_READYZ, GET_HEAD, "GET, HEAD"},
    {"/metrics", TN_ROUTE_METRICS, GET_HEAD, "GET, HEAD"},
    {"/v1/openapi.json", TN_ROUTE_OPENAPI, GET_HEAD, "GET, HEAD"},
    {"/v1/events", TN_ROUTE_EVENTS, GET_ONLY, "GET"},
};

int tn_route_path(const char *path, struct tn_route_match *out)
{
    static const char leases[] = "/v1/leases";
    reset(out);
    for (size_t i = 0; i < sizeof(fixed_paths) / sizeof(fixed_paths[0]); i++) {
        if (strcmp(path, fixed_paths[i].path) == 0)
            return fixed(out, fixed_paths[i].route, fixed_paths[i].allow,
                         fixed_paths[i].allow_header);
    }
    if (strcmp(path, "/ui") == 0 || strncmp(path, "/ui/", 4) == 0)
        return fixed(out, TN_ROUTE_UI, GET_HEAD, "GET, HEAD");
    if (strncmp(path, leases, sizeof(leases) - 1) != 0)
        return TN_ENOTFOUND;
    const char *rest = path + sizeof(leases) - 1;
    if (*rest == '\0' || strcmp(rest, "/") == 0)
        return fixed(out, TN_ROUTE_ACQUIRE, GET_POST, "GET, POST");
    if (*rest != '/')
        return TN_ENOTFOUND;
    rest++;
    const char *slash = strchr(rest, '/');
    size_t seg = slash != NULL ? (size_t)(slash - rest) : strlen(rest);
    enum tn_route r = TN_ROUTE_GET;
    if (slash != NULL && strcmp(slash, "/check") == 0)
        r = TN_ROUTE_CHECK;
    else if (slash != NULL && strcmp(slash, "/history") == 0)
        r = TN_ROUTE_HISTORY;
    else if (slash != NULL)
        return TN_ENOTFOUND;
    int rc = decode_name(out, rest, seg);
    if (rc < 0)
        return rc;
    if (r == TN_ROUTE_GET)
        return fixed(out, r, GET_PATCH_DELETE, "GET, PATCH, DELETE");
    return fixed(out, r, GET_ONLY, "GET");
}

int tn_route_method(struct tn_route_match *m, enum tn_http_method method)
{
    m->route = TN_ROUTE_OTHER;
    if ((unsigned)method >= 32 || (m->allow & TN_ROUTE_BIT(method)) == 0)
        return TN_EMETHOD;
    switch (m->path_route) {
    case TN_ROUTE_ACQUIRE: /* the collection: POST acquires, GET lists */
        m->route = method == TN_HTTP_POST ? TN_ROUTE_ACQUIRE : TN_ROUTE_LIST;
        break;
    case TN_ROUTE_GET:
        m->route = method == TN_HTTP_PATCH    ? TN_ROUTE_RENEW
                   : method == TN_HTTP_DELETE ? TN_ROUTE_RELEASE
                                              : TN_ROUTE_GET;
        break;
    default:
        m->route = m->path_route;
        break;
    }
    return TN_OK;
}

/* ?token=N: a decimal of 1-16 digits below 2^53. */
static int query_token(struct tn_route_match *m, tn_route_query_fn query,
                       void *arg)
{
    size_t len = 0;
    const char *t = query(arg, "token", &len);
    if (t == NULL || len == 0 || len > 16)
        return TN_EINVAL;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (t[i] < '0' || t[i] > '9')
            return TN_EINVAL;
        v = v * 10 + (uint64_t)(t[i] - '0');
    }
    if (v >= TN_ROUTE_TOKEN_LIMIT)
        return TN_EINVAL;
    m->token = v;
    return TN_OK;
}

/* ?limit=N: 1..TN_LIST_MAX, TN_ROUTE_LIMIT_DEFAULT when absent. */
static int query_limit(struct tn_route_match *m, tn_route_query_fn query,
                       void *arg)
{
    size_t len = 0;
    const char *l = query(arg, "limit", &len);
    m->limit = TN_ROUTE_LIMIT_DEFAULT;
    if (l == NULL)
        return TN_OK;
    size_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (l[i] < '0' || l[i] > '9' || v > TN_LIST_MAX)
            return TN_EINVAL;
        v = v * 10 + (size_t)(l[i] - '0');
    }
    if (len == 0 || v < 1 || v > TN_LIST_MAX)
        return TN_EINVAL;
    m->limit = v;
    return TN_OK;
}

/* ?force=true|false; the value must be exactly one of the two words. */
static int query_force(struct tn_route_match *m, tn_route_query_fn query,
                       void *arg)
{
    size_t len = 0;
    const char *f = query(arg, "force", &len);
    m->force = false;
    if (f == NULL)
        return TN_OK;
    if (len == 4 && memcmp(f, "true", 4) == 0) {
        m->force = true;
        return TN_OK;
    }
    return len == 5 && memcmp(f, "false", 5) == 0 ? TN_OK : TN_EINVAL;
}

static void query_prefix(struct tn_route_match *m, tn_route_query_fn query,
                         void *arg)
{
    size_t len = 0;
    const char *p = query(arg, "prefix", &len);
    m->prefix = p != NULL ? p : "";
    m->prefix_len = p != NULL ? len : 0;
}

static int bad(struct tn_route_match *m, const char *param)
{
    m->bad_query = param;
    return TN_EINVAL;
}

int tn_route_query(struct tn_route_match *m, tn_route_query_fn query, void *arg)
{
    m->bad_query = NULL;
    switch (m->route) {
    case TN_ROUTE_LIST:
        if (query_limit(m, query, arg) < 0)
            return bad(m, "limit");
        query_prefix(m, query, arg);
        m->after_len = 0;
        m->after = query(arg, "after", &m->after_len);
        if (m->after == NULL)
            m->after_len = 0;
        if (m->prefix_len > TN_NAME_MAX_BYTES)
            return bad(m, "prefix");
        if (m->after_len > TN_NAME_MAX_BYTES)
            return bad(m, "after");
        return TN_OK;
    case TN_ROUTE_HISTORY:
        return query_limit(m, query, arg) < 0 ? bad(m, "limit") : TN_OK;
    case TN_ROUTE_CHECK:
        return query_token(m, query, arg) < 0 ? bad(m, "token") : TN_OK;
    case TN_ROUTE_RELEASE:
        return query_force(m, query, arg) < 0 ? bad(m, "force") : TN_OK;
    case TN_ROUTE_EVENTS:
        query_prefix(m, query, arg);
        return TN_OK;
    default:
        return TN_OK;
    }
}

int tn_route_match(enum tn_http_method method, const char *path,
                   tn_route_query_fn query, void *arg,
                   struct tn_route_match *out)
{
    int rc = tn_route_path(path, out);
    if (rc == 0)
        rc = tn_route_method(out, method);
    if (rc == 0)
        rc = tn_route_query(out, query, arg);
    return rc;
}
