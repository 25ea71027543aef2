/* SPDX-License-Identifier: MIT */
/* Helpers every backend shares (declared in backend.h). */
#include "store/backend.h"

#include <assert.h>
#include <string.h>

#include "common/alloc.h"

static_assert(TN_SESSION_ID_HEX == TN_SESSION_ID_LEN,
              "the API's session ids are the state machine's");
static_assert(TN_SECRET_BYTES == TN_SESSION_SECRET_BYTES,
              "a session secret is as long as a lease secret");

void tn_store_view_from_lease(struct tn_lease_view *v,
                              const struct tn_lease_entry *l, int64_t now_ms)
{
    memset(v, 0, sizeof(*v));
    memcpy(v->name, l->name, l->name_len);
    if (l->owner_id != NULL) /* cut as snprintf would; the NUL is there */
        memcpy(v->owner_id, l->owner_id,
               strnlen(l->owner_id, sizeof(v->owner_id) - 1));
    v->token = l->token;
    memcpy(v->secret, l->secret, TN_SECRET_BYTES);
    v->ttl_ms = l->session != NULL ? l->session->ttl_ms : l->ttl_ms;
    v->lock_delay_ms = l->lock_delay_ms;
    if (l->session != NULL) /* it lives as long as its session */
        memcpy(v->session_id, l->session->id, TN_SESSION_ID_HEX);
    /* Expiry is rounded up by a millisecond (lease.c); never report more
     * than the TTL, so a holder's count stays on the safe side. */
    int64_t left = tn_lease_expires_at(l) - now_ms;
    v->expires_in_ms = left <= 0 ? 0 : left < v->ttl_ms ? left : v->ttl_ms;
}

void tn_store_result_release(struct tn_store_result *r)
{
    tn_free(r->items);
    r->items = NULL;
    r->n_items = 0;
    tn_free(r->history);
    r->history = NULL;
    r->n_history = 0;
    tn_free(r->sessions);
    r->sessions = NULL;
    r->n_sessions = 0;
    tn_free(r->claims);
    r->claims = NULL;
    r->n_claims = 0;
}
