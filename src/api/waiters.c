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
 * it has to wait or is granted at once.  This file calls api.c (to
 * answer) and nothing that calls it back.  Loop thread only. */
#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "api_int.h"
#include "common/alloc.h"
#include "common/map.h"

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

size_t tn_api_parked_room(const struct tn_api_config *cfg)
{
    size_t keep = cfg->reserved_connections;
    if (keep > cfg->max_connections / 2)
        keep = cfg->max_connections / 2;
    return cfg->max_connections - keep;
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

/* One blocking acquire of k fewer; the entry goes at 0, and the map once
 * empty (tn_api_free has nothing to free: every waiter is answered). */
static void drop(struct tn_api *api, struct tn_api_waiter_key *k)
{
    if (k == NULL || --k->count > 0)
        return;
    (void)tn_map_remove(&api->waiter_keys, k);
    tn_free(k);
    if (api->waiter_keys.count == 0)
        tn_map_release(&api->waiter_keys);
}

/* Count c under the entry of kind and text s unless it has max already
 * (0: no limit); false when it has (nothing counted). */
static bool take(struct tn_api_call *c, char kind, const char *s, size_t max,
                 struct tn_api_waiter_key **out)
{
    if (max == 0)
        return true;
    struct tn_api_waiter_key *k = key_of(c->api, kind, s);
    if (k == NULL)
        return true; /* out of memory: not counted, not refused */
    if (k->count >= max)
        return false; /* k counts some already: it stays */
    k->count++;
    *out = k;
    return true;
}

int tn_api_waiter_admit(struct tn_api_call *c, size_t streams)
{
    struct tn_api *api = c->api;
    const struct tn_api_config *cfg = &api->cfg;
    size_t limit = tn_api_parked_room(cfg);
    if (api->parked + streams >= limit) {
        tn_api_refuse_reserved(c);
        return TN_ECAPACITY;
    }
    if (!take(c, 'a', tn_http_req_peer(c->req), cfg->max_waiters_per_address,
              &c->wait_addr)) {
        refuse(c, LIMIT_PER_ADDRESS, TN_ETOOMANY, "--max-waiters-per-address",
               cfg->max_waiters_per_address);
        return TN_ETOOMANY;
    }
    if (c->principal != NULL &&
        !take(c, 'p', tn_auth_principal_name(c->principal),
              cfg->max_waiters_per_principal, &c->wait_principal)) {
        drop(api, c->wait_addr);
        c->wait_addr = NULL;
        refuse(c, LIMIT_PER_PRINCIPAL, TN_ETOOMANY,
               "--max-waiters-per-principal", cfg->max_waiters_per_principal);
        return TN_ETOOMANY;
    }
    c->parked = true;
    api->parked++;
    return TN_OK;
}

void tn_api_refuse_reserved(struct tn_api_call *c)
{
    const struct tn_api_config *cfg = &c->api->cfg;
    refuse(c, LIMIT_RESERVED, TN_ECAPACITY, "--reserved-connections",
           cfg->max_connections - tn_api_parked_room(cfg));
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
