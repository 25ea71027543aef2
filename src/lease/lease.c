/* SPDX-License-Identifier: MIT */
/* The lease state machine: acquire, renew, release and restore decide on
 * entries of the table (table.c keeps them) at a now_ms they are given.
 * No I/O, no clock, no memory of its own beyond the entries' strings. */
#include "lease.h"

#include <stddef.h>
#include <string.h>

#include <tenure/err.h>

#include "common/assert.h"
#include "common/rand.h"
#include "table.h"

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

/* now_ms is the server clock truncated to the millisecond, so the request
 * may have arrived up to 1 ms later than now_ms says; its sender counts the
 * TTL from before it sent.  Expiring at now_ms + ttl could then end the
 * lease before the holder's own count does: round up instead (found by the
 * fault harness, issue #7). */
static int64_t expiry(int64_t now_ms, int64_t ttl_ms)
{
    return now_ms + ttl_ms + 1;
}

/* The grant itself: new token, new secret, new expiry. */
static int grant(struct tn_lease_table *t, struct tn_lease_entry *l,
                 const struct tn_acquire_req *r, int64_t now_ms)
{
    if (tn_lease_set_strings(l, r->owner_id, r->request_id, r->principal) < 0)
        return TN_ENOMEM;
    TN_ASSERT(t->last_token >= l->token);
    l->token = ++t->last_token;
    memcpy(l->secret, r->secret, TN_SECRET_BYTES);
    l->ttl_ms = r->ttl_ms;
    l->expires_at_ms = expiry(now_ms, r->ttl_ms);
    l->lock_delay_ms = r->lock_delay_ms;
    l->held = true;
    l->expiry_noted = false;
    l->seq = ++t->seq;
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
    if (tn_lease_is_live(l, now_ms)) {
        if (!same_request(l, r))
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
    return grant(t, l, r, now_ms);
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
