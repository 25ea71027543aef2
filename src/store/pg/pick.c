/* SPDX-License-Identifier: MIT */
/* What the PostgreSQL store's next batch on a connection takes: the
 * pending ops that connection may carry (a change goes where the previous
 * change of its name is still in flight, pin.c), oldest first, a sweep
 * alone, sorted by name so that two instances lock rows in the same
 * order; and which connections take a batch at all (batch.c sends and
 * spreads them). */
#include "store/pg/pick.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "store/pg/pin.h"
#include "store/pg/sql.h"

static int op_cmp(const void *a, const void *b)
{
    const struct tn_pg_op *x = *(const struct tn_pg_op *const *)a;
    const struct tn_pg_op *y = *(const struct tn_pg_op *const *)b;
    int cmp = strcmp(x->name, y->name);
    if (cmp != 0)
        return cmp;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* May c carry op (pinned_to)? */
static bool carries(const struct tn_pg_conn *c, const struct tn_pg_op *op)
{
    int pin = tn_pg_pinned_to(c->store, op);
    return pin == -1 || (pin >= 0 && &c->store->conns[pin] == c);
}

/* Take up to n of the pending ops that c carries, oldest first, into a
 * new in-flight batch of c.  NULL when out of memory, or with *none set
 * when c carries none of them. */
struct tn_pg_batch *tn_pg_take_batch(struct tn_pg_conn *c, size_t n, bool *none)
{
    struct tn_pg *p = c->store;
    *none = false;
    struct tn_pg_batch *b = tn_calloc(1, sizeof(*b));
    struct tn_pg_op **ops = tn_calloc(n, sizeof(*ops));
    if (b == NULL || ops == NULL) {
        tn_free(b);
        tn_free(ops);
        return NULL;
    }
    size_t k = 0;
    struct tn_pg_op **link = &p->pending;
    struct tn_pg_op *kept = NULL; /* last op left pending */
    bool alone = false;           /* took a sweep: nothing more */
    while (*link != NULL && k < n && !alone) {
        struct tn_pg_op *op = *link;
        bool sweep = tn_pg_is_sweep(op->stmt);
        if (carries(c, op) && (!sweep || k == 0)) {
            *link = op->next;
            op->tries++;
            tn_pg_change_in(c, op);
            ops[k++] = op;
            alone = sweep;
        } else {
            kept = op;
            link = &op->next;
        }
    }
    if (*link == NULL)
        p->pending_tail = kept;
    p->n_pending -= k;
    if (k == 0) {
        tn_free(b);
        tn_free(ops);
        *none = true;
        return NULL;
    }
    n = k;
    qsort(ops, n, sizeof(*ops), op_cmp);
    b->ops = ops;
    b->n = n;
    b->err_idx = n;
    b->sent_ms = tn_clock_now_ms();
    if (c->inflight_tail != NULL)
        c->inflight_tail->next = b;
    else
        c->inflight = b;
    c->inflight_tail = b;
    c->n_inflight++;
    return b;
}

/* c's last batch in flight is a sweep, and another connection is ready:
 * nothing is pipelined behind the sweep, it goes there. */
static bool behind_sweep(const struct tn_pg *p, const struct tn_pg_conn *c)
{
    if (c->inflight_tail == NULL || !c->inflight_tail->sweeps)
        return false;
    for (int i = 0; i < TN_PG_CONNS; i++) {
        if (&p->conns[i] != c && p->conns[i].state == TN_PG_READY)
            return true;
    }
    return false;
}

/* May c take a batch at this level: ready, fewer than `level` batches in
 * flight, not behind a sweep. */
bool tn_pg_takes(const struct tn_pg *p, const struct tn_pg_conn *c,
                 unsigned level)
{
    return c->state == TN_PG_READY && c->n_inflight < level &&
           !behind_sweep(p, c);
}

/* Free batch slots: connections that take a batch at this level. */
size_t tn_pg_free_slots(const struct tn_pg *p, unsigned level)
{
    size_t n = 0;
    for (int i = 0; i < TN_PG_CONNS; i++)
        n += tn_pg_takes(p, &p->conns[i], level);
    return n;
}

/* Pending ops by who may carry them: pinned[i] only connection i, *any
 * every connection (pinned_to). */
void tn_pg_count_pending(const struct tn_pg *p, size_t pinned[TN_PG_CONNS],
                         size_t *any)
{
    memset(pinned, 0, TN_PG_CONNS * sizeof(pinned[0]));
    *any = 0;
    for (const struct tn_pg_op *op = p->pending; op != NULL; op = op->next) {
        int pin = tn_pg_pinned_to(p, op);
        if (pin >= 0)
            pinned[pin]++;
        else if (pin == -1)
            (*any)++; /* -2: none may carry it yet */
    }
}
