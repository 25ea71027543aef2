/* SPDX-License-Identifier: MIT */
/* Request routing of the v1 API (src/api/route.c): a table of method,
 * path and query cases with the route, decoded name, Allow set and query
 * values each must give, plus the boundaries of names and tokens; and the
 * route table itself: consistent rows, and exactly the paths and methods
 * that docs/openapi.yaml (as built in) describes. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <tenure/err.h>

#include "api/route.h"
#include "common/embed.h"
#include "tn_test.h"

#include <cmocka.h>

#define MAX_ARGS 8

/* A query string "k=v&k=v", form-decoded like the HTTP layer does. */
struct query {
    char keys[MAX_ARGS][64];
    char vals[MAX_ARGS][1024];
    size_t lens[MAX_ARGS];
    size_t n;
};

static void query_parse(struct query *q, const char *s)
{
    memset(q, 0, sizeof(*q));
    while (s != NULL && *s != '\0' && q->n < MAX_ARGS) {
        const char *amp = strchr(s, '&');
        size_t len = amp != NULL ? (size_t)(amp - s) : strlen(s);
        const char *eq = memchr(s, '=', len);
        size_t klen = eq != NULL ? (size_t)(eq - s) : len;
        assert_true(klen < sizeof(q->keys[0]));
        memcpy(q->keys[q->n], s, klen);
        const char *v = eq != NULL ? eq + 1 : s + len;
        size_t vlen = (size_t)(s + len - v);
        assert_true(vlen < sizeof(q->vals[0]));
        long n = tn_http_pct_decode(v, vlen, true, q->vals[q->n]);
        assert_true(n >= 0);
        q->lens[q->n++] = (size_t)n;
        s = amp != NULL ? amp + 1 : NULL;
    }
}

static const char *query_get(void *arg, const char *key, size_t *len_out)
{
    struct query *q = arg;
    for (size_t i = 0; i < q->n; i++) {
        if (strcmp(q->keys[i], key) == 0) {
            *len_out = q->lens[i];
            return q->vals[i];
        }
    }
    return NULL;
}

#define SID "0123456789abcdef0123456789abcdef"

struct rcase {
    enum tn_http_method method;
    const char *path;
    const char *query;
    int rc;            /* of tn_route_match */
    const char *route; /* resolved route's name (NULL on error) */
    const char *name;  /* decoded name, or NULL for none */
    const char *allow; /* Allow header, NULL: do not compare */
    const char *bad;   /* bad_query expected, NULL: none */
};

static const struct rcase cases[] = {
    {TN_HTTP_GET, "/healthz", "", 0, "healthz", NULL, "GET, HEAD", NULL},
    {TN_HTTP_HEAD, "/healthz", "", 0, "healthz", NULL, NULL, NULL},
    {TN_HTTP_HEAD, "/readyz", "", 0, "readyz", NULL, NULL, NULL},
    {TN_HTTP_GET, "/metrics", "", 0, "metrics", NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/openapi.json", "", 0, "openapi", NULL, "GET, HEAD",
     NULL},
    {TN_HTTP_HEAD, "/v1/openapi.json", "", 0, "openapi", NULL, NULL, NULL},
    {TN_HTTP_PUT, "/v1/openapi.json", "", TN_EMETHOD, NULL, NULL, "GET, HEAD",
     NULL},
    {TN_HTTP_GET, "/v1/openapi.yaml", "", TN_ENOTFOUND, NULL, NULL, NULL, NULL},
    {TN_HTTP_POST, "/metrics", "", TN_EMETHOD, NULL, NULL, "GET, HEAD", NULL},
    {TN_HTTP_OTHER, "/healthz", "", TN_EMETHOD, NULL, NULL, "GET, HEAD", NULL},
    {TN_HTTP_GET, "/v1/events", "prefix=a", 0, "events", NULL, "GET", NULL},
    {TN_HTTP_HEAD, "/v1/events", "", TN_EMETHOD, NULL, NULL, "GET", NULL},
    {TN_HTTP_POST, "/v1/leases", "", 0, "acquire", NULL, "GET, POST", NULL},
    {TN_HTTP_POST, "/v1/leases/", "", 0, "acquire", NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/leases", "", 0, "list", NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/leases", "limit=5&prefix=ab&after=x", 0, "list", NULL,
     NULL, NULL},
    {TN_HTTP_GET, "/v1/leases", "limit=1000", 0, "list", NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/leases", "limit=0", TN_EINVAL, "list", NULL, NULL,
     "limit"},
    {TN_HTTP_GET, "/v1/leases", "limit=1001", TN_EINVAL, "list", NULL, NULL,
     "limit"},
    {TN_HTTP_GET, "/v1/leases", "limit=", TN_EINVAL, "list", NULL, NULL,
     "limit"},
    {TN_HTTP_GET, "/v1/leases", "limit=-1", TN_EINVAL, "list", NULL, NULL,
     "limit"},
    {TN_HTTP_GET, "/v1/leases", "limit=99999999999999999999999", TN_EINVAL,
     "list", NULL, NULL, "limit"},
    {TN_HTTP_DELETE, "/v1/leases", "", TN_EMETHOD, NULL, NULL, "GET, POST",
     NULL},
    {TN_HTTP_HEAD, "/v1/leases", "", TN_EMETHOD, NULL, NULL, "GET, POST", NULL},
    {TN_HTTP_GET, "/v1/leases/a", "", 0, "get", "a", "GET, PATCH, DELETE",
     NULL},
    {TN_HTTP_PATCH, "/v1/leases/a", "", 0, "renew", "a", NULL, NULL},
    {TN_HTTP_DELETE, "/v1/leases/a", "", 0, "release", "a", NULL, NULL},
    {TN_HTTP_DELETE, "/v1/leases/a", "force=true", 0, "release", "a", NULL,
     NULL},
    {TN_HTTP_DELETE, "/v1/leases/a", "force=false", 0, "release", "a", NULL,
     NULL},
    {TN_HTTP_DELETE, "/v1/leases/a", "force=yes", TN_EINVAL, "release", "a",
     NULL, "force"},
    {TN_HTTP_DELETE, "/v1/leases/a", "force=true%00x", TN_EINVAL, "release",
     "a", NULL, "force"},
    {TN_HTTP_PUT, "/v1/leases/a", "", TN_EMETHOD, NULL, "a",
     "GET, PATCH, DELETE", NULL},
    {TN_HTTP_POST, "/v1/leases/a", "", TN_EMETHOD, NULL, "a",
     "GET, PATCH, DELETE", NULL},
    {TN_HTTP_GET, "/v1/leases/shard%3A8841", "", 0, "get", "shard:8841", NULL,
     NULL},
    {TN_HTTP_GET, "/v1/leases/a%2Fb", "", 0, "get", "a/b", NULL, NULL},
    {TN_HTTP_GET, "/v1/leases/a%20b+c", "", 0, "get", "a b+c", NULL, NULL},
    {TN_HTTP_GET, "/v1/leases/%C3%A9t%C3%A9", "", 0, "get", "\xc3\xa9t\xc3\xa9",
     NULL, NULL},
    {TN_HTTP_GET, "/v1/leases/%2e%2e", "", 0, "get", "..", NULL, NULL},
    {TN_HTTP_GET, "/v1/leases/a/check", "token=7", 0, "check", "a", "GET",
     NULL},
    {TN_HTTP_GET, "/v1/leases/a/check", "token=0", 0, "check", "a", NULL, NULL},
    {TN_HTTP_GET, "/v1/leases/a/check", "token=9007199254740991", 0, "check",
     "a", NULL, NULL},
    {TN_HTTP_GET, "/v1/leases/a/check", "token=9007199254740992", TN_EINVAL,
     "check", "a", NULL, "token"},
    {TN_HTTP_GET, "/v1/leases/a/check", "", TN_EINVAL, "check", "a", NULL,
     "token"},
    {TN_HTTP_GET, "/v1/leases/a/check", "token=", TN_EINVAL, "check", "a", NULL,
     "token"},
    {TN_HTTP_GET, "/v1/leases/a/check", "token=12a", TN_EINVAL, "check", "a",
     NULL, "token"},
    {TN_HTTP_GET, "/v1/leases/a/check", "token=+1", TN_EINVAL, "check", "a",
     NULL, "token"},
    {TN_HTTP_GET, "/v1/leases/a/check", "token=00000000000000001", TN_EINVAL,
     "check", "a", NULL, "token"},
    {TN_HTTP_POST, "/v1/leases/a/check", "token=1", TN_EMETHOD, NULL, "a",
     "GET", NULL},
    {TN_HTTP_GET, "/v1/leases/a/history", "limit=3", 0, "history", "a", "GET",
     NULL},
    {TN_HTTP_GET, "/v1/leases/a/history", "limit=x", TN_EINVAL, "history", "a",
     NULL, "limit"},
    {TN_HTTP_DELETE, "/v1/leases/a/history", "", TN_EMETHOD, NULL, "a", "GET",
     NULL},
    {TN_HTTP_GET, "/v1/leases/a/other", "", TN_ENOTFOUND, NULL, NULL, NULL,
     NULL},
    {TN_HTTP_GET, "/v1/leases/a/check/", "", TN_ENOTFOUND, NULL, NULL, NULL,
     NULL},
    {TN_HTTP_GET, "/v1/leases/a//check", "", TN_ENOTFOUND, NULL, NULL, NULL,
     NULL},
    {TN_HTTP_GET, "/v1/leases//", "", TN_ENOTFOUND, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/leasesx", "", TN_ENOTFOUND, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/lease", "", TN_ENOTFOUND, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/", "", TN_ENOTFOUND, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "", "", TN_ENOTFOUND, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/healthz/", "", TN_ENOTFOUND, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/HEALTHZ", "", TN_ENOTFOUND, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/events/", "", TN_ENOTFOUND, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/leases//check", "", TN_EINVAL, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/leases/%", "", TN_EINVAL, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/leases/%4", "", TN_EINVAL, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/leases/%zz", "", TN_EINVAL, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/leases/a%00", "", TN_EINVAL, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/leases/%7F", "", TN_EINVAL, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/leases/%C3", "", TN_EINVAL, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/leases/%C2%85", "", TN_EINVAL, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/leases/%ED%A0%80", "", TN_EINVAL, NULL, NULL, NULL,
     NULL},
    {TN_HTTP_PUT, "/v1/leases/%zz", "", TN_EINVAL, NULL, NULL, NULL, NULL},
    /* Sessions: {id} is 32 lowercase hex digits, taken as they are. */
    {TN_HTTP_POST, "/v1/sessions", "", 0, "session_open", NULL, "GET, POST",
     NULL},
    {TN_HTTP_POST, "/v1/sessions/", "", 0, "session_open", NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/sessions", "prefix=w/&limit=7&after=ab", 0,
     "session_list", NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/sessions", "limit=0", TN_EINVAL, "session_list", NULL,
     NULL, "limit"},
    {TN_HTTP_DELETE, "/v1/sessions", "", TN_EMETHOD, NULL, NULL, "GET, POST",
     NULL},
    {TN_HTTP_GET, "/v1/sessions/" SID, "", 0, "session_get", NULL,
     "GET, PATCH, DELETE", NULL},
    {TN_HTTP_PATCH, "/v1/sessions/" SID, "", 0, "session_renew", NULL, NULL,
     NULL},
    {TN_HTTP_DELETE, "/v1/sessions/" SID, "force=true", 0, "session_end", NULL,
     NULL, NULL},
    {TN_HTTP_DELETE, "/v1/sessions/" SID, "force=1", TN_EINVAL, "session_end",
     NULL, NULL, "force"},
    {TN_HTTP_POST, "/v1/sessions/" SID, "", TN_EMETHOD, NULL, NULL,
     "GET, PATCH, DELETE", NULL},
    {TN_HTTP_POST, "/v1/sessions/" SID "/leases", "", 0, "session_claim", NULL,
     "POST, DELETE", NULL},
    {TN_HTTP_DELETE, "/v1/sessions/" SID "/leases", "", 0, "session_release",
     NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/sessions/" SID "/leases", "", TN_EMETHOD, NULL, NULL,
     "POST, DELETE", NULL},
    {TN_HTTP_GET, "/v1/sessions/" SID "/", "", TN_ENOTFOUND, NULL, NULL, NULL,
     NULL},
    {TN_HTTP_GET, "/v1/sessions/" SID "/other", "", TN_ENOTFOUND, NULL, NULL,
     NULL, NULL},
    {TN_HTTP_GET, "/v1/sessions/0123456789ABCDEF0123456789abcdef", "",
     TN_EINVAL, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/sessions/0123456789abcdef0123456789abcde", "", TN_EINVAL,
     NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/sessions/0123456789abcdef0123456789abcdef0", "",
     TN_EINVAL, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/sessions/0123456789abcdef0123456789abcdeg", "",
     TN_EINVAL, NULL, NULL, NULL, NULL},
    {TN_HTTP_GET, "/v1/sessions/%30123456789abcdef0123456789abcde", "",
     TN_EINVAL, NULL, NULL, NULL, NULL},
    {TN_HTTP_POST, "/v1/sessions/x/leases", "", TN_EINVAL, NULL, NULL, NULL,
     NULL},
    {TN_HTTP_GET, "/v1/sessions//leases", "", TN_EINVAL, NULL, NULL, NULL,
     NULL},
};

static void check_case(const struct rcase *k)
{
    struct query q;
    struct tn_route_match m;
    query_parse(&q, k->query);
    int rc = tn_route_match(k->method, k->path, query_get, &q, &m);
    char what[160];
    (void)snprintf(what, sizeof(what), "%s %s?%s",
                   tn_route_method_name(k->method), k->path, k->query);
    const char *route = m.row != NULL ? m.row->name : NULL;
    print_message("%s -> %d %s\n", what, rc, route != NULL ? route : "none");
    assert_int_equal(rc, k->rc);
    if (k->route == NULL)
        assert_null(route);
    else
        assert_string_equal(route, k->route);
    if (k->name != NULL) {
        assert_int_equal(m.name_len, strlen(k->name));
        assert_memory_equal(m.name, k->name, m.name_len + 1);
    } else {
        assert_int_equal(m.name_len, 0);
    }
    if (k->allow != NULL)
        assert_string_equal(m.allow_header, k->allow);
    if (k->bad != NULL)
        assert_string_equal(m.bad_query, k->bad);
    else
        assert_null(m.bad_query);
    if (rc == 0) {
        /* A resolved route's method is in its Allow set. */
        assert_true((m.allow & TN_ROUTE_BIT(k->method)) != 0);
        assert_non_null(
            strstr(m.allow_header, tn_route_method_name(k->method)));
    }
    if (rc == TN_EMETHOD)
        assert_true((m.allow & TN_ROUTE_BIT(k->method)) == 0);
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        check_case(&cases[i]);
}

static void test_query_values(void **state)
{
    (void)state;
    struct query q;
    struct tn_route_match m;
    query_parse(&q, "limit=5&prefix=a%2Bb+c&after=x%3Ay");
    assert_int_equal(
        tn_route_match(TN_HTTP_GET, "/v1/leases", query_get, &q, &m), 0);
    assert_int_equal(m.limit, 5);
    assert_int_equal(m.prefix_len, 5);
    assert_memory_equal(m.prefix, "a+b c", 5);
    assert_int_equal(m.after_len, 3);
    assert_memory_equal(m.after, "x:y", 3);

    query_parse(&q, "");
    assert_int_equal(
        tn_route_match(TN_HTTP_GET, "/v1/leases", query_get, &q, &m), 0);
    assert_int_equal(m.limit, TN_ROUTE_LIMIT_DEFAULT);
    assert_string_equal(m.prefix, "");
    assert_int_equal(m.prefix_len, 0);
    assert_null(m.after);
    assert_int_equal(m.after_len, 0);

    query_parse(&q, "token=9007199254740991");
    assert_int_equal(
        tn_route_match(TN_HTTP_GET, "/v1/leases/n/check", query_get, &q, &m),
        0);
    assert_true(m.token == TN_ROUTE_TOKEN_LIMIT - 1);

    query_parse(&q, "force=true");
    assert_int_equal(
        tn_route_match(TN_HTTP_DELETE, "/v1/leases/n", query_get, &q, &m), 0);
    assert_true(m.force);
    query_parse(&q, "force=false");
    assert_int_equal(
        tn_route_match(TN_HTTP_DELETE, "/v1/leases/n", query_get, &q, &m), 0);
    assert_false(m.force);
    /* force is a release parameter only: a renew ignores it. */
    query_parse(&q, "force=bogus");
    assert_int_equal(
        tn_route_match(TN_HTTP_PATCH, "/v1/leases/n", query_get, &q, &m), 0);

    /* Events take any prefix; a list caps prefix and after at 256. */
    char big[8 + 300];
    memcpy(big, "prefix=", 7);
    memset(big + 7, 'p', 300);
    big[7 + 300] = '\0';
    query_parse(&q, big);
    assert_int_equal(
        tn_route_match(TN_HTTP_GET, "/v1/events", query_get, &q, &m), 0);
    assert_int_equal(m.prefix_len, 300);
    assert_int_equal(
        tn_route_match(TN_HTTP_GET, "/v1/leases", query_get, &q, &m),
        TN_EINVAL);
    assert_string_equal(m.bad_query, "prefix");
    big[7 + 256] = '\0';
    query_parse(&q, big);
    assert_int_equal(
        tn_route_match(TN_HTTP_GET, "/v1/leases", query_get, &q, &m), 0);
    assert_int_equal(m.prefix_len, 256);
    memcpy(big, "after=a", 7);
    big[7 + 256] = 'p';
    query_parse(&q, big);
    assert_int_equal(
        tn_route_match(TN_HTTP_GET, "/v1/leases", query_get, &q, &m),
        TN_EINVAL);
    assert_string_equal(m.bad_query, "after");
}

/* Names at the length bound: 256 bytes pass, 257 fail, plain or fully
 * percent-encoded; an encoded segment over 768 bytes fails unread. */
static void test_name_bounds(void **state)
{
    (void)state;
    char path[32 + 3 * TN_NAME_MAX_BYTES + 8];
    struct tn_route_match m;
    size_t off = (size_t)snprintf(path, sizeof(path), "/v1/leases/");
    memset(path + off, 'n', TN_NAME_MAX_BYTES);
    path[off + TN_NAME_MAX_BYTES] = '\0';
    assert_int_equal(tn_route_path(path, &m), 0);
    assert_int_equal(m.name_len, TN_NAME_MAX_BYTES);
    assert_string_equal(m.path_row->name, "get");
    path[off + TN_NAME_MAX_BYTES] = 'n';
    path[off + TN_NAME_MAX_BYTES + 1] = '\0';
    assert_int_equal(tn_route_path(path, &m), TN_EINVAL);
    assert_null(m.path_row);

    for (size_t i = 0; i < TN_NAME_MAX_BYTES; i++)
        memcpy(path + off + 3 * i, "%41", 3);
    (void)snprintf(path + off + 3 * TN_NAME_MAX_BYTES, 8, "/check");
    assert_int_equal(tn_route_path(path, &m), 0);
    assert_string_equal(m.path_row->name, "check");
    assert_int_equal(m.name_len, TN_NAME_MAX_BYTES);
    assert_int_equal(m.name[0], 'A');
    assert_int_equal(m.name[TN_NAME_MAX_BYTES], '\0');
    (void)snprintf(path + off + 3 * TN_NAME_MAX_BYTES, 8, "A");
    assert_int_equal(tn_route_path(path, &m), TN_EINVAL);
}

/* A session path: the {id} as it was sent, bad_id on a bad one (the
 * 400 then says so), and only the batch rows may take large bodies. */
static void test_session_ids(void **state)
{
    (void)state;
    struct tn_route_match m;
    assert_int_equal(tn_route_path("/v1/sessions/" SID "/leases", &m), 0);
    assert_string_equal(m.id, SID);
    assert_false(m.bad_id);
    assert_int_equal(m.name_len, 0);
    assert_int_equal(tn_route_path("/v1/sessions/" SID, &m), 0);
    assert_string_equal(m.id, SID);
    assert_int_equal(tn_route_path("/v1/sessions/abc", &m), TN_EINVAL);
    assert_true(m.bad_id);
    assert_string_equal(m.id, "");
    assert_int_equal(tn_route_path("/v1/leases/%zz", &m), TN_EINVAL);
    assert_false(m.bad_id);
    assert_int_equal(tn_route_path("/v1/leases/a", &m), 0);
    assert_string_equal(m.id, "");
    for (size_t i = 0; i < tn_routes_count; i++) {
        const struct tn_route *r = &tn_routes[i];
        bool batch = strcmp(r->pattern, "/v1/sessions/{id}/leases") == 0;
        assert_int_equal((r->flags & TN_ROUTE_BATCH) != 0, batch);
        if (strncmp(r->pattern, "/v1/sessions", 12) == 0) {
            assert_int_equal(r->target, TN_ROUTE_SOME);
            assert_int_equal(r->off_rc, TN_ENOTIMPL);
        }
    }
}

static void test_names(void **state)
{
    (void)state;
    for (size_t r = 0; r < tn_routes_count; r++)
        assert_string_not_equal(tn_routes[r].name, "");
    assert_int_equal(tn_route_slot(NULL), TN_ROUTE_SLOT_OTHER);
    assert_string_equal(tn_route_method_name(TN_HTTP_PATCH), "PATCH");
    assert_string_equal(tn_route_method_name(TN_HTTP_OTHER), "OTHER");
}

/* docs/openapi.yaml as built into tenured (src/api/CMakeLists.txt). */
extern const struct tn_embed tn_openapi_assets[];

static const char *const openapi_methods[] = {"get", "head",  "post",
                                              "put", "patch", "delete"};

static json_t *openapi_paths(void)
{
    const struct tn_embed *e = &tn_openapi_assets[0];
    json_t *doc = json_loadb((const char *)e->data, e->len, 0, NULL);
    assert_non_null(doc);
    json_t *paths = json_incref(json_object_get(doc, "paths"));
    json_decref(doc);
    assert_true(json_is_object(paths));
    return paths;
}

static const struct tn_route *find_row(const char *pattern, const char *m)
{
    for (size_t i = 0; i < tn_routes_count; i++) {
        const struct tn_route *r = &tn_routes[i];
        if (strcmp(r->pattern, pattern) == 0 &&
            strcasecmp(tn_route_method_name(r->method), m) == 0)
            return r;
    }
    return NULL;
}

/* Every path and method of docs/openapi.yaml has its row in the route
 * table, and every row is described there: a new endpoint cannot be
 * served undocumented, nor documented unserved. */
static void test_table__matches_openapi(void **state)
{
    (void)state;
    json_t *paths = openapi_paths();
    const char *path = NULL;
    json_t *item = NULL;
    int missing = 0;
    json_object_foreach(paths, path, item)
    {
        for (size_t k = 0; k < 6; k++) {
            if (json_object_get(item, openapi_methods[k]) != NULL &&
                find_row(path, openapi_methods[k]) == NULL) {
                print_error("openapi.yaml has %s %s, the route table not\n",
                            openapi_methods[k], path);
                missing++;
            }
        }
    }
    for (size_t i = 0; i < tn_routes_count; i++) {
        const struct tn_route *r = &tn_routes[i];
        char m[8];
        const char *name = tn_route_method_name(r->method);
        size_t n = strlen(name);
        assert_true(n < sizeof(m));
        for (size_t j = 0; j <= n; j++)
            m[j] = (char)(name[j] >= 'A' && name[j] <= 'Z' ? name[j] + 32
                                                           : name[j]);
        item = json_object_get(paths, r->pattern);
        if (item == NULL || json_object_get(item, m) == NULL) {
            print_error("route %s %s is not in openapi.yaml\n", name,
                        r->pattern);
            missing++;
        }
    }
    json_decref(paths);
    assert_int_equal(missing, 0);
}

#define PATH_FLAGS                                                             \
    (TN_ROUTE_PUBLIC | TN_ROUTE_RAW_QUERY | TN_ROUTE_WORK | TN_ROUTE_SLASH)

/* The rows keep the rules routes.def states: the rows of a path are
 * adjacent and agree on what the path decides; one row per method and
 * path; every checked action has its 403 message, every availability
 * check its 404 message; a name in the body means a body. */
static void test_table__rows_consistent(void **state)
{
    (void)state;
    assert_true(tn_routes_count > 0 && tn_routes_count < TN_ROUTE_MAX);
    for (size_t i = 0; i < tn_routes_count; i++) {
        const struct tn_route *r = &tn_routes[i];
        print_message("%s %s\n", tn_route_method_name(r->method), r->pattern);
        assert_non_null(r->handler);
        assert_true(r->name != NULL && r->name[0] != '\0');
        assert_true(r->pattern[0] == '/');
        assert_true(r->method < TN_HTTP_OTHER);
        assert_true((r->target == TN_ROUTE_NOBODY) == (r->forbidden == NULL));
        assert_true((r->is_on == NULL) == (r->off_message == NULL));
        if (r->target == TN_ROUTE_BODY_NAME)
            assert_true((r->flags & TN_ROUTE_BODY) != 0);
        if (r->target == TN_ROUTE_PREFIX)
            assert_true(
                (r->query & (TN_ROUTE_Q_PREFIX | TN_ROUTE_Q_ANY_PREFIX)) != 0);
        if ((r->flags & TN_ROUTE_PUBLIC) != 0)
            assert_int_equal(r->target, TN_ROUTE_NOBODY);
        for (size_t j = i + 1; j < tn_routes_count; j++) {
            const struct tn_route *o = &tn_routes[j];
            if (strcmp(o->pattern, r->pattern) != 0)
                continue;
            assert_true(o->method != r->method);
            assert_int_equal(o->flags & PATH_FLAGS, r->flags & PATH_FLAGS);
            /* adjacent: every row between them has the same path */
            assert_string_equal(tn_routes[j - 1].pattern, r->pattern);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_query_values),
        cmocka_unit_test(test_name_bounds),
        cmocka_unit_test(test_session_ids),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_table__matches_openapi),
        cmocka_unit_test(test_table__rows_consistent),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
