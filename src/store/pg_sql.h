/* SPDX-License-Identifier: MIT */
/* The SQL of the PostgreSQL store: the versioned schema migrations, the
 * start-up steps and the prepared statements that make every decision.
 * Text only, no I/O.  Each decision is ONE statement evaluated on the
 * database clock (now()); the reasons are written next to each statement
 * in pg_sql.c and in docs/OPERATIONS.md. */
#ifndef TN_STORE_PG_SQL_H
#define TN_STORE_PG_SQL_H

#include <stddef.h>

/* Statements, prepared once per connection. */
enum tn_pg_stmt {
    TN_PG_ACQUIRE = 0,
    TN_PG_RENEW,
    TN_PG_RELEASE,
    TN_PG_GET,
    TN_PG_CHECK,
    TN_PG_LIST,
    TN_PG_N_STMTS
};

#define TN_PG_MAX_PARAMS 6

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

/* Indexed by enum tn_pg_stmt. */
extern const struct tn_pg_stmt_def tn_pg_stmts[TN_PG_N_STMTS];

/* Ordered by version; tn_pg_n_migrations entries. */
extern const struct tn_pg_migration tn_pg_migrations[];
extern const size_t tn_pg_n_migrations;

/* Session settings, then the advisory lock that serialises migrations of
 * instances starting together. */
extern const char tn_pg_sql_session[];
/* Creates the version table; returns one row: the current version. */
extern const char tn_pg_sql_version[];
/* Lifts lease_token_seq above every stored token, then drops the lock. */
extern const char tn_pg_sql_sequence[];

#endif
