/* SPDX-License-Identifier: MIT */
/* The fenced sink of the harness: a SQLite file shared by every client
 * process.  Each write is one transaction that runs the fence kit's
 * check-and-advance, records the decision in chaos_decisions and, when
 * admitted, the data row.  The decisions table is what the history's sink
 * lines come from: only committed decisions, in commit order (BEGIN
 * IMMEDIATE serialises the writers, and the row id grows with each
 * commit). */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <tenure/fence_sqlite.h>

#include "chaos.h"
#include "common/clock.h"

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS chaos_decisions ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT, t INTEGER NOT NULL,"
    " resource TEXT NOT NULL, token INTEGER NOT NULL,"
    " decision TEXT NOT NULL, hwm_before INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS chaos_data ("
    " resource TEXT NOT NULL, token INTEGER NOT NULL, proc TEXT NOT NULL,"
    " t INTEGER NOT NULL);";

/* One attempt at opening and preparing the sink; 0, or the SQLite code. */
static int open_once(const char *path, sqlite3 **out)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(db, CHAOS_SINK_BUSY_MS);
        rc = sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "PRAGMA synchronous=FULL", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK) {
        if (tn_fence_sqlite_migrate(db, NULL) < 0)
            rc = sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errcode(db)
                                                  : SQLITE_ERROR;
        else
            rc = sqlite3_exec(db, schema, NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
        if (rc != SQLITE_OK)
            (void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK) {
        *out = db;
        return 0;
    }
    (void)fprintf(stderr, "tn-chaos: sink %s: %s\n", path,
                  db != NULL ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_close(db);
    return rc;
}

int chaos_sink_open(const char *path, sqlite3 **out)
{
    /* Clients open the same new sink at once: switching it to WAL needs
     * an exclusive lock, and SQLite answers SQLITE_BUSY without waiting
     * when waiting could deadlock.  Such a refusal is retried. */
    for (int attempt = 0; attempt < 50; attempt++) {
        int rc = open_once(path, out);
        if (rc == 0)
            return 0;
        if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED)
            return -1;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
        (void)nanosleep(&ts, NULL);
    }
    return -1;
}

static int exec_bind(sqlite3 *db, const char *sql, const char *resource,
                     uint64_t token, const char *text, uint64_t num)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, tn_clock_mono_ns());
    sqlite3_bind_text(st, 2, resource, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)token);
    sqlite3_bind_text(st, 4, text, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)num);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return rc;
}

int chaos_sink_write(sqlite3 *db, const char *resource, uint64_t token,
                     const char *proc, bool abort)
{
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return -1;
    uint64_t hwm = 0;
    int rc = tn_fence_sqlite_advance(db, resource, strlen(resource), token,
                                     &hwm, NULL);
    int admitted;
    if (rc == 0)
        admitted = 1;
    else if (rc == TN_ESTALE)
        admitted = 0;
    else
        goto rollback;
    if (exec_bind(db,
                  "INSERT INTO chaos_decisions(t, resource, token, decision,"
                  " hwm_before) VALUES (?1, ?2, ?3, ?4, ?5)",
                  resource, token, admitted ? "admit" : "reject", hwm) < 0)
        goto rollback;
    if (admitted && exec_bind(db,
                              "INSERT INTO chaos_data(t, resource, token,"
                              " proc) VALUES (?1, ?2, ?3, ?4)",
                              resource, token, proc, 0) < 0)
        goto rollback;
    if (abort)
        goto rollback;
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        goto rollback;
    return admitted;
rollback:
    (void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return abort ? -2 : -1;
}

int chaos_sink_write_many(sqlite3 *db, const char *const *resources,
                          const uint64_t *tokens, size_t n, const char *proc,
                          bool *admitted)
{
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return -1;
    for (size_t i = 0; i < n; i++) {
        uint64_t hwm = 0;
        int rc = tn_fence_sqlite_advance(db, resources[i], strlen(resources[i]),
                                         tokens[i], &hwm, NULL);
        if (rc != 0 && rc != TN_ESTALE)
            goto rollback;
        admitted[i] = rc == 0;
        if (exec_bind(db,
                      "INSERT INTO chaos_decisions(t, resource, token,"
                      " decision, hwm_before) VALUES (?1, ?2, ?3, ?4, ?5)",
                      resources[i], tokens[i], admitted[i] ? "admit" : "reject",
                      hwm) < 0)
            goto rollback;
        if (admitted[i] && exec_bind(db,
                                     "INSERT INTO chaos_data(t, resource,"
                                     " token, proc) VALUES (?1, ?2, ?3, ?4)",
                                     resources[i], tokens[i], proc, 0) < 0)
            goto rollback;
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK)
        return 0;
rollback:
    (void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

int chaos_sink_dump(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        goto out;
    sqlite3_busy_timeout(db, CHAOS_SINK_BUSY_MS);
    if (sqlite3_prepare_v2(db,
                           "SELECT t, resource, token, decision, hwm_before"
                           " FROM chaos_decisions ORDER BY seq",
                           -1, &st, NULL) != SQLITE_OK)
        goto out;
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        /* Lease names of the harness are plain ASCII: no escaping needed,
         * but refuse anything that would need it. */
        const char *res = (const char *)sqlite3_column_text(st, 1);
        if (res == NULL || strpbrk(res, "\"\\") != NULL)
            goto out;
        (void)printf("{\"t\":%" PRId64 ",\"src\":\"sink\",\"resource\":\"%s\","
                     "\"token\":%" PRId64 ",\"decision\":\"%s\","
                     "\"hwm_before\":%" PRId64 "}\n",
                     (int64_t)sqlite3_column_int64(st, 0), res,
                     (int64_t)sqlite3_column_int64(st, 2),
                     (const char *)sqlite3_column_text(st, 3),
                     (int64_t)sqlite3_column_int64(st, 4));
    }
    rc = s == SQLITE_DONE ? 0 : -1;
out:
    if (rc < 0)
        (void)fprintf(stderr, "tn-chaos: dump %s: %s\n", path,
                      db != NULL ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

int chaos_sink_last_writer(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        goto out;
    sqlite3_busy_timeout(db, CHAOS_SINK_BUSY_MS);
    if (sqlite3_prepare_v2(db,
                           "SELECT proc FROM chaos_data"
                           " ORDER BY rowid DESC LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        goto out;
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW)
        (void)printf("%s\n", (const char *)sqlite3_column_text(st, 0));
    rc = s == SQLITE_ROW || s == SQLITE_DONE ? 0 : -1;
out:
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}
