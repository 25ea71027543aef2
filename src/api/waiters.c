/* SPDX-License-Identifier: MIT */
/* Who may park.  A blocking acquire holds its connection until it is
 * answered, and an event stream for as long as it lives; neither can be
 * evicted to make room.  Without a bound, 1,000 waiters filled
 * --max-connections and every other client, health checks included, was
 * refused until they left (issue #36).  So:
 *   - waiters and streams together hold at most --max-connections minus
 *     --reserved-connections (at most half of the cap is reserved): the
 *     rest stay for requests answered at once; beyond, 503 capacity;
 *   - one client address, and with authentication one principal, may have
 *     at most --max-waiters-per-address / -per-principal blocking
 *     acquires at once; beyond, 429 (0 turns either off).
 * A blocking acquire is counted from its admission to its answer, whether
 * it has to wait or is granted at once.  Loop thread only. */
#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "api_int.h"
#include "common/alloc.h"
#include "common/map.h"
#include "events.h"

/* The blocking acquires of one client address or one principal. */
struct tn_api_waiter_key {
    void *link;    /* the map's chain */
    uint32_t hash; /* of key[0..len) */
    size_t count;  /* admitted, not yet answered; freed at 0 */
    size_t len;    /* of key */
    char key[];    /* 'a' address or 'p' principal, then its text */
};

static bool key_eq(const void *entry, const void *key, size_t len)
{
    const struct tn_api_waiter_key *k = entry;
    return k->len == len && memcmp(k->key, key, len) == 0;
}

static const struct tn_map_type key_type = {
    offsetof(struct tn_api_waiter_key, link),
    offsetof(struct tn_api_waiter_key, hash), key_eq};

/* Indexes into tn_api_limits of what this file refuses. */
enum { LIMIT_RESERVED = 5, LIMIT_PER_ADDRESS = 6, LIMIT_PER_PRINCIPAL = 7 };

static void refuse(struct tn_api_call *c, size_t limit, int rc,
                   const char *what, size_t value)
{
    char msg[200];
    c->api->capacity_refused[limit]++;
    (void)snprintf(msg, sizeof(msg),
                   rc == TN_ETOOMANY
                       ? "too many blocking acquires from this client (%s "
                         "%zu); retry later"
                       : "server at capacity: blocking acquires and event "
                         "streams hold all the connections they may (%s, "
                         "%zu left for other requests); retry later",
                   what, value);
    tn_api_fail(c, rc, msg);
}

/* The connections parked requests may hold: the cap minus the reserve,
 * of which at most half is kept. */
static size_t room(const struct tn_api_config *cfg)
{
    size_t keep = cfg->reserved_connections;
    if (keep > cfg->max_connections / 2)
        keep = cfg->max_connections / 2;
    return cfg->max_connections - keep;
}

static size_t streams(const struct tn_api *api)
{
    return api->cfg.events != NULL ? tn_events_subscribers(api->cfg.events)
                                   : 0;
}

/* The entry of kind and text s, made if missing; NULL: out of memory. */
static struct tn_api_waiter_key *key_of(struct tn_api *api, char kind,
                                        const char *s)
{
    if (api->waiter_keys.buckets == NULL &&
        tn_map_init(&api->waiter_keys, &key_type, 64) < 0)
        return NULL;
    char buf[TN_AUTH_NAME_MAX_BYTES + 2];
    int n = snprintf(buf, sizeof(buf), "%c%s", kind, s);
    size_t len = n > 0 && (size_t)n < sizeof(buf) ? (size_t)n : 0;
    uint32_t h = tn_map_hash(buf, len);
    struct tn_api_waiter_key *k = tn_map_find(&api->waiter_keys, h, buf, len);
    if (k != NULL)
        return k;
    if ((k = tn_malloc(sizeof(*k) + len)) == NULL)
        return NULL;
    k->hash = h;
    k->count = 0;
    k->len = len;
    memcpy(k->key, buf, len);
    tn_map_insert(&api->waiter_keys, k);
    return k;
}

static void drop(struct tn_api *api, struct tn_api_waiter_key *k)
{
    if (k == NULL || --k->count > 0)
        return;
    (void)tn_map_remove(&api->waiter_keys, k);
    tn_free(k);
}

/* The client's entries: its address, and its principal with auth on.
 * False when a limit is reached (answered, with the keys dropped). */
static bool take_keys(struct tn_api_call *c)
{
    const struct tn_api_config *cfg = &c->api->cfg;
    if (cfg->max_waiters_per_address > 0) {
        c->wait_addr = key_of(c->api, 'a', tn_http_req_peer(c->req));
        if (c->wait_addr != NULL &&
            c->wait_addr->count++ >= cfg->max_waiters_per_address) {
            refuse(c, LIMIT_PER_ADDRESS, TN_ETOOMANY,
                   "--max-waiters-per-address", cfg->max_waiters_per_address);
            return false;
        }
    }
    if (cfg->max_waiters_per_principal > 0 && c->principal != NULL) {
        c->wait_principal =
            key_of(c->api, 'p', tn_auth_principal_name(c->principal));
        if (c->wait_principal != NULL &&
            c->wait_principal->count++ >= cfg->max_waiters_per_principal) {
            refuse(c, LIMIT_PER_PRINCIPAL, TN_ETOOMANY,
                   "--max-waiters-per-principal",
                   cfg->max_waiters_per_principal);
            return false;
        }
    }
    return true;
}

int tn_api_waiter_admit(struct tn_api_call *c)
{
    struct tn_api *api = c->api;
    size_t limit = room(&api->cfg);
    if (api->parked + streams(api) >= limit) {
        refuse(c, LIMIT_RESERVED, TN_ECAPACITY, "--reserved-connections",
               api->cfg.max_connections - limit);
        return TN_ECAPACITY;
    }
    c->parked = true; /* from here tn_api_call_free undoes it */
    api->parked++;
    return take_keys(c) ? TN_OK : TN_ETOOMANY;
}

int tn_api_stream_admit(struct tn_api_call *c)
{
    struct tn_api *api = c->api;
    size_t limit = room(&api->cfg);
    if (api->parked + streams(api) < limit)
        return TN_OK;
    refuse(c, LIMIT_RESERVED, TN_ECAPACITY, "--reserved-connections",
           api->cfg.max_connections - limit);
    return TN_ECAPACITY;
}

void tn_api_waiter_done(struct tn_api_call *c)
{
    if (!c->parked)
        return;
    c->parked = false;
    c->api->parked--;
    drop(c->api, c->wait_addr);
    drop(c->api, c->wait_principal);
    c->wait_addr = c->wait_principal = NULL;
}

static bool free_key(void *entry, void *ctx)
{
    struct tn_map *m = ctx;
    (void)tn_map_remove(m, entry);
    tn_free(entry);
    return true;
}

void tn_api_waiters_release(struct tn_api *api)
{
    if (api->waiter_keys.buckets == NULL)
        return;
    tn_map_each(&api->waiter_keys, free_key, &api->waiter_keys);
    tn_map_release(&api->waiter_keys);
}
