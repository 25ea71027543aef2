/* SPDX-License-Identifier: MIT */
/* The store contract's PostgreSQL case pg_events_order: events of one name
 * leave one instance in the order of its changes, even when its two
 * connections race and a backend's trailing notify is held back. */
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "contract.h"
#include "contract_pg.h"

/* ---- events of one name in order within one instance ---- */

/* A private schema (its own channel, no other instance sweeps it), the
 * admin connections that hold things back, and the calls, which outlive
 * the steps (a step that fails leaves calls in flight; closing the store
 * answers them). */
struct order_env {
    struct tn_store *s;  /* the store on the private schema */
    PGconn *hold;        /* holds a row lock in an open transaction */
    PGconn *locker;      /* LOCK TABLE on a backend's outbox, async */
    PGconn *mon;         /* polls pg_stat_activity */
    struct call a, b, c; /* acquire, the change that follows, spare */
};

/* Run the loop until c is done or ms pass. */
static bool done_within(struct call *c, int64_t ms)
{
    int64_t until = tn_clock_now_ms() + ms;
    while (!c->done && tn_clock_now_ms() < until)
        run_for(5);
    return c->done;
}

/* Run the loop until one of the store's backends waits for a lock that
 * the hold connection holds. */
static bool await_blocked(struct order_env *o)
{
    char sql[256];
    (void)snprintf(sql, sizeof(sql),
                   "SELECT count(*) FROM pg_stat_activity"
                   " WHERE %d = ANY(pg_blocking_pids(pid))",
                   PQbackendPID(o->hold));
    return poll_until(o->mon, sql, 1, 3000);
}

/* Run the loop until the locker waits for a lock (waiting 1) or not
 * (waiting 0). */
static bool await_locker(struct order_env *o, int waiting)
{
    char sql[256];
    (void)snprintf(sql, sizeof(sql),
                   "SELECT count(*) FROM pg_stat_activity WHERE pid = %d"
                   " AND wait_event_type = 'Lock'",
                   PQbackendPID(o->locker));
    return poll_until(o->mon, sql, waiting, 3000);
}

/* With a store backend blocked behind the hold connection (inside a
 * transaction that has opened its outbox), queue an ACCESS EXCLUSIVE lock
 * on that backend's outbox and wait until the request waits: once the
 * backend's transaction commits, the lock is granted before the
 * backend's next transaction can touch the outbox again, so whatever
 * notifies after the commit from there (a trailer) is held back until
 * unlock_outbox. */
static bool lock_outbox_after_commit(struct order_env *o)
{
    char sql[900];
    (void)snprintf(
        sql, sizeof(sql),
        "BEGIN; DO $$ DECLARE t text; BEGIN"
        " SELECT DISTINCT format('%%I.%%I', n.nspname, c.relname) INTO STRICT t"
        " FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE c.relname = 'tn_outbox' AND l.pid IN (SELECT pid FROM"
        " pg_stat_activity WHERE %d = ANY(pg_blocking_pids(pid)));"
        " EXECUTE 'LOCK TABLE ' || t || ' IN ACCESS EXCLUSIVE MODE'; END $$",
        PQbackendPID(o->hold));
    if (PQsendQuery(o->locker, sql) != 1)
        return false;
    return await_locker(o, 1);
}

/* Release the hold; then run the loop until the locker holds the outbox
 * lock (the held back transaction has committed). */
static bool commit_hold(struct order_env *o)
{
    if (!exec_ok(o->hold, "COMMIT"))
        return false;
    return await_locker(o, 0);
}

/* End the locker's transaction: the outbox is free again. */
static bool unlock_outbox(struct order_env *o)
{
    bool ok = true;
    PGresult *r;
    while ((r = PQgetResult(o->locker)) != NULL) {
        ok = ok && PQresultStatus(r) == PGRES_COMMAND_OK;
        if (PQresultStatus(r) != PGRES_COMMAND_OK)
            fprintf(stderr, "lock outbox: %s", PQresultErrorMessage(r));
        PQclear(r);
    }
    return exec_ok(o->locker, "COMMIT") && ok;
}

/* An acquire that commits on one connection, and a release asked for once
 * the acquire is answered: the acquire's trailing notify is held back
 * behind a lock on its outbox.  The release must not be announced before
 * the acquire, so it must not run on the other connection meanwhile. */
static void order_answered(struct order_env *o)
{
    const char *n = nm("ord-answer");
    struct tn_event ev[2];
    events_watch(n);
    CHECK_RC(acquire(&o->a, n, "o0", 5000, NULL, 0), TN_OK);
    CHECK_RC(release(&o->a, &o->c), TN_OK);
    CHECK(await_events(n, 2, 3000, ev) == 2); /* heard: not recorded below */
    CHECK(lock_row(o->hold, n));
    events_watch(n);
    start_acquire(E.s, &o->a, n, "o1", 5000, NULL, 0, NULL);
    CHECK(await_blocked(o));
    CHECK(lock_outbox_after_commit(o));
    CHECK(commit_hold(o));
    /* committed; its notify waits for the outbox */
    bool early = done_within(&o->a, 300);
    if (early && o->a.res.rc == TN_OK) {
        memset(&o->b, 0, sizeof(o->b));
        struct tn_token_req r = {
            .name = n, .name_len = strlen(n), .token = o->a.res.lease.token};
        memcpy(r.secret, o->a.res.lease.secret, TN_SECRET_BYTES);
        E.s->ops->release(E.s, &r, &o->b.res, on_done, &o->b);
        (void)done_within(&o->b, 500);
        run_for(100); /* its event, if it overtook */
    }
    CHECK(unlock_outbox(o));
    CHECK(done_within(&o->a, 5000));
    CHECK_RC(o->a.res.rc, TN_OK);
    if (early) {
        CHECK(done_within(&o->b, 5000));
        CHECK_RC(o->b.res.rc, TN_OK);
    } else {
        CHECK_RC(release(&o->a, &o->b), TN_OK);
    }
    CHECK(await_events(n, 2, 3000, ev) == 2);
    uint64_t t = o->a.res.lease.token;
    CHECK(ev[0].type == TN_EVENT_ACQUIRED && ev[0].token == t);
    CHECK(ev[1].type == TN_EVENT_RELEASED && ev[1].token == t);
}

/* Two changes of one name that race: a release, and an acquire asked for
 * while the release is still in flight (so no answer orders them), which
 * waits for the row.  The release commits first and its trailing notify
 * is held back; the acquire must still be announced after it, so it must
 * not run on the other connection meanwhile. */
static void order_raced(struct order_env *o)
{
    const char *n = nm("ord-race");
    struct tn_event ev[2];
    events_watch(n);
    CHECK_RC(acquire(&o->c, n, "o0", 5000, NULL, 0), TN_OK);
    CHECK(await_events(n, 1, 3000, ev) == 1); /* heard: not recorded below */
    CHECK(lock_row(o->hold, n));
    events_watch(n);
    memset(&o->b, 0, sizeof(o->b));
    struct tn_token_req r = {
        .name = n, .name_len = strlen(n), .token = o->c.res.lease.token};
    memcpy(r.secret, o->c.res.lease.secret, TN_SECRET_BYTES);
    E.s->ops->release(E.s, &r, &o->b.res, on_done, &o->b);
    CHECK(await_blocked(o));
    CHECK(lock_outbox_after_commit(o));
    start_acquire(E.s, &o->a, n, "o1", 5000, NULL, 0, NULL);
    run_for(100); /* sent */
    CHECK(commit_hold(o));
    run_for(300); /* an acquire on the other connection: granted, heard */
    CHECK(unlock_outbox(o));
    CHECK(done_within(&o->b, 5000));
    CHECK(done_within(&o->a, 5000));
    CHECK_RC(o->b.res.rc, TN_OK);
    CHECK_RC(o->a.res.rc, TN_OK);
    CHECK(await_events(n, 2, 3000, ev) == 2);
    CHECK(ev[0].type == TN_EVENT_RELEASED &&
          ev[0].token == o->c.res.lease.token);
    CHECK(ev[1].type == TN_EVENT_ACQUIRED &&
          ev[1].token == o->a.res.lease.token);
}

/* The connection breaks after a batch committed but before its trailing
 * notify did: the outcome is known, so the acquire is answered as
 * committed (its event is lost), not TN_EUNAVAIL. */
static void order_conn_lost(struct order_env *o)
{
    const char *n = nm("ord-lost");
    CHECK_RC(acquire(&o->c, n, "o0", 5000, NULL, 0), TN_OK);
    CHECK_RC(release(&o->c, &o->b), TN_OK);
    CHECK(lock_row(o->hold, n));
    start_acquire(E.s, &o->a, n, "o1", 5000, NULL, 0, NULL);
    CHECK(await_blocked(o));
    CHECK(lock_outbox_after_commit(o));
    CHECK(commit_hold(o));
    /* the trailer now waits for the locker: end its backend */
    char sql[512];
    (void)snprintf(sql, sizeof(sql),
                   "SELECT count(*) FROM pg_stat_activity"
                   " WHERE %d = ANY(pg_blocking_pids(pid))",
                   PQbackendPID(o->locker));
    CHECK(poll_until(o->mon, sql, 1, 3000));
    (void)snprintf(sql, sizeof(sql),
                   "SELECT count(*) FROM (SELECT pg_terminate_backend(pid)"
                   " AS t FROM pg_stat_activity"
                   " WHERE %d = ANY(pg_blocking_pids(pid))) x WHERE t",
                   PQbackendPID(o->locker));
    CHECK(mon_number(o->mon, sql) == 1);
    /* a backend waiting for a lock dies once it gets it, before running
     * the notify */
    CHECK(unlock_outbox(o));
    CHECK(done_within(&o->a, 3000));
    CHECK_RC(o->a.res.rc, TN_OK);
    CHECK(o->a.res.lease.token > o->c.res.lease.token);
    CHECK(wait_ready(E.s, 10000));
    CHECK_RC(get(n, &o->b), TN_OK);
    CHECK(o->b.res.lease.token == o->a.res.lease.token);
}

/* The expiry sweep commits on one connection while its notify would be
 * held back behind a lock on its outbox, and an acquire takes the name
 * over (on the other connection when the sweep's is busy): "expired" must
 * still come before the new "acquired". */
static void order_swept(struct order_env *o)
{
    const char *n = nm("ord-sweep");
    events_watch(n);
    CHECK_RC(acquire(&o->a, n, "o1", 200, NULL, 0), TN_OK);
    uint64_t t1 = o->a.res.lease.token;
    char sql[256];
    (void)snprintf(sql, sizeof(sql),
                   "BEGIN; SELECT 1 FROM lease_grants WHERE token = %llu"
                   " FOR UPDATE",
                   (unsigned long long)t1);
    CHECK(exec_ok(o->hold, sql));
    CHECK(await_blocked(o)); /* the sweep waits to end the grant */
    CHECK(lock_outbox_after_commit(o));
    CHECK(commit_hold(o));
    start_acquire(E.s, &o->b, n, "o2", 5000, NULL, 0, NULL);
    (void)done_within(&o->b, 300);
    run_for(100);
    CHECK(unlock_outbox(o));
    CHECK(done_within(&o->b, 5000));
    CHECK_RC(o->b.res.rc, TN_OK);
    struct tn_event ev[3];
    CHECK(await_events(n, 3, 3000, ev) == 3);
    CHECK(ev[0].type == TN_EVENT_ACQUIRED && ev[0].token == t1);
    CHECK(ev[1].type == TN_EVENT_EXPIRED && ev[1].token == t1);
    CHECK(ev[2].type == TN_EVENT_ACQUIRED &&
          ev[2].token == o->b.res.lease.token);
}

/* Events of one name leave one instance in the order of its changes, even
 * when the two connections race. */
void case_pg_events_order(void)
{
    struct order_env o;
    memset(&o, 0, sizeof(o));
    char schema[64];
    (void)snprintf(schema, sizeof(schema), "ord_%d", (int)getpid());
    char url[1024];
    url_with_schema(schema, url, sizeof(url));
    o.mon = admin();
    o.hold = admin_at(url);
    o.locker = admin_at(url);
    char sql[256];
    (void)snprintf(sql, sizeof(sql),
                   "DROP SCHEMA IF EXISTS %s CASCADE; CREATE SCHEMA %s", schema,
                   schema);
    bool ok = o.mon != NULL && o.hold != NULL && o.locker != NULL &&
              exec_ok(o.mon, sql);
    ok = ok && open_pg(url, &o.s) == TN_OK && wait_ready(o.s, 15000);
    int before = E.failures;
    struct tn_store *saved = E.s;
    if (ok) {
        E.s = o.s;
        static void (*const steps[])(struct order_env *) = {
            order_answered, order_swept, order_raced, order_conn_lost};
        for (size_t i = 0; i < 4 && E.failures == before; i++) {
            if (i > 0) { /* fresh ones: no transaction left open */
                PQfinish(o.hold);
                o.hold = admin_at(url);
                PQfinish(o.locker);
                o.locker = admin_at(url);
            }
            if (o.hold == NULL || o.locker == NULL) {
                fprintf(stderr, "order: no admin connection\n");
                E.failures++;
                break;
            }
            steps[i](&o);
        }
        E.s = saved;
    }
    if (o.hold != NULL)
        PQfinish(o.hold);
    if (o.locker != NULL)
        PQfinish(o.locker);
    if (o.s != NULL)
        o.s->ops->close(o.s);
    (void)snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s CASCADE",
                   schema);
    if (o.mon != NULL) {
        (void)exec_ok(o.mon, sql);
        PQfinish(o.mon);
    }
    CHECK(ok);
}
