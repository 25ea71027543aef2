/* SPDX-License-Identifier: MIT */
/* One round of the fair-share recipe (share.c runs them): the live
 * sessions of the group give this worker's share (by its session's rank
 * in session_id order, so the shares add up to the number of shards and
 * differ by at most one); the list of live leases under the shards'
 * prefix gives which shards are free, and whether each shard this worker
 * believes it holds is still its grant (a force release, a missed event);
 * then one batch claim of free shards (in chunks the server takes) when
 * below the share, or one batch release of the surplus when above.  The
 * application hears of a loss before the release is sent, and of a gain
 * once the grant is made; every decision about a shard is the server's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/session.h>
#include <tenure/share.h>

#include "client/client_internal.h"
#include "client/share_int.h"
#include "common/alloc.h"

#define CLAIM_NAMES 256 /* names per claim request */
#define CLAIM_BYTES                                                            \
    (48 * 1024)          /* of names per claim, under the 64 KiB               \
                            the server takes */
#define LIST_LIMIT 1000u /* page size of both listings */

static int by_name(const void *key, const void *elem)
{
    return strcmp(key, ((const struct tn_share_shard *)elem)->name);
}

static struct tn_share_shard *shard_of(struct tn_share *sh, const char *name)
{
    return bsearch(name, sh->shards, sh->n, sizeof(*sh->shards), by_name);
}

static void set_count(struct tn_share *sh)
{
    size_t n = 0;
    for (size_t i = 0; i < sh->n; i++)
        n += sh->shards[i].lease != NULL;
    (void)pthread_mutex_lock(&sh->mu);
    sh->count = n;
    (void)pthread_mutex_unlock(&sh->mu);
}

/* How lease l ended, as the keepalive would report it. */
static enum tn_lease_end end_of(struct tn_lease *l)
{
    struct tn_client *c = l->client;
    (void)pthread_mutex_lock(&c->mu);
    (void)tn_lease_safe_at_locked(l, c->now_ms());
    enum tn_lease_state st = l->state;
    (void)pthread_mutex_unlock(&c->mu);
    return st == TN_LEASE_LOST      ? TN_LEASE_END_LOST
           : st == TN_LEASE_EXPIRED ? TN_LEASE_END_EXPIRED
                                    : TN_LEASE_END_RELEASED;
}

/* Tell the application, then forget the leases (a[0..n), one reason). */
static void report_lost(struct tn_share *sh, struct tn_lease **a, size_t n,
                        enum tn_lease_end why)
{
    if (n == 0)
        return;
    if (sh->lost != NULL)
        sh->lost(sh, a, n, why, sh->ud);
    for (size_t i = 0; i < n; i++) {
        struct tn_share_shard *d = shard_of(sh, tn_lease_name(a[i]));
        d->lease = NULL;
        tn_lease_free(a[i]);
    }
    set_count(sh);
}

void tn_share_reap(struct tn_share *sh)
{
    static const enum tn_lease_end whys[] = {
        TN_LEASE_END_LOST, TN_LEASE_END_EXPIRED, TN_LEASE_END_RELEASED};
    struct tn_lease **a = tn_calloc(sh->n, sizeof(*a));
    for (size_t w = 0; a != NULL && w < 3; w++) {
        size_t k = 0;
        for (size_t i = 0; i < sh->n; i++) {
            struct tn_lease *l = sh->shards[i].lease;
            if (l != NULL && !tn_lease_is_held(l) && end_of(l) == whys[w])
                a[k++] = l;
        }
        report_lost(sh, a, k, whys[w]);
    }
    tn_free(a);
}

void tn_share_drop_all(struct tn_share *sh, enum tn_lease_end why)
{
    tn_share_reap(sh);
    struct tn_lease **a = tn_calloc(sh->n, sizeof(*a));
    size_t k = 0;
    for (size_t i = 0; a != NULL && i < sh->n; i++) {
        if (sh->shards[i].lease != NULL)
            a[k++] = sh->shards[i].lease;
    }
    report_lost(sh, a, k, why);
    tn_free(a);
}

/* ---- the group ---- */

struct group {
    size_t k;    /* live sessions of the group, this one included */
    size_t rank; /* this session's place among them, by session_id */
};

static int read_group(struct tn_share *sh, struct group *g,
                      struct tn_errmsg *em)
{
    const char *me = tn_client_session_id(sh->s);
    char after[TN_SESSION_ID_MAX + 1] = "";
    bool seen = false;
    memset(g, 0, sizeof(*g));
    for (;;) {
        struct tn_session_list_args a = {
            sh->group_prefix, after[0] != '\0' ? after : NULL, LIST_LIMIT};
        struct tn_session_list *page = NULL;
        int rc = tn_client_session_list(sh->c, &a, &page, em);
        if (rc < 0)
            return rc;
        for (size_t i = 0; i < page->count; i++) {
            int cmp = strcmp(page->items[i].session_id, me);
            seen |= cmp == 0;
            g->rank += cmp < 0;
        }
        g->k += page->count;
        bool more = page->has_next;
        (void)snprintf(after, sizeof(after), "%s", page->next);
        tn_client_session_list_free(page);
        if (!more)
            break;
    }
    g->k += !seen; /* just opened: count it even if the list missed it */
    return TN_OK;
}

static size_t share_of(const struct tn_share *sh, const struct group *g)
{
    size_t base = sh->n / g->k;
    return base + (g->rank < sh->n % g->k ? 1 : 0);
}

/* ---- the shards ---- */

/* A shard this worker holds whose grant the list does not show (no live
 * lease of the name, or another token) ended on the server: its lease is
 * lost, as an event would have said. */
static void verify(struct tn_share *sh, const struct tn_share_shard *d,
                   const struct tn_lease_info *live)
{
    struct tn_lease *l = d->lease;
    if (l == NULL || (live != NULL && live->token == tn_lease_token(l)))
        return;
    tn_client_event_feed(sh->c, live != NULL ? "acquired" : "expired", d->name,
                         live != NULL ? live->token : tn_lease_token(l));
}

/* Read the live leases under the prefix: taken[i] is set for each shard
 * i held by anyone; this worker's own are verified on the way. */
static int read_shards(struct tn_share *sh, bool *taken, struct tn_errmsg *em)
{
    bool *listed = tn_calloc(sh->n, sizeof(*listed));
    char after[TN_CLIENT_NAME_MAX + 1] = "";
    int rc = listed != NULL ? TN_OK : TN_ENOMEM;
    for (bool more = true; rc == 0 && more;) {
        struct tn_list_args a = {sh->list_prefix,
                                 after[0] != '\0' ? after : NULL, LIST_LIMIT};
        struct tn_lease_list *page = NULL;
        rc = tn_client_list(sh->c, &a, &page, em);
        for (size_t i = 0; rc == 0 && i < page->count; i++) {
            struct tn_share_shard *d = shard_of(sh, page->items[i].name);
            if (d == NULL)
                continue;
            taken[d - sh->shards] = listed[d - sh->shards] = true;
            verify(sh, d, &page->items[i]);
        }
        more = rc == 0 && page->has_next;
        if (more)
            (void)snprintf(after, sizeof(after), "%s", page->next);
        tn_lease_list_free(page);
    }
    for (size_t i = 0; rc == 0 && i < sh->n; i++) {
        if (!listed[i])
            verify(sh, &sh->shards[i], NULL);
    }
    tn_free(listed);
    return rc;
}

/* ---- claim and release ---- */

/* Claim names[0..n) in one request; the grants are kept and told. */
static int claim(struct tn_share *sh, const char **names, size_t n,
                 struct tn_errmsg *em)
{
    struct tn_claim_args a = {
        .names = names, .n_names = n, .lock_delay_ms = sh->lock_delay_ms};
    struct tn_claim_result *res = NULL;
    int rc = tn_client_session_claim(sh->s, &a, &res, em);
    if (rc < 0)
        return rc;
    struct tn_lease **got = tn_calloc(n, sizeof(*got));
    size_t k = 0;
    for (size_t i = 0; got != NULL && i < res->count; i++) {
        struct tn_claim_item *it = &res->items[i];
        struct tn_share_shard *d = shard_of(sh, it->name);
        if (it->lease == NULL || d == NULL || d->lease != NULL)
            continue; /* not granted, or a grant already held */
        d->lease = got[k++] = it->lease;
        it->lease = NULL;
    }
    set_count(sh);
    if (k > 0 && sh->gained != NULL)
        sh->gained(sh, got, k, sh->ud);
    tn_free(got);
    tn_claim_result_free(res);
    return got != NULL ? TN_OK : TN_ENOMEM;
}

/* Claim up to want free shards, starting at this worker's place in the
 * ring of shards (so workers starting together reach for different
 * ones), in chunks of at most CLAIM_NAMES names and CLAIM_BYTES bytes. */
static int claim_free(struct tn_share *sh, const bool *taken, size_t want,
                      size_t start, struct tn_errmsg *em)
{
    const char **names = tn_calloc(CLAIM_NAMES, sizeof(*names));
    int rc = names != NULL ? TN_OK : TN_ENOMEM;
    size_t k = 0;
    size_t bytes = 0;
    for (size_t j = 0; rc == 0 && j < sh->n && want > 0; j++) {
        size_t i = (start + j) % sh->n;
        if (taken[i])
            continue;
        names[k++] = sh->shards[i].name;
        bytes += strlen(sh->shards[i].name) + 4;
        want--;
        if (k == CLAIM_NAMES || bytes >= CLAIM_BYTES || want == 0) {
            rc = claim(sh, names, k, em);
            k = 0;
            bytes = 0;
        }
    }
    if (rc == 0 && k > 0)
        rc = claim(sh, names, k, em);
    tn_free(names);
    return rc;
}

/* Give back `extra` shards: the application hears first, then one batch
 * release per 1024. */
static int release_surplus(struct tn_share *sh, size_t extra,
                           struct tn_errmsg *em)
{
    struct tn_lease **a = tn_calloc(extra, sizeof(*a));
    if (a == NULL)
        return TN_ENOMEM;
    size_t k = 0;
    for (size_t i = sh->n; i-- > 0 && k < extra;) {
        if (sh->shards[i].lease != NULL)
            a[k++] = sh->shards[i].lease;
    }
    int rc = TN_OK;
    if (sh->lost != NULL)
        sh->lost(sh, a, k, TN_LEASE_END_RELEASED, sh->ud);
    for (size_t i = 0; i < k; i += TN_SESSION_CLAIM_MAX) {
        size_t m = k - i < TN_SESSION_CLAIM_MAX ? k - i : TN_SESSION_CLAIM_MAX;
        int r = tn_client_session_release(sh->s, a + i, m, NULL, em);
        rc = rc < 0 ? rc : r;
    }
    for (size_t i = 0; i < k; i++) {
        shard_of(sh, tn_lease_name(a[i]))->lease = NULL;
        tn_lease_free(a[i]);
    }
    set_count(sh);
    tn_free(a);
    return rc;
}

int tn_share_round(struct tn_share *sh, struct tn_errmsg *em)
{
    struct group g;
    tn_share_reap(sh);
    bool *taken = tn_calloc(sh->n, sizeof(*taken));
    int rc = taken != NULL ? read_group(sh, &g, em) : TN_ENOMEM;
    if (rc == 0)
        rc = read_shards(sh, taken, em);
    if (rc == 0)
        tn_share_reap(sh); /* what the list showed lost */
    size_t have = 0;
    for (size_t i = 0; i < sh->n; i++)
        have += sh->shards[i].lease != NULL;
    size_t want = rc == 0 ? share_of(sh, &g) : have;
    if (have > want)
        rc = release_surplus(sh, have - want, em);
    else if (have < want)
        rc = claim_free(sh, taken, want - have, g.rank * sh->n / g.k, em);
    tn_free(taken);
    return rc;
}
