/* SPDX-License-Identifier: MIT */
/* The accessors of leases and sessions: immutable fields read as they are,
 * everything the keepalive thread may change read under the client's mu. */
#include <pthread.h>

#include <tenure/client.h>
#include <tenure/session.h>

#include "client/client_internal.h"

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

struct tn_session *tn_lease_session(const struct tn_lease *l)
{
    return l->session;
}

int64_t tn_lease_ttl_ms(const struct tn_lease *l)
{
    struct tn_client *c = l->client;
    (void)pthread_mutex_lock(&c->mu);
    int64_t v = l->session != NULL ? l->session->ttl_ms : l->ttl_ms;
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

const char *tn_client_session_id(const struct tn_session *s)
{
    return s->id;
}

const char *tn_client_session_owner_id(const struct tn_session *s)
{
    return s->owner_id;
}

const char *tn_client_session_secret(const struct tn_session *s)
{
    return s->secret;
}

int64_t tn_client_session_ttl_ms(struct tn_session *s)
{
    struct tn_client *c = s->client;
    (void)pthread_mutex_lock(&c->mu);
    int64_t v = s->ttl_ms;
    (void)pthread_mutex_unlock(&c->mu);
    return v;
}

int64_t tn_client_session_safe_for_ms(struct tn_session *s)
{
    struct tn_client *c = s->client;
    (void)pthread_mutex_lock(&c->mu);
    int64_t v = tn_client_session_safe_at_locked(s, c->now_ms());
    (void)pthread_mutex_unlock(&c->mu);
    return v;
}

bool tn_client_session_is_live(struct tn_session *s)
{
    return tn_client_session_safe_for_ms(s) > 0;
}

size_t tn_client_session_lease_count(struct tn_session *s)
{
    struct tn_client *c = s->client;
    (void)pthread_mutex_lock(&c->mu);
    size_t n = 0;
    if (tn_client_session_safe_at_locked(s, c->now_ms()) > 0) {
        for (const struct tn_lease *l = s->leases; l != NULL; l = l->snext)
            n += l->state == TN_LEASE_HELD;
    }
    (void)pthread_mutex_unlock(&c->mu);
    return n;
}
