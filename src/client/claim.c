/* SPDX-License-Identifier: MIT */
/* Many names at once under a session: a claim (POST
 * /v1/sessions/{id}/leases) and a batch release (DELETE of the same path).
 * Every name of a claim is decided on its own by the server; the answer
 * is read into one item per name, in the order asked, and an answer that
 * leaves a name out, or names one that was not asked, is a protocol
 * error.  A claim is safe to send again: a name the session already holds
 * answers the same grant, and grant.c hands back the handle it has. */
#include <pthread.h>
#include <string.h>

#include <tenure/client.h>
#include <tenure/session.h>

#include "client/client_internal.h"
#include "common/alloc.h"
#include "common/json.h"

static int check_names(const struct tn_claim_args *a, struct tn_errmsg *em)
{
    if (a->n_names == 0 || a->n_names > TN_SESSION_CLAIM_MAX) {
        tn_errmsg_set(em, "a claim takes 1 to %d names", TN_SESSION_CLAIM_MAX);
        return TN_EINVAL;
    }
    if (a->lock_delay_ms < 0) {
        tn_errmsg_set(em, "lock_delay_ms must be >= 0");
        return TN_EINVAL;
    }
    for (size_t i = 0; i < a->n_names; i++) {
        int rc = tn_client_valid_name(a->names[i], em);
        if (rc < 0)
            return rc;
    }
    return TN_OK;
}

static json_t *claim_body(const struct tn_session *s,
                          const struct tn_claim_args *a)
{
    json_t *names = json_array();
    json_t *o =
        json_pack("{s:s,s:o}", "session_secret", s->secret, "names", names);
    if (o == NULL)
        return NULL;
    int bad = 0;
    for (size_t i = 0; i < a->n_names; i++)
        bad |= json_array_append_new(names, json_string(a->names[i]));
    if (a->owner_id != NULL)
        bad |= json_object_set_new(o, "owner_id", json_string(a->owner_id));
    if (a->lock_delay_ms > 0)
        bad |= json_object_set_new(o, "lock_delay_ms",
                                   json_integer(a->lock_delay_ms));
    if (bad != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

void tn_claim_result_free(struct tn_claim_result *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; r->items != NULL && i < r->count; i++) {
        tn_lease_free(r->items[i].lease);
        tn_free((char *)r->items[i].name);
    }
    tn_free(r->items);
    tn_free(r);
}

/* A result of one undecided item per name, each with its own copy of the
 * name (items outlive the caller's array, and a granted item's lease may
 * be taken and freed before the result). */
static struct tn_claim_result *result_new(const struct tn_claim_args *a)
{
    struct tn_claim_result *res = tn_calloc(1, sizeof(*res));
    if (res == NULL)
        return NULL;
    res->items = tn_calloc(a->n_names, sizeof(*res->items));
    if (res->items == NULL) {
        tn_free(res);
        return NULL;
    }
    res->count = a->n_names;
    res->expires_in_ms = -1;
    for (size_t i = 0; i < a->n_names; i++) {
        struct tn_claim_item *it = &res->items[i];
        it->holder.expires_in_ms = -1;
        it->holder.retry_after_ms = -1;
        if ((it->name = tn_strdup(a->names[i])) == NULL) {
            tn_claim_result_free(res);
            return NULL;
        }
    }
    return res;
}

/* The item of name, not decided yet; NULL when name was not asked (or
 * answered twice). */
static struct tn_claim_item *item_of(struct tn_claim_result *res,
                                     const char *name)
{
    for (size_t i = 0; i < res->count; i++) {
        struct tn_claim_item *it = &res->items[i];
        if (it->status == 0 && strcmp(it->name, name) == 0)
            return it;
    }
    return NULL;
}

struct claim_ctx {
    struct tn_session *s;        /* the session */
    const char *owner;           /* owner of the grants */
    int64_t sent_ms;             /* when the claim was sent */
    struct tn_claim_result *res; /* being filled */
};

/* One member of the answer ("granted", "held" or "lock_delay"). */
static int read_part(struct claim_ctx *x, json_t *answer, const char *key,
                     enum tn_claim_status st, struct tn_errmsg *em)
{
    json_t *arr = json_object_get(answer, key);
    if (arr == NULL)
        return TN_OK;
    if (!json_is_array(arr))
        goto out_proto;
    size_t i = 0;
    json_t *v = NULL;
    json_array_foreach(arr, i, v)
    {
        const char *name = json_string_value(json_object_get(v, "name"));
        struct tn_claim_item *it = name != NULL ? item_of(x->res, name) : NULL;
        if (it == NULL)
            goto out_proto;
        it->status = st;
        int rc = TN_OK;
        if (st == TN_CLAIM_GRANTED) {
            struct tn_grant_in in = {it->name, x->owner, 0, x->sent_ms, x->s};
            rc = tn_client_grant_lease(x->s->client, v, &in, &it->lease, em);
            x->res->n_granted += rc == TN_OK;
        } else if (st == TN_CLAIM_HELD) {
            rc = tn_client_decode_info(json_object_get(v, "holder"),
                                       &it->holder, em);
        } else {
            (void)tn_json_get_int(v, "retry_after_ms", 0, INT64_MAX,
                                  &it->holder.retry_after_ms, NULL);
        }
        if (rc < 0)
            return rc;
    }
    return TN_OK;
out_proto:
    tn_errmsg_set(em, "claim answer: \"%s\" is not a list of names asked", key);
    return TN_EPROTO;
}

static int read_answer(struct claim_ctx *x, json_t *o, struct tn_errmsg *em)
{
    int rc = read_part(x, o, "granted", TN_CLAIM_GRANTED, em);
    if (rc == 0)
        rc = read_part(x, o, "held", TN_CLAIM_HELD, em);
    if (rc == 0)
        rc = read_part(x, o, "lock_delay", TN_CLAIM_LOCK_DELAY, em);
    (void)tn_json_get_int(o, "expires_in_ms", INT64_MIN, INT64_MAX,
                          &x->res->expires_in_ms, NULL);
    for (size_t i = 0; rc == 0 && i < x->res->count; i++) {
        if (x->res->items[i].status == 0) {
            tn_errmsg_set(em, "claim answer says nothing of \"%s\"",
                          x->res->items[i].name);
            rc = TN_EPROTO;
        }
    }
    return rc;
}

/* Send a batch request (claim or release) of s on the callers'
 * connection.  0 with the 200 answer parsed into *o, or an error. */
static int send_batch(struct tn_session *s, const char *method, json_t *body,
                      int64_t *sent_ms, json_t **o, struct tn_errmsg *em)
{
    *o = NULL;
    char *path = tn_client_session_path(s->id, "/leases");
    if (path == NULL) {
        json_decref(body);
        return TN_ENOMEM;
    }
    struct tn_client_http_resp r;
    struct tn_client_call ca = {method, path, body, 0};
    int rc = tn_client_call(s->client, &ca, &r, em);
    tn_free(path);
    if (rc < 0)
        return rc;
    *sent_ms = r.sent_ms;
    if (r.status == 200)
        rc = tn_client_parse_ok(&r, o, em);
    else
        rc = tn_client_map_error(r.status, r.body, r.body_len, NULL, em);
    tn_client_http_resp_release(&r);
    return rc;
}

int tn_client_session_claim(struct tn_session *s, const struct tn_claim_args *a,
                            struct tn_claim_result **out, struct tn_errmsg *em)
{
    *out = NULL;
    int rc = check_names(a, em);
    if (rc < 0)
        return rc;
    json_t *body = claim_body(s, a);
    struct tn_claim_result *res = body != NULL ? result_new(a) : NULL;
    if (res == NULL) {
        json_decref(body);
        return TN_ENOMEM;
    }
    struct claim_ctx x = {s, a->owner_id, 0, res};
    if (x.owner == NULL)
        x.owner = s->owner_id[0] != '\0' ? s->owner_id : s->client->owner_id;
    json_t *o = NULL;
    rc = send_batch(s, "POST", body, &x.sent_ms, &o, em);
    if (rc == 0)
        rc = read_answer(&x, o, em);
    json_decref(o);
    if (rc < 0) {
        tn_claim_result_free(res);
        return rc;
    }
    *out = res;
    return TN_OK;
}

static json_t *release_body(const struct tn_session *s,
                            struct tn_lease *const *leases, size_t n)
{
    json_t *arr = json_array();
    json_t *o =
        json_pack("{s:s,s:o}", "session_secret", s->secret, "leases", arr);
    if (o == NULL)
        return NULL;
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad |= json_array_append_new(
            arr, json_pack("{s:s,s:I}", "name", leases[i]->name, "token",
                           (json_int_t)leases[i]->token));
    if (bad != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The leases the answer says were lost: TN_ELOST in rc_out. */
static void mark_lost(json_t *o, struct tn_lease *const *leases, size_t n,
                      int *rc_out)
{
    json_t *lost = json_object_get(o, "lost");
    size_t i = 0;
    json_t *v = NULL;
    json_array_foreach(lost, i, v)
    {
        const char *name = json_string_value(json_object_get(v, "name"));
        json_int_t tok = json_integer_value(json_object_get(v, "token"));
        for (size_t k = 0; name != NULL && k < n; k++) {
            if ((json_int_t)leases[k]->token == tok &&
                strcmp(leases[k]->name, name) == 0)
                rc_out[k] = TN_ELOST;
        }
    }
}

/* Set every lease of the batch released (before the request: no renew
 * may revive it) or, with the outcome, done. */
static void set_released(struct tn_client *c, struct tn_lease *const *leases,
                         size_t n, bool done, int rc)
{
    (void)pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < n; i++) {
        struct tn_lease *l = leases[i];
        if (!done) {
            l->state = TN_LEASE_RELEASED;
            continue;
        }
        l->end_rc = rc;
        l->release_done = true;
        tn_sched_note_locked(c, l);
    }
    (void)pthread_mutex_unlock(&c->mu);
}

int tn_client_session_release(struct tn_session *s,
                              struct tn_lease *const *leases, size_t n,
                              int *rc_out, struct tn_errmsg *em)
{
    if (n == 0 || n > TN_SESSION_CLAIM_MAX) {
        tn_errmsg_set(em, "a release takes 1 to %d leases",
                      TN_SESSION_CLAIM_MAX);
        return TN_EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        if (leases[i] == NULL || leases[i]->session != s) {
            tn_errmsg_set(em, "lease %zu is not of session %s", i, s->id);
            return TN_EINVAL;
        }
    }
    json_t *body = release_body(s, leases, n);
    if (body == NULL)
        return TN_ENOMEM;
    set_released(s->client, leases, n, false, 0);
    int64_t sent = 0;
    json_t *o = NULL;
    int rc = send_batch(s, "DELETE", body, &sent, &o, em);
    if (rc == 0 && rc_out != NULL) {
        memset(rc_out, 0, n * sizeof(*rc_out));
        mark_lost(o, leases, n, rc_out);
    }
    json_decref(o);
    set_released(s->client, leases, n, true, rc);
    return rc;
}
