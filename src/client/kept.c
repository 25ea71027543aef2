/* SPDX-License-Identifier: MIT */
/* What every follower (SSE, Redis, Kafka) does to the kept leases and
 * sessions: an event that ends one marks it lost, a reset renews them
 * all.  Below the followers, above the keepalive's schedule, so they all
 * call down.  Nothing here can make a lease or a session look held. */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include <tenure/client.h>
#include <tenure/err.h>
#include <tenure/session.h>

#include "client/client_internal.h"

/* Events may have been missed (the server restarted, another instance
 * answered, or its own feed of events was cut): a lease may have ended
 * unheard, so renew every kept lease and session now rather than at its
 * timer.  Lowering every key of the heap alike keeps it a heap. */
void tn_client_events_renew_all(struct tn_client *c)
{
    (void)pthread_mutex_lock(&c->mu);
    int64_t now = c->now_ms();
    for (size_t i = 0; i < tn_heap_count(&c->due); i++) {
        struct tn_lease *l = *(struct tn_lease **)tn_heap_at(&c->due, i);
        if (l->next_renew_ms > now)
            l->next_renew_ms = now;
    }
    for (struct tn_session *s = c->sessions; s != NULL; s = s->knext) {
        if (s->next_renew_ms > now)
            s->next_renew_ms = now;
    }
    tn_client_wake_locked(c);
    (void)pthread_mutex_unlock(&c->mu);
}

/* Does this event end lease l? */
static bool ends(const struct tn_lease *l, const char *type, uint64_t token)
{
    if (strcmp(type, "acquired") == 0)
        return token > l->token;
    return token == l->token &&
           (strcmp(type, "expired") == 0 || strcmp(type, "revoked") == 0 ||
            strcmp(type, "released") == 0);
}

static void apply_one_locked(struct tn_client *c, struct tn_lease *l,
                             const char *type, const char *name, uint64_t token)
{
    if (l->state != TN_LEASE_HELD || strcmp(l->name, name) != 0 ||
        !ends(l, type, token))
        return;
    l->state = TN_LEASE_LOST;
    l->end_rc = TN_ELOST;
    c->ev_losses++;
    tn_sched_note_locked(c, l);
}

void tn_client_events_apply(struct tn_client *c, const char *type,
                            const char *name, uint64_t token)
{
    (void)pthread_mutex_lock(&c->mu);
    struct tn_lease *next = NULL;
    for (struct tn_lease *l = c->kept; l != NULL; l = next) {
        next = l->knext; /* note never unlinks, but stay safe */
        apply_one_locked(c, l, type, name, token);
    }
    for (struct tn_session *s = c->sessions; s != NULL; s = s->knext) {
        for (struct tn_lease *l = s->leases; l != NULL; l = l->snext)
            apply_one_locked(c, l, type, name, token);
    }
    (void)pthread_mutex_unlock(&c->mu);
}

void tn_client_events_apply_session(struct tn_client *c, const char *type,
                                    const char *session_id)
{
    if (strcmp(type, "session_ended") != 0)
        return;
    (void)pthread_mutex_lock(&c->mu);
    for (struct tn_session *s = c->sessions; s != NULL; s = s->knext) {
        if (s->state != TN_LEASE_HELD || strcmp(s->id, session_id) != 0)
            continue;
        s->state = TN_LEASE_LOST;
        s->end_rc = TN_ELOST;
        c->ev_losses++;
        tn_client_wake_locked(c);
    }
    (void)pthread_mutex_unlock(&c->mu);
}

void tn_client_event_feed(struct tn_client *c, const char *type,
                          const char *name, uint64_t token)
{
    if (c != NULL && type != NULL && name != NULL)
        tn_client_events_apply(c, type, name, token);
}

void tn_client_session_event_feed(struct tn_client *c, const char *type,
                                  const char *session_id)
{
    if (c != NULL && type != NULL && session_id != NULL)
        tn_client_events_apply_session(c, type, session_id);
}

void tn_client_event_reset(struct tn_client *c)
{
    if (c != NULL)
        tn_client_events_renew_all(c);
}
