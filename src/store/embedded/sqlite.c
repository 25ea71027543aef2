/* SPDX-License-Identifier: MIT */
/* SQLite file of the embedded store.  SQLITE_* codes stop here. */
#include "store/embedded/sqlite.h"

#include <sqlite3.h>
#include <string.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "common/clock.h"
#include "common/log.h"

struct tn_sqlite_db {
    sqlite3 *db;          /* the connection */
    sqlite3_stmt *upsert; /* INSERT OR REPLACE of one lease row, by id */
    sqlite3_stmt *del;    /* DELETE of one lease row, by id (retirement) */
    sqlite3_stmt *meta;   /* INSERT OR REPLACE into meta */
    sqlite3_stmt *begin;  /* BEGIN IMMEDIATE */
    sqlite3_stmt *commit; /* COMMIT */
    char boot_id[37];     /* this boot's id */
};

static const char *const schema_v1 =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value) "
    "WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS leases("
    " name TEXT PRIMARY KEY, owner_id TEXT NOT NULL, request_id TEXT,"
    " token INTEGER NOT NULL, secret BLOB NOT NULL, ttl_ms INTEGER NOT NULL,"
    " held INTEGER NOT NULL, expires_at_ms INTEGER NOT NULL,"
    " lock_delay_ms INTEGER NOT NULL) WITHOUT ROWID;";

static int map_rc(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_DONE:
    case SQLITE_ROW:
        return TN_OK;
    case SQLITE_FULL:
        return TN_ENOSPC;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return TN_EBUSY;
    case SQLITE_NOMEM:
        return TN_ENOMEM;
    default:
        return TN_EIO;
    }
}

static int exec(struct tn_sqlite_db *d, const char *sql, struct tn_errmsg *em)
{
    int rc = sqlite3_exec(d->db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        tn_errmsg_set(em, "sqlite \"%s\": %s", sql, sqlite3_errmsg(d->db));
    return map_rc(rc);
}

static int prepare(struct tn_sqlite_db *d, struct tn_errmsg *em)
{
    static const char upsert[] =
        "INSERT OR REPLACE INTO leases(name, owner_id, request_id, token,"
        " secret, ttl_ms, held, expires_at_ms, lock_delay_ms, principal, id)"
        " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
    static const char meta[] =
        "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)";
    static const char del[] = "DELETE FROM leases WHERE id = ?1";
    /* BEGIN and COMMIT too: each batch would otherwise parse them again. */
    if (sqlite3_prepare_v2(d->db, upsert, -1, &d->upsert, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(d->db, meta, -1, &d->meta, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(d->db, del, -1, &d->del, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(d->db, "BEGIN IMMEDIATE", -1, &d->begin, NULL) !=
            SQLITE_OK ||
        sqlite3_prepare_v2(d->db, "COMMIT", -1, &d->commit, NULL) !=
            SQLITE_OK) {
        tn_errmsg_set(em, "sqlite prepare: %s", sqlite3_errmsg(d->db));
        return TN_EIO;
    }
    return TN_OK;
}

static int set_meta_int(struct tn_sqlite_db *d, const char *key, int64_t v)
{
    sqlite3_reset(d->meta);
    sqlite3_bind_text(d->meta, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(d->meta, 2, v);
    return map_rc(sqlite3_step(d->meta));
}

static int set_meta_text(struct tn_sqlite_db *d, const char *key, const char *v)
{
    sqlite3_reset(d->meta);
    sqlite3_bind_text(d->meta, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(d->meta, 2, v, -1, SQLITE_STATIC);
    return map_rc(sqlite3_step(d->meta));
}

static int64_t schema_version(struct tn_sqlite_db *d)
{
    sqlite3_stmt *st = NULL;
    int64_t v = 0;
    if (sqlite3_prepare_v2(d->db,
                           "SELECT value FROM meta WHERE key='schema_version'",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Version 3 keys each lease row by an integer id that the server gives a
 * name once, instead of by the name: a new name's row is appended at the
 * end of the table's B-tree, where a batch of new names fills one or two
 * pages, instead of landing on one random leaf page per name (every
 * touched page is written to the WAL and synced).  There is no index on
 * name: names are unique in memory, and a load that meets two rows of one
 * name keeps the one with the higher token. */
static const char *const upgrade_v3 =
    "CREATE TABLE leases_v3("
    " id INTEGER PRIMARY KEY, name TEXT NOT NULL, owner_id TEXT NOT NULL,"
    " request_id TEXT, token INTEGER NOT NULL, secret BLOB NOT NULL,"
    " ttl_ms INTEGER NOT NULL, held INTEGER NOT NULL,"
    " expires_at_ms INTEGER NOT NULL, lock_delay_ms INTEGER NOT NULL,"
    " principal TEXT);"
    "INSERT INTO leases_v3(name, owner_id, request_id, token, secret, ttl_ms,"
    " held, expires_at_ms, lock_delay_ms, principal)"
    " SELECT name, owner_id, request_id, token, secret, ttl_ms, held,"
    " expires_at_ms, lock_delay_ms, principal FROM leases ORDER BY token;"
    "DROP TABLE leases;"
    "ALTER TABLE leases_v3 RENAME TO leases;";

/* Versioned upgrades, inside the caller's transaction, from the version
 * recorded in meta (0 for a new file, which schema_v1 just created).
 * Version 2 binds a grant to the principal that acquired it; version 3
 * keys rows by id; version 4 changes no table but means that the journal
 * next to the file may hold changes the file lacks (meta journal_gen), so
 * that a server older than the journal refuses the file instead of losing
 * them.  Version 5 changes no table either: the journal may hold
 * retirements (rows to delete) and meta holds retired_floor, the floor of
 * every name no longer in the file; an older server would bring retired
 * names back with a floor below it.  A file from a newer server is
 * refused: this one would write rows the newer one does not expect. */
static int upgrade(struct tn_sqlite_db *d, struct tn_errmsg *em)
{
    int64_t v = schema_version(d);
    int rc = TN_OK;
    if (v > TN_SQLITE_SCHEMA_VERSION) {
        tn_errmsg_set(em,
                      "the data file has schema version %lld; this tenured "
                      "knows versions up to %d: run a newer tenured",
                      (long long)v, TN_SQLITE_SCHEMA_VERSION);
        return TN_EINVAL;
    }
    if (v < 2)
        rc = exec(d, "ALTER TABLE leases ADD COLUMN principal TEXT", em);
    if (rc == 0 && v < 3)
        rc = exec(d, upgrade_v3, em);
    return rc;
}

static int64_t pragma_int(struct tn_sqlite_db *d, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Retired names delete rows; the file gives the pages back only with
 * auto_vacuum (INCREMENTAL = 2, tn_sqlite_db_shrink).  A new file gets it
 * before its first table; an older file is rebuilt once by VACUUM. */
static int set_auto_vacuum(struct tn_sqlite_db *d, struct tn_errmsg *em)
{
    int rc = exec(d, "PRAGMA auto_vacuum=INCREMENTAL", em);
    if (rc == 0 && pragma_int(d, "PRAGMA auto_vacuum") != 2) {
        tn_log(TN_LOG_INFO, "store",
               "\"rebuilding the data file once so "
               "that it can shrink\"");
        rc = exec(d, "VACUUM", em);
    }
    return rc;
}

static int configure(struct tn_sqlite_db *d, struct tn_errmsg *em)
{
    sqlite3_busy_timeout(d->db, 0);
    int rc = exec(d, "PRAGMA locking_mode=EXCLUSIVE", em);
    if (rc == 0)
        rc = exec(d, "PRAGMA journal_size_limit=16777216", em);
    if (rc == 0)
        rc = set_auto_vacuum(d, em);
    if (rc == 0)
        rc = exec(d, "PRAGMA journal_mode=WAL", em);
    if (rc == 0)
        rc = exec(d, "PRAGMA synchronous=FULL", em);
    if (rc == 0)
        rc = exec(d, "BEGIN IMMEDIATE", em);
    if (rc == 0)
        rc = exec(d, schema_v1, em);
    if (rc == 0)
        rc = upgrade(d, em);
    if (rc == 0)
        rc = prepare(d, em);
    if (rc == 0)
        rc = set_meta_int(d, "schema_version", TN_SQLITE_SCHEMA_VERSION);
    if (rc == 0)
        rc = exec(d, "COMMIT", em);
    return rc;
}

int tn_sqlite_db_open(const char *path, struct tn_sqlite_db **out,
                      struct tn_errmsg *em)
{
    *out = NULL;
    struct tn_sqlite_db *d = tn_calloc(1, sizeof(*d));
    if (d == NULL)
        return TN_ENOMEM;
    int rc = tn_clock_boot_id(d->boot_id);
    if (rc < 0)
        memcpy(d->boot_id, "unknown", 8);
    int flags =
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &d->db, flags, NULL) != SQLITE_OK) {
        tn_errmsg_set(em, "cannot open \"%s\": %s", path,
                      d->db ? sqlite3_errmsg(d->db) : "out of memory");
        tn_sqlite_db_close(d);
        return TN_EIO;
    }
    rc = configure(d, em);
    if (rc < 0) {
        tn_sqlite_db_close(d);
        return rc;
    }
    *out = d;
    return TN_OK;
}

void tn_sqlite_db_close(struct tn_sqlite_db *d)
{
    if (d == NULL)
        return;
    sqlite3_finalize(d->upsert);
    sqlite3_finalize(d->del);
    sqlite3_finalize(d->meta);
    sqlite3_finalize(d->begin);
    sqlite3_finalize(d->commit);
    sqlite3_close(d->db);
    tn_free(d);
}

int tn_sqlite_db_meta(struct tn_sqlite_db *d, struct tn_sqlite_meta *m)
{
    sqlite3_stmt *st = NULL;
    memset(m, 0, sizeof(*m));
    if (sqlite3_prepare_v2(d->db, "SELECT key, value FROM meta", -1, &st,
                           NULL) != SQLITE_OK)
        return TN_EIO;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0);
        if (strcmp(k, "last_token") == 0)
            m->last_token = (uint64_t)sqlite3_column_int64(st, 1);
        if (strcmp(k, "alive_at_ms") == 0)
            m->alive_at_ms = sqlite3_column_int64(st, 1);
        if (strcmp(k, "journal_gen") == 0)
            m->journal_gen = (uint64_t)sqlite3_column_int64(st, 1);
        if (strcmp(k, "retired_floor") == 0)
            m->retired_floor = (uint64_t)sqlite3_column_int64(st, 1);
        if (strcmp(k, "boot_id") == 0) {
            const char *v = (const char *)sqlite3_column_text(st, 1);
            m->same_boot = v != NULL && strcmp(v, d->boot_id) == 0;
        }
    }
    sqlite3_finalize(st);
    return map_rc(rc);
}

/* Apply the restart rule to a held row's expiry.  A row whose expiry was
 * recorded (docs/SAFETY.md section 8: its end may have been revealed)
 * stays ended: within one boot its stored instant is exact and already
 * past; after a reboot it means nothing, and the end is put at the
 * restart, so that a lock delay counts from there. */
static void restart_expiry(struct tn_lease_entry *img, int64_t now_ms,
                           const struct tn_sqlite_meta *m, bool exact)
{
    if (!img->held || exact)
        return;
    if (img->expiry_noted) {
        if (!m->same_boot || img->expires_at_ms > now_ms)
            img->expires_at_ms = now_ms;
        return;
    }
    if (m->same_boot && img->expires_at_ms <= m->alive_at_ms)
        return; /* expired while the server was still alive */
    img->expires_at_ms = now_ms + img->ttl_ms;
}

static void row_to_image(sqlite3_stmt *st, struct tn_lease_entry *img)
{
    memset(img, 0, sizeof(*img));
    img->name = (char *)sqlite3_column_text(st, 0);
    img->name_len = (uint32_t)sqlite3_column_bytes(st, 0);
    img->owner_id = (char *)sqlite3_column_text(st, 1);
    img->request_id = (char *)sqlite3_column_text(st, 2);
    img->token = (uint64_t)sqlite3_column_int64(st, 3);
    const void *sec = sqlite3_column_blob(st, 4);
    if (sec != NULL && sqlite3_column_bytes(st, 4) == TN_SECRET_BYTES)
        memcpy(img->secret, sec, TN_SECRET_BYTES);
    img->ttl_ms = sqlite3_column_int64(st, 5);
    img->held = sqlite3_column_int(st, 6) != 0;
    img->expiry_noted = sqlite3_column_int(st, 6) == 2;
    img->expires_at_ms = sqlite3_column_int64(st, 7);
    img->lock_delay_ms = sqlite3_column_int64(st, 8);
    img->principal = (char *)sqlite3_column_text(st, 9);
}

/* A second row of a name already loaded (only a bug, or an older server
 * writing a newer file, docs/ARCHITECTURE.md, could make one).  The higher
 * token is the later state: every grant of a name has a higher token than
 * the last.  Rows of one token differ only in what became of that grant;
 * keep the one that holds it longest (held over released, then the later
 * expiry, both after the restart rule): a hold kept too long only delays
 * the next grant, one cut short could let two holders overlap. */
static bool superseded(const struct tn_lease_entry *old,
                       const struct tn_lease_entry *img)
{
    tn_log(TN_LOG_WARN, "store",
           "\"two rows of one lease, keeping the later grant\" ids=%u,%u "
           "tokens=%llu,%llu",
           old->row_id, img->row_id, (unsigned long long)old->token,
           (unsigned long long)img->token);
    if (old->token != img->token)
        return old->token > img->token;
    if (old->held != img->held)
        return old->held;
    return old->expires_at_ms >= img->expires_at_ms;
}

/* Bytes of the file mapped for the load (the file may be larger: the rest
 * is read as usual). */
#define LOAD_MMAP_BYTES "1073741824"

/* Rows staged before the oldest is linked: a row's bucket is fetched
 * when it is staged, the first entry of its chain AHEAD / 2 rows later,
 * and it is linked AHEAD rows later, so that a row costs no wait on a
 * cache miss in the bucket array (8 MiB for a million names). */
#define AHEAD 16

struct load {
    struct tn_lease_table *t;
    const struct tn_sqlite_load_hook *hook;
    struct tn_lease_entry *ring[AHEAD]; /* staged, oldest at n % AHEAD */
    size_t n;                           /* rows staged so far */
    size_t linked;                      /* of them, linked (or dropped) */
};

/* Put the oldest staged row into the table. */
static int link_oldest(struct load *ld)
{
    struct tn_lease_table *t = ld->t;
    struct tn_lease_entry *l = ld->ring[ld->linked++ % AHEAD];
    struct tn_lease_entry *old = tn_lease_stage_link(t, l);
    if (old != NULL) {
        struct tn_lease_entry *kept;
        if (superseded(old, l)) {
            tn_lease_discard(t, l);
            return TN_OK;
        }
        int rc = tn_lease_restore(t, l, &kept);
        old->row_id = l->row_id;
        old->expiry_noted = l->expiry_noted;
        tn_lease_discard(t, l);
        if (rc < 0)
            return rc;
        l = kept;
    }
    if (l->row_id > t->last_row_id)
        t->last_row_id = l->row_id;
    if (ld->hook != NULL)
        ld->hook->loaded(ld->hook->ctx, l);
    return TN_OK;
}

static int stage_row(struct load *ld, sqlite3_stmt *st, int64_t now_ms,
                     const struct tn_sqlite_meta *m, bool exact)
{
    struct tn_lease_entry img;
    row_to_image(st, &img);
    sqlite3_int64 id = sqlite3_column_int64(st, 10);
    if (id <= 0 || id > UINT32_MAX)
        return TN_EIO; /* not a row this server wrote */
    img.row_id = (uint32_t)id;
    restart_expiry(&img, now_ms, m, exact);
    if (ld->n - ld->linked == AHEAD) {
        int rc = link_oldest(ld);
        if (rc < 0)
            return rc;
    }
    struct tn_lease_entry *l = tn_lease_stage(ld->t, &img);
    if (l == NULL)
        return TN_ENOMEM;
    l->row_id = img.row_id;
    l->expiry_noted = img.expiry_noted;
    ld->ring[ld->n++ % AHEAD] = l;
    if (ld->n - ld->linked > AHEAD / 2) {
        const struct tn_lease_entry *mid =
            ld->ring[(ld->n - AHEAD / 2 - 1) % AHEAD];
        tn_lease_prefetch(ld->t, mid->hash, true);
    }
    return TN_OK;
}

static int load_rows(struct tn_sqlite_db *d, struct tn_lease_table *t,
                     int64_t now_ms, const struct tn_sqlite_meta *m, bool exact,
                     const struct tn_sqlite_load_hook *hook)
{
    int64_t rows = pragma_int(d, "SELECT count(*) FROM leases");
    if (rows > 0)
        tn_lease_table_reserve(t, (size_t)rows);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(d->db,
                           "SELECT name, owner_id, request_id, token, secret,"
                           " ttl_ms, held, expires_at_ms, lock_delay_ms,"
                           " principal, id FROM leases",
                           -1, &st, NULL) != SQLITE_OK)
        return TN_EIO;
    struct load ld = {.t = t, .hook = hook};
    int rc = TN_OK, step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc = stage_row(&ld, st, now_ms, m, exact);
    if (rc == 0)
        rc = map_rc(step);
    while (rc == 0 && ld.linked < ld.n)
        rc = link_oldest(&ld);
    while (ld.linked < ld.n) /* after an error: free what was staged */
        tn_lease_discard(t, ld.ring[ld.linked++ % AHEAD]);
    sqlite3_finalize(st);
    return rc;
}

int tn_sqlite_db_load(struct tn_sqlite_db *d, struct tn_lease_table *t,
                      int64_t now_ms, bool exact,
                      const struct tn_sqlite_load_hook *hook,
                      struct tn_errmsg *em)
{
    struct tn_sqlite_meta m;
    int rc = tn_sqlite_db_meta(d, &m);
    /* The count and the scan read every page once: mapped, they cost no
     * read(2) and no copy per page.  Only for the load: writes and the
     * rest keep SQLite's defaults. */
    (void)sqlite3_exec(d->db, "PRAGMA mmap_size=" LOAD_MMAP_BYTES, NULL, NULL,
                       NULL);
    if (rc == 0)
        rc = load_rows(d, t, now_ms, &m, exact, hook);
    if (rc < 0)
        tn_errmsg_set(em, "loading leases: %s", sqlite3_errmsg(d->db));
    (void)sqlite3_exec(d->db, "PRAGMA mmap_size=0", NULL, NULL, NULL);
    if (rc < 0)
        return rc;
    if (m.last_token > t->last_token)
        t->last_token = m.last_token;
    t->retired_floor = m.retired_floor;
    if (m.retired_floor > t->last_token)
        t->last_token = m.retired_floor; /* cannot happen; never go below */
    rc = exec(d, "BEGIN IMMEDIATE", em);
    if (rc == 0)
        rc = set_meta_text(d, "boot_id", d->boot_id);
    if (rc == 0)
        rc = exec(d, "COMMIT", em);
    else
        (void)exec(d, "ROLLBACK", NULL);
    return rc;
}

static int write_row(struct tn_sqlite_db *d, const struct tn_batch *b,
                     const struct tn_row *r)
{
    sqlite3_stmt *st = d->upsert;
    const char *rid = tn_batch_str(b, r->rid_off);
    sqlite3_reset(st);
    TN_ASSERT(r->row_id != 0);
    sqlite3_bind_text(st, 1, tn_batch_str(b, r->name_off), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, tn_batch_str(b, r->owner_off), -1, SQLITE_STATIC);
    if (rid != NULL)
        sqlite3_bind_text(st, 3, rid, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 3);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)r->token);
    sqlite3_bind_blob(st, 5, r->secret, TN_SECRET_BYTES, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, r->ttl_ms);
    /* 0 released, 1 held, 2 held and its expiry recorded (an older server
     * reads 2 as held). */
    sqlite3_bind_int(st, 7, r->held ? (r->ended ? 2 : 1) : 0);
    sqlite3_bind_int64(st, 8, r->expires_at_ms);
    sqlite3_bind_int64(st, 9, r->lock_delay_ms);
    const char *who = tn_batch_str(b, r->principal_off);
    if (who != NULL)
        sqlite3_bind_text(st, 10, who, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 10);
    sqlite3_bind_int64(st, 11, r->row_id);
    return map_rc(sqlite3_step(st));
}

/* Run a prepared statement that returns no rows. */
static int step_once(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return map_rc(rc);
}

int tn_sqlite_db_begin(struct tn_sqlite_db *d)
{
    return step_once(d->begin);
}

int tn_sqlite_db_put_row(struct tn_sqlite_db *d, const struct tn_batch *b,
                         size_t i)
{
    const struct tn_row *r = &b->rows[i];
    if (!r->retired)
        return write_row(d, b, r);
    sqlite3_reset(d->del);
    sqlite3_bind_int64(d->del, 1, r->row_id);
    return map_rc(sqlite3_step(d->del));
}

int tn_sqlite_db_commit(struct tn_sqlite_db *d, uint64_t last_token,
                        int64_t alive_at_ms, uint64_t journal_gen,
                        uint64_t retired_floor)
{
    int rc = set_meta_int(d, "last_token", (int64_t)last_token);
    if (rc == 0 && retired_floor > 0)
        rc = set_meta_int(d, "retired_floor", (int64_t)retired_floor);
    if (rc == 0)
        rc = set_meta_int(d, "alive_at_ms", alive_at_ms);
    if (rc == 0)
        rc = set_meta_int(d, "journal_gen", (int64_t)journal_gen);
    if (rc == 0)
        rc = step_once(d->commit);
    if (rc < 0) {
        tn_log(TN_LOG_ERROR, "store", "\"commit failed\" err=\"%s\"",
               sqlite3_errmsg(d->db));
        tn_sqlite_db_rollback(d);
    }
    return rc;
}

/* Free pages worth giving back (4 KiB each): below this, keep them for
 * the next rows. */
#define SHRINK_PAGES 64

void tn_sqlite_db_shrink(struct tn_sqlite_db *d)
{
    if (pragma_int(d, "PRAGMA freelist_count") < SHRINK_PAGES)
        return;
    if (sqlite3_exec(d->db, "PRAGMA incremental_vacuum", NULL, NULL, NULL) !=
            SQLITE_OK ||
        sqlite3_exec(d->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL,
                     NULL) != SQLITE_OK)
        tn_log(TN_LOG_WARN, "store",
               "\"could not shrink the data file\" "
               "detail=\"%s\"",
               sqlite3_errmsg(d->db));
}

void tn_sqlite_db_rollback(struct tn_sqlite_db *d)
{
    if (!sqlite3_get_autocommit(d->db))
        (void)sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
}
