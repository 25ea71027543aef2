/* SPDX-License-Identifier: MIT */
/* The SQL of the PostgreSQL store: the versioned schema migrations, the
 * start-up steps and the prepared statements that make every decision.
 * Text only, no I/O.  Each decision is ONE statement evaluated on the
 * database clock (now()); the reasons are written next to each statement
 * (src/store/pg/sql_schema.c: schema; sql_acquire.c: the acquire; sql.c:
 * the other lease statements and the table of them all; sql_session.c:
 * sessions; sql_text.h: the pieces they share) and in
 * docs/internals/postgresql.md. */
#ifndef TN_STORE_PG_SQL_H
#define TN_STORE_PG_SQL_H

#include <stdbool.h>
#include <stddef.h>

/* Statements, prepared once per connection. */
enum tn_pg_stmt {
    TN_PG_ACQUIRE = 0,
    TN_PG_ACQUIRE_SESSION,
    TN_PG_RENEW,
    TN_PG_RELEASE,
    TN_PG_GET,
    TN_PG_CHECK,
    TN_PG_LIST,
    TN_PG_HISTORY,
    TN_PG_SWEEP,
    TN_PG_PRUNE,
    TN_PG_COUNT,
    TN_PG_SYNC,
    TN_PG_NOTIFY,
    TN_PG_SESSION_OPEN,
    TN_PG_SESSION_RENEW,
    TN_PG_SESSION_END,
    TN_PG_SESSION_GET,
    TN_PG_SESSION_LIST,
    TN_PG_CLAIM,
    TN_PG_UNCLAIM,
    TN_PG_SESSION_SWEEP,
    TN_PG_N_STMTS
};

#define TN_PG_MAX_PARAMS 10

/* The acquire statements: of a lease of its own, and under a session. */
static inline bool tn_pg_is_acquire(enum tn_pg_stmt s)
{
    return s == TN_PG_ACQUIRE || s == TN_PG_ACQUIRE_SESSION;
}

/* The sweeps (src/store/pg/events.c, session.c): they settle hundreds of
 * rows, so each runs alone in its batch, and nothing is pipelined behind
 * one while another connection can take it (src/store/pg/batch.c): a
 * request would wait for all of them. */
static inline bool tn_pg_is_sweep(enum tn_pg_stmt s)
{
    return s == TN_PG_SWEEP || s == TN_PG_SESSION_SWEEP;
}

/* Statements whose events go out inside their own transaction (the
 * names they change are many or not known before they run, so none is
 * pinned, src/store/pg/pin.c): whatever changes one of those names next
 * waits for its row lock, hence for that commit and its events. */
static inline bool tn_pg_notifies_inside(enum tn_pg_stmt s)
{
    return tn_pg_is_sweep(s) || s == TN_PG_CLAIM || s == TN_PG_UNCLAIM ||
           s == TN_PG_SESSION_END;
}

/* Statements that may write events to the outbox. */
static inline bool tn_pg_writes_events(enum tn_pg_stmt s)
{
    return tn_pg_is_acquire(s) || s == TN_PG_RELEASE ||
           s == TN_PG_SESSION_OPEN || tn_pg_notifies_inside(s);
}

/* What SYNC_SQL (src/store/pg/sql.c) answers about the primary's
 * synchronous standby (src/store/pg/sync.c), most reassuring first. */
enum tn_pg_sync_state {
    TN_PG_SYNC_OK = 0,  /* a standby in sync_state sync or quorum */
    TN_PG_SYNC_NONE,    /* no standby in that state */
    TN_PG_SYNC_HIDDEN,  /* standbys the role may not inspect (no
                           pg_read_all_stats, e.g. through pg_monitor) */
    TN_PG_SYNC_UNNAMED, /* synchronous_standby_names is empty */
    TN_PG_SYNC_COMMIT,  /* the session's synchronous_commit is not
                           remote_apply (a pooler dropped the SET?) */
    TN_PG_SYNC_UNKNOWN, /* not asked since the last new connection */
    TN_PG_SYNC_N_STATES
};

/* A DELETE of a session of at most this many leases releases them in its
 * own transaction; a larger one ends the session row (every lease of it
 * is over at that instant) and the sweep writes the leases' ends
 * (sql_session.c). */
#define TN_PG_END_INLINE 1000

/* Grants kept per name in the ledger after a prune pass (history). */
#define TN_PG_LEDGER_KEEP 100

/* Events travel as NOTIFY on the channel "tenure:" || current_schema()
 * (one channel per schema, so schemas sharing a database never hear each
 * other).  A payload holds one or more lines, in order, each
 * "<type> <token> <floor> <owner bytes> <owner_id><name>" with type a
 * (acquired), r (released), e (expired) or v (revoked); or a session's,
 * "o <owner bytes> <owner_id><session id>" (opened) and
 * "x <reason> <owner bytes> <owner_id><session id>" (ended; reason e
 * expired, r released, v revoked).  The statements
 * that change hands write their lines to the session's outbox (a temporary
 * table) in their own transaction; the NOTIFY statement, pipelined right
 * after that transaction's Sync, sends them (docs/internals/postgresql.md: why
 * not in the same transaction), except in a batch that sweeps, where
 * tn_pg_sql_notify_in_txn sends them before the Sync. */
#define TN_PG_CHANNEL_PREFIX "tenure:"

struct tn_pg_stmt_def {
    const char *name;                     /* prepared statement name */
    const char *sql;                      /* text with $1..$n */
    int n_params;                         /* <= TN_PG_MAX_PARAMS */
    unsigned int types[TN_PG_MAX_PARAMS]; /* parameter type OIDs */
};

struct tn_pg_migration {
    int version;     /* 1, 2, ... in order */
    const char *sql; /* runs in one transaction with its version row */
};

/* The statements' texts that live outside sql.c (sql_acquire.c,
 * sql_session.c). */
extern const char tn_pg_sql_acquire[];
extern const char tn_pg_sql_acquire_session[];
extern const char tn_pg_sql_session_open[];
extern const char tn_pg_sql_session_renew[];
extern const char tn_pg_sql_session_end[];
extern const char tn_pg_sql_session_get[];
extern const char tn_pg_sql_session_list[];
extern const char tn_pg_sql_claim[];
extern const char tn_pg_sql_unclaim[];
extern const char tn_pg_sql_session_sweep[];

/* Indexed by enum tn_pg_stmt. */
extern const struct tn_pg_stmt_def tn_pg_stmts[TN_PG_N_STMTS];

/* Ordered by version; tn_pg_n_migrations entries. */
extern const struct tn_pg_migration tn_pg_migrations[];
extern const size_t tn_pg_n_migrations;

/* How long a setup step (a migration, the sequence) waits for a table
 * lock before it gives up and tries again later; the statement that sets
 * it, first in each of their transactions. */
#define TN_PG_SETUP_LOCK_WAIT "100ms"
#define TN_PG_SETUP_LOCK_TIMEOUT                                               \
    "SET LOCAL lock_timeout TO '" TN_PG_SETUP_LOCK_WAIT "';"

/* Session settings, then the advisory lock that serialises migrations of
 * instances starting together. */
extern const char tn_pg_sql_session[];
/* Creates the version table; returns one row: the current version. */
extern const char tn_pg_sql_version[];
/* Lifts lease_token_seq above every stored token, then drops the lock. */
extern const char tn_pg_sql_sequence[];
/* NOTIFY_SQL without its own commit rule, sent before the Sync of a
 * batch that sweeps: the events go out inside that batch's transaction
 * (docs/internals/postgresql.md, "Order"). */
extern const char tn_pg_sql_notify_in_txn[];
/* LISTEN on this schema's event channel (the listener connection). */
extern const char tn_pg_sql_listen[];
/* The outbox as an unlogged table, for running the statements outside
 * tenured (pgbench); tenured's sessions shadow it with their temporary
 * one. */
extern const char tn_pg_sql_outbox_table[];

#endif
