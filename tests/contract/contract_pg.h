/* SPDX-License-Identifier: MIT */
/* An admin connection to the contract suite's PostgreSQL and what the
 * PostgreSQL-only cases do with it (contract_pg.c). */
#ifndef TN_CONTRACT_PG_H
#define TN_CONTRACT_PG_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A connection to url, quiet, or NULL (said on stderr). */
PGconn *admin_at(const char *url);
/* A connection to the suite's database, or NULL. */
PGconn *admin(void);
/* Run sql on c; false (said on stderr) unless it succeeded. */
bool exec_ok(PGconn *c, const char *sql);
/* Begin a transaction on db that holds the row of name locked (FOR
 * UPDATE). */
bool lock_row(PGconn *db, const char *name);
/* A URL for the same database with search_path set to schema. */
void url_with_schema(const char *schema, char *out, size_t cap);
/* The first column of the first row of sql on mon as a number, -1 on
 * error. */
long long mon_number(PGconn *mon, const char *sql);
/* Run the loop until sql on mon returns want, or ms pass. */
bool poll_until(PGconn *mon, const char *sql, long long want, int64_t ms);

#endif
