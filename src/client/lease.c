/* SPDX-License-Identifier: MIT */
/* The client's clock and a kept lease of libtenure's client: its safe time
 * (counted from the monotonic instant taken just before a request was sent,
 * never growing back once it ran out), its references and its accessors. */
#include <pthread.h>
#include <string.h>

#include <tenure/client.h>

#include "client/client_internal.h"
#include "common/alloc.h"
#include "common/assert.h"

void tn_client_set_clock(struct tn_client *c, int64_t (*now_ms)(void))
{
    c->now_ms = now_ms;
    c->http.now_ms = now_ms;
}

int64_t tn_client_margin_ms(const struct tn_client *c, int64_t ttl_ms)
{
    return c->safety_margin_ms >= 0 ? c->safety_margin_ms : ttl_ms / 10;
}

int64_t tn_lease_safe_at_locked(struct tn_lease *l, int64_t now_ms)
{
    if (l->state != TN_LEASE_HELD || !l->deadline_known)
        return 0;
    int64_t left = l->deadline_ms - now_ms;
    if (left <= 0) {
        l->state = TN_LEASE_EXPIRED;
        return 0;
    }
    return left;
}

void tn_lease_granted_locked(struct tn_lease *l, int64_t sent_ms,
                             int64_t ttl_ms, int64_t expires_in_ms)
{
    if (l->state != TN_LEASE_HELD)
        return; /* lost, expired or released: never revived */
    if (l->deadline_known && sent_ms < l->sent_ms)
        return; /* an older request answered late */
    l->ttl_ms = ttl_ms;
    l->sent_ms = sent_ms;
    l->deadline_ms =
        sent_ms + expires_in_ms - tn_client_margin_ms(l->client, ttl_ms);
    l->deadline_known = true;
}

struct tn_lease *tn_client_lease_new(struct tn_client *c, const char *name,
                                     const char *owner, const char *secret)
{
    struct tn_lease *l = tn_calloc(1, sizeof(*l));
    if (l == NULL)
        return NULL;
    l->client = c;
    l->refs = 1;
    l->name = tn_strdup(name);
    l->owner_id = tn_strdup(owner);
    l->secret = tn_strdup(secret);
    if (l->name == NULL || l->owner_id == NULL || l->secret == NULL) {
        tn_free(l->name);
        tn_free(l->owner_id);
        tn_free(l->secret);
        tn_free(l);
        return NULL;
    }
    (void)pthread_mutex_lock(&c->mu);
    c->n_leases++;
    (void)pthread_mutex_unlock(&c->mu);
    return l;
}

void tn_lease_unref_locked(struct tn_lease *l)
{
    TN_ASSERT(l->refs > 0);
    if (--l->refs > 0)
        return;
    l->client->n_leases--;
    tn_free(l->name);
    tn_free(l->owner_id);
    if (l->secret != NULL)
        memset(l->secret, 0, strlen(l->secret));
    tn_free(l->secret);
    tn_free(l->proof);
    tn_free(l);
}

void tn_lease_free(struct tn_lease *l)
{
    if (l == NULL)
        return;
    struct tn_client *c = l->client;
    (void)pthread_mutex_lock(&c->mu);
    tn_lease_unref_locked(l);
    (void)pthread_mutex_unlock(&c->mu);
}

const char *tn_lease_name(const struct tn_lease *l)
{
    return l->name;
}

const char *tn_lease_owner_id(const struct tn_lease *l)
{
    return l->owner_id;
}

uint64_t tn_lease_token(const struct tn_lease *l)
{
    return l->token;
}

const char *tn_lease_secret(const struct tn_lease *l)
{
    return l->secret;
}

const char *tn_lease_proof(const struct tn_lease *l)
{
    return l->proof;
}

int64_t tn_lease_ttl_ms(const struct tn_lease *l)
{
    struct tn_client *c = l->client;
    (void)pthread_mutex_lock(&c->mu);
    int64_t v = l->ttl_ms;
    (void)pthread_mutex_unlock(&c->mu);
    return v;
}

int64_t tn_lease_safe_for_ms(struct tn_lease *l)
{
    struct tn_client *c = l->client;
    (void)pthread_mutex_lock(&c->mu);
    int64_t v = tn_lease_safe_at_locked(l, c->now_ms());
    (void)pthread_mutex_unlock(&c->mu);
    return v;
}

bool tn_lease_is_held(struct tn_lease *l)
{
    return tn_lease_safe_for_ms(l) > 0;
}

const char *tn_lease_end_name(enum tn_lease_end reason)
{
    switch (reason) {
    case TN_LEASE_END_LOST:
        return "lost";
    case TN_LEASE_END_EXPIRED:
        return "expired";
    case TN_LEASE_END_RELEASED:
        return "released";
    case TN_LEASE_END_STOPPED:
        return "stopped";
    default:
        return "unknown";
    }
}

int tn_client_valid_name(const char *name, struct tn_errmsg *em)
{
    size_t len = name != NULL ? strlen(name) : 0;
    if (len == 0 || len > TN_CLIENT_NAME_MAX) {
        tn_errmsg_set(em, "a lease name must be 1 to %d bytes",
                      TN_CLIENT_NAME_MAX);
        return TN_EINVAL;
    }
    return TN_OK;
}

int tn_client_lease_adopt(struct tn_client *c, const char *name, uint64_t token,
                          const char *secret, struct tn_lease **out)
{
    *out = NULL;
    if (tn_client_valid_name(name, NULL) < 0 || secret == NULL ||
        secret[0] == '\0')
        return TN_EINVAL;
    struct tn_lease *l = tn_client_lease_new(c, name, "", secret);
    if (l == NULL)
        return TN_ENOMEM;
    l->token = token;
    *out = l;
    return TN_OK;
}
