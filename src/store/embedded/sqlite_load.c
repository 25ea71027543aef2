/* SPDX-License-Identifier: MIT */
/* Loading the embedded store's file into the lease table (sqlite.h's
 * tn_sqlite_db_load): sessions first, then every lease row, each under
 * the restart rule of CONTRACT section 4.5 and the recorded ends of
 * docs/safety/revealed-end.md.  A lease row under a session has no expiry of
 * its own: it goes on its session's list, and the session's row alone
 * says whether it may be live (docs/SESSIONS.md). */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "lease/lease.h"
#include "store/embedded/sqlite.h"
#include "store/embedded/sqlite_int.h"

/* The sessions a load has put in the table, by row id (sorted), so that a
 * lease row finds its session by the id it names. */
struct by_row {
    struct tn_session **v; /* n of them, by row_id */
    size_t n;
    size_t cap;
};

static int by_row_cmp(const void *a, const void *b)
{
    uint32_t x = (*(struct tn_session *const *)a)->row_id;
    uint32_t y = (*(struct tn_session *const *)b)->row_id;
    return x < y ? -1 : x > y;
}

static struct tn_session *session_of_row(const struct by_row *br, uint32_t id)
{
    size_t lo = 0, hi = br->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (br->v[mid]->row_id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < br->n && br->v[lo]->row_id == id ? br->v[lo] : NULL;
}

/* The restart rule for a session, as for a lease's expiry: an end that
 * was recorded stays (within one boot at its exact instant, after a
 * reboot at the restart, so that lock delays count from there); a session
 * that may have been live at the crash gets its full TTL from now_ms,
 * unless, within one boot, its expiry was not after the last sign of
 * life (it ran out while the server was running). */
static void restart_session(struct tn_session *img, int64_t now_ms,
                            const struct tn_sqlite_meta *m, bool exact)
{
    if (exact)
        return;
    if (img->end != TN_SESSION_LIVE) {
        if (!m->same_boot || img->ended_at_ms > now_ms)
            img->ended_at_ms = now_ms;
        return;
    }
    if (m->same_boot && img->expires_at_ms <= m->alive_at_ms)
        return; /* expired while the server was still alive */
    img->expires_at_ms = now_ms + img->ttl_ms;
}

/* One session row into the table (and br). */
static int load_session(sqlite3_stmt *st, struct tn_lease_table *t,
                        struct by_row *br, int64_t now_ms,
                        const struct tn_sqlite_meta *m, bool exact)
{
    struct tn_session img;
    memset(&img, 0, sizeof(img));
    sqlite3_int64 id = sqlite3_column_int64(st, 0);
    const char *sid = (const char *)sqlite3_column_text(st, 1);
    const void *sec = sqlite3_column_blob(st, 4);
    int end = sqlite3_column_int(st, 7);
    if (id <= 0 || id > UINT32_MAX || sid == NULL ||
        strlen(sid) != TN_SESSION_ID_LEN || sec == NULL ||
        sqlite3_column_bytes(st, 4) != TN_SESSION_SECRET_BYTES || end < 0 ||
        end > TN_SESSION_REVOKED)
        return TN_EIO; /* not a row this server wrote */
    img.row_id = (uint32_t)id;
    memcpy(img.id, sid, TN_SESSION_ID_LEN);
    img.owner_id = (char *)sqlite3_column_text(st, 2);
    img.principal = (char *)sqlite3_column_text(st, 3);
    memcpy(img.secret, sec, TN_SESSION_SECRET_BYTES);
    img.ttl_ms = sqlite3_column_int64(st, 5);
    img.expires_at_ms = sqlite3_column_int64(st, 6);
    img.end = (enum tn_session_end)end;
    img.ended_at_ms = sqlite3_column_int64(st, 8);
    if (img.owner_id == NULL)
        return TN_EIO;
    restart_session(&img, now_ms, m, exact);
    if (br->n == br->cap) {
        size_t cap = br->cap < 64 ? 64 : br->cap * 2;
        struct tn_session **v = tn_reallocarray(br->v, cap, sizeof(*v));
        if (v == NULL)
            return TN_ENOMEM;
        br->v = v;
        br->cap = cap;
    }
    int rc = tn_session_restore(t, &img, &br->v[br->n]);
    if (rc == 0)
        br->n++;
    return rc == TN_ECONFLICT ? TN_EIO : rc;
}

static int load_sessions(struct tn_sqlite_db *d, struct tn_lease_table *t,
                         struct by_row *br, int64_t now_ms,
                         const struct tn_sqlite_meta *m, bool exact)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(d->db,
                           "SELECT id, session_id, owner_id, principal, secret,"
                           " ttl_ms, expires_at_ms, ended, ended_at_ms"
                           " FROM sessions",
                           -1, &st, NULL) != SQLITE_OK)
        return TN_EIO;
    int rc = TN_OK, step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc = load_session(st, t, br, now_ms, m, exact);
    if (rc == 0)
        rc = tn_sqlite_map_rc(step);
    sqlite3_finalize(st);
    if (rc == 0 && br->n > 0)
        qsort(br->v, br->n, sizeof(*br->v), by_row_cmp);
    return rc;
}

/* Apply the restart rule to a held row's expiry.  A row whose expiry was
 * recorded (docs/safety/revealed-end.md: its end may have been revealed)
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

/* A held lease row that names a session: it has no expiry of its own
 * (the session's counts), so no restart rule applies to it; it goes on
 * the session's list when it is linked (link_oldest), whatever the
 * session's state.  A row naming a session the file does not hold (no
 * server writes one: the session's row goes only after each of its
 * leases was written without it) ended at the restart: never revived. */
static void under_session(struct tn_lease_entry *img, const struct by_row *br,
                          uint32_t session_row, int64_t now_ms)
{
    img->session = session_of_row(br, session_row);
    if (img->session != NULL) {
        img->expires_at_ms = TN_LEASE_NO_EXPIRY;
        return;
    }
    tn_log(TN_LOG_WARN, "store",
           "\"a lease row names a session the file does not hold, ending "
           "it\" lease=\"%s\" session_row=%u",
           img->name, session_row);
    img->expiry_noted = true;
    img->expires_at_ms = now_ms;
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
    const struct by_row *sessions; /* the sessions loaded, by row id */
    const struct tn_sqlite_load_hook *hook;
    struct tn_lease_entry *ring[AHEAD]; /* staged, oldest at n % AHEAD */
    size_t n;                           /* rows staged so far */
    size_t linked;                      /* of them, linked (or dropped) */
};

/* Put the oldest staged row into the table, on its session's list when
 * it names one (stage_row left the session in l->session, not linked). */
static int link_oldest(struct load *ld)
{
    struct tn_lease_table *t = ld->t;
    struct tn_lease_entry *l = ld->ring[ld->linked++ % AHEAD];
    struct tn_session *s = l->session;
    l->session = NULL;
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
    if (s != NULL && l->held)
        tn_lease_attach(l, s);
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
    sqlite3_int64 sid = sqlite3_column_int64(st, 11); /* NULL reads 0 */
    if (id <= 0 || id > UINT32_MAX || sid < 0 || sid > UINT32_MAX)
        return TN_EIO; /* not a row this server wrote */
    img.row_id = (uint32_t)id;
    if (sid != 0 && img.held && !img.expiry_noted)
        under_session(&img, ld->sessions, (uint32_t)sid, now_ms);
    else
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
    l->session = img.session; /* linked to it by link_oldest */
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
                     const struct tn_sqlite_load_hook *hook,
                     const struct by_row *sessions)
{
    int64_t rows = tn_sqlite_pragma_int(d, "SELECT count(*) FROM leases");
    if (rows > 0)
        tn_lease_table_reserve(t, (size_t)rows);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(d->db,
                           "SELECT name, owner_id, request_id, token, secret,"
                           " ttl_ms, held, expires_at_ms, lock_delay_ms,"
                           " principal, id, session FROM leases",
                           -1, &st, NULL) != SQLITE_OK)
        return TN_EIO;
    struct load ld = {.t = t, .hook = hook, .sessions = sessions};
    int rc = TN_OK, step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc = stage_row(&ld, st, now_ms, m, exact);
    if (rc == 0)
        rc = tn_sqlite_map_rc(step);
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
    struct by_row sessions = {0};
    if (rc == 0)
        rc = load_sessions(d, t, &sessions, now_ms, &m, exact);
    if (rc == 0)
        rc = load_rows(d, t, now_ms, &m, exact, hook, &sessions);
    tn_free(sessions.v);
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
    rc = tn_sqlite_exec(d, "BEGIN IMMEDIATE", em);
    if (rc == 0)
        rc = tn_sqlite_set_meta_text(d, "boot_id", d->boot_id);
    if (rc == 0)
        rc = tn_sqlite_exec(d, "COMMIT", em);
    else
        (void)tn_sqlite_exec(d, "ROLLBACK", NULL);
    return rc;
}
