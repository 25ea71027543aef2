/* SPDX-License-Identifier: MIT */
/* The rule of the fence, once for every backend: inside the caller's
 * transaction, with a valid resource and token, read the mark before when
 * asked (locked), then raise it to the token unless it is above.  The
 * backend (struct tn_fence_ops) only stores marks; the decision that a
 * token below the mark is stale, and that the mark never moves down, is
 * its atomic raise's, as the contract in fence.h says. */
#include <tenure/fence.h>

int tn_fence_advance(const struct tn_fence_ops *ops, void *conn,
                     const char *resource, size_t len, uint64_t token,
                     uint64_t *hwm_before_out, struct tn_errmsg *em)
{
    int rc = ops->in_txn != NULL ? ops->in_txn(conn, em) : TN_OK;
    if (rc < 0)
        return rc;
    if (resource == NULL || len == 0 || len > TN_FENCE_NAME_MAX ||
        token > TN_FENCE_TOKEN_MAX)
        return TN_EINVAL;
    if (hwm_before_out != NULL) {
        rc = ops->get(conn, resource, len, true, hwm_before_out, em);
        if (rc < 0)
            return rc;
    }
    return ops->raise(conn, resource, len, token, em);
}

int tn_fence_get(const struct tn_fence_ops *ops, void *conn,
                 const char *resource, size_t len, uint64_t *hwm_out,
                 struct tn_errmsg *em)
{
    if (resource == NULL || len == 0 || len > TN_FENCE_NAME_MAX)
        return TN_EINVAL;
    return ops->get(conn, resource, len, false, hwm_out, em);
}
