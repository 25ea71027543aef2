/* SPDX-License-Identifier: MIT */
/* Retiring names on PostgreSQL (docs/safety/retired-names.md): the private
 * schema the retirement cases run in (a retirement forgets every old name
 * of its schema, other runs' too), and the race that the retirement's
 * table lock closes: an acquire of a new name draws its token before any
 * row exists, so a retirement that read the sequence while that acquire
 * was in flight would answer a floor above a token that commits later. */
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "contract.h"
#include "contract_pg.h"
#include "store/pg/pg.h"
#include "store/pg/sql.h"

static struct {
    const char *saved_url; /* E.url outside the schema */
    char schema[64];       /* the private schema */
    char url[1024];        /* E.url inside it */
} P;

/* Drop the private schema, and create it again when create. */
static bool schema_sql(bool create)
{
    char sql[256];
    (void)snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s CASCADE%s%s",
                   P.schema, create ? "; CREATE SCHEMA " : "",
                   create ? P.schema : "");
    PGconn *db = admin_at(P.saved_url);
    bool ok = db != NULL && exec_ok(db, sql);
    PQfinish(db);
    return ok;
}

int pg_private_schema_begin(const char *tag)
{
    P.saved_url = E.url;
    (void)snprintf(P.schema, sizeof(P.schema), "%s_%d", tag, (int)getpid());
    url_with_schema(P.schema, P.url, sizeof(P.url));
    if (!schema_sql(true))
        return -1;
    E.url = P.url;
    return 0;
}

void pg_private_schema_end(void)
{
    if (E.s != NULL)
        E.s->ops->close(E.s);
    E.s = NULL;
    E.url = P.saved_url;
    if (open_pg(E.url, &E.s) < 0 || !wait_ready(E.s, 15000)) {
        fprintf(stderr, "cannot open the store again: giving up\n");
        exit(1); /* every later case needs it */
    }
    (void)schema_sql(false);
}

/* Open a store on the private schema with retain_ms. */
static int open_retaining(int64_t retain_ms, struct tn_store **out)
{
    struct tn_store_config cfg = base_config();
    cfg.url = P.url;
    cfg.retain_ms = retain_ms;
    struct tn_errmsg em = {{0}};
    int rc = tn_store_open(E.loop, &cfg, out, &em);
    if (rc == 0 && !wait_ready(*out, 15000))
        rc = TN_EUNAVAIL;
    /* Every statement connection set up: a setup's sequence step takes a
     * table lock that race_steps' open transaction would hold back, and
     * every change behind it. */
    int64_t until = tn_clock_now_ms() + 15000;
    while (rc == 0 &&
           store_gauge(*out, "tenure_pg_connections_ready") < TN_PG_CONNS &&
           tn_clock_now_ms() < until)
        run_for(10);
    if (rc == 0 &&
        store_gauge(*out, "tenure_pg_connections_ready") < TN_PG_CONNS)
        rc = TN_EUNAVAIL;
    if (rc < 0)
        fprintf(stderr, "open: %s %s\n", tn_errname(rc), em.text);
    return rc;
}

/* Run the loop until s has retired at least n names, or ms pass. */
static bool await_retired_count(struct tn_store *s, long n, int64_t ms)
{
    int64_t until = tn_clock_now_ms() + ms;
    while (store_gauge(s, "tenure_names_retired_total") < n &&
           tn_clock_now_ms() < until)
        run_for(20);
    return store_gauge(s, "tenure_names_retired_total") >= n;
}

/* Begin, on h, the acquire statement of a new name, the way a store's
 * batch runs it, and leave its transaction open: it has drawn its token
 * and holds ROW EXCLUSIVE on leases.  The token, or 0. */
static uint64_t acquire_in_open_txn(PGconn *h, const char *name)
{
    if (!exec_ok(h, "CREATE TEMPORARY TABLE IF NOT EXISTS tn_outbox"
                    " (seq bigint GENERATED ALWAYS AS IDENTITY,"
                    " line text NOT NULL)") ||
        !exec_ok(h, "BEGIN"))
        return 0;
    const struct tn_pg_stmt_def *d = &tn_pg_stmts[TN_PG_ACQUIRE];
    const char *v[TN_PG_MAX_PARAMS] = {name, "held-open", "60000", "0",
                                       NULL, "\\x00",     NULL,    "0"};
    PGresult *r =
        PQexecParams(h, d->sql, d->n_params, d->types, v, NULL, NULL, 0);
    uint64_t t = 0;
    /* 'i': granted, inserting the new name (ACQUIRE_SQL) */
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
        PQgetvalue(r, 0, 0)[0] == 'i')
        t = strtoull(PQgetvalue(r, 0, 1), NULL, 10);
    else
        fprintf(stderr, "acquire in an open transaction: %s",
                PQresultErrorMessage(r));
    PQclear(r);
    return t;
}

/* The race, made certain: a new name's acquire has drawn token t and not
 * committed while a name becomes old enough to retire.  The retirement
 * must wait for it (lock timeouts meanwhile), so a check of the new name
 * answers a floor below t; once the acquire commits, the retirement goes
 * through, and the new name answers t.  Without the table lock the
 * retirement reads a sequence above t, and the check answers that as the
 * new name's floor, which then falls to t at the commit. */
static void race_steps(PGconn *h)
{
    struct call old, c, x;
    const char *fresh = nm("race-new");
    uint64_t t = acquire_in_open_txn(h, fresh);
    CHECK(t > 0);
    CHECK_RC(acquire(&old, nm("race-old"), "o1", 5000, NULL, 0), TN_OK);
    CHECK(old.res.lease.token > t);
    CHECK_RC(release(&old, &c), TN_OK);
    /* Several retirement rounds (every 50 ms; 200 ms lock wait each). */
    run_for(900);
    CHECK_RC(check(fresh, t, &c), TN_OK);
    if (c.res.floor >= t)
        fprintf(stderr,
                "race: floor %llu answered for a name whose token"
                " %llu is still to commit\n",
                (unsigned long long)c.res.floor, (unsigned long long)t);
    CHECK(!c.res.has_live && c.res.floor < t);
    CHECK(store_gauge(E.s, "tenure_pg_retire_lock_timeouts_total") > 0);
    CHECK(exec_ok(h, "COMMIT"));
    CHECK(await_retired_count(E.s, 1, 5000));
    CHECK_RC(check(fresh, t, &c), TN_OK);
    CHECK(c.res.current && c.res.floor == t);
    CHECK_RC(check(nm("race-old"), old.res.lease.token, &c), TN_OK);
    uint64_t w = c.res.floor;
    CHECK(!c.res.current && !c.res.has_live && w >= old.res.lease.token);
    CHECK_RC(acquire(&x, nm("race-next"), "o2", 5000, NULL, 0), TN_OK);
    CHECK(x.res.lease.token > w);
}

void case_pg_retire_race(void)
{
    if (pg_private_schema_begin("rr") < 0) {
        E.failures++;
        return;
    }
    E.s->ops->close(E.s);
    E.s = NULL;
    PGconn *h = NULL;
    if (open_retaining(1, &E.s) == TN_OK) {
        h = admin_at(P.url);
        if (h != NULL)
            race_steps(h);
        else
            E.failures++;
    } else {
        E.failures++;
    }
    if (h != NULL)
        PQfinish(h); /* rolls back whatever is still open */
    pg_private_schema_end();
}

/* ---- many instances at once ---- */

#define SLOTS 8
#define CHURN 4

/* A new name acquired on one instance while another checks it again and
 * again until the grant is answered. */
struct slot {
    char name[200];       /* a name never used before */
    struct tn_store *at;  /* where it is acquired */
    struct tn_store *by;  /* where it is checked */
    struct call acq, chk; /* in flight */
    bool busy;            /* acq started, not yet judged */
    uint64_t dead_floor;  /* highest floor answered without a lease */
    bool saw_dead;        /* some check answered without a lease */
    uint64_t live_floor;  /* a floor answered with a lease (0: none) */
};

/* The churn on the third instance: acquire, release, check the old
 * token; each released name is soon old enough to retire. */
struct churn {
    char name[200];
    struct call a, r, c; /* acquire, release, check */
    int step;            /* 0 idle, 1 acquiring, 2 releasing, 3 checking */
};

struct race {
    struct tn_store *s[3]; /* two retiring, one not */
    struct slot slot[SLOTS];
    struct churn churn[CHURN];
    unsigned next;       /* names used */
    unsigned judged;     /* slots judged */
    unsigned racing;     /* checks answered while their acquire was out */
    unsigned bad;        /* violations */
    unsigned old_checks; /* checks of a released token */
};

static void start_check(struct tn_store *s, struct call *c, const char *name,
                        uint64_t token)
{
    memset(c, 0, sizeof(*c));
    s->ops->check(s, name, strlen(name), token, &c->res, on_done, c);
}

static void start_token_op(struct tn_store *s, struct call *c,
                           const struct call *g)
{
    memset(c, 0, sizeof(*c));
    struct tn_token_req r = {.name = g->res.lease.name,
                             .name_len = strlen(g->res.lease.name),
                             .token = g->res.lease.token};
    memcpy(r.secret, g->res.lease.secret, TN_SECRET_BYTES);
    s->ops->release(s, &r, &c->res, on_done, c);
}

static void slot_start(struct race *R, struct slot *sl, unsigned i)
{
    memset(sl, 0, sizeof(*sl));
    char suffix[64];
    (void)snprintf(suffix, sizeof(suffix), "many-%u", R->next++);
    (void)snprintf(sl->name, sizeof(sl->name), "%s", nm(suffix));
    sl->at = R->s[i % 2];
    sl->by = R->s[(i + 1) % 3];
    sl->busy = true;
    start_acquire(sl->at, &sl->acq, sl->name, "fresh", 60000, NULL, 0, NULL);
    start_check(sl->by, &sl->chk, sl->name, 1);
}

/* Note what a finished check said; judge the slot once its acquire is
 * answered too, else check again. */
static void slot_step(struct race *R, struct slot *sl)
{
    if (!sl->chk.done)
        return;
    if (sl->chk.res.rc == TN_OK && sl->chk.res.has_live) {
        sl->live_floor = sl->chk.res.floor;
    } else if (sl->chk.res.rc == TN_OK) {
        sl->saw_dead = true;
        if (sl->chk.res.floor > sl->dead_floor)
            sl->dead_floor = sl->chk.res.floor;
    }
    if (!sl->acq.done) {
        R->racing++;
        start_check(sl->by, &sl->chk, sl->name, 1);
        return;
    }
    uint64_t t = sl->acq.res.lease.token;
    bool ok = sl->acq.res.rc == TN_OK &&
              (!sl->saw_dead || sl->dead_floor < t) &&
              (sl->live_floor == 0 || sl->live_floor == t);
    if (!ok) {
        fprintf(stderr,
                "many: %s granted %llu (rc %s); a check answered floor %llu "
                "without a lease, %llu with one\n",
                sl->name, (unsigned long long)t, tn_errname(sl->acq.res.rc),
                (unsigned long long)sl->dead_floor,
                (unsigned long long)sl->live_floor);
        R->bad++;
    }
    R->judged++;
    sl->busy = false;
}

static void churn_step(struct race *R, struct churn *ch, unsigned k)
{
    struct tn_store *c = R->s[2];
    switch (ch->step) {
    case 0:
        /* two names granted again and again (after their retirement),
         * and new names, so that rows come and go */
        if (k < 2)
            (void)snprintf(ch->name, sizeof(ch->name), "%schurn-%u", E.prefix,
                           k);
        else
            (void)snprintf(ch->name, sizeof(ch->name), "%schurn-%u-%u",
                           E.prefix, k, R->next++);
        start_acquire(c, &ch->a, ch->name, "churn", 60000, NULL, 0, NULL);
        ch->step = 1;
        return;
    case 1:
        if (!ch->a.done)
            return;
        if (ch->a.res.rc != TN_OK) { /* held by a slower round: again */
            ch->step = 0;
            return;
        }
        start_token_op(c, &ch->r, &ch->a);
        ch->step = 2;
        return;
    case 2:
        if (!ch->r.done)
            return;
        start_check(R->s[k % 2], &ch->c, ch->name, ch->a.res.lease.token);
        ch->step = 3;
        return;
    default:
        if (!ch->c.done)
            return;
        R->old_checks++;
        if (ch->c.res.rc != TN_OK || ch->c.res.current ||
            ch->c.res.floor < ch->a.res.lease.token) {
            fprintf(stderr,
                    "many: old token %llu of %s: current %d floor %llu\n",
                    (unsigned long long)ch->a.res.lease.token, ch->name,
                    ch->c.res.current, (unsigned long long)ch->c.res.floor);
            R->bad++;
        }
        ch->step = 0;
        return;
    }
}

static bool all_idle(const struct race *R)
{
    for (unsigned i = 0; i < SLOTS; i++) {
        if (R->slot[i].busy)
            return false;
    }
    for (unsigned k = 0; k < CHURN; k++) {
        if (R->churn[k].step != 0)
            return false;
    }
    return true;
}

/* Run for ms: new names on two retiring instances, checked from the
 * others while their acquires are out; churn feeding the retirements. */
static void race_many(struct race *R, int64_t ms)
{
    int64_t until = tn_clock_now_ms() + ms;
    for (;;) {
        bool more = tn_clock_now_ms() < until;
        for (unsigned i = 0; i < SLOTS; i++) {
            if (R->slot[i].busy)
                slot_step(R, &R->slot[i]);
            else if (more)
                slot_start(R, &R->slot[i], i);
        }
        for (unsigned k = 0; k < CHURN; k++) {
            if (more || R->churn[k].step != 0)
                churn_step(R, &R->churn[k], k);
        }
        if (!more && all_idle(R))
            return;
        run_for(1);
    }
}

/* docs/safety/retired-names.md under load: two instances retire (every
 * 50 ms, R = 1 ms) while both grant new names and a third churns names
 * that become old enough at once.  No check of a new name answers a floor
 * at or above the token it is then granted, none answers a lease other
 * than that grant, and no released token is current again. */
void case_pg_retire_many(void)
{
    if (pg_private_schema_begin("rm") < 0) {
        E.failures++;
        return;
    }
    static struct race R;
    memset(&R, 0, sizeof(R));
    bool ok = open_retaining(1, &R.s[0]) == TN_OK &&
              open_retaining(1, &R.s[1]) == TN_OK &&
              open_retaining(0, &R.s[2]) == TN_OK;
    if (ok)
        race_many(&R, 4000);
    long retired = 0;
    for (int i = 0; i < 2 && ok; i++)
        retired += store_gauge(R.s[i], "tenure_names_retired_total");
    printf("pg/retire_many: %u new names (%u checks while the acquire was "
           "out), %u old tokens checked, %ld names retired, %u bad\n",
           R.judged, R.racing, R.old_checks, retired, R.bad);
    for (int i = 0; i < 3; i++) {
        if (R.s[i] != NULL)
            R.s[i]->ops->close(R.s[i]);
    }
    pg_private_schema_end();
    CHECK(ok);
    CHECK(R.bad == 0);
    CHECK(R.judged >= 50 && R.racing > 0 && retired >= 20);
}
