/* SPDX-License-Identifier: MIT */
/* The grant ledger of the embedded store: a ring of the last grants of all
 * names (bounded memory), each with its owner, when it was granted, and
 * when and how it ended.  A query scans the ring for one lease entry.  It
 * is kept in memory: after a restart it starts empty (docs/API.md). */
#include "store/embedded/history.h"

#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/clock.h"

struct tn_ledger_rec {
    const struct tn_lease_entry *l; /* the name's entry; NULL when unused */
    uint64_t token;                 /* the grant */
    char *owner_id;                 /* owned */
    int64_t granted_at_ms;          /* server clock */
    int64_t ended_at_ms;            /* 0 while open */
    enum tn_grant_end end;          /* how it ended */
    uint32_t prev; /* slot of the name's grant before, or NONE */
};

#define NONE UINT32_MAX

int tn_embedded_ledger_init(struct embedded *e, size_t capacity)
{
    e->ledger = tn_calloc(capacity, sizeof(*e->ledger));
    e->ledger_cap = capacity;
    return e->ledger != NULL ? TN_OK : TN_ENOMEM;
}

void tn_embedded_ledger_clear(struct embedded *e)
{
    for (size_t i = 0; i < e->ledger_cap; i++) {
        tn_free(e->ledger[i].owner_id);
        memset(&e->ledger[i], 0, sizeof(e->ledger[i]));
    }
    e->ledger_next = 0;
}

void tn_embedded_ledger_free(struct embedded *e)
{
    if (e->ledger == NULL)
        return;
    tn_embedded_ledger_clear(e);
    tn_free(e->ledger);
    e->ledger = NULL;
}

/* The record of l's current grant, or NULL if it fell out of the ring. */
static struct tn_ledger_rec *current(struct embedded *e,
                                     const struct tn_lease_entry *l)
{
    if (e->ledger_cap == 0)
        return NULL;
    struct tn_ledger_rec *r = &e->ledger[l->hist_slot % e->ledger_cap];
    return r->l == l && r->token == l->token ? r : NULL;
}

bool tn_embedded_ledger_end(struct embedded *e, const struct tn_lease_entry *l,
                            enum tn_grant_end how, int64_t at_ms)
{
    struct tn_ledger_rec *r = current(e, l);
    if (r == NULL || r->ended_at_ms != 0)
        return r == NULL; /* out of the ring: count it, once per noting */
    r->ended_at_ms = at_ms > 0 ? at_ms : 1;
    r->end = how;
    return true;
}

void tn_embedded_ledger_grant(struct embedded *e, struct tn_lease_entry *l,
                              int64_t now)
{
    if (e->ledger_cap == 0)
        return;
    size_t slot = e->ledger_next++ % e->ledger_cap;
    struct tn_ledger_rec *r = &e->ledger[slot];
    uint32_t prev = e->ledger[l->hist_slot % e->ledger_cap].l == l &&
                            l->hist_slot % e->ledger_cap != slot
                        ? l->hist_slot
                        : NONE;
    tn_free(r->owner_id);
    *r = (struct tn_ledger_rec){.l = l,
                                .token = l->token,
                                .owner_id = tn_strdup(l->owner_id),
                                .granted_at_ms = now,
                                .prev = prev};
    l->hist_slot = (uint32_t)slot;
}

/* The ring is first in, first out: once one of the name's records was
 * overwritten, so were all older ones, and the chain from the newest
 * reaches every record left. */
void tn_embedded_ledger_forget(struct embedded *e,
                               const struct tn_lease_entry *l)
{
    if (e->ledger_cap == 0)
        return;
    uint32_t slot = l->hist_slot;
    for (size_t n = 0; slot != NONE && n < e->ledger_cap; n++) {
        struct tn_ledger_rec *r = &e->ledger[slot % e->ledger_cap];
        if (r->l != l)
            break;
        slot = r->prev;
        tn_free(r->owner_id);
        memset(r, 0, sizeof(*r));
    }
}

static void fill(struct tn_grant_record *g, const struct tn_ledger_rec *r,
                 int64_t now)
{
    memset(g, 0, sizeof(*g));
    g->token = r->token;
    if (r->owner_id != NULL) {
        size_t n = strlen(r->owner_id);
        memcpy(g->owner_id, r->owner_id,
               n < TN_OWNER_MAX_BYTES ? n : TN_OWNER_MAX_BYTES);
    }
    g->granted_ms_ago = now - r->granted_at_ms;
    g->ended_ms_ago = r->ended_at_ms != 0 ? now - r->ended_at_ms : -1;
    g->end = r->ended_at_ms != 0 ? r->end : TN_GRANT_LIVE;
    if (g->ended_ms_ago < 0 && g->end != TN_GRANT_LIVE)
        g->ended_ms_ago = 0;
}

int tn_embedded_ledger_query(struct embedded *e, struct tn_lease_entry *l,
                             size_t limit, int64_t now,
                             struct tn_store_result *out)
{
    out->history = tn_calloc(limit, sizeof(*out->history));
    if (out->history == NULL)
        return TN_ENOMEM;
    size_t n = e->ledger_next < e->ledger_cap ? e->ledger_next : e->ledger_cap;
    for (size_t i = 0; i < n && out->n_history < limit; i++) {
        const struct tn_ledger_rec *r =
            &e->ledger[(e->ledger_next - 1 - i) % e->ledger_cap];
        if (r->l == l)
            fill(&out->history[out->n_history++], r, now);
    }
    return TN_OK;
}
