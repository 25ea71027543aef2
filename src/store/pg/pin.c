/* SPDX-License-Identifier: MIT */
/* Which connection a change must go to (pin.h).  A change whose events
 * leave in the trailer after its commit (an acquire, a release, a session
 * opened) pins, while it is in flight, its name and its session (if any)
 * to its connection.  A change that sends its events inside its own
 * transaction (a claim, a batch release, a session's end, the sweeps)
 * pins nothing: whatever changes one of its names or its session next
 * waits for its row locks, hence for its commit and its events.  Both
 * kinds follow the pins of the changes before them. */
#include "store/pg/pin.h"

#include <string.h>

bool tn_pg_is_change(const struct tn_pg_op *op)
{
    return tn_pg_is_acquire(op->stmt) || op->stmt == TN_PG_RELEASE ||
           op->stmt == TN_PG_SESSION_OPEN;
}

/* Changes of one name whose events leave in the trailer. */
static bool is_name_change(const struct tn_pg_op *op)
{
    return tn_pg_is_acquire(op->stmt) || op->stmt == TN_PG_RELEASE;
}

/* slot counters: a name's and a session's hashes share them (a collision
 * only costs a scan) */
static uint16_t *slot(struct tn_pg_conn *c, uint32_t h)
{
    return &c->changing[h % TN_PG_CHANGE_SLOTS];
}

void tn_pg_change_in(struct tn_pg_conn *c, struct tn_pg_op *op)
{
    if (!tn_pg_is_change(op))
        return;
    if (is_name_change(op))
        (*slot(c, op->hash))++;
    if (op->sess != NULL)
        (*slot(c, op->sess_hash))++;
    op->counted = true;
    op->conn = (uint8_t)(c - c->store->conns);
}

void tn_pg_change_out(struct tn_pg *p, struct tn_pg_op *op)
{
    if (!op->counted)
        return;
    struct tn_pg_conn *c = &p->conns[op->conn];
    if (is_name_change(op))
        (*slot(c, op->hash))--;
    if (op->sess != NULL)
        (*slot(c, op->sess_hash))--;
    op->counted = false;
}

/* A key of a change: a name, or a session. */
struct key {
    const char *s; /* the name or the session id */
    uint32_t h;    /* its hash */
    bool sess;     /* a session */
};

/* Does the in-flight op a pin key k? */
static bool pins(const struct tn_pg_op *a, const struct key *k)
{
    if (!a->counted)
        return false;
    if (k->sess)
        return a->sess != NULL && a->sess_hash == k->h &&
               strcmp(a->sess, k->s) == 0;
    return is_name_change(a) && a->hash == k->h && strcmp(a->name, k->s) == 0;
}

/* Is a change pinning k in flight on c (sent, its trailer not done)? */
static bool pinned_on(const struct tn_pg_conn *c, const struct key *k)
{
    if (c->changing[k->h % TN_PG_CHANGE_SLOTS] == 0)
        return false;
    for (const struct tn_pg_batch *b = c->inflight; b != NULL; b = b->next) {
        for (size_t i = 0; i < b->n; i++) {
            if (pins(b->ops[i], k))
                return true;
        }
        for (size_t i = 0; i < b->n_held; i++) {
            if (pins(b->held[i], k))
                return true;
        }
    }
    return false;
}

/* Fold k into *pin: -1 none yet, a connection, or -2 two of them. */
static void fold(const struct tn_pg *p, const struct key *k, int *pin)
{
    for (int i = 0; i < TN_PG_CONNS && *pin != -2; i++) {
        if (!pinned_on(&p->conns[i], k))
            continue;
        *pin = *pin < 0 || *pin == i ? i : -2;
    }
}

/* The connection a change must go to: the one where a change of one of
 * its names or of its session is still in flight (answered or not, its
 * trailing notify not done).  That backend runs it after the earlier
 * change's notify, so this instance's events of a name or a session leave
 * in the order of its changes, whether the client waited for the earlier
 * answer (a release after its acquire) or not (two requests racing).
 * Answers need not wait for the notify.  Names without a change in flight
 * go anywhere, which keeps the connections evenly loaded.  A claim whose
 * names are pinned to both connections waits (-2) until one of them is
 * done. */
int tn_pg_pinned_to(const struct tn_pg *p, const struct tn_pg_op *op)
{
    int pin = -1;
    bool names = op->stmt == TN_PG_CLAIM || op->stmt == TN_PG_UNCLAIM;
    if (is_name_change(op)) {
        struct key k = {.s = op->name, .h = op->hash};
        fold(p, &k, &pin);
    }
    const char *n = op->names;
    for (size_t i = 0; names && n != NULL && i < op->n_names; i++) {
        struct key k = {.s = n, .h = tn_pg_op_hash(n)};
        fold(p, &k, &pin);
        n += strlen(n) + 1;
    }
    if (op->sess != NULL) {
        struct key k = {.s = op->sess, .h = op->sess_hash, .sess = true};
        fold(p, &k, &pin);
    }
    return pin;
}
