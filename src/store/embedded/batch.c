/* SPDX-License-Identifier: MIT */
/* A batch of the group commit (commit.c hands them over): the row images
 * and waiters the loop thread appends, their strings, and the batch's
 * life (made, emptied for reuse, freed).  Whoever holds a batch calls
 * these; commit.c holds its mutex over the open one. */
#include "store/embedded/batch.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/assert.h"

#define STRINGS_MAX_BYTES ((size_t)1 << 30)

struct tn_batch *tn_batch_new(struct tn_commit *owner)
{
    struct tn_batch *b = tn_calloc(1, sizeof(*b));
    if (b == NULL)
        return NULL;
    tn_buf_init(&b->strings, STRINGS_MAX_BYTES);
    b->owner = owner;
    return b;
}

void tn_batch_free(struct tn_batch *b)
{
    if (b == NULL)
        return;
    tn_free(b->rows);
    tn_free(b->waiters);
    tn_buf_release(&b->strings);
    tn_free(b);
}

void tn_batch_reset(struct tn_batch *b)
{
    b->n_rows = 0;
    b->n_waiters = 0;
    b->last_seq = 0;
    b->rc = 0;
    tn_buf_reset(&b->strings);
}

bool tn_batch_is_empty(const struct tn_batch *b)
{
    return b->n_rows == 0 && b->n_waiters == 0;
}

const char *tn_batch_str(const struct tn_batch *b, size_t off)
{
    return off == SIZE_MAX ? NULL : b->strings.data + off;
}

static size_t add_string(struct tn_batch *b, const char *s)
{
    if (s == NULL)
        return SIZE_MAX;
    size_t off = b->strings.len;
    if (tn_buf_append(&b->strings, s, strlen(s) + 1) < 0)
        TN_ASSERT(!"out of memory for a commit batch");
    return off;
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t n = *cap < 16 ? 16 : *cap * 2;
    void *q = tn_reallocarray(p, n, size);
    TN_ASSERT(q != NULL);
    *cap = n;
    return q;
}

/* A fresh row at the end of the open batch. */
static struct tn_row *next_row(struct tn_batch *b)
{
    b->rows = grow(b->rows, &b->cap_rows, b->n_rows + 1, sizeof(*b->rows));
    struct tn_row *r = &b->rows[b->n_rows++];
    memset(r, 0, sizeof(*r));
    return r;
}

void tn_batch_put_lease(struct tn_batch *b, const struct tn_lease_entry *l,
                        uint64_t last_token)
{
    struct tn_row *r = next_row(b);
    r->row_id = l->row_id;
    r->name_off = add_string(b, l->name);
    r->owner_off = add_string(b, l->owner_id != NULL ? l->owner_id : "");
    r->rid_off = add_string(b, l->request_id);
    r->principal_off = add_string(b, l->principal);
    TN_LEASE_COPY_GRANT(r, l);
    r->ended = l->held && l->expiry_noted;
    r->session_row = l->session != NULL ? l->session->row_id : 0;
    if (l->seq > b->last_seq)
        b->last_seq = l->seq;
    b->last_token = last_token;
}

void tn_batch_put_session(struct tn_batch *b, const struct tn_session *s,
                          bool gone, uint64_t last_token)
{
    struct tn_row *r = next_row(b);
    r->session = true;
    r->row_id = s->row_id;
    r->name_off = add_string(b, s->id);
    r->owner_off = add_string(b, s->owner_id);
    r->rid_off = SIZE_MAX;
    r->principal_off = add_string(b, s->principal);
    memcpy(r->secret, s->secret, TN_SECRET_BYTES);
    r->ttl_ms = s->ttl_ms;
    r->expires_at_ms = s->expires_at_ms;
    r->end = (uint8_t)s->end;
    r->ended_at_ms = s->ended_at_ms;
    r->retired = gone;
    if (s->seq > b->last_seq)
        b->last_seq = s->seq;
    b->last_token = last_token;
}

void tn_batch_put_retire(struct tn_batch *b, const struct tn_lease_entry *l,
                         uint64_t floor)
{
    struct tn_row *r = next_row(b);
    r->row_id = l->row_id;
    r->name_off = add_string(b, l->name);
    r->owner_off = add_string(b, "");
    r->rid_off = SIZE_MAX;
    r->principal_off = SIZE_MAX;
    r->token = floor;
    r->retired = true;
    if (l->seq > b->last_seq)
        b->last_seq = l->seq;
    b->last_token = floor;
}

void tn_batch_add_waiter(struct tn_batch *b, tn_store_done_fn done, void *arg,
                         struct tn_store_result *out)
{
    b->waiters = grow(b->waiters, &b->cap_waiters, b->n_waiters + 1,
                      sizeof(*b->waiters));
    b->waiters[b->n_waiters++] =
        (struct tn_waiter){.done = done, .arg = arg, .out = out};
}
