/* SPDX-License-Identifier: MIT */
/* The lease state machine: acquire, renew, release and restore decide on
 * entries of the table (table.c keeps them) and on the sessions
 * (session.c) at a now_ms they are given, and the reads (list, count) say
 * which leases are live.  No I/O, no clock, no memory of its own beyond
 * the entries' strings. */
#include "lease.h"

#include <stddef.h>
#include <string.h>

#include <tenure/err.h>

#include "common/assert.h"
#include "common/heap.h"
#include "common/rand.h"
#include "lease/session.h"
#include "lease/table.h"

int tn_lease_table_init(struct tn_lease_table *t, size_t expected)
{
    int rc = tn_lease_entries_init(t, expected);
    if (rc < 0)
        return rc;
    rc = tn_session_table_init(t);
    if (rc < 0)
        tn_lease_entries_release(t);
    return rc;
}

void tn_lease_table_release(struct tn_lease_table *t)
{
    tn_session_table_release(t);
    tn_lease_entries_release(t);
}

static bool same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) ||
           (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static bool same_request(const struct tn_lease_entry *l,
                         const struct tn_acquire_req *r)
{
    return r->request_id != NULL && l->request_id != NULL &&
           strcmp(l->request_id, r->request_id) == 0 &&
           strcmp(l->owner_id, r->owner_id) == 0 &&
           same_str(l->principal, r->principal);
}

/* The session's secret proves that the caller is the holder (the session
 * itself is checked by the caller: tn_session_auth). */
static bool same_session(const struct tn_lease_entry *l,
                         const struct tn_acquire_req *r)
{
    return r->session_id != NULL && l->session != NULL &&
           strcmp(l->session->id, r->session_id) == 0 &&
           strcmp(l->owner_id, r->owner_id) == 0;
}

bool tn_lease_is_replay(const struct tn_lease_entry *l,
                        const struct tn_acquire_req *r, int64_t now_ms)
{
    return tn_lease_is_live(l, now_ms) &&
           (same_request(l, r) || same_session(l, r));
}

bool tn_lease_is_free(const struct tn_lease_entry *l, int64_t now_ms)
{
    if (l == NULL)
        return true;
    if (tn_lease_is_live(l, now_ms))
        return false;
    const struct tn_session *s = l->session;
    bool expired =
        s == NULL ? l->held
                  : s->end == TN_SESSION_LIVE || s->end == TN_SESSION_EXPIRED;
    return !(expired && l->lock_delay_ms > 0 &&
             now_ms < tn_lease_expires_at(l) + l->lock_delay_ms);
}

/* Take l off its session's list (O(1)). */
static void detach(struct tn_lease_entry *l)
{
    struct tn_session *s = l->session;
    if (s == NULL)
        return;
    if (l->sess_prev != NULL)
        l->sess_prev->sess_next = l->sess_next;
    else
        s->leases = l->sess_next;
    if (l->sess_next != NULL)
        l->sess_next->sess_prev = l->sess_prev;
    TN_ASSERT(s->n_leases > 0);
    s->n_leases--;
    l->session = NULL;
    l->sess_next = l->sess_prev = NULL;
}

void tn_lease_attach(struct tn_lease_entry *l, struct tn_session *s)
{
    TN_ASSERT(l->session == NULL && s != NULL);
    l->session = s;
    l->sess_prev = NULL;
    l->sess_next = s->leases;
    if (s->leases != NULL)
        s->leases->sess_prev = l;
    s->leases = l;
    s->n_leases++;
}

enum tn_session_end tn_lease_settle(struct tn_lease_table *t,
                                    struct tn_lease_entry *l, int64_t now_ms)
{
    struct tn_session *s = l->session;
    TN_ASSERT(s != NULL && !tn_session_is_live(s, now_ms));
    enum tn_session_end end =
        s->end != TN_SESSION_LIVE ? s->end : TN_SESSION_EXPIRED;
    int64_t at = tn_session_end_at(s);
    detach(l);
    l->ttl_ms = s->ttl_ms;
    l->expires_at_ms = at;
    if (end != TN_SESSION_EXPIRED) {
        l->held = false;
        l->request_id = NULL; /* its bytes stay in the grant's block */
    }
    l->seq = ++t->seq;
    return end;
}

/* now_ms is the server clock truncated to the millisecond, so the request
 * may have arrived up to 1 ms later than now_ms says; its sender counts the
 * TTL from before it sent.  Expiring at now_ms + ttl could then end the
 * lease before the holder's own count does: round up instead (found by the
 * fault harness, issue #7). */
static int64_t expiry(int64_t now_ms, int64_t ttl_ms)
{
    return now_ms + ttl_ms + 1;
}

/* The grant itself: new token, new secret, new expiry (under a session
 * s: none of its own, it goes on s's list). */
static int grant(struct tn_lease_table *t, struct tn_lease_entry *l,
                 const struct tn_acquire_req *r, struct tn_session *s,
                 int64_t now_ms)
{
    TN_ASSERT(l->session == NULL); /* settled before: not live */
    if (tn_lease_set_strings(l, r->owner_id, r->request_id, r->principal) < 0)
        return TN_ENOMEM;
    TN_ASSERT(t->last_token >= l->token);
    l->token = ++t->last_token;
    memcpy(l->secret, r->secret, TN_SECRET_BYTES);
    l->ttl_ms = s != NULL ? s->ttl_ms : r->ttl_ms;
    l->expires_at_ms =
        s != NULL ? TN_LEASE_NO_EXPIRY : expiry(now_ms, r->ttl_ms);
    l->lock_delay_ms = r->lock_delay_ms;
    l->held = true;
    l->expiry_noted = false;
    l->seq = ++t->seq;
    if (s != NULL)
        tn_lease_attach(l, s);
    return TN_OK;
}

int tn_lease_acquire(struct tn_lease_table *t, const struct tn_acquire_req *r,
                     int64_t now_ms, struct tn_lease_entry **out,
                     bool *replayed_out, int64_t *retry_ms_out)
{
    return tn_lease_acquire_h(t, tn_lease_hash(r->name, r->name_len), r, now_ms,
                              out, replayed_out, retry_ms_out);
}

int tn_lease_acquire_h(struct tn_lease_table *t, uint32_t h,
                       const struct tn_acquire_req *r, int64_t now_ms,
                       struct tn_lease_entry **out, bool *replayed_out,
                       int64_t *retry_ms_out)
{
    *replayed_out = false;
    struct tn_lease_entry *l = tn_lease_find_h(t, h, r->name, r->name_len);
    *out = l;
    struct tn_session *s = NULL;
    if (r->session_id != NULL) {
        s = tn_session_find(t, r->session_id);
        int rc = tn_session_auth(s, r->session_secret, r->principal, now_ms);
        if (rc < 0)
            return rc;
    }
    if (l != NULL && l->session != NULL &&
        !tn_session_is_live(l->session, now_ms))
        (void)tn_lease_settle(t, l, now_ms);
    if (tn_lease_is_live(l, now_ms)) {
        if (!tn_lease_is_replay(l, r, now_ms))
            return TN_ECONFLICT;
        *replayed_out = true;
        return TN_OK;
    }
    if (l != NULL && l->held && l->lock_delay_ms > 0 &&
        now_ms < l->expires_at_ms + l->lock_delay_ms) {
        *retry_ms_out = l->expires_at_ms + l->lock_delay_ms - now_ms;
        return TN_ELOCKDELAY;
    }
    if (l == NULL &&
        (l = tn_lease_insert(t, h, r->name, r->name_len,
                             tn_lease_strings_size(r->owner_id, r->request_id,
                                                   r->principal))) == NULL)
        return TN_ENOMEM;
    *out = l;
    return grant(t, l, r, s, now_ms);
}

/* The live lease a token request names, or why there is none. */
static int match(struct tn_lease_table *t, const struct tn_token_req *r,
                 int64_t now_ms, struct tn_lease_entry **out)
{
    uint32_t h = tn_lease_hash(r->name, r->name_len);
    struct tn_lease_entry *l = tn_lease_find_h(t, h, r->name, r->name_len);
    *out = l;
    if (!tn_lease_is_live(l, now_ms))
        return TN_ELOST;
    if (r->force)
        return TN_OK;
    if (l->token != r->token)
        return TN_ELOST;
    if (!tn_ct_equal(l->secret, r->secret, TN_SECRET_BYTES))
        return TN_EFORBIDDEN;
    /* With auth on, the secret alone is not enough: renew and release are
     * bound to the principal that acquired the lease. */
    if (r->principal != NULL &&
        (l->principal == NULL || strcmp(l->principal, r->principal) != 0))
        return TN_EFORBIDDEN;
    return TN_OK;
}

int tn_lease_renew(struct tn_lease_table *t, const struct tn_token_req *r,
                   int64_t now_ms, struct tn_lease_entry **out)
{
    int rc = match(t, r, now_ms, out);
    if (rc < 0)
        return rc;
    struct tn_lease_entry *l = *out;
    if (l->session != NULL)
        return TN_EINVAL; /* only its session's renew keeps it */
    if (r->ttl_ms > 0)
        l->ttl_ms = r->ttl_ms;
    l->expires_at_ms = expiry(now_ms, l->ttl_ms);
    l->seq = ++t->seq;
    return TN_OK;
}

int tn_lease_release(struct tn_lease_table *t, const struct tn_token_req *r,
                     int64_t now_ms, struct tn_lease_entry **out)
{
    int rc = match(t, r, now_ms, out);
    if (rc < 0)
        return rc;
    struct tn_lease_entry *l = *out;
    if (l->session != NULL) {
        l->ttl_ms = l->session->ttl_ms;
        detach(l);
    }
    l->held = false;
    l->expires_at_ms = now_ms;
    l->request_id = NULL; /* its bytes stay in the grant's block */
    l->seq = ++t->seq;
    return TN_OK;
}

static size_t image_room(const struct tn_lease_entry *img)
{
    return tn_lease_strings_size(img->owner_id, img->request_id,
                                 img->principal);
}

/* l takes img's grant; 0 or TN_ENOMEM. */
static int take_image(struct tn_lease_table *t, struct tn_lease_entry *l,
                      const struct tn_lease_entry *img)
{
    if (tn_lease_set_strings(l, img->owner_id, img->request_id,
                             img->principal) < 0)
        return TN_ENOMEM;
    TN_LEASE_COPY_GRANT(l, img);
    l->seq = 0;
    if (img->token > t->last_token)
        t->last_token = img->token;
    return TN_OK;
}

int tn_lease_restore(struct tn_lease_table *t, const struct tn_lease_entry *img,
                     struct tn_lease_entry **out)
{
    uint32_t h = tn_lease_hash(img->name, img->name_len);
    struct tn_lease_entry *l = tn_lease_find_h(t, h, img->name, img->name_len);
    if (l == NULL && (l = tn_lease_insert(t, h, img->name, img->name_len,
                                          image_room(img))) == NULL)
        return TN_ENOMEM;
    detach(l); /* the image says what it is under, if anything */
    if (take_image(t, l, img) < 0)
        return TN_ENOMEM;
    *out = l;
    return TN_OK;
}

struct tn_lease_entry *tn_lease_stage(struct tn_lease_table *t,
                                      const struct tn_lease_entry *img)
{
    uint32_t h = tn_lease_hash(img->name, img->name_len);
    tn_lease_prefetch(t, h, false);
    struct tn_lease_entry *l =
        tn_lease_new(t, h, img->name, img->name_len, image_room(img));
    if (l != NULL && take_image(t, l, img) < 0) {
        tn_lease_discard(t, l);
        l = NULL;
    }
    return l;
}

struct tn_lease_entry *tn_lease_stage_link(struct tn_lease_table *t,
                                           struct tn_lease_entry *l)
{
    struct tn_lease_entry *old =
        tn_lease_find_h(t, l->hash, l->name, l->name_len);
    if (old == NULL)
        tn_lease_link(t, l);
    return old;
}

/* ---- the reads: live leases, listed and counted ---- */

static int name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c != 0)
        return c;
    return alen < blen ? -1 : alen > blen;
}

static int lease_cmp(const struct tn_lease_entry *a,
                     const struct tn_lease_entry *b)
{
    return name_cmp(a->name, a->name_len, b->name, b->name_len);
}

/* Max-heap on name: the top is the largest of the smallest names kept. */
static bool later_name(const void *a, const void *b)
{
    return lease_cmp(*(const struct tn_lease_entry *const *)a,
                     *(const struct tn_lease_entry *const *)b) > 0;
}

static int qsort_cmp(const void *a, const void *b)
{
    return lease_cmp(*(const struct tn_lease_entry *const *)a,
                     *(const struct tn_lease_entry *const *)b);
}

static bool list_one(const struct tn_lease_entry *l, void *ctx)
{
    struct tn_list_page *w = ctx;
    if (!tn_lease_is_live(l, w->now_ms) || l->name_len < w->prefix_len ||
        memcmp(l->name, w->prefix, w->prefix_len) != 0)
        return true;
    if (w->after != NULL &&
        name_cmp(l->name, l->name_len, w->after, w->after_len) <= 0)
        return true;
    tn_list_page_offer(w, &l);
    return true;
}

size_t tn_lease_list(const struct tn_lease_table *t, const char *prefix,
                     size_t prefix_len, const char *after, size_t after_len,
                     int64_t now_ms, const struct tn_lease_entry **out,
                     size_t limit, bool *more_out)
{
    struct tn_list_page w = {.prefix = prefix,
                             .prefix_len = prefix_len,
                             .after = after,
                             .after_len = after_len,
                             .now_ms = now_ms};
    tn_heap_init_fixed(&w.h, out, limit, sizeof(*out), later_name);
    tn_lease_each(t, list_one, &w);
    return tn_list_page_sort(&w, qsort_cmp, more_out);
}

struct live_count {
    int64_t now_ms;
    size_t n;
};

static bool count_one(const struct tn_lease_entry *l, void *ctx)
{
    struct live_count *c = ctx;
    c->n += tn_lease_is_live(l, c->now_ms);
    return true;
}

size_t tn_lease_count_live(const struct tn_lease_table *t, int64_t now_ms)
{
    struct live_count c = {.now_ms = now_ms, .n = 0};
    tn_lease_each(t, count_one, &c);
    return c.n;
}
