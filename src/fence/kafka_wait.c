/* SPDX-License-Identifier: MIT */
/* Claim before read: a new holder waits until the materializer has
 * committed past its claim record, by polling tenure_offsets in the sink.
 * Only reads the sink; never writes it. */
#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <tenure/fence_kafka.h>

#include "common/clock.h"

static void nap_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Committed next offset of (topic, partition) in a SQLite sink; -1 when the
 * sink or the row does not exist yet. */
static int64_t sqlite_next(const char *path, const char *topic,
                           int32_t partition)
{
    sqlite3 *db = NULL;
    int64_t next = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        goto out_close;
    sqlite3_busy_timeout(db, 1000);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT next_offset FROM tenure_offsets"
                           " WHERE topic=?1 AND \"partition\"=?2",
                           -1, &st, NULL) != SQLITE_OK)
        goto out_close;
    sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, partition);
    if (sqlite3_step(st) == SQLITE_ROW)
        next = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
out_close:
    sqlite3_close(db);
    return next;
}

static int64_t pg_next(PGconn *conn, const char *topic, int32_t partition)
{
    char part[16];
    (void)snprintf(part, sizeof(part), "%d", (int)partition);
    const char *params[2] = {topic, part};
    PGresult *res = PQexecParams(conn,
                                 "SELECT next_offset FROM tenure_offsets"
                                 " WHERE topic=$1 AND \"partition\"=$2::int",
                                 2, NULL, params, NULL, NULL, 0);
    int64_t next = -1;
    if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1) {
        uint64_t v = 0;
        if (tn_fence_parse_token(PQgetvalue(res, 0, 0),
                                 (size_t)PQgetlength(res, 0, 0), &v) == 0)
            next = (int64_t)v;
    }
    PQclear(res);
    return next;
}

int tn_fence_wait_committed(const char *sink, const char *topic,
                            int32_t partition, int64_t offset, int timeout_ms,
                            struct tn_errmsg *em)
{
    bool is_pg = strncmp(sink, "postgresql://", 13) == 0 ||
                 strncmp(sink, "postgres://", 11) == 0;
    if (!is_pg && strncmp(sink, "sqlite:", 7) != 0) {
        tn_errmsg_set(em, "unknown sink \"%s\"", sink);
        return TN_EINVAL;
    }
    PGconn *conn = NULL;
    if (is_pg) {
        conn = PQconnectdb(sink);
        if (PQstatus(conn) != CONNECTION_OK) {
            tn_errmsg_set(em, "cannot connect to sink: %s",
                          PQerrorMessage(conn));
            PQfinish(conn);
            return TN_EIO;
        }
    }
    int64_t deadline = tn_clock_mono_ms() + timeout_ms;
    int rc = TN_ETIMEDOUT;
    for (;;) {
        int64_t next = is_pg ? pg_next(conn, topic, partition)
                             : sqlite_next(sink + 7, topic, partition);
        if (next > offset) {
            rc = TN_OK;
            break;
        }
        if (tn_clock_mono_ms() >= deadline)
            break;
        nap_ms(20);
    }
    if (rc == TN_ETIMEDOUT)
        tn_errmsg_set(em, "materializer did not pass offset %lld",
                      (long long)offset);
    PQfinish(conn);
    return rc;
}
