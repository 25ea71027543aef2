/* SPDX-License-Identifier: MIT */
/* The client's clock, and the safe time and references of leases and
 * sessions.  Safe time is counted from the monotonic instant taken just
 * before a request was sent and never grows back once it ran out; a lease
 * under a session has the session's, and takes the session's end as its
 * own.  A session's list holds a reference to each lease in it, and each
 * lease one (lease_refs) to its session; the list is let go when the
 * session's own references are gone, so the two never keep each other
 * alive.  Everything here runs under the client's mu. */
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

int64_t tn_client_session_safe_at_locked(struct tn_session *s, int64_t now_ms)
{
    if (s->state != TN_LEASE_HELD || !s->deadline_known)
        return 0;
    int64_t left = s->deadline_ms - now_ms;
    if (left <= 0) {
        s->state = TN_LEASE_EXPIRED;
        return 0;
    }
    return left;
}

/* A lease of s takes the end of s as its own (sticky, as any end). */
static void follow_session(struct tn_lease *l, const struct tn_session *s)
{
    if (s->state == TN_LEASE_HELD)
        return;
    l->state = s->state;
    l->end_rc = s->state == TN_LEASE_EXPIRED ? TN_EEXPIRED : s->end_rc;
    if (s->state == TN_LEASE_RELEASED)
        l->release_done = s->end_done;
}

int64_t tn_lease_safe_at_locked(struct tn_lease *l, int64_t now_ms)
{
    if (l->state != TN_LEASE_HELD)
        return 0;
    if (l->session != NULL) {
        int64_t left = tn_client_session_safe_at_locked(l->session, now_ms);
        follow_session(l, l->session);
        return left;
    }
    if (!l->deadline_known)
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

void tn_client_session_granted_locked(struct tn_session *s, int64_t sent_ms,
                                      int64_t ttl_ms, int64_t expires_in_ms)
{
    if (s->state != TN_LEASE_HELD)
        return;
    if (s->deadline_known && sent_ms < s->sent_ms)
        return;
    s->ttl_ms = ttl_ms;
    s->sent_ms = sent_ms;
    s->deadline_ms =
        sent_ms + expires_in_ms - tn_client_margin_ms(s->client, ttl_ms);
    s->deadline_known = true;
}

struct tn_lease *tn_client_lease_new(struct tn_client *c, const char *name,
                                     const char *owner, const char *secret)
{
    struct tn_lease *l = tn_calloc(1, sizeof(*l));
    if (l == NULL)
        return NULL;
    l->client = c;
    l->refs = 1;
    l->due_idx = TN_NOT_QUEUED;
    l->dl_idx = TN_NOT_QUEUED;
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

struct tn_session *tn_client_session_new(struct tn_client *c, const char *id,
                                         const char *owner, const char *secret)
{
    struct tn_session *s = tn_calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->client = c;
    s->refs = 1;
    s->id = tn_strdup(id);
    s->owner_id = tn_strdup(owner);
    s->secret = tn_strdup(secret);
    if (s->id == NULL || s->owner_id == NULL || s->secret == NULL) {
        tn_free(s->id);
        tn_free(s->owner_id);
        tn_free(s->secret);
        tn_free(s);
        return NULL;
    }
    (void)pthread_mutex_lock(&c->mu);
    c->n_sessions++;
    (void)pthread_mutex_unlock(&c->mu);
    return s;
}

static void wipe_free(char *secret)
{
    if (secret != NULL)
        memset(secret, 0, strlen(secret));
    tn_free(secret);
}

static void session_free_locked(struct tn_session *s)
{
    s->client->n_sessions--;
    tn_free(s->id);
    tn_free(s->owner_id);
    wipe_free(s->secret);
    tn_free(s);
}

/* One lease of s is gone. */
static void drop_lease_ref(struct tn_session *s)
{
    TN_ASSERT(s->lease_refs > 0);
    if (--s->lease_refs == 0 && s->refs == 0)
        session_free_locked(s);
}

void tn_lease_unref_locked(struct tn_lease *l)
{
    TN_ASSERT(l->refs > 0);
    if (--l->refs > 0)
        return;
    TN_ASSERT(!l->listed && !l->kept);
    l->client->n_leases--;
    struct tn_session *s = l->session;
    tn_free(l->name);
    tn_free(l->owner_id);
    wipe_free(l->secret);
    tn_free(l->proof);
    tn_free(l);
    if (s != NULL)
        drop_lease_ref(s);
}

void tn_client_session_list_locked(struct tn_session *s, struct tn_lease *l)
{
    TN_ASSERT(l->session == NULL && !l->listed);
    l->session = s;
    s->lease_refs++;
    l->refs++;
    l->listed = true;
    l->sprev = NULL;
    l->snext = s->leases;
    if (s->leases != NULL)
        s->leases->sprev = l;
    s->leases = l;
    s->n_listed++;
}

void tn_client_session_unlist_locked(struct tn_lease *l)
{
    struct tn_session *s = l->session;
    if (!l->listed)
        return;
    if (l->sprev != NULL)
        l->sprev->snext = l->snext;
    else
        s->leases = l->snext;
    if (l->snext != NULL)
        l->snext->sprev = l->sprev;
    l->snext = l->sprev = NULL;
    l->listed = false;
    s->n_listed--;
    tn_lease_unref_locked(l);
}

void tn_client_session_unref_locked(struct tn_session *s)
{
    TN_ASSERT(s->refs > 0);
    if (--s->refs > 0)
        return;
    TN_ASSERT(!s->kept);
    /* Nobody can renew s any more: its list keeps nothing alive.  The
     * extra lease_ref keeps s while its leases let go of it. */
    s->lease_refs++;
    while (s->leases != NULL)
        tn_client_session_unlist_locked(s->leases);
    drop_lease_ref(s);
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
