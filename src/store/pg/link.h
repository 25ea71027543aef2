/* SPDX-License-Identifier: MIT */
/* One PostgreSQL connection on the loop thread (link.c), the one module
 * every connection of the store goes through: the statement connections
 * (conn.c), the LISTEN connection (events.c) and retirement (retire.c).
 * It connects to the hosts of the connection string one at a time, each
 * with its own deadline, and moves on to the next host when one fails or
 * stays silent; it bounds every wait for an answer the owner asks it to.
 * The hosts it walks are a struct tn_pg_hosts (hosts.h). */
#ifndef TN_STORE_PG_LINK_H
#define TN_STORE_PG_LINK_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/loop.h"
#include "store/pg/hosts.h"

struct tn_pg_link;

/* What a link tells its owner.  up: connected (non-blocking) to a host
 * that passed the string's target_session_attrs; io: socket events while
 * up; fail: every host of a round failed, or an awaited answer did not
 * come in time, or tn_pg_link_fail was called: the link is closed
 * already (conn NULL), why says what happened. */
struct tn_pg_link_ops {
    void (*up)(void *arg);
    void (*io)(void *arg, uint32_t events);
    void (*fail)(void *arg, const char *why);
};

struct tn_pg_link {
    struct tn_loop *loop;             /* the store's */
    struct tn_pg_hosts *hosts;        /* borrowed, shared */
    const struct tn_pg_link_ops *ops; /* the owner's */
    void *arg;                        /* for ops */
    PGconn *conn;                     /* NULL when closed */
    int fd;                           /* watched socket, -1 if none */
    uint32_t fd_events;               /* what it is watched for */
    bool connecting;                  /* a round is under way */
    size_t host;                      /* host tried, or connected to */
    size_t pos;                       /* hosts walked this round, 0..n */
    uint64_t tried;                   /* hosts tried this round, by bit */
    int64_t wait_ms;                  /* the awaited answer's bound */
    struct tn_loop_timer deadline;    /* connect or answer deadline */
    char why[512];                    /* failures of the running round */
};

void tn_pg_link_init(struct tn_pg_link *l, struct tn_loop *loop,
                     struct tn_pg_hosts *hosts,
                     const struct tn_pg_link_ops *ops, void *arg);
/* Start a round over the hosts: the host of the last good connection
 * first, hosts that stalled last (the one that stalled last, last).  ops->up or
 * ops->fail follows (fail may run before this returns). */
void tn_pg_link_connect(struct tn_pg_link *l);
/* Close the connection, stop watching, disarm; ops are not called. */
void tn_pg_link_close(struct tn_pg_link *l);
/* The owner gives up on this connection: close it and call ops->fail. */
void tn_pg_link_fail(struct tn_pg_link *l, const char *why);
/* The host stopped answering: try it last from now on (until it
 * answers a connection again), close, and call ops->fail. */
void tn_pg_link_stalled(struct tn_pg_link *l, const char *why);
/* Watch the socket (re-registered if libpq changed it) / stop. */
void tn_pg_link_watch(struct tn_pg_link *l, uint32_t events);
void tn_pg_link_unwatch(struct tn_pg_link *l);
/* An answer is awaited: unless tn_pg_link_answered comes within ms, the
 * host is taken for stalled (tn_pg_link_stalled). */
void tn_pg_link_await(struct tn_pg_link *l, int64_t ms);
void tn_pg_link_answered(struct tn_pg_link *l);
/* Connected, to host i of hosts. */
bool tn_pg_link_is_up(const struct tn_pg_link *l);

#endif
