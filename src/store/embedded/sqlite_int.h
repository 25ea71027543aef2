/* SPDX-License-Identifier: MIT */
/* Inside the embedded store's SQLite file: the connection that sqlite.c
 * (schema, writes) and sqlite_load.c (the load and its restart rules)
 * share.  SQLITE_* codes stop in these two files. */
#ifndef TN_STORE_SQLITE_INT_H
#define TN_STORE_SQLITE_INT_H

#include <sqlite3.h>
#include <stdint.h>

#include <tenure/err.h>

struct tn_sqlite_db {
    sqlite3 *db;            /* the connection */
    sqlite3_stmt *upsert;   /* INSERT OR REPLACE of one lease row, by id */
    sqlite3_stmt *del;      /* DELETE of one lease row, by id (retirement) */
    sqlite3_stmt *s_upsert; /* INSERT OR REPLACE of one session row */
    sqlite3_stmt *s_del;    /* DELETE of one session row (it is gone) */
    sqlite3_stmt *meta;     /* INSERT OR REPLACE into meta */
    sqlite3_stmt *begin;    /* BEGIN IMMEDIATE */
    sqlite3_stmt *commit;   /* COMMIT */
    char boot_id[37];       /* this boot's id */
};

/* A SQLite result code as a tn_err. */
int tn_sqlite_map_rc(int rc);
/* Run sql (no rows); on failure em says which and why. */
int tn_sqlite_exec(struct tn_sqlite_db *d, const char *sql,
                   struct tn_errmsg *em);
/* The first column of the first row of sql, or -1. */
int64_t tn_sqlite_pragma_int(struct tn_sqlite_db *d, const char *sql);
/* Set meta key to the text v (inside the caller's transaction). */
int tn_sqlite_set_meta_text(struct tn_sqlite_db *d, const char *key,
                            const char *v);

#endif
