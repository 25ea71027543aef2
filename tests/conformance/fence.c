/* SPDX-License-Identifier: MIT */
/* tn-conformance --fence SINK RESOURCE TOKEN: one check-and-advance of the
 * C fence kit in its own transaction on SINK (sqlite:PATH or a
 * postgresql:// URL); prints "admitted" (exit 0) or "stale" (exit 3), so
 * tests can mix C and Python writers on one mark table. */
#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/client.h>
#include <tenure/fence.h>
#include <tenure/fence_pg.h>
#include <tenure/fence_sqlite.h>

#include "runner.h"

static int fence_sqlite(const char *path, const char *res, uint64_t token)
{
    sqlite3 *db = NULL;
    struct tn_errmsg em = {{0}};
    if (sqlite3_open(path, &db) != SQLITE_OK) {
        fprintf(stderr, "open %s: %s\n", path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return 1;
    }
    (void)sqlite3_busy_timeout(db, 5000);
    int rc = tn_fence_sqlite_migrate(db, &em);
    if (rc == 0 && sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL))
        rc = TN_EIO;
    if (rc == 0)
        rc = tn_fence_sqlite_advance(db, res, strlen(res), token, NULL, &em);
    if (rc == 0 || rc == TN_ESTALE) {
        if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
            rc = TN_EIO;
    }
    sqlite3_close(db);
    if (rc < 0 && rc != TN_ESTALE)
        fprintf(stderr, "fence: %s %s\n", tn_strerror(rc), em.text);
    return rc;
}

static int fence_pg(const char *url, const char *res, uint64_t token)
{
    PGconn *conn = PQconnectdb(url);
    struct tn_errmsg em = {{0}};
    if (PQstatus(conn) != CONNECTION_OK) {
        fprintf(stderr, "connect: %s", PQerrorMessage(conn));
        PQfinish(conn);
        return 1;
    }
    int rc = tn_fence_pg_migrate(conn, &em);
    if (rc == 0) {
        PGresult *b = PQexec(conn, "BEGIN");
        PQclear(b);
        rc = tn_fence_pg_advance(conn, res, strlen(res), token, NULL, &em);
        PGresult *c = PQexec(conn, "COMMIT");
        if (PQresultStatus(c) != PGRES_COMMAND_OK && rc >= 0)
            rc = TN_EIO;
        PQclear(c);
    }
    PQfinish(conn);
    if (rc < 0 && rc != TN_ESTALE)
        fprintf(stderr, "fence: %s %s\n", tn_strerror(rc), em.text);
    return rc;
}

int conf_fence_main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: tn-conformance --fence SINK RESOURCE TOKEN\n");
        return 2;
    }
    uint64_t token = 0;
    if (tn_fence_parse_token(argv[4], strlen(argv[4]), &token) < 0) {
        fprintf(stderr, "bad token %s\n", argv[4]);
        return 2;
    }
    int rc = strncmp(argv[2], "sqlite:", 7) == 0
                 ? fence_sqlite(argv[2] + 7, argv[3], token)
                 : fence_pg(argv[2], argv[3], token);
    if (rc == 0) {
        printf("admitted\n");
        return 0;
    }
    if (rc == TN_ESTALE) {
        printf("stale\n");
        return 3;
    }
    return 1;
}
