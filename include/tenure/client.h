/* SPDX-License-Identifier: MIT */
/* libtenure client: take, keep and give back named leases from tenured.
 * A client holds one or more server URLs and a reusable HTTP connection; a
 * lease handle knows how long it is still safe to act on it, counted on
 * CLOCK_MONOTONIC from the moment its acquire or last successful renew was
 * sent.  One background thread per client (started on first use) keeps any
 * number of leases alive and reports each loss exactly once.  The library
 * never prints and never logs a lease secret.
 *
 * Units: every duration is in milliseconds (int64_t, *_ms); tokens are
 * uint64_t (always below 2^53).  Errors are negative codes of
 * <tenure/err.h>; optional detail goes into a caller's struct tn_errmsg.
 *
 * Thread-safety, in short: every tn_client_* call and every tn_lease_*
 * accessor may be called from any thread.  Blocking calls on one client are
 * serialised (they share one connection), so a long acquire with wait_ms
 * delays other calls on the same client; the keepalive thread has its own
 * connections and is never delayed by them.  A lease must be freed before
 * its client.  Sessions (many leases kept by one renew) are in
 * <tenure/session.h>. */
#ifndef TENURE_CLIENT_H
#define TENURE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/err.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tn_client; /* opaque: connection(s), options, keepalive thread */
struct tn_lease;  /* opaque: one grant held by this process */

#define TN_CLIENT_MAX_URLS 8
#define TN_CLIENT_NAME_MAX 256  /* bytes of a lease name */
#define TN_CLIENT_OWNER_MAX 128 /* bytes of an owner_id */

#define TN_CLIENT_KEEPALIVE_CONNECTIONS 32     /* default */
#define TN_CLIENT_KEEPALIVE_CONNECTIONS_MAX 64 /* most allowed */

/* Optional log hook: one line per notable event of the keepalive thread
 * (renewed, retrying, lost).  Called from the keepalive thread; msg is
 * borrowed for the call.  Never contains a secret. */
typedef void (*tn_client_log_fn)(void *ud, const char *msg);

struct tn_client_options {
    const char *urls[TN_CLIENT_MAX_URLS]; /* base URLs, e.g.
                                             "http://127.0.0.1:7300"; the
                                             first that accepts a connection
                                             is used; borrowed for new() */
    size_t n_urls;                        /* 1..TN_CLIENT_MAX_URLS */
    const char *owner_id;       /* default owner_id; NULL = "host:pid" */
    const char *auth_token;     /* bearer token or NULL; never logged */
    const char *ca_file;        /* PEM CA bundle to verify https:// servers
                                   with, or NULL for the system's */
    const char *cert_file;      /* PEM client certificate (mutual TLS), or
                                   NULL */
    const char *key_file;       /* its PEM private key, or NULL */
    bool watch_events;          /* keepalive also follows GET /v1/events and
                                   reports a kept lease lost as soon as the
                                   server announces that it ended or was
                                   taken over.  A latency optimisation only:
                                   safety never depends on it (the safe-time
                                   rule holds whatever the stream does).
                                   Costs one more thread and connection. */
    int64_t connect_timeout_ms; /* per URL attempt; default 1000 */
    int64_t request_timeout_ms; /* whole request, beyond any wait_ms;
                                   default 5000 */
    int64_t safety_margin_ms;   /* subtracted from the time left; < 0 means
                                   the default: a tenth of the lease's TTL */
    tn_client_log_fn log;       /* may be NULL */
    void *log_ud;               /* passed to log */
    const char *events_url;     /* with watch_events: NULL follows GET
                                   /v1/events; "redis://[USER:PASS@]HOST:
                                   PORT[/DB]/STREAM" follows the Redis
                                   stream tenured --publish fills instead
                                   (spoken directly: no extra library).
                                   Same rule: a reset record, or a jump in
                                   the events' ids, renews every kept lease
                                   at once.  Copied by new(). */

    /* Renews the keepalive thread sends at once, each on a connection of
     * its own (1..TN_CLIENT_KEEPALIVE_CONNECTIONS_MAX; 0 = the default):
     * a renew waits only for its own answer, so one client keeps
     * thousands of leases.  A session's renew never waits behind lease
     * renews.  Costs that many connections to the server while busy. */
    size_t keepalive_connections;
};

/* Fill o with the defaults (no URLs).  Thread-safe. */
TN_EXTERN void tn_client_options_init(struct tn_client_options *o);

/* Create a client.  The URL strings and owner_id are copied.  Returns 0 and
 * *out, TN_EINVAL (bad options, detail in em) or TN_ENOMEM.  No connection
 * is made yet.  Thread-safe. */
TN_EXTERN int tn_client_new(const struct tn_client_options *o,
                            struct tn_client **out, struct tn_errmsg *em);

/* Stop the keepalive thread (every kept lease gets its callback with
 * TN_LEASE_END_STOPPED first, without being released on the server) and
 * free the client.  Waits for an in-flight renew to abort.  Every lease of
 * the client must have been freed already.  NULL is a no-op.  Must not be
 * called from a keepalive callback. */
TN_EXTERN void tn_client_free(struct tn_client *c);

struct tn_acquire_args {
    const char *name;       /* required, 1..256 bytes, borrowed */
    int64_t ttl_ms;         /* required, > 0 */
    int64_t wait_ms;        /* 0 = fail at once when held; > 0 = the server
                               queues the request for up to this long */
    const char *request_id; /* NULL or an idempotency key for retries */
    int64_t lock_delay_ms;  /* 0 = none */
    const char *owner_id;   /* NULL = the client's owner_id */
};

/* Details of a lease as the server reports it (get, list, a holder that
 * blocked an acquire). */
struct tn_lease_info {
    char name[TN_CLIENT_NAME_MAX + 1];      /* NUL-terminated */
    char owner_id[TN_CLIENT_OWNER_MAX + 1]; /* NUL-terminated, may be "" */
    uint64_t token;                         /* fencing token */
    int64_t expires_in_ms;  /* time left when the server answered; -1 if
                               not reported */
    int64_t retry_after_ms; /* lock delay left (TN_ELOCKDELAY), else -1 */
};

/* Acquire a lease.  Returns 0 and a new lease in *out (free it with
 * tn_lease_free), or TN_ECONFLICT (held by another; its details in
 * *holder_out when not NULL), TN_ELOCKDELAY (holder_out->retry_after_ms),
 * TN_EINVAL, TN_ECONNECT (no URL accepted a connection), TN_ETIMEDOUT
 * (outcome unknown: retry with the same request_id), TN_EUNAVAIL, TN_EPROTO
 * or another server error.  The monotonic time is taken just before the
 * request is sent.  Thread-safe; blocks up to wait_ms + request timeout. */
TN_EXTERN int tn_client_acquire(struct tn_client *c,
                                const struct tn_acquire_args *a,
                                struct tn_lease **out,
                                struct tn_lease_info *holder_out,
                                struct tn_errmsg *em);

/* Build a lease handle for a grant obtained elsewhere (e.g. by another
 * process), to renew or release it.  Its safe time is 0 until a renew
 * succeeds.  secret is the hex lease_secret.  Returns 0, TN_EINVAL or
 * TN_ENOMEM.  Thread-safe. */
TN_EXTERN int tn_client_lease_adopt(struct tn_client *c, const char *name,
                                    uint64_t token, const char *secret,
                                    struct tn_lease **out);

/* Renew l; ttl_ms 0 keeps the lease's TTL.  0 on success (safe time counts
 * again from the moment this renew was sent); TN_ELOST when the server says
 * the grant is no longer live (the lease is then lost for good);
 * TN_EFORBIDDEN on a wrong secret; TN_EEXPIRED, without sending anything,
 * when the lease's safe time already ran out; TN_EINVAL after a release;
 * transport errors as for acquire (the lease stays as it was).
 * Thread-safe. */
TN_EXTERN int tn_client_renew(struct tn_client *c, struct tn_lease *l,
                              int64_t ttl_ms, struct tn_errmsg *em);

/* Release l on the server.  From this call on l is never renewed again and
 * is no longer held, whatever the outcome.  0 on success; TN_ELOST when it
 * was no longer live; TN_EFORBIDDEN; transport errors (the call may be
 * repeated).  If l is kept alive, its callback runs with
 * TN_LEASE_END_RELEASED.  Thread-safe. */
TN_EXTERN int tn_client_release(struct tn_client *c, struct tn_lease *l,
                                struct tn_errmsg *em);

/* Force release (admin): end whatever grant of name is live, whoever
 * holds it (DELETE /v1/leases/{name}?force=true); the server emits a
 * "revoked" event and the next grant gets a higher token, as always.  0 on
 * success; TN_ELOST when nothing was live; TN_EFORBIDDEN when the bearer
 * token is not an admin's; transport errors.  Thread-safe. */
TN_EXTERN int tn_client_force_release(struct tn_client *c, const char *name,
                                      struct tn_errmsg *em);

/* Read the live lease of name into *out.  0, TN_ENOTFOUND when the name is
 * free, or a transport/server error.  Thread-safe. */
TN_EXTERN int tn_client_get(struct tn_client *c, const char *name,
                            struct tn_lease_info *out, struct tn_errmsg *em);

/* One page of live leases in name order. */
struct tn_lease_list {
    struct tn_lease_info *items;       /* count entries */
    size_t count;                      /* entries in items */
    bool has_next;                     /* more after this page */
    char next[TN_CLIENT_NAME_MAX + 1]; /* pass as after= when has_next */
};

struct tn_list_args {
    const char *prefix; /* only names starting with it; NULL = all */
    const char *after;  /* start after this name; NULL = from the start */
    unsigned limit;     /* page size; 0 = the server's default */
};

/* List one page of live leases in name order.  Returns 0 and *out (free
 * with tn_lease_list_free) or an error.  Thread-safe. */
TN_EXTERN int tn_client_list(struct tn_client *c, const struct tn_list_args *a,
                             struct tn_lease_list **out, struct tn_errmsg *em);
/* NULL is a no-op. */
TN_EXTERN void tn_lease_list_free(struct tn_lease_list *list);

struct tn_check_result {
    bool current;   /* token is the live grant of the name */
    bool has_token; /* a live grant exists */
    uint64_t token; /* its token when has_token */
    uint64_t floor; /* highest token ever issued for the name */
};

/* Ask whether token is the live grant of name.  0 and *out, or an error.
 * Thread-safe. */
TN_EXTERN int tn_client_check(struct tn_client *c, const char *name,
                              uint64_t token, struct tn_check_result *out,
                              struct tn_errmsg *em);

/* Why a kept-alive lease left the keepalive. */
enum tn_lease_end {
    TN_LEASE_END_LOST = 1,     /* the server said it is no longer live
                                  (rc TN_ELOST or TN_EFORBIDDEN) */
    TN_LEASE_END_EXPIRED = 2,  /* its safe time ran out before a renew
                                  succeeded (rc TN_EEXPIRED) */
    TN_LEASE_END_RELEASED = 3, /* tn_client_release was called (rc is
                                  the release's outcome as far as known) */
    TN_LEASE_END_STOPPED = 4,  /* tn_client_keepalive_stop or
                                  tn_client_free (rc TN_ECANCELED) */
};

/* Static lower-case name of a reason ("lost", "expired", ...). */
TN_EXTERN const char *tn_lease_end_name(enum tn_lease_end reason);

/* Runs on the keepalive thread, with no lock held, exactly once per
 * successful tn_client_keepalive_start.  l stays valid during the call even
 * if its owner freed it.  It may call tn_lease_* accessors and
 * tn_client_release/get/...; it must not call tn_client_free. */
typedef void (*tn_lease_end_fn)(struct tn_lease *l, enum tn_lease_end reason,
                                int rc, void *ud);

/* Keep l alive from the client's background thread: renew when a third of
 * its TTL has passed since the last renew was sent; on failure retry with
 * backoff while safe time is left, each attempt bounded by the safe time
 * left; report the end through cb exactly once.  Up to
 * opts.keepalive_connections renews run at once.  Returns 0, TN_EINVAL (l
 * already kept alive, released, not held, or a lease of a session: its
 * session keeps it), TN_EEXPIRED, or TN_ENOMEM / TN_EIO (thread could not
 * start); on error cb never runs.  Thread-safe. */
TN_EXTERN int tn_client_keepalive_start(struct tn_client *c, struct tn_lease *l,
                                        tn_lease_end_fn cb, void *ud);

/* Stop keeping l alive without releasing it; its callback then runs with
 * TN_LEASE_END_STOPPED unless it already ended.  Does not wait.
 * Thread-safe. */
TN_EXTERN void tn_client_keepalive_stop(struct tn_client *c,
                                        struct tn_lease *l);

/* Drop the caller's reference to l (the keepalive keeps its own until the
 * callback has run).  Does not release the lease on the server.  NULL is a
 * no-op.  Thread-safe. */
TN_EXTERN void tn_lease_free(struct tn_lease *l);

/* Accessors.  Strings are borrowed until tn_lease_free.  Thread-safe. */
TN_EXTERN const char *tn_lease_name(const struct tn_lease *l);
TN_EXTERN const char *tn_lease_owner_id(const struct tn_lease *l);
TN_EXTERN uint64_t tn_lease_token(const struct tn_lease *l);
/* The credential for renew and release (hex).  Handle with care. */
TN_EXTERN const char *tn_lease_secret(const struct tn_lease *l);
/* The server's signature over (name, token), or NULL when signing is off. */
TN_EXTERN const char *tn_lease_proof(const struct tn_lease *l);
/* TTL of the last grant or renew. */
TN_EXTERN int64_t tn_lease_ttl_ms(const struct tn_lease *l);

/* Time it is still safe to act as the holder: expires_in_ms of the last
 * successful acquire/renew, counted from the moment that request was sent,
 * minus the safety margin; 0 once lost, released or run out.  Once it has
 * run out it stays 0 (a late renew answer does not revive it).  An adopted
 * lease reads 0 until its first successful renew.  Thread-safe. */
TN_EXTERN int64_t tn_lease_safe_for_ms(struct tn_lease *l);

/* tn_lease_safe_for_ms(l) > 0.  Thread-safe. */
TN_EXTERN bool tn_lease_is_held(struct tn_lease *l);

/* Feeding events from a follower of your own (libtenure-kafka's follows a
 * Kafka topic, <tenure/events_kafka.h>), with the effect of the built-in
 * followers: tn_client_event_feed marks a kept lease lost when TYPE
 * ("acquired", "released", "expired", "revoked") of NAME with TOKEN ends
 * it (the end of its grant, or a newer token); its keepalive then reports
 * the loss once.  tn_client_event_reset is the reset rule: events may have
 * been missed, so every kept lease is renewed at once.  A latency aid
 * only: neither can make a lease look held.  Thread-safe. */
TN_EXTERN void tn_client_event_feed(struct tn_client *c, const char *type,
                                    const char *name, uint64_t token);
TN_EXTERN void tn_client_event_reset(struct tn_client *c);

#ifdef __cplusplus
}
#endif
#endif
