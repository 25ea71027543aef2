/* SPDX-License-Identifier: MIT */
/* Claims and batch releases under a session (docs/SESSIONS.md, "Batches"):
 * POST and DELETE /v1/sessions/{id}/leases.  Every name is decided on its
 * own, as a non-waiting acquire (or a release) would be: a name with
 * queued waiters is never granted to a claim, a name this session holds
 * under the same owner is granted again (idempotent claims).  The rows of
 * one request go into the open batch while the committer is held off it,
 * so they become durable in one commit, and the answer waits for it and
 * for every end it reveals.  A claim whose grants would pass --max-leases
 * or --max-names is refused whole before anything is decided. */
#include "store/embedded/claim.h"

#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "lease/table.h"
#include "store/embedded/announce.h"
#include "store/embedded/change.h"
#include "store/embedded/commit.h"
#include "store/embedded/events.h"
#include "store/embedded/history.h"
#include "store/embedded/session.h"
#include "store/embedded/wait.h"

/* One claim under way. */
struct claim {
    struct embedded *e;
    const struct tn_claim_req *r;
    struct tn_session *s; /* live, its bearer's */
    const char *owner;    /* of the grants */
    int64_t now;
};

/* The acquire that name i of the claim is. */
static struct tn_acquire_req claim_req(const struct claim *c, size_t i)
{
    const struct tn_name_ref *n = &c->r->names[i];
    return (struct tn_acquire_req){.name = n->name,
                                   .name_len = n->len,
                                   .owner_id = c->owner,
                                   .principal = c->r->session.principal,
                                   .lock_delay_ms = c->r->lock_delay_ms,
                                   .secret =
                                       c->r->secrets + i * TN_SECRET_BYTES,
                                   .session_id = c->s->id,
                                   .session_secret = c->r->session.secret};
}

/* --max-leases and --max-names for the claim as a whole: count the names
 * it would grant (free, no queue, not already this session's), recording
 * the ends it meets.  TN_OK, or TN_ECAPACITY with out->capacity. */
static int fits(const struct claim *c, struct tn_store_result *out)
{
    struct embedded *e = c->e;
    size_t grants = 0, names = 0;
    for (size_t i = 0; i < c->r->n_names; i++) {
        struct tn_acquire_req a = claim_req(c, i);
        struct tn_lease_entry *l = tn_lease_find(&e->table, a.name, a.name_len);
        if (tn_lease_is_replay(l, &a, c->now) || tn_embedded_has_waiters(l))
            continue;
        tn_embedded_note_expiry(e, l, c->now);
        if (!tn_lease_is_free(l, c->now))
            continue;
        grants++;
        names += l == NULL;
    }
    if (e->max_leases > 0 && e->n_live + grants > e->max_leases)
        out->capacity = "leases";
    else if (e->max_names > 0 &&
             tn_lease_table_count(&e->table) + names > e->max_names)
        out->capacity = "names";
    else
        return TN_OK;
    out->retry_after_ms = RETRY_AFTER_MS;
    return TN_ECAPACITY;
}

/* What a refused name says: its holder, or its lock delay. */
static void refused(const struct tn_lease_entry *l, int64_t now,
                    struct tn_claim_item *it)
{
    it->token = l->token;
    if (tn_lease_is_live(l, now)) {
        it->outcome = TN_CLAIM_HELD;
        size_t n = strnlen(l->owner_id, TN_OWNER_MAX_BYTES);
        memcpy(it->holder, l->owner_id, n);
        int64_t left = tn_lease_expires_at(l) - now;
        it->expires_in_ms = left > 0 ? left : 0;
        return;
    }
    it->outcome = TN_CLAIM_LOCK_DELAY;
    int64_t free_at = l->expires_at_ms + l->lock_delay_ms;
    it->retry_after_ms = free_at > now ? free_at - now : 1;
}

static void granted(const struct tn_lease_entry *l, struct tn_claim_item *it)
{
    it->outcome = TN_CLAIM_GRANTED;
    it->token = l->token;
    memcpy(it->secret, l->secret, TN_SECRET_BYTES);
}

/* Decide name i; returns the change its answer reveals (0: none), or
 * sets *rc (out of memory: the grants made so far stand). */
static uint64_t claim_one(const struct claim *c, size_t i,
                          struct tn_claim_item *it, int *rc)
{
    struct embedded *e = c->e;
    struct tn_acquire_req a = claim_req(c, i);
    uint32_t h = tn_lease_hash(a.name, a.name_len);
    struct tn_lease_entry *l =
        tn_lease_find_h(&e->table, h, a.name, a.name_len);
    it->index = i;
    if (tn_lease_is_replay(l, &a, c->now)) {
        granted(l, it);
        return l->seq;
    }
    if (tn_embedded_has_waiters(l))
        tn_embedded_wake(e, l); /* serve the queue first if the name is free */
    tn_embedded_note_expiry(e, l, c->now);
    if (tn_embedded_has_waiters(l)) { /* a batch never jumps a queue */
        refused(l, c->now, it);
        return l->seq;
    }
    bool replayed = false;
    int64_t retry = 0;
    int got =
        tn_lease_acquire_h(&e->table, h, &a, c->now, &l, &replayed, &retry);
    if (got == TN_ECONFLICT || got == TN_ELOCKDELAY) {
        refused(l, c->now, it);
        return l->seq;
    }
    if (got < 0) {
        *rc = got;
        return l != NULL ? l->seq : 0;
    }
    granted(l, it);
    if (!replayed) {
        tn_embedded_commit_row(e, l);
        tn_embedded_ledger_grant(e, l, c->now);
        tn_embedded_emit(e, TN_EVENT_ACQUIRED, l);
        tn_embedded_track_expiry(e, l);
    }
    return l->seq;
}

/* The items of a batch, or NULL (answered: out of memory). */
static struct tn_claim_item *items(size_t n, struct tn_store_result *out,
                                   tn_store_done_fn done, void *arg)
{
    out->claims = tn_calloc(n > 0 ? n : 1, sizeof(*out->claims));
    if (out->claims == NULL) {
        out->rc = TN_ENOMEM;
        done(arg);
        return NULL;
    }
    out->n_claims = n;
    return out->claims;
}

void tn_embedded_claim(struct tn_store *st, const struct tn_claim_req *r,
                       struct tn_store_result *out, tn_store_done_fn done,
                       void *arg)
{
    struct claim c = {.r = r};
    c.e = tn_embedded_op_begin(st, out, done, arg, &c.now);
    if (c.e == NULL || tn_embedded_session_refuse(c.e, &r->session, c.now, out,
                                                  done, arg, &c.s))
        return;
    struct embedded *e = c.e;
    c.owner = r->owner_id != NULL ? r->owner_id : c.s->owner_id;
    out->rc = fits(&c, out);
    if (out->rc < 0 || items(r->n_names, out, done, arg) == NULL) {
        if (out->rc < 0)
            done(arg); /* nothing granted */
        return;
    }
    uint64_t seq = c.s->seq; /* the session is live */
    tn_commit_hold(e->commit, true);
    for (size_t i = 0; i < r->n_names; i++) {
        uint64_t at = claim_one(&c, i, &out->claims[i], &out->rc);
        seq = at > seq ? at : seq;
    }
    tn_commit_hold(e->commit, false);
    tn_embedded_view_session(&out->session, c.s, c.now, false);
    tn_embedded_finish(e, seq, out, done, arg);
}

/* Release one lease of the batch if it is a live lease of s with that
 * token; the change its answer reveals. */
static uint64_t unclaim_one(struct embedded *e, struct tn_session *s,
                            const struct tn_name_token *n, int64_t now,
                            struct tn_claim_item *it)
{
    struct tn_lease_entry *l = tn_lease_find(&e->table, n->name, n->len);
    it->token = n->token;
    tn_embedded_note_expiry(e, l, now); /* lost reveals the end */
    if (l == NULL || l->session != s || l->token != n->token ||
        !tn_lease_is_live(l, now)) {
        it->outcome = TN_CLAIM_LOST;
        return l != NULL ? l->seq : e->retired_seq;
    }
    /* The session's secret proved the bearer holds it: no lease secret. */
    struct tn_token_req tr = {
        .name = n->name, .name_len = n->len, .token = n->token, .force = true};
    struct tn_lease_entry *got = NULL;
    int rc = tn_lease_release(&e->table, &tr, now, &got);
    TN_ASSERT(rc == TN_OK && got == l);
    it->outcome = TN_CLAIM_RELEASED;
    tn_embedded_uncount(e, l);
    tn_embedded_commit_row(e, l);
    tn_embedded_ledger_end(e, l, TN_GRANT_RELEASED, now);
    tn_embedded_emit(e, TN_EVENT_RELEASED, l);
    tn_embedded_wake(e, l); /* granted at once to the first waiter */
    return l->seq;
}

void tn_embedded_unclaim(struct tn_store *st, const struct tn_unclaim_req *r,
                         struct tn_store_result *out, tn_store_done_fn done,
                         void *arg)
{
    int64_t now;
    struct tn_session *s;
    struct embedded *e = tn_embedded_op_begin(st, out, done, arg, &now);
    if (e == NULL ||
        tn_embedded_session_refuse(e, &r->session, now, out, done, arg, &s) ||
        items(r->n_leases, out, done, arg) == NULL)
        return;
    uint64_t seq = s->seq;
    tn_commit_hold(e->commit, true);
    for (size_t i = 0; i < r->n_leases; i++) {
        out->claims[i].index = i;
        uint64_t at = unclaim_one(e, s, &r->leases[i], now, &out->claims[i]);
        seq = at > seq ? at : seq;
    }
    tn_commit_hold(e->commit, false);
    out->rc = TN_OK;
    tn_embedded_view_session(&out->session, s, now, false);
    tn_embedded_finish(e, seq, out, done, arg);
}
