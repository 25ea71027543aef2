/* SPDX-License-Identifier: MIT */
/* Internals shared by the client's files: the client and lease structs,
 * the HTTP transport (http.c), response decoding (decode.c) and the
 * keepalive thread (renew.c).  Not installed.  Every lease field that the
 * keepalive thread reads or writes is guarded by the client's mu. */
#ifndef TN_CLIENT_INTERNAL_H
#define TN_CLIENT_INTERNAL_H

#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <tenure/client.h>

#define TN_CLIENT_BODY_MAX (1u << 20) /* response body cap, bytes */

/* ---- transport (http.c) ---- */

struct tn_client_http {
    CURL *easy;                     /* reused: keeps the connection */
    char *urls[TN_CLIENT_MAX_URLS]; /* owned copies, no trailing '/' */
    size_t n_urls;                  /* >= 1 */
    size_t preferred;               /* index tried first */
    const char *auth_header;        /* borrowed from the client */
    const char *ca_file;            /* borrowed: TLS CA bundle or NULL */
    const char *cert_file;          /* borrowed: client certificate */
    const char *key_file;           /* borrowed: its key */
    int64_t connect_timeout_ms;     /* per attempt */
    const atomic_bool *abort_flag;  /* aborts a transfer when true */
    int64_t (*now_ms)(void);        /* monotonic clock */
};

struct tn_client_http_resp {
    long status;     /* HTTP status, 0 when no response */
    char *body;      /* NUL-terminated, owned; may be NULL */
    size_t body_len; /* bytes in body */
    int64_t sent_ms; /* monotonic ms taken just before the request went out
                        to the URL that answered */
};

int tn_client_http_init(struct tn_client_http *h,
                        const struct tn_client_options *o,
                        const char *auth_header, const atomic_bool *abort_flag,
                        int64_t (*now_ms)(void));
void tn_client_http_release(struct tn_client_http *h);
void tn_client_http_resp_release(struct tn_client_http_resp *r);

struct tn_client_http_req {
    const char *method;  /* "GET", "POST", "PATCH" or "DELETE" */
    const char *path;    /* escaped, starting with '/' */
    const char *body;    /* JSON text or NULL */
    int64_t deadline_ms; /* monotonic ms by which the call must end */
};

/* Send req, trying each URL in turn on connection failure or 503, until
 * req->deadline_ms.  0 with a response of any status, TN_ECONNECT when no
 * URL accepted a connection, TN_ETIMEDOUT when the deadline passed
 * (outcome unknown), TN_ECANCELED when aborted, TN_ETOOBIG when the answer
 * is over TN_CLIENT_BODY_MAX, TN_EIO otherwise. */
int tn_client_http_do(struct tn_client_http *h,
                      const struct tn_client_http_req *req,
                      struct tn_client_http_resp *out, struct tn_errmsg *em);

/* Percent-encode s as one path segment into a new string (tn_free). */
char *tn_client_http_escape(const char *s);

/* "/v1/leases/NAME" + suffix, NAME escaped, as a new string (tn_free). */
char *tn_client_lease_path(const char *name, const char *suffix);

/* ---- decoding (decode.c) ---- */

/* Map an error response (status + body) to a tn_err, with the server's
 * message in em.  Fills holder (when not NULL) from "holder" or
 * "retry_after_ms".  Always returns a negative code. */
int tn_client_map_error(long status, const char *body, size_t len,
                        struct tn_lease_info *holder, struct tn_errmsg *em);

/* Decode a lease object (get, list item, holder) into out. */
int tn_client_decode_info(json_t *obj, struct tn_lease_info *out,
                          struct tn_errmsg *em);

/* ---- lease and client ---- */

enum tn_lease_state {
    TN_LEASE_HELD = 0,     /* the last word from the server was a grant */
    TN_LEASE_LOST = 1,     /* the server said lost/forbidden */
    TN_LEASE_EXPIRED = 2,  /* safe time ran out (sticky) */
    TN_LEASE_RELEASED = 3, /* release was called */
};

struct tn_lease {
    struct tn_client *client; /* owner; outlives the lease */
    char *name;               /* owned */
    char *owner_id;           /* owned, may be "" */
    char *secret;             /* owned hex secret */
    char *proof;              /* owned or NULL */
    uint64_t token;           /* never changes */
    /* Guarded by client->mu from here on. */
    int64_t ttl_ms;            /* TTL of the last grant/renew */
    int64_t sent_ms;           /* monotonic ms the last successful
                                  acquire/renew was sent */
    int64_t deadline_ms;       /* monotonic ms at which safe time ends
                                  (sent + expires_in - margin) */
    bool deadline_known;       /* false for an adopted lease until renew */
    enum tn_lease_state state; /* see above */
    int refs;                  /* caller's + keepalive's references */
    /* Keepalive bookkeeping. */
    bool kept;             /* in the keepalive list */
    bool stop_requested;   /* keepalive_stop was called */
    int end_rc;            /* rc reported with the end */
    bool release_done;     /* the release request has completed */
    int64_t next_renew_ms; /* monotonic ms of the next renew attempt */
    int64_t backoff_ms;    /* current retry delay, 0 after success */
    tn_lease_end_fn cb;    /* loss callback */
    void *cb_ud;           /* its argument */
    struct tn_lease *next; /* next in client->kept */
};

struct tn_client {
    struct tn_client_http http; /* callers' connection, under http_mu */
    pthread_mutex_t http_mu;    /* serialises callers' requests */
    char *owner_id;             /* owned default owner */
    char *auth_header;          /* owned "Authorization: Bearer ..." */
    char *tls_files[3];         /* owned copies: CA, certificate, key */
    char *events_url;           /* owned copy of opts.events_url or NULL */
    int64_t request_timeout_ms; /* beyond wait_ms */
    int64_t safety_margin_ms;   /* < 0: ttl / 10 */
    tn_client_log_fn log;       /* may be NULL */
    void *log_ud;               /* for log */
    int64_t (*now_ms)(void);    /* monotonic clock, injectable */
    /* Shared with the keepalive thread, guarded by mu. */
    pthread_mutex_t mu;            /* guards everything below and leases */
    pthread_cond_t cond;           /* on CLOCK_MONOTONIC: wakes the thread */
    struct tn_lease *kept;         /* kept-alive leases (singly linked) */
    bool thread_started;           /* renewer is running */
    bool stopping;                 /* tn_client_free in progress */
    int n_leases;                  /* live lease handles, for free() */
    pthread_t thread;              /* the renewer */
    atomic_bool abort_io;          /* aborts the renewer's transfer */
    struct tn_client_http ka_http; /* the renewer's own connection */
    struct tn_client_options opts; /* copy for ka_http; urls point into
                                      http.urls */
    pthread_t ev_thread;           /* the event follower */
    bool ev_started;               /* ev_thread is running */
    uint64_t ev_losses;            /* leases ended by an event (tests) */
};

/* events.c: the optional event follower (opts.watch_events). */
int tn_client_events_start_locked(struct tn_client *c);
/* events.c: an event (type, name, token) from any follower: mark the kept
 * leases it ends lost.  Any thread but the keepalive's lock holder. */
void tn_client_events_apply(struct tn_client *c, const char *type,
                            const char *name, uint64_t token);
/* Events may have been missed: renew every kept lease now. */
void tn_client_events_renew_all(struct tn_client *c);
/* events_redis.c: the follower thread of a Redis stream (arg: client). */
void *tn_client_events_redis_main(void *arg);
/* Whether url is a redis:// or rediss:// events_url it can follow. */
bool tn_client_events_redis_url_ok(const char *url);
void tn_client_events_join(struct tn_client *c);

/* Safety margin for a lease of ttl_ms under the client's settings. */
int64_t tn_client_margin_ms(const struct tn_client *c, int64_t ttl_ms);

/* Safe time left at now_ms; marks the lease expired (sticky) when it has
 * run out.  Caller holds c->mu. */
int64_t tn_lease_safe_at_locked(struct tn_lease *l, int64_t now_ms);
/* 0 when name is a lease name the client may send (1..256 bytes), else
 * TN_EINVAL with em (may be NULL). */
int tn_client_valid_name(const char *name, struct tn_errmsg *em);
/* A new kept lease of c (one reference), counted in c->n_leases; NULL when
 * out of memory.  src/client/lease.c. */
struct tn_lease *tn_client_lease_new(struct tn_client *c, const char *name,
                                     const char *owner, const char *secret);

/* Record a successful grant/renew sent at sent_ms.  Caller holds c->mu. */
void tn_lease_granted_locked(struct tn_lease *l, int64_t sent_ms,
                             int64_t ttl_ms, int64_t expires_in_ms);

/* One renew exchange. */
struct tn_renew_io {
    int64_t ttl_send_ms;   /* in: ttl_ms to ask for, 0 = keep */
    int64_t deadline_ms;   /* in: monotonic ms the request must end by */
    int64_t sent_ms;       /* out: when the answered request was sent */
    int64_t ttl_ms;        /* in: current TTL; out: the answer's */
    int64_t expires_in_ms; /* out: from the answer */
};

/* Send a renew for (name, token, secret) over h.  Reads only l's
 * immutable fields.  Shared by tn_client_renew and the keepalive
 * thread. */
int tn_client_renew_raw(struct tn_client_http *h, const struct tn_lease *l,
                        struct tn_renew_io *io, struct tn_errmsg *em);

/* Apply the outcome rc of a renew (ro on success) to l: lost on
 * TN_ELOST/TN_EFORBIDDEN, new deadline on success.  Returns rc, or
 * TN_EEXPIRED when the safe time ran out anyway.  Caller holds c->mu. */
int tn_lease_apply_renew_locked(struct tn_lease *l, int rc,
                                const struct tn_renew_io *ro);

/* Drop one reference; frees the lease at zero.  Caller holds c->mu. */
void tn_lease_unref_locked(struct tn_lease *l);

/* Keepalive thread body (renew.c). */
void *tn_client_renewer_main(void *arg);

/* For tests: replace the monotonic clock before any lease exists. */
void tn_client_set_clock(struct tn_client *c, int64_t (*now_ms)(void));

#endif
