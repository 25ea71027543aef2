/* SPDX-License-Identifier: MIT */
/* The store contract's PostgreSQL-only cases: the sequence lifted above a
 * stored token on start, concurrent migrations, a database that is down or
 * breaks with statements in flight, a slow acquirer behind a row lock, a
 * LISTEN connection that cannot get in at the start (the order of one
 * name's events is in contract_pg_order.c); and the admin connections
 * those cases share (contract_pg.h). */
#include "contract_pg.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/rand.h"
#include "contract.h"
#include "store/pg/pg.h"
#include "store/pg/sql.h"

static void quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

PGconn *admin_at(const char *url)
{
    PGconn *c = PQconnectdb(url);
    PQsetNoticeProcessor(c, quiet, NULL);
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "admin connection: %s", PQerrorMessage(c));
        PQfinish(c);
        return NULL;
    }
    return c;
}

PGconn *admin(void)
{
    return admin_at(E.url);
}

bool exec_ok(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK ||
              PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok)
        fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    return ok;
}

/* Begin a transaction on db that holds the row of name locked (FOR
 * UPDATE). */
bool lock_row(PGconn *db, const char *name)
{
    char sql[512];
    (void)snprintf(sql, sizeof(sql),
                   "BEGIN; SELECT 1 FROM leases WHERE name = '%s' FOR UPDATE",
                   name);
    return exec_ok(db, sql);
}

/* An admin connection whose open transaction holds the row of name
 * locked, or NULL. */
static PGconn *hold_row(const char *name)
{
    PGconn *db = admin();
    if (db != NULL && !lock_row(db, name)) {
        PQfinish(db);
        return NULL;
    }
    return db;
}

/* An admin connection whose open transaction plays a renew in flight:
 * it has extended the rows of the names in `names` (an SQL list of
 * literals) by 60 s and holds them until COMMIT; or NULL. */
static PGconn *renew_in_flight(const char *names)
{
    char sql[512];
    (void)snprintf(sql, sizeof(sql),
                   "BEGIN; UPDATE leases SET expires_at = now()"
                   " + interval '60 s' WHERE name IN (%s)",
                   names);
    PGconn *db = admin();
    if (db != NULL && !exec_ok(db, sql)) {
        PQfinish(db);
        return NULL;
    }
    return db;
}

int open_pg(const char *url, struct tn_store **out)
{
    return open_url(url, NULL, out);
}

/* A URL for the same database with search_path set to schema. */
void url_with_schema(const char *schema, char *out, size_t cap)
{
    (void)snprintf(out, cap, "%s%coptions=-csearch_path%%3D%s", E.url,
                   strchr(E.url, '?') != NULL ? '&' : '?', schema);
}

/* The first column of the first row of sql on mon as a number, -1 on
 * error. */
long long mon_number(PGconn *mon, const char *sql)
{
    PGresult *r = PQexec(mon, sql);
    long long v = -1;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
        v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    else
        fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    return v;
}

/* Run the loop until sql on mon returns want, or ms pass. */
bool poll_until(PGconn *mon, const char *sql, long long want, int64_t ms)
{
    int64_t until = tn_clock_now_ms() + ms;
    for (;;) {
        if (mon_number(mon, sql) == want)
            return true;
        if (tn_clock_now_ms() >= until)
            return false;
        run_for(10);
    }
}

/* Restarting over a row whose token is above the sequence (restored from
 * a backup, migrated) lifts the sequence above it. */
void case_pg_sequence_lifted(void)
{
    struct call a;
    CHECK_RC(acquire(&a, nm("seq"), "o1", 60000, NULL, 0), TN_OK);
    PGconn *db = admin();
    CHECK(db != NULL);
    char sql[512];
    uint64_t high = a.res.lease.token + 100000;
    (void)snprintf(sql, sizeof(sql),
                   "UPDATE leases SET fencing_token = %llu, released = true"
                   " WHERE name = '%s'",
                   (unsigned long long)high, nm("seq"));
    bool ok = exec_ok(db, sql);
    PQfinish(db);
    CHECK(ok);
    E.s->ops->close(E.s);
    CHECK_RC(open_pg(E.url, &E.s), TN_OK);
    CHECK(wait_ready(E.s, 10000));
    CHECK_RC(acquire(&a, nm("seq2"), "o1", 5000, NULL, 0), TN_OK);
    CHECK(a.res.lease.token > high);
}

/* Three stores migrating a fresh schema at once: the advisory lock makes
 * them take turns; all end ready on version 2. */
void case_pg_concurrent_migrations(void)
{
    char schema[64];
    (void)snprintf(schema, sizeof(schema), "ct_%d", (int)getpid());
    PGconn *db = admin();
    CHECK(db != NULL);
    char sql[256];
    (void)snprintf(sql, sizeof(sql),
                   "DROP SCHEMA IF EXISTS %s CASCADE;"
                   " CREATE SCHEMA %s",
                   schema, schema);
    bool ok = exec_ok(db, sql);
    char url[1024];
    url_with_schema(schema, url, sizeof(url));
    struct tn_store *s[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3 && ok; i++)
        ok = open_pg(url, &s[i]) == TN_OK;
    for (int i = 0; i < 3 && ok; i++)
        ok = wait_ready(s[i], 15000);
    struct call c[3];
    for (int i = 0; i < 3 && ok; i++)
        start_acquire(s[i], &c[i], "m", "o", 5000, NULL, 0, NULL);
    if (ok)
        wait_calls(c, 3);
    int granted = 0;
    for (int i = 0; i < 3 && ok; i++)
        granted += c[i].res.rc == TN_OK;
    PGresult *r = PQexec(db, "SELECT 1");
    PQclear(r);
    (void)snprintf(sql, sizeof(sql),
                   "SELECT count(*) FROM %s.tenure_schema_version", schema);
    r = PQexec(db, sql);
    bool versions =
        PQresultStatus(r) == PGRES_TUPLES_OK &&
        strtoul(PQgetvalue(r, 0, 0), NULL, 10) == tn_pg_n_migrations;
    PQclear(r);
    for (int i = 0; i < 3; i++) {
        if (s[i] != NULL)
            s[i]->ops->close(s[i]);
    }
    (void)snprintf(sql, sizeof(sql), "DROP SCHEMA %s CASCADE", schema);
    (void)exec_ok(db, sql);
    PQfinish(db);
    CHECK(ok);
    CHECK(granted == 1);
    CHECK(versions);
}

/* PostgreSQL unreachable: not ready, every op TN_EUNAVAIL with a retry. */
void case_pg_down(void)
{
    struct tn_store *s = NULL;
    CHECK_RC(open_pg("postgresql://postgres@127.0.0.1:1/postgres", &s), TN_OK);
    run_for(200);
    bool ready = s->ops->is_ready(s);
    struct call c;
    start_acquire(s, &c, "x", "o", 5000, NULL, 0, NULL);
    wait_calls(&c, 1);
    struct call g;
    memset(&g, 0, sizeof(g));
    s->ops->get(s, "x", 1, &g.res, on_done, &g);
    wait_calls(&g, 1);
    s->ops->close(s);
    CHECK(!ready);
    CHECK_RC(c.res.rc, TN_EUNAVAIL);
    CHECK(c.res.retry_after_ms > 0);
    CHECK_RC(g.res.rc, TN_EUNAVAIL);
}

/* A role whose connection limit lets the statement connections in but
 * not the LISTEN connection (opened after them): the store is not ready
 * and answers 503 although it could run statements, because what it
 * answered would not be heard by its subscribers.  Once the limit allows
 * one more connection, LISTEN gets in (within its backoff) and the store
 * is ready; it is never ready without listening. */
void case_pg_listen_first(void)
{
    char role[64];
    (void)snprintf(role, sizeof(role), "ct_lim_%d", (int)getpid());
    PGconn *db = admin();
    CHECK(db != NULL);
    PQconninfoOption *o = PQconninfoParse(E.url, NULL);
    CHECK(o != NULL);
    const char *host = "127.0.0.1", *port = "5432", *dbname = "postgres";
    for (PQconninfoOption *i = o; i->keyword != NULL; i++) {
        if (i->val == NULL)
            continue;
        if (strcmp(i->keyword, "host") == 0)
            host = i->val;
        else if (strcmp(i->keyword, "port") == 0)
            port = i->val;
        else if (strcmp(i->keyword, "dbname") == 0)
            dbname = i->val;
    }
    char url[512];
    (void)snprintf(url, sizeof(url),
                   "postgresql://%s@%s:%s/%s?options=-csearch_path%%3D%s", role,
                   host, port, dbname, role);
    PQconninfoFree(o);
    char sql[512];
    (void)snprintf(sql, sizeof(sql),
                   "DROP SCHEMA IF EXISTS %s CASCADE; DROP ROLE IF EXISTS %s;"
                   " CREATE ROLE %s LOGIN CONNECTION LIMIT %d;"
                   " CREATE SCHEMA %s AUTHORIZATION %s",
                   role, role, role, TN_PG_CONNS, role, role);
    bool ok = exec_ok(db, sql);
    char gone[256];
    (void)snprintf(gone, sizeof(gone),
                   "SELECT count(*) FROM pg_stat_activity WHERE usename = '%s'",
                   role);

    /* The statement connections up, LISTEN refused for 600 ms (about
     * three tries): never ready, and an acquire is answered 503.  The
     * three connections race for the two places; should LISTEN win one,
     * start again.  On a loaded machine LISTEN won five starts in a row
     * (an ASan run beside other tests), so up to 20: each lost start
     * costs about 3 s. */
    struct tn_store *s = NULL;
    bool deaf_ready = false;
    bool split = false;
    for (int attempt = 0; attempt < 20 && ok && !split; attempt++) {
        if (s != NULL) {
            s->ops->close(s);
            s = NULL;
            ok = poll_until(db, gone, 0, 5000);
        }
        ok = ok && open_pg(url, &s) == TN_OK;
        int64_t split_since = 0;
        int64_t until = tn_clock_now_ms() + 3000;
        while (ok && tn_clock_now_ms() < until) {
            run_for(20);
            bool listening = store_gauge(s, "tenure_pg_listen_ready") == 1;
            deaf_ready |= s->ops->is_ready(s) && !listening;
            if (store_gauge(s, "tenure_pg_connections_ready") != TN_PG_CONNS ||
                listening)
                split_since = 0;
            else if (split_since == 0)
                split_since = tn_clock_now_ms();
            if (split_since != 0 && tn_clock_now_ms() - split_since >= 600) {
                split = true;
                break;
            }
        }
    }
    struct call c;
    memset(&c, 0, sizeof(c));
    if (ok && split) {
        start_acquire(s, &c, "x", "o", 5000, NULL, 0, NULL);
        wait_calls(&c, 1);
    }
    bool refused = c.res.rc == TN_EUNAVAIL && c.res.retry_after_ms > 0;
    bool store_ready_gauge =
        s != NULL && store_gauge(s, "tenure_store_ready") == 1;

    /* Room for one more: LISTEN gets in, and only then is it ready. */
    (void)snprintf(sql, sizeof(sql), "ALTER ROLE %s CONNECTION LIMIT %d", role,
                   TN_PG_CONNS + 1);
    ok = ok && exec_ok(db, sql);
    int64_t until = tn_clock_now_ms() + 10000;
    while (ok && !s->ops->is_ready(s) && tn_clock_now_ms() < until) {
        run_for(10);
        deaf_ready |= s->ops->is_ready(s) &&
                      store_gauge(s, "tenure_pg_listen_ready") != 1;
    }
    bool ready = ok && s->ops->is_ready(s);
    struct call d;
    memset(&d, 0, sizeof(d));
    if (ready) {
        start_acquire(s, &d, "x", "o", 5000, NULL, 0, NULL);
        wait_calls(&d, 1);
    }
    if (s != NULL)
        s->ops->close(s);
    /* The backends of the closed store end on their own time, and the
     * role cannot go while they hold their temporary outbox. */
    (void)poll_until(db, gone, 0, 5000);
    (void)snprintf(sql, sizeof(sql),
                   "DROP SCHEMA IF EXISTS %s CASCADE; DROP ROLE IF EXISTS %s",
                   role, role);
    (void)exec_ok(db, sql);
    PQfinish(db);
    CHECK(ok);
    CHECK(split);
    CHECK(refused);
    CHECK(!store_ready_gauge);
    CHECK(ready);
    CHECK_RC(d.res.rc, TN_OK);
    CHECK(!deaf_ready);
}

/* The connection dies while a statement is in flight: its outcome is
 * unknown, so it is answered TN_EUNAVAIL; the store reconnects. */
void case_pg_broken_in_flight(void)
{
    struct call a;
    CHECK_RC(acquire(&a, nm("brk"), "o1", 100, NULL, 0), TN_OK);
    PGconn *db = hold_row(nm("brk"));
    CHECK(db != NULL);
    struct call b;
    start_acquire(E.s, &b, nm("brk"), "o2", 5000, NULL, 0, NULL);
    run_for(100); /* the statement now waits for the row lock */
    bool ok =
        !b.done &&
        exec_ok(db, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE application_name = 'tenured'"
                    " AND wait_event_type = 'Lock'");
    wait_calls(&b, 1);
    (void)exec_ok(db, "ROLLBACK");
    PQfinish(db);
    CHECK(ok);
    CHECK_RC(b.res.rc, TN_EUNAVAIL);
    CHECK(wait_ready(E.s, 10000));
    CHECK_RC(acquire(&b, nm("brk"), "o2", 5000, NULL, 0), TN_OK);
    CHECK(b.res.lease.token > a.res.lease.token);
}

/* The slow acquirer: an acquire that has started (and drawn its VALUES
 * nextval) but waits for the row lock while another transaction grants a
 * newer token, which then expires.  The acquire must install a token above
 * that newer one: the token is taken only once the row is locked. */
void case_pg_slow_acquirer(void)
{
    struct call a;
    CHECK_RC(acquire(&a, nm("slow"), "o1", 1, NULL, 0), TN_OK);
    run_for(5);
    PGconn *db = hold_row(nm("slow"));
    CHECK(db != NULL);
    struct call b;
    start_acquire(E.s, &b, nm("slow"), "o2", 5000, NULL, 0, NULL);
    run_for(100); /* b now waits for the row lock */
    uint64_t newer = 0;
    bool ok = !b.done;
    if (ok) {
        char sql[512];
        (void)snprintf(sql, sizeof(sql),
                       "UPDATE leases SET fencing_token ="
                       " nextval('lease_token_seq'),"
                       " expires_at = now() - interval '1 second',"
                       " released = false WHERE name = '%s'"
                       " RETURNING fencing_token",
                       nm("slow"));
        PGresult *r = PQexec(db, sql);
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
            newer = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
        PQclear(r);
    }
    ok = ok && newer > 0 && exec_ok(db, "COMMIT");
    wait_calls(&b, 1);
    PQfinish(db);
    CHECK(ok);
    CHECK_RC(b.res.rc, TN_OK);
    CHECK(b.res.lease.token > newer);
}

/* ---- main ---- */

/* docs/safety/revealed-end.md: a renew whose transaction began before the
 * expiry but that waited for the row lock (another instance's batch, a
 * slow synchronous commit) past the expiry must not succeed once a check
 * has answered current:false: it must compare the expiry with the instant
 * it holds the row lock, not with its transaction's start (now()) nor with
 * when it first read the row.  The check goes out on another of the
 * store's connections while the renew waits on its own. */
void case_pg_renew_blocked_past_expiry(void)
{
    struct call g;
    const char *n = nm("blocked");
    int rc = acquire(&g, n, "o1", 400, NULL, 0);
    PGconn *db = rc == TN_OK ? hold_row(n) : NULL;
    struct call r, c = {0};
    memset(&r, 0, sizeof(r));
    bool blocked = false;
    if (db != NULL) {
        struct tn_token_req q = {
            .name = n, .name_len = strlen(n), .token = g.res.lease.token};
        memcpy(q.secret, g.res.lease.secret, TN_SECRET_BYTES);
        E.s->ops->renew(E.s, &q, &r.res, on_done, &r);
        run_for(100); /* sent 100 ms into the 400 ms lease; now waits */
        blocked = !r.done;
        run_for(400); /* past the expiry */
        /* Another instance's check: the store's own check statement on
         * a connection of its own (this store's connections may be queued
         * behind the waiting renew), unlocked. */
        PGconn *other = admin();
        char sql[256];
        (void)snprintf(sql, sizeof(sql), "EXECUTE tn_check_probe('%s')", n);
        if (other != NULL &&
            exec_ok(other, "PREPARE tn_check_probe(text) AS "
                           "SELECT NOT released AND expires_at > now()"
                           " FROM leases WHERE name = $1")) {
            PGresult *res = PQexec(other, sql);
            if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
                c.res.current = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
            else
                c.res.rc = TN_EIO;
            PQclear(res);
        } else {
            c.res.rc = TN_EIO;
        }
        PQfinish(other);
        (void)exec_ok(db, "COMMIT");
        wait_calls(&r, 1);
        PQfinish(db);
    }
    struct call after = {0};
    if (db != NULL)
        (void)check(n, g.res.lease.token, &after);
    CHECK_RC(rc, TN_OK);
    CHECK(db != NULL);
    CHECK(blocked);
    CHECK_RC(c.res.rc, TN_OK);
    CHECK(!c.res.current);
    CHECK_RC(r.res.rc, TN_ELOST);
    CHECK_RC(after.res.rc, TN_OK);
    CHECK(!after.res.current);
}

/* docs/safety/revealed-end.md: a renew that found its grant running and
 * holds the row, but whose commit lands after the expiry (a slow
 * synchronous standby).  A check or a GET that reads the row meanwhile
 * must wait for that commit and answer what it decided: answering
 * current:false (or not found) first and current:true after the commit
 * would revive an end it revealed.  The renew in flight is an admin
 * transaction that extends the row as the renew statement does and
 * commits past the expiry. */
void case_pg_read_waits_for_writer(void)
{
    struct call g;
    const char *n = nm("inflight");
    int rc = acquire(&g, n, "o1", 300, NULL, 0);
    char names[256];
    (void)snprintf(names, sizeof(names), "'%s'", n);
    PGconn *db = rc == TN_OK ? renew_in_flight(names) : NULL;
    bool ok = db != NULL;
    struct call c, r;
    memset(&c, 0, sizeof(c));
    memset(&r, 0, sizeof(r));
    bool waited = false;
    if (ok) {
        run_for(450); /* past the expiry, the renew not yet committed */
        E.s->ops->check(E.s, n, strlen(n), g.res.lease.token, &c.res, on_done,
                        &c);
        E.s->ops->get(E.s, n, strlen(n), &r.res, on_done, &r);
        run_for(300);
        waited = !c.done && !r.done;
        ok = exec_ok(db, "COMMIT");
        wait_calls(&c, 1);
        wait_calls(&r, 1);
    }
    PQfinish(db);
    struct call after = {0};
    if (ok)
        (void)check(n, g.res.lease.token, &after);
    CHECK_RC(rc, TN_OK);
    CHECK(ok);
    CHECK(waited);
    CHECK_RC(c.res.rc, TN_OK);
    CHECK(c.res.current);
    CHECK_RC(r.res.rc, TN_OK);
    CHECK(r.res.lease.token == g.res.lease.token);
    CHECK_RC(after.res.rc, TN_OK);
    CHECK(after.res.current);
}

/* The same in-flight renew, seen by the grant's own holder: a renew and a
 * release of the grant sent meanwhile wait for its commit and then act on
 * the row it left, which still runs: answering them lost would reveal an
 * end that a check after the commit contradicts (current:true).  They
 * must compare the newest version of the row, not the one they first read,
 * with the instant they hold the row lock. */
void case_pg_change_behind_writer(void)
{
    struct call g[2];
    const char *n[2] = {nm("behind-renew"), nm("behind-release")};
    int rc = acquire(&g[0], n[0], "o1", 300, NULL, 0);
    if (rc == TN_OK)
        rc = acquire(&g[1], n[1], "o1", 300, NULL, 0);
    char names[256];
    (void)snprintf(names, sizeof(names), "'%s', '%s'", n[0], n[1]);
    PGconn *db = rc == TN_OK ? renew_in_flight(names) : NULL;
    bool ok = db != NULL;
    struct call c[2];
    memset(c, 0, sizeof(c));
    bool waited = false;
    if (ok) {
        run_for(450); /* past the expiry, the renew not yet committed */
        for (int i = 0; i < 2; i++) {
            /* The renew counts its ttl from its transaction's start,
             * before the wait: a ttl longer than the wait. */
            struct tn_token_req q = {.name = n[i],
                                     .name_len = strlen(n[i]),
                                     .token = g[i].res.lease.token,
                                     .ttl_ms = 60000};
            memcpy(q.secret, g[i].res.lease.secret, TN_SECRET_BYTES);
            if (i == 0)
                E.s->ops->renew(E.s, &q, &c[i].res, on_done, &c[i]);
            else
                E.s->ops->release(E.s, &q, &c[i].res, on_done, &c[i]);
        }
        run_for(300);
        waited = !c[0].done && !c[1].done;
        ok = exec_ok(db, "COMMIT");
        wait_calls(c, 2);
    }
    PQfinish(db);
    struct call after = {0};
    if (ok)
        (void)check(n[0], g[0].res.lease.token, &after);
    CHECK_RC(rc, TN_OK);
    CHECK(ok);
    CHECK(waited);
    CHECK_RC(c[0].res.rc, TN_OK);
    CHECK_RC(c[1].res.rc, TN_OK);
    CHECK_RC(after.res.rc, TN_OK);
    CHECK(after.res.current);
}
