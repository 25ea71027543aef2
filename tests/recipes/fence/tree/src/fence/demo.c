/* SPDX-License-Identifier: MIT */
/* The demo fence: the marks a transaction changes are its own copy until
 * it commits, so an aborted write leaves every mark as it was. */
#include <string.h>

#include <tenure/fence_demo.h>

void tn_fence_demo_begin(struct tn_fence_demo *f)
{
    f->txn = f->committed;
    f->in_txn = true;
}

void tn_fence_demo_commit(struct tn_fence_demo *f)
{
    f->committed = f->txn;
    f->in_txn = false;
}

void tn_fence_demo_abort(struct tn_fence_demo *f)
{
    f->in_txn = false;
}

static struct tn_fence_demo_mark *find(struct tn_fence_demo_marks *m,
                                       const char *resource, size_t len)
{
    for (size_t i = 0; i < m->n; i++) {
        if (m->mark[i].len == len &&
            memcmp(m->mark[i].resource, resource, len) == 0)
            return &m->mark[i];
    }
    return NULL;
}

static int demo_in_txn(void *conn, struct tn_errmsg *em)
{
    struct tn_fence_demo *f = conn;
    if (!f->in_txn) {
        tn_errmsg_set(em, "demo fence: no transaction open");
        return TN_EINVAL;
    }
    return TN_OK;
}

static int demo_get(void *conn, const char *resource, size_t len, bool lock,
                    uint64_t *hwm_out, struct tn_errmsg *em)
{
    (void)lock; /* one caller at a time: nothing to lock */
    (void)em;
    struct tn_fence_demo *f = conn;
    const struct tn_fence_demo_mark *m =
        find(f->in_txn ? &f->txn : &f->committed, resource, len);
    *hwm_out = m != NULL ? m->hwm : 0;
    return TN_OK;
}

static int demo_raise(void *conn, const char *resource, size_t len,
                      uint64_t token, struct tn_errmsg *em)
{
    struct tn_fence_demo *f = conn;
    struct tn_fence_demo_mark *m = find(&f->txn, resource, len);
    if (m != NULL) {
        if (token < m->hwm)
            return TN_ESTALE; /* the mark never moves down */
        m->hwm = token;
        return TN_OK;
    }
    if (f->txn.n == TN_FENCE_DEMO_MAX) {
        tn_errmsg_set(em, "demo fence: full (%d resources)", TN_FENCE_DEMO_MAX);
        return TN_ETOOBIG;
    }
    m = &f->txn.mark[f->txn.n++];
    memcpy(m->resource, resource, len);
    m->len = len;
    m->hwm = token;
    return TN_OK;
}

const struct tn_fence_ops tn_fence_demo_ops = {
    .name = "demo",
    .in_txn = demo_in_txn,
    .get = demo_get,
    .raise = demo_raise,
};
