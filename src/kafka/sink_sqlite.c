/* SPDX-License-Identifier: MIT */
/* SQLite sink: WAL, synchronous=FULL, one BEGIN IMMEDIATE transaction per
 * batch, statements prepared once.  The fence decision is the fence kit's
 * (tn_fence_sqlite_advance_prepared) inside that same transaction. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <tenure/fence_sqlite.h>

#include "common/alloc.h"
#include "kafka/sink.h"

/* Rows per multi-row INSERT: one statement execution (cursor seek,
 * statement journal, halt) per ROWS_PER_INSERT rows instead of per row. */
#define ROWS_PER_INSERT 32

/* Rows decided but not yet inserted; they borrow the consumed messages,
 * which live until the batch is committed or rolled back. */
struct pending {
    struct tn_sink_row rows[ROWS_PER_INSERT]; /* copies, pointers borrowed */
    const char *reason[ROWS_PER_INSERT];      /* static reason names */
    size_t n;                                 /* rows held */
};

struct sqlite_sink {
    struct tn_sink base;     /* must be first */
    sqlite3 *db;             /* owned */
    sqlite3_stmt *admit_st;  /* INSERT INTO tenure_admitted */
    sqlite3_stmt *reject_st; /* INSERT INTO tenure_rejected */
    sqlite3_stmt *cas_st;    /* UPDATE tenure_offsets ... WHERE next_offset=? */
    struct tn_fence_sqlite *fence; /* the fence's statements on db */
    sqlite3_stmt *admit_many;      /* ROWS_PER_INSERT rows of admit_st */
    sqlite3_stmt *reject_many;     /* ROWS_PER_INSERT rows of reject_st */
    struct pending admitted;       /* admitted rows not yet inserted */
    struct pending rejected;       /* rejected rows not yet inserted */
};

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS tenure_offsets ("
    " topic TEXT NOT NULL, \"partition\" INTEGER NOT NULL,"
    " next_offset INTEGER NOT NULL, PRIMARY KEY (topic, \"partition\"));"
    "CREATE TABLE IF NOT EXISTS tenure_admitted ("
    " topic TEXT NOT NULL, \"partition\" INTEGER NOT NULL,"
    " \"offset\" INTEGER NOT NULL, resource TEXT, token INTEGER,"
    " key BLOB, value BLOB, claim INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (topic, \"partition\", \"offset\"));"
    "CREATE TABLE IF NOT EXISTS tenure_rejected ("
    " topic TEXT NOT NULL, \"partition\" INTEGER NOT NULL,"
    " \"offset\" INTEGER NOT NULL, resource TEXT, token INTEGER,"
    " reason TEXT NOT NULL, PRIMARY KEY (topic, \"partition\", \"offset\"));";

static int fail(struct sqlite_sink *s, int src, const char *what,
                struct tn_errmsg *em)
{
    tn_errmsg_set(em, "sink %s failed: %s", what, sqlite3_errmsg(s->db));
    return (src == SQLITE_BUSY || src == SQLITE_LOCKED) ? TN_EBUSY : TN_EIO;
}

static int exec(struct sqlite_sink *s, const char *sql, struct tn_errmsg *em)
{
    int src = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return src == SQLITE_OK ? TN_OK : fail(s, src, sql, em);
}

static int step_done(struct sqlite_sink *s, sqlite3_stmt *st, const char *what,
                     struct tn_errmsg *em)
{
    int src = sqlite3_step(st);
    int rc = src == SQLITE_DONE ? TN_OK : fail(s, src, what, em);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc;
}

static int s_begin(struct tn_sink *b, struct tn_errmsg *em)
{
    struct sqlite_sink *s = (struct sqlite_sink *)b;
    s->admitted.n = 0;
    s->rejected.n = 0;
    return exec(s, "BEGIN IMMEDIATE", em);
}

static int s_advance(struct tn_sink *b, const char *resource, size_t len,
                     uint64_t token, uint64_t *hwm_before_out,
                     struct tn_errmsg *em)
{
    struct sqlite_sink *s = (struct sqlite_sink *)b;
    return tn_fence_sqlite_advance_prepared(s->fence, resource, len, token,
                                            hwm_before_out, em);
}

/* Bind row r at parameter offset base (its first column is base + 1);
 * absent values stay NULL (bindings are cleared after every step). */
static void bind_common(sqlite3_stmt *st, int base, const struct tn_sink_row *r)
{
    sqlite3_bind_text(st, base + 1, r->topic, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, base + 2, r->partition);
    sqlite3_bind_int64(st, base + 3, r->offset);
    if (r->resource != NULL)
        sqlite3_bind_text(st, base + 4, r->resource, (int)r->resource_len,
                          SQLITE_STATIC);
    if (r->has_token)
        sqlite3_bind_int64(st, base + 5, (sqlite3_int64)r->token);
}

static void bind_admitted(sqlite3_stmt *st, int base,
                          const struct tn_sink_row *r)
{
    bind_common(st, base, r);
    if (r->key != NULL)
        sqlite3_bind_blob(st, base + 6, r->key, (int)r->key_len, SQLITE_STATIC);
    if (r->value != NULL)
        sqlite3_bind_blob(st, base + 7, r->value, (int)r->value_len,
                          SQLITE_STATIC);
    sqlite3_bind_int(st, base + 8, r->claim ? 1 : 0);
}

/* Insert the pending admitted rows: one multi-row statement when full,
 * else one statement per row. */
static int flush_admitted(struct sqlite_sink *s, struct tn_errmsg *em)
{
    struct pending *p = &s->admitted;
    int rc = TN_OK;
    if (p->n == ROWS_PER_INSERT) {
        for (size_t i = 0; i < p->n; i++)
            bind_admitted(s->admit_many, (int)i * 8, &p->rows[i]);
        rc = step_done(s, s->admit_many, "insert admitted", em);
    } else {
        for (size_t i = 0; i < p->n && rc == 0; i++) {
            bind_admitted(s->admit_st, 0, &p->rows[i]);
            rc = step_done(s, s->admit_st, "insert admitted", em);
        }
    }
    p->n = 0;
    return rc;
}

static int flush_rejected(struct sqlite_sink *s, struct tn_errmsg *em)
{
    struct pending *p = &s->rejected;
    int rc = TN_OK;
    bool many = p->n == ROWS_PER_INSERT;
    sqlite3_stmt *st = many ? s->reject_many : s->reject_st;
    for (size_t i = 0; i < p->n && rc == 0; i++) {
        int base = many ? (int)i * 6 : 0;
        bind_common(st, base, &p->rows[i]);
        sqlite3_bind_text(st, base + 6, p->reason[i], -1, SQLITE_STATIC);
        if (!many)
            rc = step_done(s, st, "insert rejected", em);
    }
    if (many)
        rc = step_done(s, st, "insert rejected", em);
    p->n = 0;
    return rc;
}

static int s_admit(struct tn_sink *b, const struct tn_sink_row *r,
                   struct tn_errmsg *em)
{
    struct sqlite_sink *s = (struct sqlite_sink *)b;
    s->admitted.rows[s->admitted.n++] = *r;
    if (s->admitted.n < ROWS_PER_INSERT)
        return TN_OK;
    return flush_admitted(s, em);
}

static int s_reject(struct tn_sink *b, const struct tn_sink_row *r,
                    const char *reason, struct tn_errmsg *em)
{
    struct sqlite_sink *s = (struct sqlite_sink *)b;
    s->rejected.rows[s->rejected.n] = *r;
    s->rejected.reason[s->rejected.n++] = reason;
    if (s->rejected.n < ROWS_PER_INSERT)
        return TN_OK;
    return flush_rejected(s, em);
}

static int s_cas(struct tn_sink *b, const char *topic, int32_t partition,
                 int64_t expected, int64_t next, struct tn_errmsg *em)
{
    struct sqlite_sink *s = (struct sqlite_sink *)b;
    sqlite3_stmt *st = s->cas_st;
    sqlite3_bind_int64(st, 1, next);
    sqlite3_bind_text(st, 2, topic, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, partition);
    sqlite3_bind_int64(st, 4, expected);
    int rc = step_done(s, st, "update offsets", em);
    if (rc == 0 && sqlite3_changes(s->db) != 1) {
        tn_errmsg_set(em,
                      "offset of \"%s\" partition %d is no longer %lld:"
                      " another materializer writes this sink",
                      topic, (int)partition, (long long)expected);
        rc = TN_ECONFLICT;
    }
    return rc;
}

static int s_commit(struct tn_sink *b, struct tn_errmsg *em)
{
    struct sqlite_sink *s = (struct sqlite_sink *)b;
    int rc = flush_admitted(s, em);
    if (rc == 0)
        rc = flush_rejected(s, em);
    if (rc == 0)
        rc = exec(s, "COMMIT", em);
    return rc;
}

static void s_rollback(struct tn_sink *b)
{
    struct sqlite_sink *s = (struct sqlite_sink *)b;
    s->admitted.n = 0;
    s->rejected.n = 0;
    if (!sqlite3_get_autocommit(s->db))
        (void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

static int ensure_rows(struct sqlite_sink *s, const char *topic, int32_t n,
                       int64_t *next_out, struct tn_errmsg *em)
{
    sqlite3_stmt *ins = NULL;
    sqlite3_stmt *sel = NULL;
    int rc = TN_OK;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT OR IGNORE INTO tenure_offsets"
                           " VALUES (?1, ?2, 0)",
                           -1, &ins, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db,
                           "SELECT next_offset FROM tenure_offsets"
                           " WHERE topic=?1 AND \"partition\"=?2",
                           -1, &sel, NULL) != SQLITE_OK) {
        rc = fail(s, SQLITE_ERROR, "prepare offsets", em);
        goto out_finalize;
    }
    for (int32_t p = 0; p < n && rc == 0; p++) {
        sqlite3_bind_text(ins, 1, topic, -1, SQLITE_STATIC);
        sqlite3_bind_int(ins, 2, p);
        rc = step_done(s, ins, "insert offsets", em);
        sqlite3_bind_text(sel, 1, topic, -1, SQLITE_STATIC);
        sqlite3_bind_int(sel, 2, p);
        if (rc == 0 && sqlite3_step(sel) == SQLITE_ROW)
            next_out[p] = sqlite3_column_int64(sel, 0);
        else if (rc == 0)
            rc = fail(s, SQLITE_ERROR, "read offsets", em);
        sqlite3_reset(sel);
    }
out_finalize:
    sqlite3_finalize(ins);
    sqlite3_finalize(sel);
    return rc;
}

static int s_load_offsets(struct tn_sink *b, const char *topic, int32_t n,
                          int64_t *next_out, struct tn_errmsg *em)
{
    struct sqlite_sink *s = (struct sqlite_sink *)b;
    int rc = exec(s, "BEGIN IMMEDIATE", em);
    if (rc < 0)
        return rc;
    rc = ensure_rows(s, topic, n, next_out, em);
    if (rc == 0)
        rc = exec(s, "COMMIT", em);
    if (rc < 0)
        s_rollback(b);
    return rc;
}

static void s_close(struct tn_sink *b)
{
    struct sqlite_sink *s = (struct sqlite_sink *)b;
    if (s == NULL)
        return;
    sqlite3_finalize(s->admit_st);
    sqlite3_finalize(s->reject_st);
    sqlite3_finalize(s->cas_st);
    sqlite3_finalize(s->admit_many);
    sqlite3_finalize(s->reject_many);
    tn_fence_sqlite_finalize(s->fence);
    sqlite3_close(s->db);
    tn_free(s);
}

static const struct tn_sink_ops sqlite_ops = {
    .begin = s_begin,
    .advance = s_advance,
    .admit = s_admit,
    .reject = s_reject,
    .cas_offset = s_cas,
    .commit = s_commit,
    .rollback = s_rollback,
    .load_offsets = s_load_offsets,
    .close = s_close,
};

/* "INSERT INTO table VALUES (?,...),(...)": ROWS_PER_INSERT rows of cols
 * parameters each. */
static int prepare_many(struct sqlite_sink *s, const char *table, int cols,
                        sqlite3_stmt **out)
{
    char sql[4096];
    size_t n =
        (size_t)snprintf(sql, sizeof(sql), "INSERT INTO %s VALUES", table);
    for (int r = 0; r < ROWS_PER_INSERT; r++) {
        for (int c = 0; c < cols && n + 4 < sizeof(sql); c++) {
            const char *sep = c == 0 ? (r == 0 ? " (" : ",(") : ",";
            size_t len = strlen(sep);
            memcpy(sql + n, sep, len);
            n += len;
            sql[n++] = '?';
        }
        if (n + 2 >= sizeof(sql))
            return SQLITE_TOOBIG;
        sql[n++] = ')';
    }
    sql[n] = '\0';
    return sqlite3_prepare_v3(s->db, sql, (int)n + 1, SQLITE_PREPARE_PERSISTENT,
                              out, NULL);
}

static int prepare_all(struct sqlite_sink *s, struct tn_errmsg *em)
{
    if (prepare_many(s, "tenure_admitted", 8, &s->admit_many) != SQLITE_OK ||
        prepare_many(s, "tenure_rejected", 6, &s->reject_many) != SQLITE_OK)
        return fail(s, SQLITE_ERROR, "prepare", em);
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO tenure_admitted VALUES"
                           " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                           -1, &s->admit_st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db,
                           "INSERT INTO tenure_rejected VALUES"
                           " (?1, ?2, ?3, ?4, ?5, ?6)",
                           -1, &s->reject_st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db,
                           "UPDATE tenure_offsets SET next_offset=?1"
                           " WHERE topic=?2 AND \"partition\"=?3"
                           " AND next_offset=?4",
                           -1, &s->cas_st, NULL) != SQLITE_OK)
        return fail(s, SQLITE_ERROR, "prepare", em);
    return TN_OK;
}

static int open_once(const char *path, struct tn_sink **out,
                     struct tn_errmsg *em)
{
    struct sqlite_sink *s = tn_calloc(1, sizeof(*s));
    if (s == NULL)
        return TN_ENOMEM;
    s->base.ops = &sqlite_ops;
    int rc = TN_OK;
    /* One thread uses the sink: no per-call mutex and no global memory
     * statistics (each takes a lock per allocation).  The config call fails
     * harmlessly once SQLite is initialised. */
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    if (sqlite3_open_v2(path, &s->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                            SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        rc = fail(s, SQLITE_ERROR, "open", em);
        goto out_close;
    }
    sqlite3_busy_timeout(s->db, 5000);
    rc = exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", em);
    if (rc == 0)
        rc = exec(s, schema_sql, em);
    if (rc == 0)
        rc = tn_fence_sqlite_migrate(s->db, em);
    if (rc == 0)
        rc = prepare_all(s, em);
    if (rc == 0)
        rc = tn_fence_sqlite_prepare(s->db, &s->fence, em);
    if (rc < 0)
        goto out_close;
    *out = &s->base;
    return TN_OK;
out_close:
    s_close(&s->base);
    return rc;
}

/* Materializers that open the same new sink at once race to switch it to
 * WAL, which needs an exclusive lock; SQLite then answers SQLITE_BUSY at
 * once, busy timeout or not, where waiting could deadlock.  Such an open is
 * retried for up to 5 s. */
int tn_sink_sqlite_open(const char *path, struct tn_sink **out,
                        struct tn_errmsg *em)
{
    int rc = TN_EBUSY;
    for (int attempt = 0; attempt < 50 && rc == TN_EBUSY; attempt++) {
        if (attempt > 0) {
            struct timespec ts = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
            (void)nanosleep(&ts, NULL);
        }
        rc = open_once(path, out, em);
    }
    return rc;
}
