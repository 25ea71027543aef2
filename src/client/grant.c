/* SPDX-License-Identifier: MIT */
/* A grant from the server becomes a lease handle: the answer of an
 * acquire, or one item of a claim.  A lease of its own counts its safe
 * time from the request's sending; a lease under a session has none of its
 * own (its session's counts) and is put in the session's list, where a
 * grant the session already lists (a retried claim, a replayed acquire)
 * answers the handle it already has. */
#include <pthread.h>
#include <string.h>

#include <tenure/client.h>

#include "client/client_internal.h"
#include "common/alloc.h"
#include "common/json.h"

struct grant {
    const char *owner;     /* borrowed from the JSON */
    const char *secret;    /* borrowed */
    const char *proof;     /* borrowed or NULL */
    int64_t token;         /* fencing token */
    int64_t ttl_ms;        /* granted TTL */
    int64_t expires_in_ms; /* time left at the server, -1 if absent */
};

static int decode_grant(json_t *o, const struct tn_grant_in *in,
                        struct grant *g, struct tn_errmsg *em)
{
    size_t n = 0;
    memset(g, 0, sizeof(*g));
    g->ttl_ms = in->ttl_ms;
    g->expires_in_ms = -1;
    if (tn_json_get_int(o, "token", 0, INT64_MAX, &g->token, em) < 0 ||
        tn_json_get_str(o, "lease_secret", &g->secret, &n, em) < 0) {
        tn_errmsg_set(em, "grant of \"%s\" without token or lease_secret",
                      in->name);
        return TN_EPROTO;
    }
    int rc = tn_json_get_int(o, "expires_in_ms", 0, INT64_MAX,
                             &g->expires_in_ms, em);
    /* A lease of its own needs its time left; under a session (a claim's
     * items carry none) the session's counts. */
    if (rc < 0 && (in->sess == NULL || rc != TN_ENOTFOUND)) {
        tn_errmsg_set(em, "grant of \"%s\" without expires_in_ms", in->name);
        return TN_EPROTO;
    }
    (void)tn_json_get_int(o, "ttl_ms", 1, INT64_MAX, &g->ttl_ms, NULL);
    if (tn_json_get_str(o, "owner_id", &g->owner, &n, NULL) < 0)
        g->owner = in->owner;
    if (tn_json_get_str(o, "proof", &g->proof, &n, NULL) < 0)
        g->proof = NULL;
    return TN_OK;
}

/* The lease s already lists for (name, token), with a new reference, or
 * NULL.  Caller holds mu. */
static struct tn_lease *listed_locked(struct tn_session *s, const char *name,
                                      uint64_t token)
{
    for (struct tn_lease *l = s->leases; l != NULL; l = l->snext) {
        if (l->token == token && strcmp(l->name, name) == 0) {
            l->refs++;
            return l;
        }
    }
    return NULL;
}

static struct tn_lease *new_lease(struct tn_client *c, const char *name,
                                  const struct grant *g)
{
    struct tn_lease *l = tn_client_lease_new(c, name, g->owner, g->secret);
    if (l != NULL && g->proof != NULL &&
        (l->proof = tn_strdup(g->proof)) == NULL) {
        tn_lease_free(l);
        return NULL;
    }
    if (l != NULL)
        l->token = (uint64_t)g->token;
    return l;
}

int tn_client_grant_lease(struct tn_client *c, json_t *o,
                          const struct tn_grant_in *in, struct tn_lease **out,
                          struct tn_errmsg *em)
{
    *out = NULL;
    struct grant g;
    int rc = decode_grant(o, in, &g, em);
    if (rc < 0)
        return rc;
    struct tn_lease *l = new_lease(c, in->name, &g);
    if (l == NULL)
        return TN_ENOMEM;
    (void)pthread_mutex_lock(&c->mu);
    struct tn_lease *had = NULL;
    if (in->sess != NULL)
        had = listed_locked(in->sess, in->name, (uint64_t)g.token);
    if (had != NULL) {
        tn_lease_unref_locked(l);
        l = had;
    } else if (in->sess != NULL) {
        l->ttl_ms = in->sess->ttl_ms;
        tn_client_session_list_locked(in->sess, l);
    } else {
        tn_lease_granted_locked(l, in->sent_ms, g.ttl_ms, g.expires_in_ms);
    }
    (void)pthread_mutex_unlock(&c->mu);
    *out = l;
    return TN_OK;
}
