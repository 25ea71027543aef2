/* SPDX-License-Identifier: MIT */
/* The store contract's PostgreSQL-only cases: the sequence lifted above a
 * stored token on start, concurrent migrations, a database that is down or
 * breaks with statements in flight, and a slow acquirer behind a row lock. */
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/rand.h"
#include "contract.h"
#include "store/pg_sql.h"

static void quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static PGconn *admin(void)
{
    PGconn *c = PQconnectdb(E.pg_url);
    PQsetNoticeProcessor(c, quiet, NULL);
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "admin connection: %s", PQerrorMessage(c));
        PQfinish(c);
        return NULL;
    }
    return c;
}

static bool exec_ok(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK ||
              PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok)
        fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    return ok;
}

/* An admin connection whose open transaction holds the row of name
 * locked (FOR UPDATE), or NULL. */
static PGconn *hold_row(const char *name)
{
    PGconn *db = admin();
    if (db == NULL)
        return NULL;
    char sql[512];
    (void)snprintf(sql, sizeof(sql),
                   "BEGIN; SELECT 1 FROM leases WHERE name = '%s' FOR UPDATE",
                   name);
    if (!exec_ok(db, sql)) {
        PQfinish(db);
        return NULL;
    }
    return db;
}

int open_pg(const char *url, struct tn_store **out)
{
    struct tn_store_config cfg = base_config();
    cfg.pg_url = url;
    struct tn_errmsg em = {{0}};
    int rc = tn_store_open_url(E.loop, &cfg, out, &em);
    if (rc < 0)
        fprintf(stderr, "open: %s\n", em.text);
    return rc;
}

/* A URL for the same database with search_path set to schema. */
static void url_with_schema(const char *schema, char *out, size_t cap)
{
    (void)snprintf(out, cap, "%s%coptions=-csearch_path%%3D%s", E.pg_url,
                   strchr(E.pg_url, '?') != NULL ? '&' : '?', schema);
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
    CHECK_RC(open_pg(E.pg_url, &E.s), TN_OK);
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
