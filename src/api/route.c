/* SPDX-License-Identifier: MIT */
/* Request routing of the v1 API (docs/CONTRACT.md section 3) over the route
 * table, without I/O. */
#include "route.h"

#include <string.h>

#include <tenure/err.h>

#include "common/assert.h"

const char *tn_route_method_name(enum tn_http_method method)
{
    static const char *const names[] = {"GET",   "HEAD",   "POST", "PUT",
                                        "PATCH", "DELETE", "OTHER"};
    return (unsigned)method <= TN_HTTP_OTHER ? names[method] : "OTHER";
}

static void reset(struct tn_route_match *m)
{
    memset(m, 0, sizeof(*m));
    m->prefix = "";
    m->limit = TN_ROUTE_LIMIT_DEFAULT;
}

/* The {name} segment seg[0..len): percent-decoded, then validated. */
static int decode_name(struct tn_route_match *m, const char *seg, size_t len)
{
    char tmp[TN_ROUTE_SEGMENT_MAX + 1];
    if (len > TN_ROUTE_SEGMENT_MAX)
        return TN_EINVAL;
    long n = tn_http_pct_decode(seg, len, false, tmp);
    if (n < 0 || !tn_name_is_valid(tmp, (size_t)n, TN_NAME_MAX_BYTES))
        return TN_EINVAL;
    memcpy(m->name, tmp, (size_t)n + 1);
    m->name_len = (size_t)n;
    return TN_OK;
}

/* The {id} segment seg[0..len): a session id, 32 lowercase hex digits
 * as the server draws them, taken as it is (no percent-decoding). */
static int decode_id(struct tn_route_match *m, const char *seg, size_t len)
{
    bool ok = len == TN_SESSION_ID_HEX;
    for (size_t i = 0; ok && i < len; i++)
        ok = (seg[i] >= '0' && seg[i] <= '9') ||
             (seg[i] >= 'a' && seg[i] <= 'f');
    if (!ok) {
        m->bad_id = true;
        return TN_EINVAL;
    }
    memcpy(m->id, seg, len);
    m->id[len] = '\0';
    return TN_OK;
}

/* The path against one pattern: 0, TN_ENOTFOUND when its shape differs,
 * TN_EINVAL when the shape is right but the {name} is not a name (or the
 * {id} not an id). */
static int match_pattern(const struct tn_route *row, const char *path,
                         struct tn_route_match *m)
{
    const char *p = row->pattern;
    const char *s = path;
    const char *seg = NULL;
    size_t seg_len = 0;
    bool id = false;
    while (*p != '\0') {
        if (*p == '{') {
            const char *close = strchr(p, '}');
            TN_ASSERT(close != NULL);
            if (strncmp(p, "{name}", 6) == 0 || strncmp(p, "{id}", 4) == 0) {
                id = p[1] == 'i';
                seg = s;
                seg_len = strcspn(s, "/");
                s += seg_len;
            } else { /* {file}: the rest of the path, as it is */
                m->file = s;
                s += strlen(s);
            }
            p = close + 1;
        } else if (*s++ != *p++) {
            return TN_ENOTFOUND;
        }
    }
    if (*s != '\0' && ((row->flags & TN_ROUTE_SLASH) == 0 || strcmp(s, "/")))
        return TN_ENOTFOUND;
    if (seg == NULL)
        return TN_OK;
    return id ? decode_id(m, seg, seg_len) : decode_name(m, seg, seg_len);
}

/* The rows of one pattern share its string (one literal in routes.c);
 * strcmp only says so when the compiler kept two copies. */
static bool same_path(const struct tn_route *a, const struct tn_route *b)
{
    return a->pattern == b->pattern || strcmp(a->pattern, b->pattern) == 0;
}

/* One past the last row of row's pattern (rows of a pattern are
 * adjacent). */
static const struct tn_route *group_end(const struct tn_route *row)
{
    const struct tn_route *end = tn_routes + tn_routes_count;
    const struct tn_route *r = row;
    while (r < end && same_path(r, row))
        r++;
    return r;
}

static void allow_text(struct tn_route_match *m)
{
    size_t o = 0;
    for (int k = TN_HTTP_GET; k < TN_HTTP_OTHER; k++) {
        if ((m->allow & TN_ROUTE_BIT(k)) == 0)
            continue;
        const char *name = tn_route_method_name((enum tn_http_method)k);
        size_t n = strlen(name);
        TN_ASSERT(o + n + 3 < sizeof(m->allow_header));
        if (o > 0) {
            memcpy(m->allow_header + o, ", ", 2);
            o += 2;
        }
        memcpy(m->allow_header + o, name, n);
        o += n;
    }
    m->allow_header[o] = '\0';
}

int tn_route_path(const char *path, struct tn_route_match *out)
{
    int rc = TN_ENOTFOUND;
    reset(out);
    const struct tn_route *end = tn_routes + tn_routes_count;
    for (const struct tn_route *g = tn_routes; g < end; g = group_end(g)) {
        int r = match_pattern(g, path, out);
        if (r == TN_OK) {
            out->path_row = g;
            const struct tn_route *ge = group_end(g);
            for (const struct tn_route *k = g; k < ge; k++)
                out->allow |= TN_ROUTE_BIT(k->method);
            allow_text(out);
            return TN_OK;
        }
        if (r == TN_EINVAL)
            rc = TN_EINVAL;
        out->name[0] = '\0';
        out->name_len = 0;
        out->id[0] = '\0';
        out->file = NULL;
    }
    return rc;
}

int tn_route_method(struct tn_route_match *m, enum tn_http_method method)
{
    m->row = NULL;
    if (m->path_row == NULL || (unsigned)method >= 32 ||
        (m->allow & TN_ROUTE_BIT(method)) == 0)
        return TN_EMETHOD;
    const struct tn_route *ge = group_end(m->path_row);
    for (const struct tn_route *r = m->path_row; r < ge; r++) {
        if (r->method == method) {
            m->row = r;
            return TN_OK;
        }
    }
    return TN_EMETHOD;
}

bool tn_route_path_is_read(const struct tn_route *row)
{
    const struct tn_route *ge = group_end(row);
    for (const struct tn_route *r = row; r < ge; r++) {
        if (r->target != TN_ROUTE_PATH_NAME || (r->flags & TN_ROUTE_BODY))
            return false;
    }
    return true;
}

size_t tn_route_slot(const struct tn_route *row)
{
    if (row == NULL)
        return TN_ROUTE_SLOT_OTHER;
    size_t i = 0;
    while (tn_routes[i].name != row->name &&
           strcmp(tn_routes[i].name, row->name) != 0)
        i++;
    return i;
}

/* A query value of decimal digits only, at most max: TN_OK with *out, or
 * TN_EINVAL (empty, another character, too large). */
static int query_decimal(const char *s, size_t len, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9' || v > max)
            return TN_EINVAL;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (len == 0 || v > max)
        return TN_EINVAL;
    *out = v;
    return TN_OK;
}

/* The readers of the query parameters: each gets its parameter's value
 * (NULL when absent) and sets its field of m; 0 or TN_EINVAL. */

/* ?token=N: a decimal of 1-16 digits below 2^53. */
static int query_token(struct tn_route_match *m, const char *v, size_t len)
{
    if (v == NULL || len > 16)
        return TN_EINVAL;
    return query_decimal(v, len, TN_ROUTE_TOKEN_LIMIT - 1, &m->token);
}

/* ?limit=N: 1..TN_LIST_MAX, TN_ROUTE_LIMIT_DEFAULT when absent. */
static int query_limit(struct tn_route_match *m, const char *v, size_t len)
{
    uint64_t n = TN_ROUTE_LIMIT_DEFAULT;
    if (v != NULL && (query_decimal(v, len, TN_LIST_MAX, &n) != TN_OK || n < 1))
        return TN_EINVAL;
    m->limit = (size_t)n;
    return TN_OK;
}

/* ?force=true|false; the value must be exactly one of the two words. */
static int query_force(struct tn_route_match *m, const char *v, size_t len)
{
    m->force = v != NULL && len == 4 && memcmp(v, "true", 4) == 0;
    if (v == NULL || m->force)
        return TN_OK;
    return len == 5 && memcmp(v, "false", 5) == 0 ? TN_OK : TN_EINVAL;
}

/* ?prefix=P, at most a name's length. */
static int query_prefix_capped(struct tn_route_match *m, const char *v,
                               size_t len)
{
    m->prefix = v != NULL ? v : "";
    m->prefix_len = v != NULL ? len : 0;
    return m->prefix_len > TN_NAME_MAX_BYTES ? TN_EINVAL : TN_OK;
}

/* ?prefix=P of any length (the event stream's filter). */
static int query_any_prefix(struct tn_route_match *m, const char *v, size_t len)
{
    (void)query_prefix_capped(m, v, len);
    return TN_OK;
}

/* ?after=NAME, at most a name's length. */
static int query_after(struct tn_route_match *m, const char *v, size_t len)
{
    m->after = v;
    m->after_len = v != NULL ? len : 0;
    return m->after_len > TN_NAME_MAX_BYTES ? TN_EINVAL : TN_OK;
}

/* The query parameters, in the order they are checked, with the message
 * of the 400 that refuses each. */
static const struct {
    unsigned bit;    /* enum tn_route_query */
    const char *key; /* its name in the query */
    int (*read)(struct tn_route_match *m, const char *v, size_t len);
    const char *message; /* of the 400 */
} params[] = {
    {TN_ROUTE_Q_LIMIT, "limit", query_limit, "query \"limit\" must be 1-1000"},
    {TN_ROUTE_Q_PREFIX, "prefix", query_prefix_capped,
     "prefix and after are at most 256 bytes"},
    {TN_ROUTE_Q_AFTER, "after", query_after,
     "prefix and after are at most 256 bytes"},
    {TN_ROUTE_Q_TOKEN, "token", query_token,
     "query \"token\" must be a decimal below 2^53"},
    {TN_ROUTE_Q_FORCE, "force", query_force,
     "query \"force\" must be true or false"},
    {TN_ROUTE_Q_ANY_PREFIX, "prefix", query_any_prefix, "bad prefix"},
};

#define N_PARAMS (sizeof(params) / sizeof(params[0]))

const char *tn_route_query_message(const char *param)
{
    for (size_t i = 0; i < N_PARAMS; i++) {
        if (param != NULL && strcmp(params[i].key, param) == 0)
            return params[i].message;
    }
    return "bad query";
}

int tn_route_query(struct tn_route_match *m, tn_route_query_fn query, void *arg)
{
    m->bad_query = NULL;
    unsigned want = m->row != NULL ? m->row->query : 0;
    for (size_t i = 0; i < N_PARAMS; i++) {
        if ((want & params[i].bit) == 0)
            continue;
        size_t len = 0;
        const char *v = query(arg, params[i].key, &len);
        if (params[i].read(m, v, len) < 0) {
            m->bad_query = params[i].key;
            return TN_EINVAL;
        }
    }
    return TN_OK;
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
