/* SPDX-License-Identifier: MIT */
/* tn_client_get, tn_client_list and tn_client_check: the read-only
 * queries, one lease, a page of them or a verdict on a token; and the
 * same for sessions (tn_client_session_get, tn_client_session_list). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <tenure/client.h>
#include <tenure/session.h>

#include "client/client_internal.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/json.h"

static int query_arg(struct tn_buf *b, const char *key, const char *value,
                     char *sep)
{
    if (value == NULL)
        return TN_OK;
    char *esc = tn_client_http_escape(value);
    if (esc == NULL)
        return TN_ENOMEM;
    int rc = tn_buf_printf(b, "%c%s=%s", *sep, key, esc);
    *sep = '&';
    tn_free(esc);
    return rc;
}

static int list_path(const char *base, const struct tn_list_args *a,
                     struct tn_buf *b)
{
    char sep = '?';
    int rc = tn_buf_printf(b, "%s", base);
    if (rc == 0)
        rc = query_arg(b, "prefix", a->prefix, &sep);
    if (rc == 0)
        rc = query_arg(b, "after", a->after, &sep);
    if (rc == 0 && a->limit > 0)
        rc = tn_buf_printf(b, "%climit=%u", sep, a->limit);
    return rc;
}

static int fetch(struct tn_client *c, const char *path, json_t **out,
                 struct tn_errmsg *em)
{
    struct tn_client_http_resp r;
    (void)pthread_mutex_lock(&c->http_mu);
    int64_t deadline = c->now_ms() + c->request_timeout_ms;
    struct tn_client_http_req req = {"GET", path, NULL, deadline};
    int rc = tn_client_http_do(&c->http, &req, &r, em);
    (void)pthread_mutex_unlock(&c->http_mu);
    if (rc < 0)
        return rc;
    if (r.status == 200) {
        rc = tn_json_parse_object(r.body, r.body_len, false, out, em);
        if (rc < 0)
            rc = TN_EPROTO;
    } else {
        rc = tn_client_map_error(r.status, r.body, r.body_len, NULL, em);
    }
    tn_client_http_resp_release(&r);
    return rc;
}

/* GET /v1/leases/NAME + suffix, after checking the name. */
static int fetch_lease(struct tn_client *c, const char *name,
                       const char *suffix, json_t **out, struct tn_errmsg *em)
{
    int rc = tn_client_valid_name(name, em);
    if (rc < 0)
        return rc;
    char *path = tn_client_lease_path(name, suffix);
    if (path == NULL)
        return TN_ENOMEM;
    rc = fetch(c, path, out, em);
    tn_free(path);
    return rc;
}

int tn_client_get(struct tn_client *c, const char *name,
                  struct tn_lease_info *out, struct tn_errmsg *em)
{
    memset(out, 0, sizeof(*out));
    json_t *o = NULL;
    int rc = fetch_lease(c, name, "", &o, em);
    if (rc < 0)
        return rc;
    rc = tn_client_decode_info(o, out, em);
    json_decref(o);
    return rc;
}

static int decode_list(json_t *o, struct tn_lease_list *list,
                       struct tn_errmsg *em)
{
    json_t *arr = json_object_get(o, "leases");
    if (!json_is_array(arr)) {
        tn_errmsg_set(em, "list answer without \"leases\"");
        return TN_EPROTO;
    }
    size_t n = json_array_size(arr);
    list->items = tn_reallocarray(NULL, n, sizeof(*list->items));
    if (list->items == NULL)
        return TN_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        int rc =
            tn_client_decode_info(json_array_get(arr, i), &list->items[i], em);
        if (rc < 0)
            return rc;
        list->count = i + 1;
    }
    const char *next = NULL;
    size_t len = 0;
    if (tn_json_get_str(o, "next", &next, &len, NULL) == TN_OK &&
        len <= TN_CLIENT_NAME_MAX) {
        list->has_next = true;
        memcpy(list->next, next, len);
        list->next[len] = '\0';
    }
    return TN_OK;
}

/* GET base with a's prefix, after and limit: the answer's object. */
static int fetch_list(struct tn_client *c, const char *base,
                      const struct tn_list_args *a, json_t **o,
                      struct tn_errmsg *em)
{
    struct tn_buf path;
    tn_buf_init(&path, 4096);
    int rc = list_path(base, a, &path);
    if (rc == 0)
        rc = fetch(c, path.data, o, em);
    tn_buf_release(&path);
    return rc;
}

int tn_client_list(struct tn_client *c, const struct tn_list_args *a,
                   struct tn_lease_list **out, struct tn_errmsg *em)
{
    *out = NULL;
    json_t *o = NULL;
    int rc = fetch_list(c, "/v1/leases", a, &o, em);
    if (rc < 0)
        return rc;
    struct tn_lease_list *list = tn_calloc(1, sizeof(*list));
    rc = list != NULL ? decode_list(o, list, em) : TN_ENOMEM;
    json_decref(o);
    if (rc < 0) {
        tn_lease_list_free(list);
        return rc;
    }
    *out = list;
    return TN_OK;
}

void tn_lease_list_free(struct tn_lease_list *list)
{
    if (list == NULL)
        return;
    tn_free(list->items);
    tn_free(list);
}

static int decode_check(json_t *o, struct tn_check_result *out,
                        struct tn_errmsg *em)
{
    int64_t v = 0;
    if (tn_json_get_bool(o, "current", &out->current, em) < 0 ||
        tn_json_get_int(o, "floor", 0, INT64_MAX, &v, em) < 0) {
        tn_errmsg_set(em, "check answer without current or floor");
        return TN_EPROTO;
    }
    out->floor = (uint64_t)v;
    int rc = tn_json_get_int(o, "token", 0, INT64_MAX, &v, em);
    if (rc == TN_OK) {
        out->has_token = true;
        out->token = (uint64_t)v;
    } else if (rc != TN_ENOTFOUND) {
        return TN_EPROTO;
    }
    return TN_OK;
}

int tn_client_check(struct tn_client *c, const char *name, uint64_t token,
                    struct tn_check_result *out, struct tn_errmsg *em)
{
    memset(out, 0, sizeof(*out));
    char suffix[64];
    (void)snprintf(suffix, sizeof(suffix), "/check?token=%" PRIu64, token);
    json_t *o = NULL;
    int rc = fetch_lease(c, name, suffix, &o, em);
    if (rc < 0)
        return rc;
    rc = decode_check(o, out, em);
    json_decref(o);
    return rc;
}

int tn_client_session_get(struct tn_client *c, const char *session_id,
                          struct tn_session_info *out, struct tn_errmsg *em)
{
    memset(out, 0, sizeof(*out));
    size_t n = session_id != NULL ? strlen(session_id) : 0;
    if (n == 0 || n > TN_SESSION_ID_MAX) {
        tn_errmsg_set(em, "a session_id is 1 to %d bytes", TN_SESSION_ID_MAX);
        return TN_EINVAL;
    }
    char *path = tn_client_session_path(session_id, "");
    if (path == NULL)
        return TN_ENOMEM;
    json_t *o = NULL;
    int rc = fetch(c, path, &o, em);
    tn_free(path);
    if (rc < 0)
        return rc;
    rc = tn_client_decode_session(o, out, em);
    json_decref(o);
    return rc;
}

static int decode_sessions(json_t *o, struct tn_session_list *list,
                           struct tn_errmsg *em)
{
    json_t *arr = json_object_get(o, "sessions");
    if (!json_is_array(arr)) {
        tn_errmsg_set(em, "list answer without \"sessions\"");
        return TN_EPROTO;
    }
    size_t n = json_array_size(arr);
    list->items = tn_reallocarray(NULL, n > 0 ? n : 1, sizeof(*list->items));
    if (list->items == NULL)
        return TN_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        int rc = tn_client_decode_session(json_array_get(arr, i),
                                          &list->items[i], em);
        if (rc < 0)
            return rc;
        list->count = i + 1;
    }
    const char *next = NULL;
    size_t len = 0;
    if (tn_json_get_str(o, "next", &next, &len, NULL) == TN_OK &&
        len <= TN_SESSION_ID_MAX) {
        list->has_next = true;
        memcpy(list->next, next, len);
        list->next[len] = '\0';
    }
    return TN_OK;
}

int tn_client_session_list(struct tn_client *c,
                           const struct tn_session_list_args *a,
                           struct tn_session_list **out, struct tn_errmsg *em)
{
    *out = NULL;
    json_t *o = NULL;
    struct tn_list_args q = {a->prefix, a->after, a->limit};
    int rc = fetch_list(c, "/v1/sessions", &q, &o, em);
    if (rc < 0)
        return rc;
    struct tn_session_list *list = tn_calloc(1, sizeof(*list));
    rc = list != NULL ? decode_sessions(o, list, em) : TN_ENOMEM;
    json_decref(o);
    if (rc < 0) {
        tn_client_session_list_free(list);
        return rc;
    }
    *out = list;
    return TN_OK;
}

void tn_client_session_list_free(struct tn_session_list *list)
{
    if (list == NULL)
        return;
    tn_free(list->items);
    tn_free(list);
}
