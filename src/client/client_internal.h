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
#include <tenure/session.h>

#include "common/buf.h"
#include "common/heap.h"

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

/* One attempt of a request against one URL (sync or keepalive). */
struct tn_client_http_attempt {
    const char *method;      /* "GET", "POST", ... */
    const char *path;        /* escaped path */
    const char *url;         /* full URL */
    const char *body;        /* JSON or NULL */
    int64_t timeout_ms;      /* whole attempt */
    int64_t connect_ms;      /* connect phase */
    struct curl_slist *hdrs; /* request headers */
    struct tn_buf *out;      /* response body */
};

/* Set e's options for attempt a (after curl_easy_reset, which keeps its
 * connections). */
void tn_client_http_setup(CURL *e, const struct tn_client_http *h,
                          const struct tn_client_http_attempt *a);
/* The request headers of h (auth, content type); NULL on ENOMEM. */
struct curl_slist *tn_client_http_headers(const struct tn_client_http *h,
                                          bool has_body);
/* The tn_err of a failed transfer: TN_ECONNECT when nothing was sent. */
int tn_client_http_map_curl(CURL *e, CURLcode cc);

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

/* ---- keepalive transfers (xfer.c): many requests at once ---- */

/* One request of the keepalive thread, on the pool's curl multi handle.
 * It moves to the next URL as tn_client_http_do does (nothing sent, or a
 * 503 from a URL that is not the last), within its deadline. */
struct tn_xfer {
    CURL *easy;              /* reused: its connections stay in the pool */
    struct curl_slist *hdrs; /* request headers, owned */
    struct tn_buf resp;      /* response body, capped */
    char *path;              /* owned, escaped */
    char *body;              /* owned JSON, or NULL */
    const char *method;      /* static string */
    size_t url_i;            /* URL of the current attempt */
    size_t tries;            /* attempts made */
    int64_t deadline_ms;     /* monotonic end of the whole request */
    int64_t sent_ms;         /* start of the current attempt */
    long status;             /* HTTP status, 0 when none */
    int rc;                  /* 0, or the transport's tn_err */
    char err[160];           /* detail when rc < 0 */
    bool busy;               /* started, not yet given back */
    int kind;                /* the owner's: what the request is */
    void *owner;             /* the owner's: whose request */
};

struct tn_xfer_pool {
    CURLM *multi;             /* all transfers, max n connections */
    struct tn_xfer *x;        /* n slots */
    size_t n;                 /* slots = connections */
    size_t busy;              /* slots in use */
    struct tn_client_http *h; /* borrowed: URLs, TLS, auth, clock */
};

int tn_xfer_pool_init(struct tn_xfer_pool *p, struct tn_client_http *h,
                      size_t n);
void tn_xfer_pool_release(struct tn_xfer_pool *p);
/* A free slot, or NULL. */
struct tn_xfer *tn_xfer_get(struct tn_xfer_pool *p);
/* Start x (from tn_xfer_get): takes path and body (tn_free) whatever the
 * outcome; on error x is free again.  0 or TN_ENOMEM/TN_EIO. */
int tn_xfer_start(struct tn_xfer_pool *p, struct tn_xfer *x, const char *method,
                  char *path, char *body, int64_t deadline_ms);
/* Run the transfers for at most timeout_ms (less when one completes or
 * tn_xfer_pool_wakeup is called); the completed ones go to done[] (at
 * most cap).  Returns how many. */
size_t tn_xfer_pool_run(struct tn_xfer_pool *p, int64_t timeout_ms,
                        struct tn_xfer **done, size_t cap);
/* Give x back after reading its result, or abort it if still running. */
void tn_xfer_put(struct tn_xfer_pool *p, struct tn_xfer *x);
/* Make a tn_xfer_pool_run in another thread return now.  Thread-safe. */
void tn_xfer_pool_wakeup(struct tn_xfer_pool *p);

/* ---- lease, session and client ---- */

enum tn_lease_state {
    TN_LEASE_HELD = 0,     /* the last word from the server was a grant */
    TN_LEASE_LOST = 1,     /* the server said lost/forbidden */
    TN_LEASE_EXPIRED = 2,  /* safe time ran out (sticky) */
    TN_LEASE_RELEASED = 3, /* release (or the session's end) was called */
};

#define TN_NOT_QUEUED ((size_t)-1) /* a lease in no heap */

struct tn_lease {
    struct tn_client *client;   /* owner; outlives the lease */
    struct tn_session *session; /* granted under it (one of its
                                   lease_refs), or NULL; never changes */
    char *name;                 /* owned */
    char *owner_id;             /* owned, may be "" */
    char *secret;               /* owned hex secret */
    char *proof;                /* owned or NULL */
    uint64_t token;             /* never changes */
    /* Guarded by client->mu from here on. */
    int64_t ttl_ms;            /* TTL of the last grant/renew */
    int64_t sent_ms;           /* monotonic ms the last successful
                                  acquire/renew was sent */
    int64_t deadline_ms;       /* monotonic ms at which safe time ends
                                  (sent + expires_in - margin) */
    bool deadline_known;       /* false for an adopted lease until renew */
    enum tn_lease_state state; /* see above; a session lease takes its
                                  session's when that ends */
    int refs;                  /* caller's + keepalive's + in-flight
                                  renew's + its session list's */
    int end_rc;                /* rc reported with the end */
    bool release_done;         /* the release request has completed */
    /* In its session's list of leases (session leases only). */
    bool listed;            /* in session->leases (holds a reference) */
    struct tn_lease *snext; /* next in session->leases */
    struct tn_lease *sprev; /* previous in session->leases */
    /* Keepalive bookkeeping (sched.c, renew.c). */
    bool kept;                 /* in client->kept */
    bool stop_requested;       /* keepalive_stop was called */
    bool in_flight;            /* a keepalive renew of it is running */
    bool ending;               /* on client->ended */
    size_t due_idx;            /* index in client->due, or TN_NOT_QUEUED */
    size_t dl_idx;             /* index in client->dl, or TN_NOT_QUEUED */
    int64_t next_renew_ms;     /* monotonic ms of the next renew attempt */
    int64_t backoff_ms;        /* current retry delay, 0 after success */
    tn_lease_end_fn cb;        /* loss callback */
    void *cb_ud;               /* its argument */
    struct tn_lease *knext;    /* next in client->kept */
    struct tn_lease *kprev;    /* previous in client->kept */
    struct tn_lease *end_next; /* next in client->ended */
    struct tn_lease *rnext;    /* next in a chain the keepalive thread
                                  reports (its own, under no lock) */
};

struct tn_session {
    struct tn_client *client; /* owner; outlives the session */
    char *id;                 /* owned session_id */
    char *secret;             /* owned hex secret */
    char *owner_id;           /* owned */
    /* Guarded by client->mu from here on. */
    int64_t ttl_ms;            /* of the last open/renew */
    int64_t sent_ms;           /* when the last successful one was sent */
    int64_t deadline_ms;       /* sent + expires_in - margin */
    bool deadline_known;       /* false when adopted, until a renew */
    enum tn_lease_state state; /* RELEASED: tn_client_session_end was called */
    int end_rc;                /* rc reported with the end */
    bool end_done;             /* the DELETE has completed */
    int refs;                  /* caller's + keepalive's + in-flight's */
    int lease_refs;            /* leases pointing at it */
    struct tn_lease *leases;   /* listed leases, doubly linked */
    size_t n_listed;           /* in leases */
    /* Keepalive bookkeeping (renew.c). */
    bool kept;                /* in client->sessions */
    bool stop_requested;      /* keepalive_stop was called */
    bool in_flight;           /* its renew is running */
    bool dirty;               /* a listed lease ended alone: the thread
                                 reports it */
    int64_t next_renew_ms;    /* next renew attempt */
    int64_t backoff_ms;       /* current retry delay */
    tn_session_end_fn cb;     /* the session's end */
    tn_lease_end_fn lease_cb; /* each lease's end, or NULL */
    void *cb_ud;              /* their argument */
    struct tn_session *knext; /* next in client->sessions */
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
    struct tn_lease *kept;         /* kept-alive leases (knext/kprev) */
    struct tn_heap due;            /* kept leases waiting to be renewed,
                                      by next_renew_ms */
    struct tn_heap dl;             /* kept leases held, by deadline_ms */
    struct tn_lease *ended;        /* whose end the thread must report */
    struct tn_session *sessions;   /* kept sessions (knext) */
    bool thread_started;           /* renewer is running */
    bool stopping;                 /* tn_client_free in progress */
    int n_leases;                  /* live lease handles, for free() */
    int n_sessions;                /* live session handles, for free() */
    pthread_t thread;              /* the renewer */
    atomic_bool abort_io;          /* aborts the followers' transfers */
    struct tn_client_http ka_http; /* the renewer's URLs and TLS */
    struct tn_xfer_pool ka;        /* the renewer's transfers */
    size_t ka_conns;               /* connections of ka */
    struct tn_client_options opts; /* copy for ka_http; urls point into
                                      http.urls */
    pthread_t ev_thread;           /* the event follower */
    bool ev_started;               /* ev_thread is running */
    uint64_t ev_losses;            /* leases ended by an event (tests) */
};

/* events.c: the optional event follower (opts.watch_events). */
int tn_client_events_start_locked(struct tn_client *c);
/* events.c: follow GET /v1/events + query through c's URLs (reconnecting
 * with Last-Event-ID) and hand each event's data to on_data, until *stop
 * (checked between reads).  Blocks the calling thread. */
struct tn_client_sse {
    struct tn_client *c; /* URLs, TLS, bearer token */
    const char *query;   /* "" or "?prefix=..." (escaped) */
    void (*on_data)(void *ud, const char *data); /* one event's JSON */
    void *ud;                                    /* its argument */
    const atomic_bool *stop;                     /* ends the stream when true */
};
void tn_client_sse_run(const struct tn_client_sse *f);
/* kept.c: an event (type, name, token) from any follower: mark the kept
 * leases (and leases of kept sessions) it ends lost.  Any thread but the
 * keepalive's lock holder. */
void tn_client_events_apply(struct tn_client *c, const char *type,
                            const char *name, uint64_t token);
/* kept.c: a session_ended event: the kept session of that id is lost. */
void tn_client_events_apply_session(struct tn_client *c, const char *type,
                                    const char *session_id);
/* Events may have been missed: renew every kept lease and session now. */
void tn_client_events_renew_all(struct tn_client *c);
/* events_redis.c: the follower thread of a Redis stream (arg: client). */
void *tn_client_events_redis_main(void *arg);
/* Whether url is a redis:// or rediss:// events_url it can follow. */
bool tn_client_events_redis_url_ok(const char *url);
void tn_client_events_join(struct tn_client *c);

/* ---- lease.c: safe time, references ---- */

/* Safety margin for a lease of ttl_ms under the client's settings. */
int64_t tn_client_margin_ms(const struct tn_client *c, int64_t ttl_ms);

/* Safe time left at now_ms; marks the lease expired (sticky) when it has
 * run out.  A session lease reads its session's, and takes its session's
 * state once that ended.  Caller holds c->mu. */
int64_t tn_lease_safe_at_locked(struct tn_lease *l, int64_t now_ms);
/* The same for a session. */
int64_t tn_client_session_safe_at_locked(struct tn_session *s, int64_t now_ms);
/* 0 when name is a lease name the client may send (1..256 bytes), else
 * TN_EINVAL with em (may be NULL). */
int tn_client_valid_name(const char *name, struct tn_errmsg *em);
/* A new lease of c (one reference), counted in c->n_leases; NULL when
 * out of memory. */
struct tn_lease *tn_client_lease_new(struct tn_client *c, const char *name,
                                     const char *owner, const char *secret);
/* A new session of c (one reference), counted in c->n_sessions; NULL
 * when out of memory. */
struct tn_session *tn_client_session_new(struct tn_client *c, const char *id,
                                         const char *owner, const char *secret);

/* Record a successful grant/renew sent at sent_ms.  Caller holds c->mu. */
void tn_lease_granted_locked(struct tn_lease *l, int64_t sent_ms,
                             int64_t ttl_ms, int64_t expires_in_ms);
void tn_client_session_granted_locked(struct tn_session *s, int64_t sent_ms,
                                      int64_t ttl_ms, int64_t expires_in_ms);

/* Drop one reference; frees at zero.  Caller holds c->mu.  A session
 * whose last reference goes lets go of its listed leases. */
void tn_lease_unref_locked(struct tn_lease *l);
void tn_client_session_unref_locked(struct tn_session *s);
/* Put l (a new lease granted under s) in s's list: one more reference of
 * l, one more lease_ref of s. */
void tn_client_session_list_locked(struct tn_session *s, struct tn_lease *l);
/* Take l out of its session's list, dropping the list's reference. */
void tn_client_session_unlist_locked(struct tn_lease *l);

/* ---- sched.c: when the keepalive thread looks at what ---- */

/* The heaps of c start empty; release frees them. */
void tn_sched_init(struct tn_client *c);
void tn_sched_release(struct tn_client *c);
/* Room in the heaps for one more kept lease.  0 or TN_ENOMEM. */
int tn_sched_reserve_locked(struct tn_client *c);
/* l becomes kept: in c->kept and in both heaps (room reserved). */
void tn_sched_add_locked(struct tn_client *c, struct tn_lease *l);
/* Re-place l in the heaps after next_renew_ms, deadline_ms, in_flight or
 * state changed: in due when it waits for a renew, in dl while held. */
void tn_sched_update_locked(struct tn_client *c, struct tn_lease *l);
/* l's state may have changed (released, lost, stopped): if its keepalive
 * or its place in a kept session must end, queue it for the thread (or,
 * for the lease of a session nobody keeps, unlist it now) and wake the
 * thread.  Any thread. */
void tn_sched_note_locked(struct tn_client *c, struct tn_lease *l);
/* Take l off every heap and out of c->kept. */
void tn_sched_remove_locked(struct tn_client *c, struct tn_lease *l);
/* Wake the keepalive thread (it re-reads everything).  Any thread. */
void tn_client_wake_locked(struct tn_client *c);

/* ---- client.c, cred.c, grant.c: requests on the callers' connection ---- */

struct tn_client_call {
    const char *method; /* HTTP method */
    const char *path;   /* escaped path */
    json_t *body;       /* consumed; may be NULL */
    int64_t extra_ms;   /* added to the request timeout (wait_ms) */
};

/* Send on the callers' connection, under http_mu.  0 with a response of
 * any status, or a transport error. */
int tn_client_call(struct tn_client *c, const struct tn_client_call *a,
                   struct tn_client_http_resp *resp, struct tn_errmsg *em);

/* A JSON object answer of a 2xx, parsed.  0 or TN_EPROTO. */
int tn_client_parse_ok(const struct tn_client_http_resp *r, json_t **out,
                       struct tn_errmsg *em);

/* Random hex request_id for an acquire without one (33 bytes). */
int tn_client_draw_request_id(char out[33]);

/* The acquire body of a (ttl_ms left out when 0), with request_id, and
 * the session's id and secret when s is not NULL.  NULL on ENOMEM. */
json_t *tn_client_acquire_body(const struct tn_client *c,
                               const struct tn_acquire_args *a,
                               const char *request_id,
                               const struct tn_session *s);

/* POST /v1/leases for a (under session s when not NULL) with the caller's
 * request_id or a drawn one, and the lease it grants (owner: the owner
 * asked for when the answer has none), or the holder of a 409. */
int tn_client_post_acquire(struct tn_client *c, const struct tn_acquire_args *a,
                           struct tn_session *s, const char *owner,
                           struct tn_lease **out,
                           struct tn_lease_info *holder_out,
                           struct tn_errmsg *em);

/* grant.c: a lease from a grant object o (acquire answer, claim item) of
 * name, sent at sent_ms; under session s (listed there) when not NULL,
 * where a grant s already lists answers that lease with a new
 * reference. */
struct tn_grant_in {
    const char *name;        /* the name asked for */
    const char *owner;       /* owner asked for when o has none */
    int64_t ttl_ms;          /* TTL asked for (0 under a session) */
    int64_t sent_ms;         /* when the request was sent */
    struct tn_session *sess; /* or NULL */
};
int tn_client_grant_lease(struct tn_client *c, json_t *o,
                          const struct tn_grant_in *in, struct tn_lease **out,
                          struct tn_errmsg *em);

/* One renew exchange (a lease's or a session's). */
struct tn_renew_io {
    int64_t ttl_send_ms;   /* in: ttl_ms to ask for, 0 = keep */
    int64_t deadline_ms;   /* in: monotonic ms the request must end by */
    int64_t sent_ms;       /* out: when the answered request was sent */
    int64_t ttl_ms;        /* in: current TTL; out: the answer's */
    int64_t expires_in_ms; /* out: from the answer */
};

/* The PATCH body of a lease renew (token, secret, ttl_ms when > 0), or of
 * a session renew (session secret); NULL when out of memory. */
char *tn_client_renew_body(const struct tn_lease *l, int64_t ttl_ms);
char *tn_client_session_renew_body(const struct tn_session *s, int64_t ttl_ms);
/* The answer of a renew (a lease's or a session's): 0 with io filled from
 * a 200, else the mapped error. */
int tn_client_decode_renew(long status, const char *body, size_t len,
                           struct tn_renew_io *io, struct tn_errmsg *em);
/* decode.c: the outcome of the finished keepalive renew x of a lease or a
 * session whose TTL is ttl_ms: its rc, with *ro (the answer) and em (why
 * not) filled.  x stays the caller's (tn_xfer_put). */
int tn_client_decode_renew_xfer(const struct tn_xfer *x, int64_t ttl_ms,
                                struct tn_renew_io *ro, struct tn_errmsg *em);

/* Apply the outcome rc of a renew (ro on success) to l: lost on
 * TN_ELOST/TN_EFORBIDDEN, new deadline on success.  Returns rc, or
 * TN_EEXPIRED when the safe time ran out anyway.  Caller holds c->mu. */
int tn_lease_apply_renew_locked(struct tn_lease *l, int rc,
                                const struct tn_renew_io *ro);
/* The same for a session. */
int tn_client_session_apply_renew_locked(struct tn_session *s, int rc,
                                         const struct tn_renew_io *ro);

/* "/v1/sessions/ID" + suffix, ID escaped, as a new string (tn_free). */
char *tn_client_session_path(const char *id, const char *suffix);

/* decode.c: a session object (get, list item) into out. */
int tn_client_decode_session(json_t *obj, struct tn_session_info *out,
                             struct tn_errmsg *em);

/* sched.c: the next attempt after a failed renew (backoff from ttl/30,
 * doubling up to ttl/6), into *backoff_ms; returns its time. */
int64_t tn_sched_backoff(int64_t ttl_ms, int64_t *backoff_ms, int64_t now_ms);
/* sched.c: when a kept lease or session renews next after a renew whose
 * outcome was rc (sent at sent_ms): a third of ttl_ms after it was sent,
 * *backoff_ms reset, or after a failure the backoff. */
int64_t tn_sched_next_renew(int rc, int64_t sent_ms, int64_t ttl_ms,
                            int64_t *backoff_ms, int64_t now_ms);
/* sched.c: hand msg to the client's log hook with mu dropped meanwhile
 * (the hook may call into the client). */
void tn_client_log_locked(struct tn_client *c, const char *msg);

/* ---- the keepalive thread: renew.c (loop, leases), ka_session.c ---- */

enum { TN_XFER_LEASE = 1, TN_XFER_SESSION = 2 }; /* tn_xfer.kind */

/* Keepalive thread body (renew.c). */
void *tn_client_renewer_main(void *arg);
/* ka_session.c, called by the thread with mu held: start the renews of
 * kept sessions that are due, in up to *free slots (decremented); apply
 * a finished session renew; report one ended session (or leases of a
 * session that ended alone), true when it did (mu was dropped); the
 * earliest time a kept session needs the thread. */
void tn_ka_sessions_dispatch_locked(struct tn_client *c, int64_t now_ms,
                                    size_t *free);
void tn_ka_session_done_locked(struct tn_client *c, struct tn_xfer *x);
bool tn_ka_sessions_report_locked(struct tn_client *c, int64_t now_ms);
int64_t tn_ka_sessions_wake_locked(struct tn_client *c, bool slot_free);

/* For tests: replace the monotonic clock before any lease exists. */
void tn_client_set_clock(struct tn_client *c, int64_t (*now_ms)(void));

#endif
