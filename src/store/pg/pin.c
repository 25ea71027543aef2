/* SPDX-License-Identifier: MIT */
/* Which connection a change of a name must go to (pin.h). */
#include "store/pg/pin.h"

#include <string.h>

/* Changes of a name: the statements whose events must leave in order. */
bool tn_pg_is_change(const struct tn_pg_op *op)
{
    return op->stmt == TN_PG_ACQUIRE || op->stmt == TN_PG_RELEASE;
}

uint32_t tn_pg_name_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s != '\0'; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/* op (a change) goes in flight on c, or leaves it (answered, or queued
 * again). */
void tn_pg_change_in(struct tn_pg_conn *c, struct tn_pg_op *op)
{
    if (!tn_pg_is_change(op))
        return;
    c->changing[op->hash % TN_PG_CHANGE_SLOTS]++;
    op->counted = true;
    op->conn = (uint8_t)(c - c->store->conns);
}

void tn_pg_change_out(struct tn_pg *p, struct tn_pg_op *op)
{
    if (!op->counted)
        return;
    p->conns[op->conn].changing[op->hash % TN_PG_CHANGE_SLOTS]--;
    op->counted = false;
}

static bool same_name(const struct tn_pg_op *a, const struct tn_pg_op *b)
{
    return a->counted && a->hash == b->hash && strcmp(a->name, b->name) == 0;
}

/* Is a change of op's name in flight on c (sent, its trailer not done)? */
static bool changing_on(const struct tn_pg_conn *c, const struct tn_pg_op *op)
{
    if (c->changing[op->hash % TN_PG_CHANGE_SLOTS] == 0)
        return false;
    for (const struct tn_pg_batch *b = c->inflight; b != NULL; b = b->next) {
        for (size_t i = 0; i < b->n; i++) {
            if (same_name(b->ops[i], op))
                return true;
        }
        for (size_t i = 0; i < b->n_held; i++) {
            if (same_name(b->held[i], op))
                return true;
        }
    }
    return false;
}

/* The connection a change must go to, or -1 for any: the one where a
 * change of its name is still in flight (answered or not, its trailing
 * notify not done).  That backend runs it after the earlier change's
 * notify, so this instance's events of a name leave in the order of its
 * changes, whether the client waited for the earlier answer (a release
 * after its acquire) or not (two requests racing).  Answers need not wait
 * for the notify.  Names without a change in flight go anywhere, which
 * keeps the connections evenly loaded. */
int tn_pg_pinned_to(const struct tn_pg *p, const struct tn_pg_op *op)
{
    if (!tn_pg_is_change(op))
        return -1;
    for (int i = 0; i < TN_PG_CONNS; i++) {
        if (changing_on(&p->conns[i], op))
            return i;
    }
    return -1;
}
