/* SPDX-License-Identifier: MIT */
/* What every store backend implements: where lease decisions are made
 * durable.  One versioned vtable and the capabilities a backend declares;
 * one backend per folder (src/store/embedded/: the in-memory state machine
 * with SQLite group commit; src/store/pg/: PostgreSQL), each listed once in
 * the registry of src/store/store.c.  Backends include this header only,
 * never the registry (store.h) above them.
 *
 * Contract of every operation: it fills the caller's struct tn_store_result
 * and then calls done(arg) exactly once, on the loop thread, possibly before
 * the operation returns.  done is called only once the state the result
 * reveals is durable (CONTRACT §4.4), or with rc = TN_EUNAVAIL / TN_ENOSPC.
 * The request structs are borrowed only for the duration of the call. */
#ifndef TN_STORE_BACKEND_H
#define TN_STORE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/err.h>

#include "common/buf.h"
#include "common/name.h"
#include "lease/lease.h"

#define TN_STORE_OPS_VERSION 3
#define TN_LIST_MAX 1000

/* A session's public id: 16 random bytes drawn by the API, 32 lowercase hex
 * digits on the wire and in the stores (docs/SESSIONS.md). */
#define TN_SESSION_ID_BYTES 16
#define TN_SESSION_ID_HEX (2 * TN_SESSION_ID_BYTES)

struct tn_loop;

/* One past or present grant of a name (GET /v1/leases/{name}/history). */
enum tn_grant_end {
    TN_GRANT_LIVE,       /* not ended (as far as the store knows) */
    TN_GRANT_RELEASED,   /* released by its holder */
    TN_GRANT_EXPIRED,    /* ran out without a renew */
    TN_GRANT_REVOKED,    /* force-released by an admin */
    TN_GRANT_SUPERSEDED, /* a newer grant took the name */
};

struct tn_grant_record {
    uint64_t token;                        /* the grant's token */
    char owner_id[TN_OWNER_MAX_BYTES + 1]; /* its owner */
    int64_t granted_ms_ago;                /* from the answer */
    int64_t ended_ms_ago;                  /* -1 while live */
    enum tn_grant_end end;                 /* how it ended */
};

/* A lease as the API shows it: copied, so it outlives the table entry. */
struct tn_lease_view {
    char name[TN_NAME_MAX_BYTES + 1];      /* NUL-terminated */
    char owner_id[TN_OWNER_MAX_BYTES + 1]; /* NUL-terminated */
    uint64_t token;                        /* fencing token */
    uint8_t secret[TN_SECRET_BYTES];       /* only for grants */
    int64_t ttl_ms;                        /* of the grant */
    int64_t expires_in_ms;                 /* from the decision, >= 0 */
    int64_t lock_delay_ms; /* get, list: the grant's lock-delay, 0 = none */
    char session_id[TN_SESSION_ID_HEX + 1]; /* its session, "" for none */
};

/* A session as the API shows it (docs/SESSIONS.md): copied. */
struct tn_session_view {
    char id[TN_SESSION_ID_HEX + 1];        /* NUL-terminated */
    char owner_id[TN_OWNER_MAX_BYTES + 1]; /* NUL-terminated */
    uint8_t secret[TN_SECRET_BYTES];       /* only for open */
    int64_t ttl_ms;                        /* of the last open or renew */
    int64_t expires_in_ms;                 /* from the decision, >= 0 */
    uint64_t n_leases;                     /* live leases under it */
};

/* What became of one name of a claim (POST /v1/sessions/{id}/leases) or
 * one lease of a batch release (DELETE /v1/sessions/{id}/leases). */
enum tn_claim_outcome {
    TN_CLAIM_GRANTED,    /* granted now, or already this session's */
    TN_CLAIM_HELD,       /* live under another holder, or queued for */
    TN_CLAIM_LOCK_DELAY, /* expired, in lock delay */
    TN_CLAIM_RELEASED,   /* batch release: released */
    TN_CLAIM_LOST,       /* batch release: not a live lease of the session
                            with that token */
};

struct tn_claim_item {
    size_t index;                        /* of the name in the request */
    enum tn_claim_outcome outcome;       /* what became of it */
    uint64_t token;                      /* granted: its token; held: the
                                            holder's; released/lost: the one
                                            asked for */
    uint8_t secret[TN_SECRET_BYTES];     /* granted: the lease secret */
    char holder[TN_OWNER_MAX_BYTES + 1]; /* held: the holder's owner_id */
    int64_t expires_in_ms;               /* held: the holder's time left */
    int64_t retry_after_ms;              /* lock delay: time left */
};

struct tn_store_result {
    int rc;                          /* TN_OK or a TN_E* code */
    bool replayed;                   /* acquire answered by request_id */
    struct tn_lease_view lease;      /* grant / renewal / read / 409 holder */
    int64_t retry_after_ms;          /* TN_ELOCKDELAY, TN_EUNAVAIL, TN_ENOSPC */
    bool current;                    /* check: token is the live one */
    bool has_live;                   /* check: a live lease exists */
    uint64_t floor;                  /* check: highest token ever granted */
    struct tn_lease_view *items;     /* list: owned (tn_free), n_items long */
    size_t n_items;                  /* list */
    bool more;                       /* list: more after the last item */
    struct tn_grant_record *history; /* history: owned, newest first */
    size_t n_history;                /* history */
    const char *capacity; /* TN_ECAPACITY: the limit ("leases", "names",
                             "waiters", "waiters_per_name", "sessions") */
    const char *reason;   /* a static message for rc when the generic one
                             would mislead (a session lease renewed alone,
                             a session that ended), or NULL */
    struct tn_session_view session;   /* session open/renew/get; claim:
                                         the session's expires_in_ms */
    struct tn_session_view *sessions; /* session list: owned (tn_free) */
    size_t n_sessions;                /* session list */
    struct tn_claim_item *claims;     /* claim, batch release: owned
                                         (tn_free), one per name, in the
                                         request's order */
    size_t n_claims;                  /* claim, batch release */
};

struct tn_list_req {
    const char *prefix; /* borrowed; "" for all */
    size_t prefix_len;  /* bytes */
    const char *after;  /* borrowed or NULL */
    size_t after_len;   /* bytes */
    size_t limit;       /* 1..TN_LIST_MAX */
};

typedef void (*tn_store_done_fn)(void *arg);

/* POST /v1/sessions: everything validated by the caller. */
struct tn_session_open_req {
    const char *id;        /* TN_SESSION_ID_HEX fresh random hex digits */
    const char *owner_id;  /* borrowed, NUL-terminated */
    const char *principal; /* authenticated opener, or NULL (auth off) */
    int64_t ttl_ms;        /* validated by the caller */
    const uint8_t *secret; /* TN_SECRET_BYTES fresh random bytes */
};

/* A request naming a session by its id and credential: renew, end, and
 * the session part of a claim or batch release. */
struct tn_session_req {
    const char *id;                  /* borrowed, NUL-terminated; any
                                        string (an unknown id is lost) */
    uint8_t secret[TN_SECRET_BYTES]; /* presented secret */
    int64_t ttl_ms;                  /* renew only: new TTL, 0 = keep */
    bool force;                      /* end only: admin, ignore the secret */
    const char *principal; /* must match the opener's; NULL: auth off or
                              admin */
};

/* One name of a claim. */
struct tn_name_ref {
    const char *name; /* borrowed, validated */
    size_t len;       /* bytes */
};

/* POST /v1/sessions/{id}/leases: names distinct and validated. */
struct tn_claim_req {
    struct tn_session_req session;   /* the session and its credential */
    const char *owner_id;            /* of the grants; NULL: the session's */
    int64_t lock_delay_ms;           /* of each grant, 0 = none */
    const struct tn_name_ref *names; /* n_names distinct names */
    size_t n_names;                  /* 1..--max-batch-names */
    const uint8_t *secrets; /* n_names * TN_SECRET_BYTES fresh random bytes:
                               the lease secret of name i at i * 16 */
};

/* One lease of a batch release. */
struct tn_name_token {
    const char *name; /* borrowed, validated */
    size_t len;       /* bytes */
    uint64_t token;   /* the grant's token */
};

/* DELETE /v1/sessions/{id}/leases. */
struct tn_unclaim_req {
    struct tn_session_req session;      /* the session and its credential */
    const struct tn_name_token *leases; /* n_leases of them */
    size_t n_leases;                    /* 1..--max-batch-names */
};

enum tn_event_type {
    TN_EVENT_ACQUIRED,
    TN_EVENT_RELEASED,
    TN_EVENT_EXPIRED,
    TN_EVENT_REVOKED,
    /* Not a change: events may have been lost just before this one (the
     * store's feed of them was cut and is back), so a consumer must
     * re-read state.  name and owner_id are empty, token and floor 0. */
    TN_EVENT_RESET,
    /* Sessions (docs/SESSIONS.md).  After RESET: tables indexed by type
     * (the publisher's log letters, the stream's type names) keep the
     * order above. */
    TN_EVENT_SESSION_OPENED, /* session_id, owner_id; no name */
    TN_EVENT_SESSION_ENDED,  /* session_id, owner_id, end; no name */
};

/* A change of hands, announced once it is durable, in commit order. */
struct tn_event {
    enum tn_event_type type;                /* what happened */
    char name[TN_NAME_MAX_BYTES + 1];       /* NUL-terminated */
    char owner_id[TN_OWNER_MAX_BYTES + 1];  /* the grant's owner */
    uint64_t token;                         /* the grant's token */
    uint64_t floor;                         /* the name's floor after it */
    char session_id[TN_SESSION_ID_HEX + 1]; /* session events: the session;
                                               else "" */
    enum tn_grant_end end; /* session ended: TN_GRANT_EXPIRED, _RELEASED or
                              _REVOKED */
};

/* Receives events on the loop thread.  Events carry no safety: they only
 * let holders and sinks learn of changes sooner. */
typedef void (*tn_store_event_fn)(void *ctx, const struct tn_event *ev);
/* Whether anyone is watching the events now (event_ctx); work done only
 * for watchers (the PostgreSQL store's expiry sweep) is skipped when not. */
typedef bool (*tn_store_watched_fn)(void *ctx);

struct tn_store;
struct tn_store_config;

struct tn_store_ops {
    unsigned version; /* TN_STORE_OPS_VERSION */
    /* Open the store cfg names (cfg->url, or cfg->data_dir for a store
     * kept in the data dir): 0, or TN_EIO, TN_EUNAVAIL, TN_EBUSY,
     * TN_ENOMEM with em.  Only the registry (src/store/store.c) calls it;
     * it sets (*out)->backend. */
    int (*open)(struct tn_loop *loop, const struct tn_store_config *cfg,
                struct tn_store **out, struct tn_errmsg *em);
    void (*acquire)(struct tn_store *s, const struct tn_acquire_req *r,
                    struct tn_store_result *out, tn_store_done_fn done,
                    void *arg);
    void (*renew)(struct tn_store *s, const struct tn_token_req *r,
                  struct tn_store_result *out, tn_store_done_fn done,
                  void *arg);
    void (*release)(struct tn_store *s, const struct tn_token_req *r,
                    struct tn_store_result *out, tn_store_done_fn done,
                    void *arg);
    void (*get)(struct tn_store *s, const char *name, size_t name_len,
                struct tn_store_result *out, tn_store_done_fn done, void *arg);
    void (*check)(struct tn_store *s, const char *name, size_t name_len,
                  uint64_t token, struct tn_store_result *out,
                  tn_store_done_fn done, void *arg);
    void (*list)(struct tn_store *s, const struct tn_list_req *r,
                 struct tn_store_result *out, tn_store_done_fn done, void *arg);
    /* Past grants of a name, newest first, at most limit; NULL unless
     * caps.history. */
    void (*history)(struct tn_store *s, const char *name, size_t name_len,
                    size_t limit, struct tn_store_result *out,
                    tn_store_done_fn done, void *arg);
    /* True when the store accepts writes (/readyz). */
    bool (*is_ready)(struct tn_store *s);
    /* Append Prometheus lines. */
    void (*metrics)(struct tn_store *s, struct tn_buf *out);
    /* Answer every blocked acquire now (the server is draining); may be
     * NULL when the store has none.  Loop thread. */
    void (*drain)(struct tn_store *s);
    /* Finish or fail every pending operation (their done runs), then
     * free.  Loop thread. */
    void (*close)(struct tn_store *s);
    /* The client of the blocked acquire whose wanted_ctx is ctx went
     * away: drop it from its queue now and answer it TN_ECANCELED, so
     * that its slot is free at once.  Nothing when no such waiter is
     * queued (it was granted or answered already).  NULL unless
     * caps.waits.  Loop thread. */
    void (*cancel_wait)(struct tn_store *s, void *ctx);

    /* Sessions (docs/SESSIONS.md); NULL unless caps.sessions.  Acquires
     * under a session come through acquire (tn_acquire_req.session_id).
     * Results: session_open fills out->session (with its secret);
     * session_renew and session_get fill out->session (TN_ELOST: ended or
     * unknown, TN_EFORBIDDEN: wrong secret or principal; get: TN_ENOTFOUND);
     * session_end ends it and every lease of it; session_list fills
     * out->sessions (prefix on owner_id, after on id, in id order);
     * claim and unclaim fill out->claims, one item per name in request
     * order, and out->session.expires_in_ms (TN_ELOST / TN_EFORBIDDEN /
     * TN_ECAPACITY for the whole request, which then changes nothing). */
    void (*session_open)(struct tn_store *s,
                         const struct tn_session_open_req *r,
                         struct tn_store_result *out, tn_store_done_fn done,
                         void *arg);
    void (*session_renew)(struct tn_store *s, const struct tn_session_req *r,
                          struct tn_store_result *out, tn_store_done_fn done,
                          void *arg);
    void (*session_end)(struct tn_store *s, const struct tn_session_req *r,
                        struct tn_store_result *out, tn_store_done_fn done,
                        void *arg);
    void (*session_get)(struct tn_store *s, const char *id,
                        struct tn_store_result *out, tn_store_done_fn done,
                        void *arg);
    void (*session_list)(struct tn_store *s, const struct tn_list_req *r,
                         struct tn_store_result *out, tn_store_done_fn done,
                         void *arg);
    void (*claim)(struct tn_store *s, const struct tn_claim_req *r,
                  struct tn_store_result *out, tn_store_done_fn done,
                  void *arg);
    void (*unclaim)(struct tn_store *s, const struct tn_unclaim_req *r,
                    struct tn_store_result *out, tn_store_done_fn done,
                    void *arg);
};

/* What a backend supports.  The API and the server ask these, never which
 * backend they talk to. */
struct tn_store_caps {
    bool waits;           /* honours tn_acquire_req.wait_ms (blocking) */
    bool events;          /* calls tn_store_config.on_event */
    bool binds_principal; /* enforces tn_token_req.principal */
    bool history;         /* answers ops->history (GET .../history) */
    bool retires_names;   /* honours tn_store_config.retain_ms */
    bool limits;          /* honours max_leases and max_names */
    bool in_data_dir;     /* keeps its data in --data-dir, which one process
                             may use at a time: the server locks it */
    bool shared;          /* several tenured may share it: publishing elects
                             its leader through the store's URL */
    bool sessions;        /* implements the session ops */
};

/* One line of the registry (src/store/store.c): a backend. */
struct tn_store_backend {
    const char *name; /* "embedded", "pg": its folder, its contract test */
    /* The --store spellings it answers, NULL-terminated: URL prefixes
     * ("postgresql://"), or "" for the store used when --store is empty. */
    const char *const *schemes;
    const struct tn_store_ops *ops; /* its vtable */
    struct tn_store_caps caps;      /* what it supports */
    /* The contract suite (tests/contract/): the environment variable that
     * holds the --store URL of a server to test against (the test skips
     * when it is unset outside CI), or NULL when the backend needs no
     * server (it gets a fresh data dir). */
    const char *test_env;
};

struct tn_store {
    const struct tn_store_ops *ops;         /* its vtable */
    const struct tn_store_backend *backend; /* its registry line: name, caps */
};

/* Options shared by the backends. */
struct tn_store_config {
    const char *url;             /* where the store is: --store ("" or NULL:
                                    the default, in data_dir) */
    const char *data_dir;        /* --data-dir: stores kept in a directory */
    size_t batch_max;            /* max changes per commit */
    size_t expected_leases;      /* table sizing hint */
    uint64_t journal_bytes;      /* embedded: compaction size, 0 default */
    bool commit_in_loop;         /* embedded: --commit=inline */
    size_t max_waiters;          /* blocked acquires in all */
    size_t max_waiters_per_name; /* blocked acquires per name */
    int64_t max_wait_ms;         /* cap of wait_ms */
    int64_t retain_ms;           /* retire names ended longer ago; 0 never */
    size_t max_leases;           /* live leases; 0 = no cap */
    size_t max_names;            /* names remembered; 0 = no cap */
    size_t max_sessions;         /* live sessions; 0 = no cap */
    bool require_sync_standby;   /* PostgreSQL: refuse requests while the
                                    primary has no synchronous standby */
    tn_store_event_fn on_event;  /* may be NULL */
    void *event_ctx;             /* its argument */
    tn_store_watched_fn watched; /* may be NULL: always watched */
};

/* Helpers for the backends (src/store/backend.c). */
void tn_store_result_release(struct tn_store_result *r);

/* Fill v from l: expires_in_ms counted from now_ms. */
void tn_store_view_from_lease(struct tn_lease_view *v,
                              const struct tn_lease_entry *l, int64_t now_ms);

#endif
