/* SPDX-License-Identifier: MIT */
/* The demo fence: a few marks in memory the caller owns, changed only
 * inside the caller's transaction, so that a mark commits (or aborts)
 * together with the write it guards. */
#ifndef TENURE_FENCE_DEMO_H
#define TENURE_FENCE_DEMO_H

#include <tenure/fence.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TN_FENCE_DEMO_MAX 16 /* resources kept */

struct tn_fence_demo_mark {
    char resource[TN_FENCE_NAME_MAX]; /* not NUL-terminated */
    size_t len;                       /* bytes of resource */
    uint64_t hwm;                     /* the mark */
};

struct tn_fence_demo_marks {
    struct tn_fence_demo_mark mark[TN_FENCE_DEMO_MAX];
    size_t n; /* marks used */
};

/* conn for tn_fence_advance: the committed marks, and the transaction's
 * own copy while one is open. */
struct tn_fence_demo {
    struct tn_fence_demo_marks committed;
    struct tn_fence_demo_marks txn; /* while in_txn */
    bool in_txn;
};

TN_EXTERN void tn_fence_demo_begin(struct tn_fence_demo *f);
TN_EXTERN void tn_fence_demo_commit(struct tn_fence_demo *f);
TN_EXTERN void tn_fence_demo_abort(struct tn_fence_demo *f);

extern TN_EXTERN const struct tn_fence_ops tn_fence_demo_ops;

#ifdef __cplusplus
}
#endif
#endif
