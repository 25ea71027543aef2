/* SPDX-License-Identifier: MIT */
/* Fuzz target for the request routing of the v1 API (src/api/route.c).
 * Input: the first byte picks the method, the rest is a request target
 * "path?query" (the query split at '&' into key=value pairs, values
 * form-decoded as the HTTP layer does).  Checked: the result is one of the
 * four documented codes; the path agrees with an independent reading of
 * the routes of CONTRACT §3 (the session routes too: an {id} is 32
 * lowercase hex digits, taken as it is); a decoded name is a valid name (no
 * NUL inside, NUL-terminated) and, percent-encoded again, routes to the
 * same name; a resolved route's method is in its Allow set and a 405's is
 * not, the Allow bits and header agree; query values of a matched route
 * lie in their documented bounds, and a rejected one names its
 * parameter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/route.h"
#include "common/assert.h"
#include "common/name.h"
#include "fuzz.h"
#include "http/http.h"

#define MAX_ARGS 16

struct arg {
    char *key;
    char *val; /* decoded */
    size_t len;
};

struct query {
    struct arg a[MAX_ARGS];
    size_t n;
};

/* First argument with this key, like a lookup of the HTTP layer. */
static const char *query_get(void *p, const char *key, size_t *len_out)
{
    struct query *q = p;
    for (size_t i = 0; i < q->n; i++) {
        if (strcmp(q->a[i].key, key) == 0) {
            *len_out = q->a[i].len;
            return q->a[i].val;
        }
    }
    return NULL;
}

static void query_parse(struct query *q, const char *s, size_t len)
{
    q->n = 0;
    size_t i = 0;
    while (i < len && q->n < MAX_ARGS) {
        size_t e = i;
        while (e < len && s[e] != '&')
            e++;
        size_t eq = i;
        while (eq < e && s[eq] != '=')
            eq++;
        struct arg *a = &q->a[q->n];
        a->key = malloc(eq - i + 1);
        size_t vlen = eq < e ? e - eq - 1 : 0;
        a->val = malloc(vlen + 1);
        TN_ASSERT(a->key != NULL && a->val != NULL);
        memcpy(a->key, s + i, eq - i);
        a->key[eq - i] = '\0';
        long n = tn_http_pct_decode(s + eq + (eq < e), vlen, true, a->val);
        TN_ASSERT(n <= (long)vlen);
        if (n < 0) { /* undecodable: the HTTP layer reports it absent */
            free(a->key);
            free(a->val);
        } else {
            a->len = (size_t)n;
            q->n++;
        }
        i = e + 1;
    }
}

static void query_free(struct query *q)
{
    for (size_t i = 0; i < q->n; i++) {
        free(q->a[i].key);
        free(q->a[i].val);
    }
    q->n = 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* An independent reading of the path grammar: "/healthz", "/readyz",
 * "/metrics", "/v1/openapi.json", "/v1/events", "/v1/leases" ["/"],
 * "/v1/leases/" SEG
 * ["/check" | "/history"], SEG a percent-encoded valid name of at most
 * 768 encoded bytes.  Returns the code and fills route, name. */
/* A session id as the server draws them: 32 lowercase hex digits. */
static bool ref_is_id(const char *s, size_t len)
{
    if (len != 32)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    }
    return true;
}

/* The rest of a path after "/v1/sessions": "" or "/" (open, list),
 * "/{id}" (get, renew, end), "/{id}/leases" (claim, release many); the
 * id is taken as it is, and one that is not an id is a 400. */
static int ref_session_path(const char *rest, const char **route)
{
    if (strcmp(rest, "") == 0 || strcmp(rest, "/") == 0) {
        *route = "session_open";
        return 0;
    }
    if (rest[0] != '/')
        return TN_ENOTFOUND;
    const char *id = rest + 1;
    size_t len = strcspn(id, "/");
    const char *tail = id + len;
    if (strcmp(tail, "") != 0 && strcmp(tail, "/leases") != 0)
        return TN_ENOTFOUND;
    if (!ref_is_id(id, len))
        return TN_EINVAL;
    *route = tail[0] == '\0' ? "session_get" : "session_claim";
    return 0;
}

static int ref_path(const char *p, const char **route, char *name,
                    size_t *name_len)
{
    static const struct {
        const char *path;
        const char *route;
    } fixed[] = {{"/healthz", "healthz"},         {"/readyz", "readyz"},
                 {"/metrics", "metrics"},         {"/v1/events", "events"},
                 {"/v1/openapi.json", "openapi"}, {"/v1/leases", "acquire"},
                 {"/v1/leases/", "acquire"}};
    *route = NULL;
    *name_len = 0;
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        if (strcmp(p, fixed[i].path) == 0) {
            *route = fixed[i].route;
            return 0;
        }
    }
    if (strcmp(p, "/ui") == 0 || strncmp(p, "/ui/", 4) == 0) {
        *route = "ui"; /* the console's files: any name under /ui/ */
        return 0;
    }
    if (strncmp(p, "/v1/sessions", 12) == 0)
        return ref_session_path(p + 12, route);
    if (strncmp(p, "/v1/leases/", 11) != 0)
        return TN_ENOTFOUND;
    const char *seg = p + 11;
    size_t len = strlen(seg);
    const char *r = "get";
    size_t n_slash = 0;
    for (size_t i = 0; i < len; i++)
        n_slash += seg[i] == '/';
    if (n_slash > 0) {
        const char *last = strrchr(seg, '/');
        if (n_slash != 1)
            return TN_ENOTFOUND;
        if (strcmp(last, "/check") == 0)
            r = "check";
        else if (strcmp(last, "/history") == 0)
            r = "history";
        else
            return TN_ENOTFOUND;
        len = (size_t)(last - seg);
    }
    if (len > 3 * TN_NAME_MAX_BYTES)
        return TN_EINVAL;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (seg[i] != '%') {
            name[o++] = seg[i];
            continue;
        }
        if (i + 2 >= len)
            return TN_EINVAL;
        int hi = hexval(seg[i + 1]);
        int lo = hexval(seg[i + 2]);
        if (hi < 0 || lo < 0)
            return TN_EINVAL;
        name[o++] = (char)(hi * 16 + lo);
        i += 2;
    }
    name[o] = '\0';
    if (!tn_name_is_valid(name, o, TN_NAME_MAX_BYTES))
        return TN_EINVAL;
    *route = r;
    *name_len = o;
    return 0;
}

/* True when header holds method as one of its ", "-separated entries. */
static bool header_has(const char *header, const char *method)
{
    size_t n = strlen(method);
    const char *h = header;
    while (*h != '\0') {
        size_t e = strcspn(h, ",");
        if (e == n && memcmp(h, method, n) == 0)
            return true;
        h += e;
        while (*h == ',' || *h == ' ')
            h++;
    }
    return false;
}

static void check_allow(const struct tn_route_match *m)
{
    for (int k = TN_HTTP_GET; k <= TN_HTTP_OTHER; k++) {
        bool bit = (m->allow & TN_ROUTE_BIT(k)) != 0;
        TN_ASSERT(bit ==
                  header_has(m->allow_header,
                             tn_route_method_name((enum tn_http_method)k)));
    }
    TN_ASSERT((m->allow & TN_ROUTE_BIT(TN_HTTP_OTHER)) == 0);
    TN_ASSERT(m->allow != 0);
}

/* The name, every byte percent-encoded, under the path of route r, must
 * route to the same route and name. */
static void check_reencoded(const struct tn_route_match *m)
{
    static const char hex[] = "0123456789ABCDEF";
    char path[16 + 3 * TN_NAME_MAX_BYTES + 16];
    size_t o = (size_t)snprintf(path, sizeof(path), "/v1/leases/");
    for (size_t i = 0; i < m->name_len; i++) {
        unsigned char c = (unsigned char)m->name[i];
        path[o++] = '%';
        path[o++] = hex[c >> 4];
        path[o++] = hex[c & 15];
    }
    const char *route = m->path_row->name;
    (void)snprintf(path + o, sizeof(path) - o, "%s",
                   strcmp(route, "check") == 0     ? "/check"
                   : strcmp(route, "history") == 0 ? "/history"
                                                   : "");
    struct tn_route_match again;
    TN_ASSERT(tn_route_path(path, &again) == 0);
    TN_ASSERT(again.path_row == m->path_row);
    TN_ASSERT(again.name_len == m->name_len);
    TN_ASSERT(memcmp(again.name, m->name, m->name_len + 1) == 0);
}

static const char *expected_route(const char *path_route,
                                  enum tn_http_method method)
{
    if (strcmp(path_route, "acquire") == 0)
        return method == TN_HTTP_POST ? "acquire" : "list";
    if (strcmp(path_route, "get") == 0)
        return method == TN_HTTP_PATCH    ? "renew"
               : method == TN_HTTP_DELETE ? "release"
                                          : "get";
    if (strcmp(path_route, "session_open") == 0)
        return method == TN_HTTP_POST ? "session_open" : "session_list";
    if (strcmp(path_route, "session_get") == 0)
        return method == TN_HTTP_PATCH    ? "session_renew"
               : method == TN_HTTP_DELETE ? "session_end"
                                          : "session_get";
    if (strcmp(path_route, "session_claim") == 0)
        return method == TN_HTTP_DELETE ? "session_release" : "session_claim";
    return path_route;
}

static void check_limit(const struct tn_route_match *m, struct query *q)
{
    size_t len = 0;
    TN_ASSERT(m->limit >= 1 && m->limit <= TN_LIST_MAX);
    const char *l = query_get(q, "limit", &len);
    if (l == NULL) {
        TN_ASSERT(m->limit == TN_ROUTE_LIMIT_DEFAULT);
        return;
    }
    size_t v = 0;
    for (size_t i = 0; i < len; i++) {
        TN_ASSERT(l[i] >= '0' && l[i] <= '9');
        v = v * 10 + (size_t)(l[i] - '0');
        TN_ASSERT(v <= TN_LIST_MAX);
    }
    TN_ASSERT(v == m->limit);
}

static bool is(const struct tn_route_match *m, const char *name)
{
    return m->row != NULL && strcmp(m->row->name, name) == 0;
}

static void check_query(const struct tn_route_match *m, int rc, struct query *q)
{
    size_t len = 0;
    if (rc == TN_EINVAL) {
        TN_ASSERT(m->bad_query != NULL);
        const char *allowed =
            is(m, "list") || is(m, "session_list")     ? "limit prefix after"
            : is(m, "history")                         ? "limit"
            : is(m, "check")                           ? "token"
            : is(m, "release") || is(m, "session_end") ? "force"
                                                       : "";
        TN_ASSERT(strstr(allowed, m->bad_query) != NULL);
        return;
    }
    TN_ASSERT(rc == 0 && m->bad_query == NULL);
    if (is(m, "list") || is(m, "session_list")) {
        TN_ASSERT(m->prefix_len <= TN_NAME_MAX_BYTES);
        TN_ASSERT(m->after_len <= TN_NAME_MAX_BYTES);
        TN_ASSERT(m->prefix != NULL);
        check_limit(m, q);
    } else if (is(m, "history")) {
        check_limit(m, q);
    } else if (is(m, "check")) {
        TN_ASSERT(m->token < TN_ROUTE_TOKEN_LIMIT);
        const char *t = query_get(q, "token", &len);
        TN_ASSERT(t != NULL && len >= 1 && len <= 16);
        char digits[24];
        int n = snprintf(digits, sizeof(digits), "%llu",
                         (unsigned long long)m->token);
        size_t z = 0;
        while (z + 1 < len && t[z] == '0')
            z++;
        TN_ASSERT((size_t)n == len - z && memcmp(t + z, digits, len - z) == 0);
    } else if (is(m, "release") || is(m, "session_end")) {
        const char *f = query_get(q, "force", &len);
        TN_ASSERT(m->force ==
                  (f != NULL && len == 4 && memcmp(f, "true", 4) == 0));
        TN_ASSERT(f == NULL || m->force ||
                  (len == 5 && memcmp(f, "false", 5) == 0));
    } else if (is(m, "events")) {
        TN_ASSERT(m->prefix != NULL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    enum tn_http_method method = (enum tn_http_method)(data[0] % 7);
    const char *s = (const char *)data + 1;
    size_t len = size - 1;
    size_t qm = 0;
    while (qm < len && s[qm] != '?')
        qm++;
    /* The path as the HTTP layer hands it over: a C string (a NUL byte
     * ends it). */
    char *path = malloc(qm + 1);
    TN_ASSERT(path != NULL);
    memcpy(path, s, qm);
    path[qm] = '\0';
    struct query q;
    query_parse(&q, s + (qm < len ? qm + 1 : len), qm < len ? len - qm - 1 : 0);

    struct tn_route_match m;
    int rc = tn_route_match(method, path, query_get, &q, &m);
    TN_ASSERT(rc == 0 || rc == TN_ENOTFOUND || rc == TN_EINVAL ||
              rc == TN_EMETHOD);

    /* The path stage against the reference reading. */
    struct tn_route_match pm;
    char ref_name[3 * TN_NAME_MAX_BYTES + 1];
    size_t ref_len = 0;
    const char *ref_route = NULL;
    int prc = tn_route_path(path, &pm);
    TN_ASSERT(prc == ref_path(path, &ref_route, ref_name, &ref_len));
    TN_ASSERT(pm.path_row == NULL
                  ? ref_route == NULL
                  : ref_route != NULL &&
                        strcmp(pm.path_row->name, ref_route) == 0);
    TN_ASSERT(pm.row == NULL);
    TN_ASSERT(pm.name_len == ref_len);
    TN_ASSERT(memcmp(pm.name, ref_name, ref_len) == 0);
    TN_ASSERT(pm.name[pm.name_len] == '\0');
    if (prc < 0) {
        TN_ASSERT(rc == prc && m.row == NULL);
        TN_ASSERT(pm.name_len == 0 && pm.allow == 0);
        goto out;
    }
    check_allow(&pm);
    bool has_name = strcmp(ref_route, "get") == 0 ||
                    strcmp(ref_route, "check") == 0 ||
                    strcmp(ref_route, "history") == 0;
    TN_ASSERT(has_name == (pm.name_len > 0));
    if (has_name) {
        TN_ASSERT(tn_name_is_valid(pm.name, pm.name_len, TN_NAME_MAX_BYTES));
        TN_ASSERT(strlen(pm.name) == pm.name_len);
        check_reencoded(&pm);
    }
    TN_ASSERT(m.path_row == pm.path_row && m.name_len == pm.name_len &&
              memcmp(m.name, pm.name, pm.name_len + 1) == 0);

    /* The method stage. */
    bool allowed = (pm.allow & TN_ROUTE_BIT(method)) != 0;
    if (!allowed) {
        TN_ASSERT(rc == TN_EMETHOD && m.row == NULL);
        TN_ASSERT(!header_has(m.allow_header, tn_route_method_name(method)));
        goto out;
    }
    TN_ASSERT(rc != TN_EMETHOD);
    TN_ASSERT(header_has(m.allow_header, tn_route_method_name(method)));
    TN_ASSERT(m.row != NULL &&
              strcmp(m.row->name, expected_route(ref_route, method)) == 0);

    /* The query stage. */
    check_query(&m, rc, &q);

    /* Deterministic. */
    struct tn_route_match again;
    TN_ASSERT(tn_route_match(method, path, query_get, &q, &again) == rc);
    TN_ASSERT(again.row == m.row && again.limit == m.limit &&
              again.token == m.token && again.force == m.force &&
              again.prefix_len == m.prefix_len);
out:
    query_free(&q);
    free(path);
    return 0;
}
