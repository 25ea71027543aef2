/* SPDX-License-Identifier: MIT */
/* tenure-migrate --data-dir DIR --to postgresql://...: move an embedded
 * store into PostgreSQL.  Takes the data dir's lock (tenured must be
 * stopped), loads the table with the restart rule (a lease that may be
 * live keeps its full TTL, counted from now), creates or upgrades the
 * PostgreSQL schema with the store's own migrations, then in one
 * transaction, under the table locks the store takes at start-up, copies
 * every lease (floor token, secret, remaining TTL, lock delay, request id)
 * and lifts lease_token_seq above every token the embedded store issued.
 * Refuses a target that already holds leases.  Exit 0 done, 1 failed, 2
 * bad usage. */
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <tenure/err.h>

#include "common/clock.h"
#include "common/opt.h"
#include "common/rand.h"
#include "lease/lease.h"
#include "store/embedded/disk.h"
#include "store/pg/sql.h"

#define INSERT_LEASE                                                           \
    "INSERT INTO leases (name, owner_id, expires_at, fencing_token, secret,"   \
    " ttl_ms, lock_delay_ms, request_id, released) VALUES ($1, $2,"            \
    " now() + $3::bigint * interval '1 millisecond', $4, $5, $6, $7, $8, $9)"
#define INSERT_GRANT                                                           \
    "INSERT INTO lease_grants (token, name, owner_id, ttl_ms, granted_at)"     \
    " VALUES ($1, $2, $3, $4, now()) ON CONFLICT (token) DO NOTHING"

static void quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static bool exec_ok(PGconn *db, const char *sql, PGresult **keep)
{
    PGresult *r = PQexec(db, sql);
    ExecStatusType st = PQresultStatus(r);
    bool ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
    if (!ok)
        fprintf(stderr, "tenure-migrate: %s", PQresultErrorMessage(r));
    if (ok && keep != NULL)
        *keep = r;
    else
        PQclear(r);
    return ok;
}

/* The store's own migrations, under its advisory lock (held until the
 * session ends). */
static bool migrate_schema(PGconn *db)
{
    PGresult *r = NULL;
    if (!exec_ok(db, tn_pg_sql_session, NULL) ||
        !exec_ok(db, tn_pg_sql_version, &r))
        return false;
    long version = strtol(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    for (size_t i = 0; i < tn_pg_n_migrations; i++) {
        const struct tn_pg_migration *m = &tn_pg_migrations[i];
        if (m->version <= version)
            continue;
        char done[128];
        (void)snprintf(done, sizeof(done),
                       "INSERT INTO tenure_schema_version (version) "
                       "VALUES (%d); COMMIT",
                       m->version);
        if (!exec_ok(db, "BEGIN", NULL) || !exec_ok(db, m->sql, NULL) ||
            !exec_ok(db, done, NULL))
            return false;
    }
    return true;
}

static bool copy_one(PGconn *db, const struct tn_lease_entry *l, int64_t now_ms)
{
    char rest[24];
    char tok[24];
    char ttl[24];
    char delay[24];
    char secret[3 + 2 * TN_SECRET_BYTES] = "\\x";
    /* A lease under a session moves as a lease of its own that runs to
     * its session's expiry (the PostgreSQL store gets no session from
     * here): held at least as long as before, never longer than a renew
     * of the session could have kept it. */
    int64_t left = l->held ? tn_lease_expires_at(l) - now_ms : 0;
    (void)snprintf(rest, sizeof(rest), "%lld", (long long)left);
    (void)snprintf(tok, sizeof(tok), "%llu", (unsigned long long)l->token);
    (void)snprintf(
        ttl, sizeof(ttl), "%lld",
        (long long)(l->session != NULL ? l->session->ttl_ms : l->ttl_ms));
    (void)snprintf(delay, sizeof(delay), "%lld", (long long)l->lock_delay_ms);
    tn_hex_encode(l->secret, TN_SECRET_BYTES, secret + 2);
    const char *owner = l->owner_id != NULL ? l->owner_id : "";
    const char *lv[] = {l->name, owner,         rest,
                        tok,     secret,        ttl,
                        delay,   l->request_id, l->held ? "false" : "true"};
    PGresult *r = PQexecParams(db, INSERT_LEASE, 9, NULL, lv, NULL, NULL, 0);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok)
        fprintf(stderr, "tenure-migrate: \"%s\": %s", l->name,
                PQresultErrorMessage(r));
    PQclear(r);
    if (!ok)
        return false;
    const char *gv[] = {tok, l->name, owner, ttl};
    r = PQexecParams(db, INSERT_GRANT, 4, NULL, gv, NULL, NULL, 0);
    ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok)
        fprintf(stderr, "tenure-migrate: %s", PQresultErrorMessage(r));
    PQclear(r);
    return ok;
}

/* Every lease, then the sequence, in the caller's transaction. */
struct copy_walk {
    PGconn *db;
    int64_t now_ms;
    size_t live; /* live leases copied */
    bool ok;     /* every copy succeeded */
};

static bool copy_each(const struct tn_lease_entry *l, void *ctx)
{
    struct copy_walk *w = ctx;
    if (!copy_one(w->db, l, w->now_ms))
        return w->ok = false;
    w->live += tn_lease_is_live(l, w->now_ms);
    return true;
}

static bool copy_table(PGconn *db, const struct tn_lease_table *t,
                       int64_t now_ms, size_t *live_out)
{
    PGresult *r = NULL;
    if (!exec_ok(db, "SELECT count(*) FROM leases", &r))
        return false;
    bool empty = strcmp(PQgetvalue(r, 0, 0), "0") == 0;
    PQclear(r);
    if (!empty) {
        fprintf(stderr, "tenure-migrate: the target already holds leases\n");
        return false;
    }
    struct copy_walk w = {.db = db, .now_ms = now_ms, .ok = true};
    tn_lease_each(t, copy_each, &w);
    if (!w.ok)
        return false;
    *live_out += w.live;
    if (t->last_token == 0)
        return true;
    char sql[256];
    (void)snprintf(sql, sizeof(sql),
                   "SELECT setval('lease_token_seq', greatest(%llu,"
                   " (SELECT CASE WHEN is_called THEN last_value"
                   " ELSE last_value - 1 END FROM lease_token_seq)))",
                   (unsigned long long)t->last_token);
    if (!exec_ok(db, sql, NULL))
        return false;
    /* Names the embedded store retired keep answering its retired floor
     * (docs/safety/retired-names.md). */
    (void)snprintf(sql, sizeof(sql),
                   "UPDATE tenure_retired SET floor = greatest(floor, %llu)",
                   (unsigned long long)t->retired_floor);
    return exec_ok(db, sql, NULL);
}

static int lock_dir(const char *dir)
{
    char path[4096];
    (void)snprintf(path, sizeof(path), "%s/LOCK", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "tenure-migrate: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        fprintf(stderr, "tenure-migrate: %s is in use (stop tenured first)\n",
                dir);
        (void)close(fd);
        return -1;
    }
    return fd;
}

static int load(const char *dir, struct tn_lease_table *t, int64_t now_ms)
{
    char path[4096];
    (void)snprintf(path, sizeof(path), "%s/tenure.db", dir);
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "tenure-migrate: no embedded store at %s\n", path);
        return TN_EINVAL;
    }
    struct tn_errmsg em = {{0}};
    struct tn_disk *disk = NULL;
    int rc = tn_disk_open(dir, 0, &disk, &em); /* applies the journal */
    if (rc == 0)
        rc = tn_lease_table_init(t, 1024);
    if (rc == 0)
        rc = tn_disk_load(disk, t, now_ms, false, &em);
    tn_disk_close(disk);
    if (rc < 0)
        fprintf(stderr, "tenure-migrate: cannot load %s: %s\n", path, em.text);
    return rc;
}

static int run(const char *dir, const char *url)
{
    int lockfd = lock_dir(dir);
    if (lockfd < 0)
        return 1;
    struct tn_lease_table t = {0};
    int64_t now_ms = tn_clock_now_ms();
    int rc = load(dir, &t, now_ms);
    PGconn *db = rc == 0 ? PQconnectdb(url) : NULL;
    if (db != NULL && PQstatus(db) != CONNECTION_OK) {
        fprintf(stderr, "tenure-migrate: %s", PQerrorMessage(db));
        rc = TN_EUNAVAIL;
    }
    size_t live = 0;
    if (rc == 0) {
        PQsetNoticeProcessor(db, quiet, NULL);
        bool ok = migrate_schema(db) && exec_ok(db, "BEGIN", NULL) &&
                  exec_ok(db,
                          "LOCK TABLE leases, lease_grants IN SHARE ROW "
                          "EXCLUSIVE MODE",
                          NULL) &&
                  copy_table(db, &t, tn_clock_now_ms(), &live) &&
                  exec_ok(db, "COMMIT", NULL);
        rc = ok ? 0 : TN_EIO;
    }
    if (rc == 0)
        printf("migrated %zu leases (%zu live), tokens continue above %llu\n",
               tn_lease_table_count(&t), live,
               (unsigned long long)t.last_token);
    PQfinish(db);
    tn_lease_table_release(&t);
    (void)close(lockfd);
    return rc == 0 ? 0 : 1;
}

struct migrate_args {
    const char *data_dir; /* --data-dir */
    const char *to;       /* --to */
};

#define AT(f) TN_OPT_AT(struct migrate_args, f)
static const struct tn_opt options[] = {
    {.name = "data-dir",
     .type = TN_OPT_STR,
     AT(data_dir),
     .flags = TN_OPT_REQUIRED | TN_OPT_NONEMPTY,
     .arg = "DIR",
     .help = "the embedded store to move (tenured's --data-dir); tenured "
             "must be stopped"},
    {.name = "to",
     .type = TN_OPT_STR,
     AT(to),
     .flags = TN_OPT_REQUIRED | TN_OPT_NONEMPTY,
     .arg = "URL",
     .help = "the target PostgreSQL database (a libpq connection string); "
             "one that already holds leases is refused"},
    {.name = "help",
     .short_name = 'h',
     .type = TN_OPT_ACTION,
     .help = "this text"},
};

static void usage(FILE *out)
{
    static const struct tn_opt_help h = {
        "usage: tenure-migrate --data-dir DIR --to postgresql://...\n",
        "Move a stopped embedded store into PostgreSQL, live leases "
        "included;\ntokens continue above every token issued before "
        "(docs/OPERATIONS.md).\n",
        "Exit: 0 migrated, 1 error, 2 usage.\n"};
    const struct tn_opt_table t = TN_OPT_TABLE(options, NULL);
    tn_opt_help(out, &h, &t);
}

int main(int argc, char **argv)
{
    struct migrate_args a = {NULL, NULL};
    const struct tn_opt_table t = TN_OPT_TABLE(options, &a);
    struct tn_opt_parser p;
    struct tn_errmsg em = {{0}};
    tn_opt_parser_init(&p, TN_OPT_NO_OPERANDS);
    tn_opt_parser_add(&p, &t);
    if (tn_opt_parse(&p, argc, argv, &em) < 0) {
        fprintf(stderr, "tenure-migrate: %s\n", em.text);
        return 2;
    }
    if (p.action != NULL) {
        usage(stdout);
        return 0;
    }
    return run(a.data_dir, a.to);
}
