/* SPDX-License-Identifier: MIT */
/* A batch of the group commit: its rows, strings and waiters (batch.c). */
#ifndef TN_STORE_EMBEDDED_BATCH_H
#define TN_STORE_EMBEDDED_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/loop.h"
#include "lease/lease.h"
#include "store/backend.h"

struct tn_commit;

/* One row as it must become durable; strings live in batch->strings.  A
 * lease row (of the file's `leases`), or with session set a session's row
 * (of `sessions`, ids of their own): name_off is then the session's id,
 * owner_off and principal_off its owner and principal, token 0. */
struct tn_row {
    uint32_t row_id;      /* the lease's row in the file */
    size_t name_off;      /* offset into strings */
    size_t owner_off;     /* offset into strings */
    size_t rid_off;       /* offset into strings, SIZE_MAX when NULL */
    size_t principal_off; /* offset into strings, SIZE_MAX when NULL */
    uint64_t token;       /* floor / grant token */
    uint8_t secret[TN_SECRET_BYTES]; /* grant credential */
    int64_t ttl_ms;                  /* of the grant */
    int64_t expires_at_ms;           /* server clock */
    int64_t lock_delay_ms;           /* after expiry */
    bool held;                       /* granted and not released */
    bool ended;   /* held, its expiry recorded (docs/safety/revealed-end.md) */
    bool retired; /* the name was retired: delete the row; token is the
                     retirement floor (the token counter at the time); a
                     session row: the session is gone, delete its row */
    uint32_t session_row; /* a lease row: its session's row, 0 = none */
    bool session;         /* a session's row, not a lease's */
    uint8_t end;          /* a session row: enum tn_session_end */
    int64_t ended_at_ms;  /* a session row: when it ended (server clock) */
};

struct tn_waiter {
    tn_store_done_fn done;       /* runs on the loop thread */
    void *arg;                   /* its argument */
    struct tn_store_result *out; /* rc overwritten if the batch fails */
};

struct tn_batch {
    struct tn_row *rows; /* n_rows used, cap_rows allocated */
    size_t n_rows;
    size_t cap_rows;
    struct tn_buf strings;     /* NUL-separated strings of rows */
    struct tn_waiter *waiters; /* n_waiters used */
    size_t n_waiters;
    size_t cap_waiters;
    uint64_t last_seq;        /* highest change number inside */
    uint64_t last_token;      /* token counter when the batch was cut */
    int rc;                   /* result of the write */
    int64_t write_us;         /* time the write took */
    int64_t sync_us;          /* of which making it durable (COMMIT) */
    struct tn_loop_post post; /* hand-back to the loop */
    struct tn_commit *owner;  /* the committer it belongs to */
    struct tn_batch *next;    /* free list */
};

/* A new empty batch of owner; NULL when out of memory. */
struct tn_batch *tn_batch_new(struct tn_commit *owner);
/* Free b (NULL is allowed). */
void tn_batch_free(struct tn_batch *b);
/* Empty b for reuse, its storage kept. */
void tn_batch_reset(struct tn_batch *b);
/* Whether b has no row and no waiter. */
bool tn_batch_is_empty(const struct tn_batch *b);
/* The string at off of b's strings; NULL for SIZE_MAX. */
const char *tn_batch_str(const struct tn_batch *b, size_t off);

/* Append l's row image (last_token: the token counter now). */
void tn_batch_put_lease(struct tn_batch *b, const struct tn_lease_entry *l,
                        uint64_t last_token);
/* Append s's row (gone: delete it). */
void tn_batch_put_session(struct tn_batch *b, const struct tn_session *s,
                          bool gone, uint64_t last_token);
/* Append the retirement of l's name, floor the token counter then. */
void tn_batch_put_retire(struct tn_batch *b, const struct tn_lease_entry *l,
                         uint64_t floor);
/* Append a waiter, answered once b's write returns. */
void tn_batch_add_waiter(struct tn_batch *b, tn_store_done_fn done, void *arg,
                         struct tn_store_result *out);

#endif
