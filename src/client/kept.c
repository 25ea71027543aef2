/* SPDX-License-Identifier: MIT */
/* What every follower (SSE, Redis, Kafka) does to the kept leases: an
 * event that ends one marks it lost, a reset renews them all.  Below the
 * followers and the renewer, so they all call down. */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include <tenure/client.h>
#include <tenure/err.h>

#include "client/client_internal.h"

/* Events may have been missed (the server restarted, another instance
 * answered, or its own feed of events was cut): a lease may have ended
 * unheard, so renew every kept lease now rather than at its timer. */
void tn_client_events_renew_all(struct tn_client *c)
{
    (void)pthread_mutex_lock(&c->mu);
    int64_t now = c->now_ms();
    for (struct tn_lease *l = c->kept; l != NULL; l = l->next) {
        if (l->state == TN_LEASE_HELD && l->next_renew_ms > now)
            l->next_renew_ms = now;
    }
    (void)pthread_cond_signal(&c->cond);
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

void tn_client_events_apply(struct tn_client *c, const char *type,
                            const char *name, uint64_t token)
{
    (void)pthread_mutex_lock(&c->mu);
    for (struct tn_lease *l = c->kept; l != NULL; l = l->next) {
        if (l->state != TN_LEASE_HELD || strcmp(l->name, name) != 0 ||
            !ends(l, type, token))
            continue;
        l->state = TN_LEASE_LOST;
        l->end_rc = TN_ELOST;
        c->ev_losses++;
        (void)pthread_cond_signal(&c->cond);
    }
    (void)pthread_mutex_unlock(&c->mu);
}

void tn_client_event_feed(struct tn_client *c, const char *type,
                          const char *name, uint64_t token)
{
    if (c != NULL && type != NULL && name != NULL)
        tn_client_events_apply(c, type, name, token);
}

void tn_client_event_reset(struct tn_client *c)
{
    if (c != NULL)
        tn_client_events_renew_all(c);
}
