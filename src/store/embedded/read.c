/* SPDX-License-Identifier: MIT */
/* The reads of the embedded store: get, check, list and history.  Each
 * answer waits until the state it shows is durable: the end of a grant it
 * reveals is recorded first (docs/safety/revealed-end.md; a lease of an ended
 * session is settled first), and the answer waits for the commit of the
 * name's last change (for a name not in the table, the last retirement;
 * for a list, the newest change). */
#include "store/embedded/read.h"

#include <tenure/err.h>

#include "common/alloc.h"
#include "store/embedded/change.h"
#include "store/embedded/events.h"
#include "store/embedded/history.h"

/* An operation's view of one name: the store, the time, the name's entry
 * (NULL: never granted, or retired), with an end the answer will reveal
 * made durable first. */
struct name_op {
    struct embedded *e;
    int64_t now;
    struct tn_lease_entry *l;
};

/* The change an answer about l reveals: for a name not in the table (never
 * granted, or retired), the last retirement, whose floor it shows. */
static uint64_t seq_of(const struct embedded *e, const struct tn_lease_entry *l)
{
    return l != NULL ? l->seq : e->retired_seq;
}

/* Get, check and history: a read of one name.  The answer is written by
 * `answer` from the name's entry (in: the read's own argument), and waits
 * until the end it reveals, noted first, is durable. */
typedef void answer_fn(const struct name_op *op, const void *in,
                       struct tn_store_result *out);

static void read_name(struct tn_store *s, const char *name, size_t len,
                      answer_fn *answer, const void *in,
                      struct tn_store_result *out, tn_store_done_fn done,
                      void *arg)
{
    struct name_op op;
    op.e = tn_embedded_op_begin(s, out, done, arg, &op.now);
    if (op.e == NULL)
        return;
    op.l = tn_lease_find(&op.e->table, name, len);
    tn_embedded_note_expiry(op.e, op.l, op.now);
    answer(&op, in, out);
    tn_embedded_finish(op.e, seq_of(op.e, op.l), out, done, arg);
}

static void answer_get(const struct name_op *op, const void *in,
                       struct tn_store_result *out)
{
    (void)in;
    out->rc = tn_lease_is_live(op->l, op->now) ? TN_OK : TN_ENOTFOUND;
    if (out->rc == TN_OK)
        tn_store_view_from_lease(&out->lease, op->l, op->now);
}

void tn_embedded_get(struct tn_store *s, const char *name, size_t name_len,
                     struct tn_store_result *out, tn_store_done_fn done,
                     void *arg)
{
    read_name(s, name, name_len, answer_get, NULL, out, done, arg);
}

static void answer_check(const struct name_op *op, const void *in,
                         struct tn_store_result *out)
{
    const uint64_t *token = in;
    out->rc = TN_OK;
    out->floor =
        op->l != NULL ? op->l->token : tn_lease_floor_of_absent(&op->e->table);
    out->has_live = tn_lease_is_live(op->l, op->now);
    out->current = out->has_live && op->l->token == *token;
    if (out->has_live)
        tn_store_view_from_lease(&out->lease, op->l, op->now);
}

void tn_embedded_check(struct tn_store *s, const char *name, size_t name_len,
                       uint64_t token, struct tn_store_result *out,
                       tn_store_done_fn done, void *arg)
{
    read_name(s, name, name_len, answer_check, &token, out, done, arg);
}

void tn_embedded_list(struct tn_store *s, const struct tn_list_req *r,
                      struct tn_store_result *out, tn_store_done_fn done,
                      void *arg)
{
    int64_t now;
    struct embedded *e = tn_embedded_op_begin(s, out, done, arg, &now);
    if (e == NULL)
        return;
    /* A list reveals the ends it leaves out: leases' and sessions'. */
    tn_embedded_expire_due(e, now);
    tn_embedded_expire_sessions(e, now);
    const struct tn_lease_entry **found = tn_calloc(r->limit, sizeof(*found));
    size_t n =
        found == NULL
            ? 0
            : tn_lease_list(&e->table, r->prefix, r->prefix_len, r->after,
                            r->after_len, now, found, r->limit, &out->more);
    /* Views of what was found, not of the limit: the answer may wait. */
    out->items = found == NULL ? NULL : tn_calloc(n + 1, sizeof(*out->items));
    if (out->items == NULL) {
        tn_free(found);
        tn_store_result_release(out);
        out->rc = TN_ENOMEM;
        done(arg);
        return;
    }
    out->n_items = n;
    for (size_t i = 0; i < n; i++)
        tn_store_view_from_lease(&out->items[i], found[i], now);
    tn_free(found);
    out->rc = TN_OK;
    tn_embedded_finish(e, e->table.seq, out, done, arg);
}

static void answer_history(const struct name_op *op, const void *in,
                           struct tn_store_result *out)
{
    const size_t *limit = in;
    out->rc = op->l != NULL
                  ? tn_embedded_ledger_query(op->e, op->l, *limit, op->now, out)
                  : TN_OK;
}

void tn_embedded_history(struct tn_store *s, const char *name, size_t name_len,
                         size_t limit, struct tn_store_result *out,
                         tn_store_done_fn done, void *arg)
{
    read_name(s, name, name_len, answer_history, &limit, out, done, arg);
}
