/* SPDX-License-Identifier: MIT */
/* The token floor of the PostgreSQL store (floor.c): the highest token this
 * instance has acknowledged or heard of, kept on local disk, so that a
 * database that loses commits it had confirmed (a failover to a node that
 * was behind, a restored backup, a cluster manager that rewound the wrong
 * node) never gets to issue those tokens again through this instance. */
#ifndef TN_STORE_PG_FLOOR_H
#define TN_STORE_PG_FLOOR_H

#include <stdbool.h>
#include <stdint.h>

#include <tenure/err.h>

#include "common/buf.h"
#include "store/backend.h"

struct tn_pg_floor {
    int lockfd;              /* open lock file, -1 when the floor is off */
    char *path;              /* owned: DIR/pg-token-floor */
    char *dir;               /* owned: DIR */
    uint64_t start_acked;    /* read at start: a token the database had
                                committed before the file was written */
    uint64_t start_reserved; /* read at start: no token above it was
                                acknowledged by an earlier run */
    uint64_t acked;          /* highest token acknowledged or heard by
                                this run */
    uint64_t reserved;       /* on disk: >= every token acknowledged */
    uint64_t block;          /* the last reservation's size */
    uint64_t base;           /* the sequence at the last reservation or
                                raise, from which growth is measured */
    int64_t base_ms;         /* when, 0 before the first */
    uint64_t n_writes;       /* reservations written */
    uint64_t n_raises;       /* times the sequence was raised to it */
    uint64_t n_alarms;       /* times the database had forgotten tokens */
    uint64_t last_forgotten; /* tokens forgotten, at the last alarm */
    bool failing;            /* the last write failed */
};

/* Open the floor in data_dir (created if missing; NULL or "": no floor).
 * 0, or TN_EIO / TN_EINVAL (a file that cannot be read) with em. */
int tn_pg_floor_open(struct tn_pg_floor *f, const char *data_dir,
                     struct tn_errmsg *em);
void tn_pg_floor_close(struct tn_pg_floor *f);
/* token has committed and is about to be revealed: make sure the file
 * covers it (one fsync per reservation block, none for most calls).
 * 0, or TN_EIO: the answer must not go out as a success. */
int tn_pg_floor_cover(struct tn_pg_floor *f, uint64_t token);
/* The tokens a result is about to reveal (a grant's, a claim's). */
int tn_pg_floor_cover_result(struct tn_pg_floor *f,
                             const struct tn_store_result *r);
/* The answer out is about to go out: when the tokens it reveals cannot
 * be covered on disk first, it becomes TN_EUNAVAIL (the commit stands: its
 * outcome is unknown to the client, as after a lost connection).  True
 * when it did. */
bool tn_pg_floor_guard(struct tn_pg_floor *f, struct tn_store_result *out);
/* What the sequence must not be below after a (re)connection. */
uint64_t tn_pg_floor_value(const struct tn_pg_floor *f);
/* The sequence step found the database's highest token top and, when
 * raised, moved it up to the floor: alarm when top is below a token the
 * database had confirmed. */
void tn_pg_floor_seen(struct tn_pg_floor *f, uint64_t top, bool raised);
void tn_pg_floor_metrics(const struct tn_pg_floor *f, struct tn_buf *out);

#endif
