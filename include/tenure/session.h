/* SPDX-License-Identifier: MIT */
/* libtenure sessions: one heartbeat for many leases.  A session is opened
 * on a client, kept alive by one renew on the client's keepalive thread,
 * and any number of leases are taken under it, one at a time or many in
 * one request (a claim).  Each such lease is an ordinary struct tn_lease
 * (its own name, token and secret, for the fence and for release) whose
 * safe time is its session's: the time left of the session's last
 * acknowledged renew, counted from the moment that renew was sent, minus
 * the client's safety margin.  When the session ends or is lost, every
 * lease of it ends with it, and the keepalive reports each exactly once.
 *
 * Units, errors and strings as in <tenure/client.h>: durations in
 * milliseconds (*_ms), negative tn_err codes, optional detail in a struct
 * tn_errmsg.  The library never logs a session secret.
 *
 * Thread-safety: every tn_session_* call and accessor may be called from
 * any thread; blocking calls share the client's connection and are
 * serialised with its other calls.  A session must be freed before its
 * client; its leases may be freed before or after it. */
#ifndef TENURE_SESSION_H
#define TENURE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/client.h>
#include <tenure/err.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tn_session; /* opaque: one session held by this process */

#define TN_SESSION_ID_MAX 64 /* bytes of a session_id */
#define TN_SESSION_CLAIM_MAX                                                   \
    1024 /* names of one claim (the server's                                   \
            default --max-batch-names) */

struct tn_session_args {
    const char *owner_id; /* NULL = the client's owner_id; borrowed */
    int64_t ttl_ms;       /* required, > 0 */
};

/* Open a session (POST /v1/sessions).  Returns 0 and *out (free with
 * tn_client_session_free), or TN_EINVAL, TN_ECAPACITY (the server's
 * --max-sessions), TN_ENOTIMPL (the server has no sessions), transport
 * errors as for tn_client_acquire.  Its safe time counts from the moment
 * the request was sent.  An open is not idempotent: if it is sent again
 * after a 503 and the first one was done, that first session is orphaned
 * and simply expires after its TTL with no lease in it.  Thread-safe. */
TN_EXTERN int tn_client_session_open(struct tn_client *c,
                                     const struct tn_session_args *a,
                                     struct tn_session **out,
                                     struct tn_errmsg *em);

/* A handle for a session opened elsewhere (another process, the CLI), to
 * renew it, end it or claim under it.  Its safe time is 0 until a renew
 * succeeds.  Returns 0, TN_EINVAL or TN_ENOMEM.  Thread-safe. */
TN_EXTERN int tn_client_session_adopt(struct tn_client *c,
                                      const char *session_id,
                                      const char *secret,
                                      struct tn_session **out);

/* Renew s (PATCH /v1/sessions/{id}); ttl_ms 0 keeps its TTL.  0 (safe time
 * counts again from this renew's sending), TN_ELOST (the session ended:
 * it and every lease of it are lost for good), TN_EFORBIDDEN,
 * TN_EEXPIRED without sending anything when its safe time ran out,
 * TN_EINVAL after tn_client_session_end, transport errors (s stays as it was).
 * Thread-safe. */
TN_EXTERN int tn_client_session_renew(struct tn_session *s, int64_t ttl_ms,
                                      struct tn_errmsg *em);

/* End s and with it every lease of it (DELETE /v1/sessions/{id}).  From
 * this call on s is never renewed again and none of its leases is held,
 * whatever the outcome.  0, TN_ELOST (it had already ended),
 * TN_EFORBIDDEN, transport errors (the call may be repeated).  With the
 * keepalive running, each lease gets its callback with
 * TN_LEASE_END_RELEASED, then the session.  Thread-safe. */
TN_EXTERN int tn_client_session_end(struct tn_session *s, struct tn_errmsg *em);

/* Force-end the session session_id (admin: DELETE ...?force=true): every
 * lease of it is revoked.  0, TN_ELOST (not live), TN_EFORBIDDEN.
 * Thread-safe. */
TN_EXTERN int tn_client_session_force_end(struct tn_client *c,
                                          const char *session_id,
                                          struct tn_errmsg *em);

/* Drop the caller's reference to s; the keepalive keeps its own until its
 * callback has run.  Does not end the session on the server.  NULL is a
 * no-op.  Thread-safe. */
TN_EXTERN void tn_client_session_free(struct tn_session *s);

/* Runs on the keepalive thread, with no lock held, once per successful
 * tn_client_session_keepalive_start, after the lease callbacks of its leases.
 */
typedef void (*tn_session_end_fn)(struct tn_session *s,
                                  enum tn_lease_end reason, int rc, void *ud);

/* Keep s alive from the client's keepalive thread: renew it when a third
 * of its TTL has passed since the last renew was sent, retry with backoff
 * while safe time is left (each attempt bounded by it), and when it ends
 * report, exactly once each: every lease of it still held, through
 * lease_cb (may be NULL) with the session's reason, then the session
 * through cb.  A lease of s that ends alone (tn_client_release,
 * tn_client_session_release, or an event with watch_events) is reported
 * through lease_cb when it ends.  Reasons and rc as for
 * tn_client_keepalive_start.  The session's renews never wait behind
 * lease renews.  Returns 0, TN_EINVAL (already kept, ended, or no safe
 * time), TN_EEXPIRED, TN_ENOMEM or TN_EIO; on error no callback runs.
 * Thread-safe. */
TN_EXTERN int tn_client_session_keepalive_start(struct tn_session *s,
                                                tn_session_end_fn cb,
                                                tn_lease_end_fn lease_cb,
                                                void *ud);

/* Stop keeping s alive without ending it; its leases' and its own
 * callbacks then run with TN_LEASE_END_STOPPED.  Does not wait.
 * Thread-safe. */
TN_EXTERN void tn_client_session_keepalive_stop(struct tn_session *s);

/* Acquire one name under s (POST /v1/leases with the session): a->ttl_ms
 * must be 0 (the session's TTL applies); wait_ms, request_id,
 * lock_delay_ms and owner_id as for tn_client_acquire (owner_id NULL: the
 * session's).  Returns as tn_client_acquire, plus TN_ELOST when the
 * session is not live.  Acquiring a name this session already holds
 * answers that grant again (the same token); the same handle is then
 * returned with a new reference.  Thread-safe. */
TN_EXTERN int tn_client_session_acquire(struct tn_session *s,
                                        const struct tn_acquire_args *a,
                                        struct tn_lease **out,
                                        struct tn_lease_info *holder_out,
                                        struct tn_errmsg *em);

/* What became of one name of a claim. */
enum tn_claim_status {
    TN_CLAIM_GRANTED = 1,    /* granted now, or already this session's */
    TN_CLAIM_HELD = 2,       /* held by another (or queued for) */
    TN_CLAIM_LOCK_DELAY = 3, /* in lock delay */
};

struct tn_claim_item {
    const char *name;            /* the name as asked, borrowed from the
                                    result */
    enum tn_claim_status status; /* see above */
    struct tn_lease *lease;      /* GRANTED: the lease, owned by the result
                                    until the caller takes it (sets this to
                                    NULL and frees it later itself) */
    struct tn_lease_info holder; /* HELD: the holder; LOCK_DELAY:
                                    retry_after_ms */
};

struct tn_claim_result {
    struct tn_claim_item *items; /* count items, in the order asked */
    size_t count;                /* = n_names */
    size_t n_granted;            /* items GRANTED */
    int64_t expires_in_ms;       /* the session's time left as the server
                                    answered; -1 when not reported */
};

struct tn_claim_args {
    const char *const *names; /* 1..TN_SESSION_CLAIM_MAX distinct names */
    size_t n_names;           /* how many */
    const char *owner_id;     /* NULL = the session's */
    int64_t lock_delay_ms;    /* 0 = none */
};

/* Claim many names under s in one request (POST
 * /v1/sessions/{id}/leases): each name is decided on its own, as a
 * non-waiting acquire, in one durable batch.  Returns 0 and *out (free
 * with tn_claim_result_free), or TN_EINVAL (no names, too many, a name
 * twice), TN_ELOST (the session is not live), TN_EFORBIDDEN, TN_ECAPACITY
 * (the whole batch was refused), TN_ETOOBIG, transport errors.  A claim
 * may be sent again (after a 503 or a timeout): names the session already
 * holds answer the same grant.  Thread-safe. */
TN_EXTERN int tn_client_session_claim(struct tn_session *s,
                                      const struct tn_claim_args *a,
                                      struct tn_claim_result **out,
                                      struct tn_errmsg *em);

/* Free r and every lease still in its items.  NULL is a no-op. */
TN_EXTERN void tn_claim_result_free(struct tn_claim_result *r);

/* Release n leases of s in one request (DELETE /v1/sessions/{id}/leases).
 * From this call on none of them is held, whatever the outcome (as
 * tn_client_release).  rc_out (NULL or n entries) gets, per lease, 0
 * (released) or TN_ELOST (it was no longer live, or another token).
 * Returns 0, TN_EINVAL (n == 0, too many, a lease not of s), TN_ELOST
 * (the session is not live), TN_EFORBIDDEN, transport errors (rc_out
 * then untouched; the call may be repeated, and a lease released by the
 * first attempt then reads TN_ELOST).  Thread-safe. */
TN_EXTERN int tn_client_session_release(struct tn_session *s,
                                        struct tn_lease *const *leases,
                                        size_t n, int *rc_out,
                                        struct tn_errmsg *em);

/* A handle for the lease (name, token) granted under s elsewhere (another
 * process, `tenure claim`), to release it with tn_client_session_release
 * (it has no lease secret: tn_client_release cannot).  Its safe time is
 * the session's.  Returns 0, TN_EINVAL or TN_ENOMEM.  Thread-safe. */
TN_EXTERN int tn_client_session_lease_adopt(struct tn_session *s,
                                            const char *name, uint64_t token,
                                            struct tn_lease **out);

/* Accessors.  Strings are borrowed until tn_client_session_free.  Thread-safe.
 */
TN_EXTERN const char *tn_client_session_id(const struct tn_session *s);
TN_EXTERN const char *tn_client_session_owner_id(const struct tn_session *s);
/* The session's credential (hex).  Handle with care. */
TN_EXTERN const char *tn_client_session_secret(const struct tn_session *s);
TN_EXTERN int64_t tn_client_session_ttl_ms(struct tn_session *s);
/* As tn_lease_safe_for_ms, for the session: every lease of it reads the
 * same (0 when it was released alone).  Thread-safe. */
TN_EXTERN int64_t tn_client_session_safe_for_ms(struct tn_session *s);
/* tn_client_session_safe_for_ms(s) > 0. */
TN_EXTERN bool tn_client_session_is_live(struct tn_session *s);
/* Leases of s this process holds through it (not released alone, not
 * ended with it). */
TN_EXTERN size_t tn_client_session_lease_count(struct tn_session *s);
/* The session l was granted under, or NULL for a lease of its own. */
TN_EXTERN struct tn_session *tn_lease_session(const struct tn_lease *l);

/* For a follower of your own (as tn_client_event_feed): a
 * "session_ended" event of session_id marks the kept session of that id
 * lost, and its keepalive then reports it and its leases once.  Other
 * types are ignored.  A latency aid only.  Thread-safe. */
TN_EXTERN void tn_client_session_event_feed(struct tn_client *c,
                                            const char *type,
                                            const char *session_id);

/* A session as the server reports it (get, list). */
struct tn_session_info {
    char session_id[TN_SESSION_ID_MAX + 1]; /* NUL-terminated */
    char owner_id[TN_CLIENT_OWNER_MAX + 1]; /* NUL-terminated */
    int64_t ttl_ms;                         /* -1 if not reported */
    int64_t expires_in_ms;                  /* time left at the answer */
    uint64_t leases;                        /* live leases under it */
};

/* GET /v1/sessions/{id}: 0 and *out, TN_ENOTFOUND (not live), or an
 * error.  Thread-safe. */
TN_EXTERN int tn_client_session_get(struct tn_client *c, const char *session_id,
                                    struct tn_session_info *out,
                                    struct tn_errmsg *em);

/* One page of live sessions in session_id order. */
struct tn_session_list {
    struct tn_session_info *items;    /* count entries */
    size_t count;                     /* entries in items */
    bool has_next;                    /* more after this page */
    char next[TN_SESSION_ID_MAX + 1]; /* pass as after= when has_next */
};

struct tn_session_list_args {
    const char *prefix; /* owner_ids starting with it; NULL = all */
    const char *after;  /* a session_id; NULL = from the start */
    unsigned limit;     /* page size; 0 = the server's default */
};

/* List one page of live sessions.  0 and *out (free with
 * tn_client_session_list_free) or an error.  Thread-safe. */
TN_EXTERN int tn_client_session_list(struct tn_client *c,
                                     const struct tn_session_list_args *a,
                                     struct tn_session_list **out,
                                     struct tn_errmsg *em);
/* NULL is a no-op. */
TN_EXTERN void tn_client_session_list_free(struct tn_session_list *list);

#ifdef __cplusplus
}
#endif
#endif
