/* SPDX-License-Identifier: MIT */
/* The store contract's PostgreSQL session cases, part two: several
 * instances on one database, the database clock, concurrent claims, a
 * session's end and a claim each in one transaction, a renew in flight
 * past the expiry, tokens across a crash of PostgreSQL; and a replay by
 * request_id while others wait (issue #36). */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/rand.h"
#include "contract_pg.h"
#include "contract_pg_sess.h"
#include "store/pg/sql.h"

/* A second store on the suite's database (another instance), or NULL. */
static struct tn_store *other_instance(void)
{
    struct tn_store *s = NULL;
    if (open_pg(E.url, &s) != TN_OK)
        return NULL;
    if (!wait_ready(s, 15000)) {
        s->ops->close(s);
        return NULL;
    }
    return s;
}

/* A session opened on one instance is renewed on the other; its leases
 * live exactly as long on both; one ended on one is ended on both. */
void case_pg_sess_two_instances(void)
{
    struct tn_store *b = other_instance();
    CHECK(b != NULL);
    struct sess x, y;
    struct call c = {0}, g = {0}, ra = {0}, rb = {0};
    int rc = s_open(E.s, nm("two"), 600, &x, &c);
    if (rc == TN_OK)
        rc = s_acquire(E.s, &g, &x, nm("two-1"), "w");
    if (rc == TN_OK)
        rc = s_renew(b, &x, 60000, &c);
    run_for(800); /* past the first TTL: the renew on b keeps it */
    int ga = get_on(E.s, nm("two-1"), &ra);
    int gb = get_on(b, nm("two-1"), &rb);
    int ya = TN_OK, yb = TN_OK;
    if (rc == TN_OK && s_open(b, nm("two"), 300, &y, &c) == TN_OK &&
        s_acquire(E.s, &c, &y, nm("two-2"), "w") == TN_OK) {
        struct call t = {0};
        run_for(450); /* past y's TTL, nobody renewed it */
        ya = get_on(E.s, nm("two-2"), &t);
        yb = get_on(b, nm("two-2"), &t);
    }
    int ea = rc == TN_OK ? s_end(b, &x, false, &c) : rc;
    struct call after_a = {0}, after_b = {0};
    int aa = get_on(E.s, nm("two-1"), &after_a);
    int ab = get_on(b, nm("two-1"), &after_b);
    b->ops->close(b);
    CHECK_RC(rc, TN_OK);
    CHECK_RC(ga, TN_OK);
    CHECK_RC(gb, TN_OK);
    CHECK(ra.res.lease.token == g.res.lease.token &&
          rb.res.lease.token == g.res.lease.token);
    CHECK(ra.res.lease.expires_in_ms > 50000 &&
          rb.res.lease.expires_in_ms > 50000);
    CHECK(strcmp(rb.res.lease.session_id, x.id) == 0);
    CHECK_RC(ya, TN_ENOTFOUND);
    CHECK_RC(yb, TN_ENOTFOUND);
    CHECK_RC(ea, TN_OK);
    CHECK_RC(aa, TN_ENOTFOUND);
    CHECK_RC(ab, TN_ENOTFOUND);
}

/* A session's leases end when the database clock passes its expiry,
 * whatever tenured's own clock says: moved into the past by hand, the
 * session and its lease are over at once on every path (reads, another
 * owner's acquire with a higher token); a session renewed in time keeps
 * its lease held against another owner. */
void case_pg_sess_expiry(void)
{
    struct sess x;
    struct call c = {0}, g = {0}, o = {0}, r = {0};
    CHECK_RC(s_open(E.s, nm("exp"), 400, &x, &c), TN_OK);
    CHECK_RC(s_acquire(E.s, &g, &x, nm("exp-1"), "w"), TN_OK);
    run_for(250);
    CHECK_RC(s_renew(E.s, &x, 400, &c), TN_OK);
    run_for(250); /* past the first expiry, within the renewed one */
    CHECK_RC(acquire(&o, nm("exp-1"), "other", 5000, NULL, 0), TN_ECONFLICT);
    CHECK(strcmp(o.res.lease.owner_id, "w") == 0);
    CHECK_RC(s_renew(E.s, &x, 60000, &c), TN_OK);
    PGconn *db = admin();
    CHECK(db != NULL);
    char sql[256];
    (void)snprintf(sql, sizeof(sql),
                   "UPDATE tenure_sessions SET expires_at = now()"
                   " - interval '1 millisecond' WHERE id = '%s'",
                   x.id);
    bool ok = exec_ok(db, sql);
    PQfinish(db);
    CHECK(ok);
    CHECK_RC(get(nm("exp-1"), &r), TN_ENOTFOUND);
    CHECK_RC(check(nm("exp-1"), g.res.lease.token, &r), TN_OK);
    CHECK(!r.res.current);
    CHECK_RC(s_get(E.s, x.id, &c), TN_ENOTFOUND);
    CHECK_RC(s_renew(E.s, &x, 0, &c), TN_ELOST);
    CHECK_RC(acquire(&o, nm("exp-1"), "other", 5000, NULL, 0), TN_OK);
    CHECK(o.res.lease.token > g.res.lease.token);
}

#define RACE_NAMES 200
#define RACE_ROUNDS 5

/* Two sessions on two instances claim overlapping names at once: every
 * name is granted to exactly one of them, and it holds it. */
void case_pg_sess_claim_race(void)
{
    struct tn_store *b = other_instance();
    CHECK(b != NULL);
    static char names[RACE_NAMES][64];
    const char *pa[RACE_NAMES], *pb[RACE_NAMES];
    struct sess xa, xb;
    struct call c = {0}, ca = {0}, cb = {0}, g = {0};
    int bad = 0;
    int rc = s_open(E.s, nm("ra"), 60000, &xa, &c);
    if (rc == TN_OK)
        rc = s_open(b, nm("rb"), 60000, &xb, &c);
    size_t half = RACE_NAMES * 3 / 4; /* each claims 3/4: half overlap */
    for (int round = 0; round < RACE_ROUNDS && rc == TN_OK; round++) {
        for (size_t i = 0; i < RACE_NAMES; i++) {
            char suffix[32];
            (void)snprintf(suffix, sizeof(suffix), "race%d-%03zu", round, i);
            (void)snprintf(names[i], sizeof(names[i]), "%s", nm(suffix));
            pa[i] = names[i];
            pb[i] = names[RACE_NAMES - 1 - i]; /* the other order */
        }
        s_start_claim(E.s, &ca, &xa, pa, half, NULL);
        s_start_claim(b, &cb, &xb, pb, half, NULL);
        wait_calls(&ca, 1);
        wait_calls(&cb, 1);
        if (ca.res.rc != TN_OK || cb.res.rc != TN_OK) {
            rc = ca.res.rc != TN_OK ? ca.res.rc : cb.res.rc;
            break;
        }
        for (size_t i = 0; i < RACE_NAMES; i++) {
            bool in_a = i < half, in_b = RACE_NAMES - 1 - i < half;
            bool got_a = in_a && ca.res.claims[i].outcome == TN_CLAIM_GRANTED;
            bool got_b = in_b && cb.res.claims[RACE_NAMES - 1 - i].outcome ==
                                     TN_CLAIM_GRANTED;
            if (got_a + got_b != 1 || get(names[i], &g) != TN_OK ||
                strcmp(g.res.lease.owner_id, got_a ? nm("ra") : nm("rb")) != 0)
                bad++;
        }
        tn_store_result_release(&ca.res);
        tn_store_result_release(&cb.res);
    }
    if (rc == TN_OK)
        (void)s_end(E.s, &xa, false, &c);
    if (rc == TN_OK)
        (void)s_end(b, &xb, false, &c);
    b->ops->close(b);
    CHECK_RC(rc, TN_OK);
    if (bad != 0)
        fprintf(stderr, "claim race: %d names not held by exactly one\n", bad);
    CHECK(bad == 0);
}

/* Distinct transaction ids (xmin) among the rows of leases and ledger
 * whose names start with prefix: 1 when one transaction wrote them all. */
static long long writers_of(PGconn *db, const char *prefix)
{
    char sql[512];
    (void)snprintf(sql, sizeof(sql),
                   "SELECT count(DISTINCT x) FROM (SELECT xmin::text AS x"
                   " FROM leases WHERE starts_with(name, '%s') UNION ALL"
                   " SELECT xmin::text FROM lease_grants"
                   " WHERE starts_with(name, '%s')) q",
                   prefix, prefix);
    return mon_number(db, sql);
}

#define END_LEASES 50

/* A session's end releases every lease of it in one transaction: held up
 * by a lock on one of its leases, it has released none of them (reads by
 * another instance see them all live); once it goes on, all are gone,
 * every lease row and ledger row written by the one transaction. */
void case_pg_sess_end_one_txn(void)
{
    struct tn_store *b = other_instance();
    CHECK(b != NULL);
    static char names[END_LEASES][64];
    const char *p[END_LEASES];
    for (size_t i = 0; i < END_LEASES; i++) {
        char suffix[32];
        (void)snprintf(suffix, sizeof(suffix), "end1/%02zu", i);
        (void)snprintf(names[i], sizeof(names[i]), "%s", nm(suffix));
        p[i] = names[i];
    }
    struct sess x;
    struct call c = {0}, k = {0}, e = {0}, g = {0};
    int rc = s_open(E.s, nm("ender"), 60000, &x, &c);
    if (rc == TN_OK)
        rc = s_claim(E.s, &k, &x, p, END_LEASES, NULL);
    tn_store_result_release(&k.res);
    PGconn *db = rc == TN_OK ? admin() : NULL;
    bool ok = db != NULL && lock_row(db, names[END_LEASES / 2]);
    struct tn_session_req r = {.id = x.id};
    memcpy(r.secret, x.secret, TN_SECRET_BYTES);
    memset(&e, 0, sizeof(e));
    if (ok)
        E.s->ops->session_end(E.s, &r, &e.res, on_done, &e);
    int live = 0;
    for (size_t i = 0; ok && i < END_LEASES; i += 7) {
        run_for(30);
        live += get_on(b, names[i], &g) == TN_OK;
    }
    bool held_up = ok && !e.done;
    ok = ok && exec_ok(db, "COMMIT");
    if (ok)
        wait_calls(&e, 1);
    int gone = 0;
    for (size_t i = 0; ok && i < END_LEASES; i++)
        gone += get(names[i], &g) == TN_ENOTFOUND;
    long long writers = ok ? writers_of(db, nm("end1/")) : -1;
    PQfinish(db);
    b->ops->close(b);
    CHECK_RC(rc, TN_OK);
    CHECK(ok);
    CHECK(held_up);
    CHECK(live == (END_LEASES + 6) / 7);
    CHECK_RC(e.res.rc, TN_OK);
    CHECK(gone == END_LEASES);
    CHECK(writers == 1);
}

#define CLAIM_MANY 1000

/* A claim of 1,000 names is one commit: every lease and ledger row it
 * wrote has the same transaction id; its tokens are distinct and above
 * every earlier one. */
void case_pg_sess_claim_1000(void)
{
    static char names[CLAIM_MANY][64];
    static const char *p[CLAIM_MANY];
    for (size_t i = 0; i < CLAIM_MANY; i++) {
        char suffix[32];
        (void)snprintf(suffix, sizeof(suffix), "many/%04zu", i);
        (void)snprintf(names[i], sizeof(names[i]), "%s", nm(suffix));
        p[i] = names[i];
    }
    struct sess x;
    struct call c = {0}, k = {0}, before = {0};
    CHECK_RC(acquire(&before, nm("many-before"), "o", 5000, NULL, 0), TN_OK);
    CHECK_RC(s_open(E.s, nm("many"), 60000, &x, &c), TN_OK);
    CHECK_RC(s_claim(E.s, &k, &x, p, CLAIM_MANY, NULL), TN_OK);
    size_t granted = 0;
    bool above = true;
    for (size_t i = 0; i < k.res.n_claims; i++) {
        granted += k.res.claims[i].outcome == TN_CLAIM_GRANTED;
        above = above && k.res.claims[i].token > before.res.lease.token;
        for (size_t j = 0; j < i && above; j++)
            above = k.res.claims[j].token != k.res.claims[i].token;
    }
    tn_store_result_release(&k.res);
    PGconn *db = admin();
    long long writers = db != NULL ? writers_of(db, nm("many/")) : -1;
    PQfinish(db);
    CHECK_RC(s_get(E.s, x.id, &c), TN_OK);
    CHECK(c.res.session.n_leases == CLAIM_MANY);
    CHECK_RC(s_end(E.s, &x, false, &c), TN_OK);
    CHECK(granted == CLAIM_MANY);
    CHECK(above);
    CHECK(writers == 1);
}

/* A session renew in flight (it decided before the expiry, holds the
 * session row, commits after it) must not be contradicted: a read of a
 * lease of the session, a check, the session's get, and another owner's
 * acquire on another instance all wait for it, then see the session
 * renewed. */
void case_pg_sess_renew_in_flight(void)
{
    struct tn_store *b = other_instance();
    CHECK(b != NULL);
    struct sess x;
    struct call c = {0}, g = {0};
    int rc = s_open(E.s, nm("inflight"), 300, &x, &c);
    if (rc == TN_OK)
        rc = s_acquire(E.s, &g, &x, nm("inflight-1"), "w");
    char sql[256];
    (void)snprintf(sql, sizeof(sql),
                   "BEGIN; UPDATE tenure_sessions SET expires_at = now()"
                   " + interval '60 s' WHERE id = '%s'",
                   x.id);
    PGconn *db = rc == TN_OK ? admin() : NULL;
    bool ok = db != NULL && exec_ok(db, sql);
    const char *n = nm("inflight-1");
    struct call r[4] = {0};
    bool waited = false;
    if (ok) {
        run_for(450); /* past the expiry, the renew not yet committed */
        E.s->ops->get(E.s, n, strlen(n), &r[0].res, on_done, &r[0]);
        E.s->ops->check(E.s, n, strlen(n), g.res.lease.token, &r[1].res,
                        on_done, &r[1]);
        E.s->ops->session_get(E.s, x.id, &r[2].res, on_done, &r[2]);
        start_acquire(b, &r[3], n, "other", 5000, NULL, 0, NULL);
        run_for(300);
        waited = !r[0].done && !r[1].done && !r[2].done && !r[3].done;
        ok = exec_ok(db, "COMMIT");
        wait_calls(r, 4);
    }
    PQfinish(db);
    b->ops->close(b);
    CHECK_RC(rc, TN_OK);
    CHECK(ok);
    CHECK_RC(r[3].res.rc, TN_ECONFLICT); /* never granted to another */
    CHECK_RC(r[0].res.rc, TN_OK);
    CHECK(r[0].res.lease.token == g.res.lease.token);
    CHECK_RC(r[1].res.rc, TN_OK);
    CHECK(r[1].res.current);
    CHECK_RC(r[2].res.rc, TN_OK);
    CHECK(waited);
    CHECK_RC(s_end(E.s, &x, false, &c), TN_OK);
}

/* The slow claimer: a claim of a name that has no row yet draws the
 * token of its insert (VALUES) and then waits, on another transaction's
 * insert of that very name, which then takes a newer token and runs out.
 * The claim must install a token above that newer one: the token is taken
 * only once the row is locked (ACQUIRE_SET_TOKEN), as for an acquire
 * (pg_slow_acquirer). */
void case_pg_sess_slow_claimer(void)
{
    const char *n = nm("slow-claim");
    char sql[512];
    (void)snprintf(sql, sizeof(sql),
                   "BEGIN; INSERT INTO leases (name, owner_id, expires_at,"
                   " fencing_token) VALUES ('%s', 'first', now()"
                   " + interval '60 s', nextval('lease_token_seq'))",
                   n);
    PGconn *db = admin();
    CHECK(db != NULL);
    bool ok = exec_ok(db, sql);
    struct sess x;
    struct call c = {0}, k = {0};
    ok = ok && s_open(E.s, nm("slow-claimer"), 60000, &x, &c) == TN_OK;
    const char *names[1] = {n};
    bool started = ok;
    if (started) {
        s_start_claim(E.s, &k, &x, names, 1, NULL);
        run_for(150); /* the claim waits for the insert */
    }
    uint64_t newer = 0;
    ok = ok && !k.done;
    if (ok) {
        (void)snprintf(sql, sizeof(sql),
                       "UPDATE leases SET fencing_token ="
                       " nextval('lease_token_seq'),"
                       " expires_at = now() - interval '1 second'"
                       " WHERE name = '%s' RETURNING fencing_token",
                       n);
        PGresult *r = PQexec(db, sql);
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
            newer = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
        PQclear(r);
    }
    ok = ok && newer > 0 && exec_ok(db, "COMMIT");
    PQfinish(db); /* rolls back what is still open */
    if (started)
        wait_calls(&k, 1);
    CHECK(ok);
    CHECK_RC(k.res.rc, TN_OK);
    CHECK(k.res.claims[0].outcome == TN_CLAIM_GRANTED);
    CHECK(k.res.claims[0].token > newer);
    tn_store_result_release(&k.res);
}

#define LARGE_LEASES (TN_PG_END_INLINE + 200)

/* A session of more leases than a DELETE releases in its own transaction
 * (TN_PG_END_INLINE): the DELETE ends the session row, and at that instant
 * every lease of it is over (reads, another owner's acquire: no lock
 * delay, as for a release, whatever the lease's own); the sweep then
 * writes each lease's end, 'released' in the ledger, and deletes the
 * session. */
void case_pg_sess_end_large(void)
{
    static char names[LARGE_LEASES][64];
    static const char *p[LARGE_LEASES];
    for (size_t i = 0; i < LARGE_LEASES; i++) {
        char suffix[32];
        (void)snprintf(suffix, sizeof(suffix), "large/%04zu", i);
        (void)snprintf(names[i], sizeof(names[i]), "%s", nm(suffix));
        p[i] = names[i];
    }
    struct sess x;
    struct call c = {0}, k = {0}, g = {0}, o = {0};
    CHECK_RC(s_open(E.s, nm("large"), 60000, &x, &c), TN_OK);
    struct tn_session_req r = {.id = x.id};
    memcpy(r.secret, x.secret, TN_SECRET_BYTES);
    size_t half = LARGE_LEASES / 2;
    struct tn_name_ref *refs = calloc(LARGE_LEASES, sizeof(*refs));
    uint8_t *secrets = calloc(LARGE_LEASES, TN_SECRET_BYTES);
    CHECK(refs != NULL && secrets != NULL);
    for (size_t i = 0; i < LARGE_LEASES; i++)
        refs[i] = (struct tn_name_ref){p[i], strlen(p[i])};
    int rc = TN_OK;
    for (size_t at = 0; at < LARGE_LEASES && rc == TN_OK; at += half) {
        struct tn_claim_req q = {.session = r,
                                 .lock_delay_ms = 60000,
                                 .names = refs + at,
                                 .n_names = half,
                                 .secrets = secrets};
        memset(&k, 0, sizeof(k));
        E.s->ops->claim(E.s, &q, &k.res, on_done, &k);
        wait_calls(&k, 1);
        rc = k.res.rc;
        tn_store_result_release(&k.res);
    }
    free(refs);
    free(secrets);
    CHECK_RC(rc, TN_OK);
    /* p[3] share-locked: the sweep (SKIP LOCKED) leaves it to the acquire
     * below, which then meets it as the DELETE left it */
    PGconn *db = admin();
    CHECK(db != NULL);
    char sql[512];
    (void)snprintf(sql, sizeof(sql),
                   "BEGIN; SELECT 1 FROM leases WHERE name = '%s' FOR SHARE",
                   p[3]);
    bool locked = exec_ok(db, sql);
    rc = locked ? s_end(E.s, &x, false, &c) : TN_EINTERNAL;
    int gone = rc == TN_OK ? get(p[7], &g) : rc;
    if (rc == TN_OK)
        start_acquire(E.s, &o, p[3], "other", 5000, NULL, 0, NULL);
    run_for(600); /* sweeps run meanwhile */
    locked = locked && exec_ok(db, "COMMIT");
    if (rc == TN_OK)
        wait_calls(&o, 1);
    CHECK(locked);
    CHECK_RC(rc, TN_OK);
    CHECK_RC(gone, TN_ENOTFOUND);
    CHECK_RC(o.res.rc, TN_OK); /* released: no lock delay */
    (void)snprintf(sql, sizeof(sql),
                   "SELECT count(*) FROM lease_grants WHERE starts_with(name,"
                   " '%s') AND end_reason = 'released'",
                   nm("large/"));
    bool settled = poll_until(db, sql, LARGE_LEASES, 30000);
    (void)snprintf(sql, sizeof(sql),
                   "SELECT count(*) FROM tenure_sessions WHERE id = '%s'",
                   x.id);
    bool deleted = poll_until(db, sql, 0, 10000);
    PQfinish(db);
    CHECK(settled);
    CHECK(deleted);
}
