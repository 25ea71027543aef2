/* SPDX-License-Identifier: MIT */
/* The store interface: where lease decisions are made durable.  One
 * versioned vtable, one backend per file (src/store/embedded/store.c: the
 * in-memory state machine with SQLite group commit; src/store/pg/store.c:
 * PostgreSQL).
 *
 * Contract of every operation: it fills the caller's struct tn_store_result
 * and then calls done(arg) exactly once, on the loop thread, possibly before
 * the operation returns.  done is called only once the state the result
 * reveals is durable (CONTRACT §4.4), or with rc = TN_EUNAVAIL / TN_ENOSPC.
 * The request structs are borrowed only for the duration of the call. */
#ifndef TN_STORE_STORE_H
#define TN_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/err.h>

#include "common/buf.h"
#include "common/name.h"
#include "lease/lease.h"

#define TN_STORE_OPS_VERSION 1
#define TN_LIST_MAX 1000

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
                             "waiters", "waiters_per_name") */
};

struct tn_list_req {
    const char *prefix; /* borrowed; "" for all */
    size_t prefix_len;  /* bytes */
    const char *after;  /* borrowed or NULL */
    size_t after_len;   /* bytes */
    size_t limit;       /* 1..TN_LIST_MAX */
};

typedef void (*tn_store_done_fn)(void *arg);

enum tn_event_type {
    TN_EVENT_ACQUIRED,
    TN_EVENT_RELEASED,
    TN_EVENT_EXPIRED,
    TN_EVENT_REVOKED,
    /* Not a change: events may have been lost just before this one (the
     * store's feed of them was cut and is back), so a consumer must
     * re-read state.  name and owner_id are empty, token and floor 0. */
    TN_EVENT_RESET,
};

/* A change of hands, announced once it is durable, in commit order. */
struct tn_event {
    enum tn_event_type type;               /* what happened */
    char name[TN_NAME_MAX_BYTES + 1];      /* NUL-terminated */
    char owner_id[TN_OWNER_MAX_BYTES + 1]; /* the grant's owner */
    uint64_t token;                        /* the grant's token */
    uint64_t floor;                        /* the name's floor after it */
};

/* Receives events on the loop thread.  Events carry no safety: they only
 * let holders and sinks learn of changes sooner. */
typedef void (*tn_store_event_fn)(void *ctx, const struct tn_event *ev);
/* Whether anyone is watching the events now (event_ctx); work done only
 * for watchers (the PostgreSQL store's expiry sweep) is skipped when not. */
typedef bool (*tn_store_watched_fn)(void *ctx);

struct tn_store;

struct tn_store_ops {
    unsigned version;     /* TN_STORE_OPS_VERSION */
    const char *name;     /* "embedded", "postgresql" */
    bool can_wait;        /* honours tn_acquire_req.wait_ms (blocking) */
    bool has_events;      /* calls tn_store_config.on_event */
    bool binds_principal; /* enforces tn_token_req.principal */
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
    /* Past grants of a name, newest first, at most limit; may be NULL
     * when the store keeps no ledger. */
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
     * queued (it was granted or answered already).  May be NULL when the
     * store cannot wait.  Loop thread. */
    void (*cancel_wait)(struct tn_store *s, void *ctx);
};

struct tn_store {
    const struct tn_store_ops *ops; /* backend */
};

/* Options shared by the backends. */
struct tn_store_config {
    const char *data_dir;        /* embedded: directory of tenure.db */
    const char *pg_url;          /* postgresql: connection string */
    size_t batch_max;            /* max changes per commit */
    size_t expected_leases;      /* table sizing hint */
    uint64_t journal_bytes;      /* embedded: compaction size, 0 default */
    size_t max_waiters;          /* blocked acquires in all */
    size_t max_waiters_per_name; /* blocked acquires per name */
    int64_t max_wait_ms;         /* cap of wait_ms */
    int64_t retain_ms;           /* retire names ended longer ago; 0 never */
    size_t max_leases;           /* live leases; 0 = no cap */
    size_t max_names;            /* names remembered; 0 = no cap */
    tn_store_event_fn on_event;  /* may be NULL */
    void *event_ctx;             /* its argument */
    tn_store_watched_fn watched; /* may be NULL: always watched */
};

/* Open the embedded store: load the table (restart rules of CONTRACT §4.5)
 * and start the committer thread.  0, TN_EIO (with em) or TN_ENOMEM. */
int tn_store_embedded_open(struct tn_loop *loop,
                           const struct tn_store_config *cfg,
                           struct tn_store **out, struct tn_errmsg *em);

/* Open the store a URL names (postgresql://... or postgres://...).
 * 0, TN_EINVAL (unknown scheme), TN_EUNAVAIL, TN_ENOMEM, with em. */
int tn_store_open_url(struct tn_loop *loop, const struct tn_store_config *cfg,
                      struct tn_store **out, struct tn_errmsg *em);

/* The PostgreSQL store (src/store/pg/store.c). */
int tn_store_pg_open(struct tn_loop *loop, const struct tn_store_config *cfg,
                     struct tn_store **out, struct tn_errmsg *em);

void tn_store_result_release(struct tn_store_result *r);

/* Fill v from l: expires_in_ms counted from now_ms. */
void tn_store_view_from_lease(struct tn_lease_view *v,
                              const struct tn_lease_entry *l, int64_t now_ms);

#endif
