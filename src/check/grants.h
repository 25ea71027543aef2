/* SPDX-License-Identifier: MIT */
/* The grants of a history (grants.c): the facts tenure-check's rules
 * (check.c) are decided on. */
#ifndef TN_CHECK_GRANTS_H
#define TN_CHECK_GRANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check/history.h"

struct tn_check_report;

#define NS_PER_MS 1000000

/* One ok acquire, with the validity facts the rules need. */
struct tn_grant {
    int64_t token;       /* the token the acquire returned */
    int64_t invoke_t;    /* ns */
    int64_t complete_t;  /* ns */
    int64_t valid_until; /* ns: validity is certain before this */
    int64_t release_t;   /* ns: earliest release invoke, or NEVER */
    int64_t applied_t;   /* ns: every ok renew was applied at or after
                            this: the latest invoke of the grant and its
                            ok renews */
    int64_t min_ttl_ms;  /* smallest TTL the lease may have had */
    size_t op;           /* index of the acquire in h->ops */
    size_t bound_op;     /* op that set valid_until (acquire or renew) */
    int64_t renew_until; /* ns: earliest deadline a renew may have set */
    size_t applied_op;   /* op whose invoke is applied_t */
    size_t renew_op;     /* renew that set renew_until */
    size_t from_op;      /* op whose invoke renew_until counts from */
    int64_t lost_t;      /* ns: earliest completion of an answer that the
                            grant ended (renew/release `lost`, check
                            current:false), or NEVER */
    size_t lost_op;      /* that answer */
    int64_t false_t;     /* ns: earliest completion of a check that
                            answered current:false, or NEVER */
    size_t false_op;     /* that check */
    bool renewed;        /* an ok renew may have been applied last */
    uint32_t name;       /* interned lease name */
    uint32_t request_id; /* interned request_id or NO_ID */
};

struct tn_check_ctx {
    const struct tn_history *h; /* borrowed */
    struct tn_check_report *r;  /* the result */
    struct tn_grant *by_token;  /* ok acquires by (token, invoke_t) */
    struct tn_grant *by_name;   /* by (name, token, invoke_t) */
    size_t n;                   /* ok acquires */
};

/* -1, 0 or 1 as a is below, equal to or above b. */
int tn_check_cmp_i64(int64_t a, int64_t b);

/* Fill c->by_token and c->by_name with the ok acquires of c->h.  0 or
 * TN_ENOMEM. */
int tn_check_collect(struct tn_check_ctx *c);

/* Apply the renews, releases and checks of c->h to the grants' validity
 * (see grants.c for how each counts). */
void tn_check_apply_renews(struct tn_check_ctx *c);

/* First grant of by_name at or after (name, token) (strictly after when
 * after_token); c->n when none. */
size_t tn_check_find_lease(const struct tn_check_ctx *c, uint32_t name,
                           int64_t token, bool after_token);

/* Whether some ok acquire returned token. */
bool tn_check_is_granted(const struct tn_check_ctx *c, int64_t token);

/* The first grant of op's (name, token_in), or NULL. */
struct tn_grant *tn_check_lease_of(struct tn_check_ctx *c,
                                   const struct tn_history_op *op);

#endif
