/* SPDX-License-Identifier: MIT */
/* Inside the checker: the leases and sessions of a history as the rules
 * see them, and the steps that build them.  index.c collects and looks
 * up, validity.c computes how long each lease and session was certainly
 * valid, check.c holds the rules on leases and the sink, session.c the
 * rules on sessions (docs/safety/tenure-check.md and sessions.md). */
#ifndef TN_CHECK_CHECK_INT_H
#define TN_CHECK_CHECK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check/check.h"
#include "check/history.h"

#define TN_CHECK_NS_PER_MS 1000000

/* One ok acquire (a lease) or one ok session_open (a session), with the
 * validity facts the rules need.  For a session, token is 0 and name is
 * the session's id. */
struct tn_check_lease {
    int64_t token;         /* the token the acquire returned */
    int64_t invoke_t;      /* ns */
    int64_t complete_t;    /* ns */
    int64_t valid_until;   /* ns: validity is certain before this */
    int64_t release_t;     /* ns: earliest release invoke, or NEVER; for a
                              lease under a session also its session's end */
    int64_t own_release_t; /* ns: earliest release invoke of this lease
                              alone (not its session's end), or NEVER */
    int64_t applied_t;     /* ns: every ok renew was applied at or after
                              this: the latest invoke of the grant and its
                              ok renews */
    int64_t min_ttl_ms;    /* smallest TTL the lease may have had */
    size_t op;             /* index of the acquire (or open) in h->ops */
    size_t bound_op;       /* op that set valid_until (acquire or renew) */
    int64_t renew_until;   /* ns: earliest deadline a renew may have set */
    size_t applied_op;     /* op whose invoke is applied_t */
    size_t renew_op;       /* renew that set renew_until */
    size_t from_op;        /* op whose invoke renew_until counts from */
    int64_t lost_t;        /* ns: earliest completion of an answer that the
                              grant (or session) ended, or NEVER */
    size_t lost_op;        /* that answer */
    int64_t false_t;       /* ns: earliest completion of a check that
                              answered current:false, or NEVER */
    size_t false_op;       /* that check */
    int64_t sup_t;         /* ns: a lease: earliest completion of a grant of
                              its name with a higher token, while no release
                              of it alone had been invoked; a session: the
                              earliest of its leases', or NEVER */
    size_t sup_op;         /* a session: the superseded lease's acquire */
    size_t sup_by_op;      /* the acquire of that higher grant */
    bool renewed;          /* an ok renew may have been applied last */
    bool replay;           /* the same grant as the ok acquire before it in
                              token order: a request_id retry, or a claim
                              under the session that holds the name */
    uint32_t name;         /* interned lease name (a session: its id) */
    uint32_t session;      /* interned session id of a lease under one, or
                              NO_ID */
    uint32_t request_id;   /* interned request_id or NO_ID */
};

struct tn_check_ctx {
    const struct tn_history *h;      /* borrowed */
    struct tn_check_report *r;       /* the result */
    struct tn_check_lease *by_token; /* ok acquires by (token, invoke_t) */
    struct tn_check_lease *by_name;  /* by (name, token, invoke_t) */
    size_t n;                        /* ok acquires */
    struct tn_check_lease *sessions; /* ok opens by (id, invoke_t) */
    size_t n_sessions;               /* ok opens */
    size_t *sufmin; /* per by_name index k: the lease of by_name[k..end of
                       its name) that completed first */
};

/* ---- index.c ---- */

/* Count one violation; keep the first witness found. */
void tn_check_report_one(struct tn_check_ctx *c, unsigned cls,
                         const struct tn_check_ref *ev, unsigned n_ev,
                         int64_t bound);
struct tn_check_ref tn_check_op_ref(size_t idx);
struct tn_check_ref tn_check_sink_ref(size_t idx);

/* Fill by_token, by_name, sessions and sufmin.  0 or TN_ENOMEM. */
int tn_check_collect(struct tn_check_ctx *c);
/* Free what collect allocated. */
void tn_check_release(struct tn_check_ctx *c);

/* First lease of by_name at or after (name, token) (strictly after when
 * after_token); c->n when none. */
size_t tn_check_find_lease(const struct tn_check_ctx *c, uint32_t name,
                           int64_t token, bool after_token);
/* True when an ok acquire returned token. */
bool tn_check_is_granted(const struct tn_check_ctx *c, int64_t token);
/* The first lease of op's (name, token_in), or NULL. */
struct tn_check_lease *tn_check_lease_of(struct tn_check_ctx *c,
                                         const struct tn_history_op *op);
/* The first session opened with id, or NULL. */
struct tn_check_lease *tn_check_session_of(struct tn_check_ctx *c, uint32_t id);

/* ---- validity.c ---- */

/* Validity of every lease and session (renews, releases, ends), then of
 * each lease under a session from its session's: rule 3 of
 * docs/safety/tenure-check.md and docs/safety/sessions.md. */
void tn_check_validity(struct tn_check_ctx *c);
/* The earliest answer per lease that its grant ended (lost_t, false_t),
 * and per lease the earliest higher grant of its name (sup_t). */
void tn_check_ends(struct tn_check_ctx *c);

/* ---- session.c ---- */

/* The rules on sessions (docs/safety/sessions.md): an ended session stays
 * ended, and so does every lease of it. */
void tn_check_rule_sessions(struct tn_check_ctx *c);

#endif
