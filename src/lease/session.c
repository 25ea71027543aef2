/* SPDX-License-Identifier: MIT */
/* Sessions of the lease table (session.h): open, renew and end decide at
 * a now_ms they are given; the leases of a session hang on its list
 * (lease.c attaches, detaches and settles them).  No I/O, no clock. */
#include "lease/session.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "common/heap.h"
#include "common/map.h"
#include "common/rand.h"
#include "lease/table.h"

static bool id_eq(const void *entry, const void *key, size_t len)
{
    const struct tn_session *s = entry;
    return len == TN_SESSION_ID_LEN && memcmp(s->id, key, len) == 0;
}

static const struct tn_map_type session_map = {
    .link_off = offsetof(struct tn_session, next),
    .hash_off = offsetof(struct tn_session, hash),
    .eq = id_eq,
};

int tn_session_table_init(struct tn_lease_table *t)
{
    return tn_map_init(&t->sessions, &session_map, 0);
}

static bool free_one(void *s, void *ctx)
{
    (void)ctx;
    tn_free(s);
    return true;
}

void tn_session_table_release(struct tn_lease_table *t)
{
    if (t->sessions.buckets == NULL)
        return;
    tn_map_each(&t->sessions, free_one, NULL);
    tn_map_release(&t->sessions);
}

struct tn_session *tn_session_find(const struct tn_lease_table *t,
                                   const char *id)
{
    size_t len = strnlen(id, TN_SESSION_ID_LEN + 1);
    if (len != TN_SESSION_ID_LEN)
        return NULL;
    return tn_map_find(&t->sessions, tn_map_hash(id, len), id, len);
}

/* now_ms may be up to 1 ms behind the request's arrival: round the expiry
 * up, as a lease's (lease.c). */
static int64_t expiry(int64_t now_ms, int64_t ttl_ms)
{
    return now_ms + ttl_ms + 1;
}

/* A session with room for its strings after it; NULL when out of memory.
 * The strings are copied, the rest is zero. */
static struct tn_session *session_new(const char *id, const char *owner,
                                      const char *principal)
{
    size_t olen = strlen(owner);
    size_t plen = principal != NULL ? strlen(principal) + 1 : 0;
    struct tn_session *s = tn_calloc(1, sizeof(*s) + olen + 1 + plen);
    if (s == NULL)
        return NULL;
    memcpy(s->id, id, TN_SESSION_ID_LEN);
    s->hash = tn_map_hash(s->id, TN_SESSION_ID_LEN);
    s->owner_id = (char *)(s + 1);
    memcpy(s->owner_id, owner, olen + 1);
    if (principal != NULL) {
        s->principal = s->owner_id + olen + 1;
        memcpy(s->principal, principal, plen);
    }
    s->heap_index = SIZE_MAX;
    return s;
}

int tn_session_open(struct tn_lease_table *t, const struct tn_session_spec *r,
                    int64_t now_ms, struct tn_session **out)
{
    *out = NULL;
    if (strnlen(r->id, TN_SESSION_ID_LEN + 1) != TN_SESSION_ID_LEN)
        return TN_EINVAL;
    if (tn_session_find(t, r->id) != NULL)
        return TN_ECONFLICT;
    struct tn_session *s = session_new(r->id, r->owner_id, r->principal);
    if (s == NULL)
        return TN_ENOMEM;
    memcpy(s->secret, r->secret, TN_SESSION_SECRET_BYTES);
    s->ttl_ms = r->ttl_ms;
    s->expires_at_ms = expiry(now_ms, r->ttl_ms);
    s->seq = ++t->seq;
    tn_map_insert(&t->sessions, s);
    *out = s;
    return TN_OK;
}

int tn_session_auth(const struct tn_session *s, const uint8_t *secret,
                    const char *principal, int64_t now_ms)
{
    if (!tn_session_is_live(s, now_ms))
        return TN_ELOST;
    if (!tn_ct_equal(s->secret, secret, TN_SESSION_SECRET_BYTES))
        return TN_EFORBIDDEN;
    /* With auth on, the secret alone is not enough: a session is bound to
     * the principal that opened it, as a lease is. */
    if (principal != NULL &&
        (s->principal == NULL || strcmp(s->principal, principal) != 0))
        return TN_EFORBIDDEN;
    return TN_OK;
}

int tn_session_renew(struct tn_lease_table *t, struct tn_session *s,
                     const uint8_t *secret, const char *principal,
                     int64_t ttl_ms, int64_t now_ms)
{
    int rc = tn_session_auth(s, secret, principal, now_ms);
    if (rc < 0)
        return rc;
    if (ttl_ms > 0)
        s->ttl_ms = ttl_ms;
    s->expires_at_ms = expiry(now_ms, s->ttl_ms);
    s->seq = ++t->seq;
    return TN_OK;
}

void tn_session_end(struct tn_lease_table *t, struct tn_session *s,
                    enum tn_session_end end, int64_t at_ms)
{
    TN_ASSERT(s->end == TN_SESSION_LIVE && end != TN_SESSION_LIVE);
    s->end = end;
    s->ended_at_ms = at_ms;
    s->seq = ++t->seq;
}

void tn_session_free(struct tn_lease_table *t, struct tn_session *s)
{
    TN_ASSERT(s->n_leases == 0 && s->leases == NULL);
    bool found = tn_map_remove(&t->sessions, s);
    TN_ASSERT(found);
    tn_free(s);
}

int tn_session_restore(struct tn_lease_table *t, const struct tn_session *img,
                       struct tn_session **out)
{
    *out = NULL;
    if (strnlen(img->id, TN_SESSION_ID_LEN + 1) != TN_SESSION_ID_LEN)
        return TN_EINVAL;
    if (tn_session_find(t, img->id) != NULL)
        return TN_ECONFLICT;
    struct tn_session *s = session_new(img->id, img->owner_id, img->principal);
    if (s == NULL)
        return TN_ENOMEM;
    s->row_id = img->row_id;
    memcpy(s->secret, img->secret, TN_SESSION_SECRET_BYTES);
    s->ttl_ms = img->ttl_ms;
    s->expires_at_ms = img->expires_at_ms;
    s->ended_at_ms = img->ended_at_ms;
    s->end = img->end;
    if (s->row_id > t->last_session_row)
        t->last_session_row = s->row_id;
    tn_map_insert(&t->sessions, s);
    *out = s;
    return TN_OK;
}

struct each_ctx {
    bool (*fn)(struct tn_session *s, void *ctx);
    void *ctx;
};

static bool each_one(void *s, void *ctx)
{
    struct each_ctx *c = ctx;
    return c->fn(s, c->ctx);
}

void tn_session_each(const struct tn_lease_table *t,
                     bool (*fn)(struct tn_session *s, void *ctx), void *ctx)
{
    struct each_ctx c = {.fn = fn, .ctx = ctx};
    tn_map_each(&t->sessions, each_one, &c);
}

size_t tn_session_count(const struct tn_lease_table *t)
{
    return t->sessions.count;
}

/* ---- listing, in id order (the ids are fixed-length hex) ---- */

static int id_cmp(const void *a, const void *b)
{
    return strcmp((*(struct tn_session *const *)a)->id,
                  (*(struct tn_session *const *)b)->id);
}

/* Max-heap on id: the top is the largest of the smallest ids kept. */
static bool later_id(const void *a, const void *b)
{
    return id_cmp(a, b) > 0;
}

/* Does id sort after a[0..len) (byte order, a prefix first)? */
static bool id_after(const char *id, const char *a, size_t len)
{
    int c = memcmp(id, a, len < TN_SESSION_ID_LEN ? len : TN_SESSION_ID_LEN);
    return c > 0 || (c == 0 && len < TN_SESSION_ID_LEN);
}

static bool list_one(struct tn_session *s, void *ctx)
{
    struct tn_list_page *w = ctx;
    if (!tn_session_is_live(s, w->now_ms) ||
        (w->prefix_len > 0 &&
         strncmp(s->owner_id, w->prefix, w->prefix_len) != 0))
        return true;
    if (w->after != NULL && !id_after(s->id, w->after, w->after_len))
        return true;
    tn_list_page_offer(w, &s);
    return true;
}

size_t tn_session_list(const struct tn_lease_table *t,
                       const struct tn_session_query *q, int64_t now_ms,
                       struct tn_session **out, size_t limit, bool *more_out)
{
    struct tn_list_page w = {.prefix = q->prefix,
                             .prefix_len = q->prefix_len,
                             .after = q->after,
                             .after_len = q->after_len,
                             .now_ms = now_ms};
    tn_heap_init_fixed(&w.h, out, limit, sizeof(*out), later_id);
    tn_session_each(t, list_one, &w);
    return tn_list_page_sort(&w, id_cmp, more_out);
}
