/* SPDX-License-Identifier: MIT */
/* The store contract's PostgreSQL cases of a replay while others wait
 * (issue #36, item 2) and of tokens under a session across a crash of
 * PostgreSQL itself (a private cluster, scripts/pg-cluster.sh). */
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

/* An acquire of name by owner with request_id rid (or under session x),
 * blocking up to wait_ms (0: not at all), 10 s TTL; returns at once. */
static void start_req(struct tn_store *s, struct call *c, const char *name,
                      const char *owner, const char *rid, int64_t wait_ms)
{
    uint8_t sec[TN_SECRET_BYTES];
    (void)tn_rand_bytes(sec, sizeof(sec));
    struct tn_acquire_req r = {.name = name,
                               .name_len = strlen(name),
                               .owner_id = owner,
                               .request_id = rid,
                               .ttl_ms = 10000,
                               .secret = sec,
                               .wait_ms = wait_ms};
    memset(c, 0, sizeof(*c));
    s->ops->acquire(s, &r, &c->res, on_done, c);
}

/* Run the loop until c is done, or ms pass; whether it is. */
static bool within(struct call *c, int64_t ms)
{
    int64_t until = tn_clock_now_ms() + ms;
    while (!c->done && tn_clock_now_ms() < until)
        run_for(5);
    return c->done;
}

/* c is the replay of grant g: done in time, 200 with g's token and
 * secret. */
static bool replays(struct call *c, const struct call *g)
{
    return within(c, 3000) && c->res.rc == TN_OK && c->res.replayed &&
           c->res.lease.token == g->res.lease.token &&
           memcmp(c->res.lease.secret, g->res.lease.secret, TN_SECRET_BYTES) ==
               0;
}

/* Issue #36 item 2: a holder takes q for 1 s; o acquires q with a
 * request_id, waiting up to 10 s, and gets it once the holder's lease
 * ran out; x then waits for q on both instances.  o sends its request
 * again, exactly the same, with and without wait_ms, to the instance that
 * granted it and to the other one (a client that fails over): each time
 * the answer is the original grant, at once, never 409 held by o itself
 * nor a place in the queue behind x.  The same for an acquire under a
 * session, which the session's secret proves. */
void case_pg_replay_with_waiters(void)
{
    struct tn_store *b = NULL;
    CHECK_RC(open_pg(E.url, &b), TN_OK);
    bool ready = wait_ready(b, 15000);
    const char *q = nm("replay-q");
    struct call h = {0}, g = {0}, xa = {0}, xb = {0}, r[4] = {0}, sg = {0},
                sr[2] = {0}, c = {0};
    memset(r, 0, sizeof(r));
    memset(sr, 0, sizeof(sr));
    int rc = ready ? acquire(&h, q, "holder", 1000, NULL, 0) : TN_EUNAVAIL;
    if (rc == TN_OK) {
        start_req(E.s, &g, q, "o", "R-1", 10000);
        rc = within(&g, 5000) ? g.res.rc : TN_ETIMEDOUT;
    }
    if (rc == TN_OK) {
        start_req(E.s, &xa, q, "x", NULL, 10000);
        start_req(b, &xb, q, "x", NULL, 10000);
        run_for(100); /* both queued behind o's grant */
        start_req(E.s, &r[0], q, "o", "R-1", 10000);
        start_req(E.s, &r[1], q, "o", "R-1", 0);
        start_req(b, &r[2], q, "o", "R-1", 10000);
        start_req(b, &r[3], q, "o", "R-1", 0);
    }
    bool replayed[4] = {false, false, false, false};
    for (int i = 0; i < 4 && rc == TN_OK; i++)
        replayed[i] = replays(&r[i], &g);
    /* the same under a session, the name's waiters queued meanwhile */
    struct sess x;
    const char *sq = nm("replay-s");
    int src = rc == TN_OK ? s_open(E.s, nm("replayer"), 60000, &x, &c) : rc;
    if (src == TN_OK)
        src = s_acquire(E.s, &sg, &x, sq, "o");
    struct call sx = {0};
    if (src == TN_OK) {
        start_req(b, &sx, sq, "x", NULL, 10000);
        run_for(100);
        s_start_acquire(b, &sr[0], &x, sq, "o", 10000);
        s_start_acquire(b, &sr[1], &x, sq, "o", 0);
    }
    bool s_replayed =
        src == TN_OK && replays(&sr[0], &sg) && replays(&sr[1], &sg);
    /* let the waiters go: o's grants released, x gets them or b closes */
    if (rc == TN_OK) {
        (void)release(&g, &c);
        wait_calls(&xa, 1);
    }
    if (src == TN_OK)
        (void)s_end(E.s, &x, false, &c);
    for (int i = 0; i < 4 && rc == TN_OK; i++)
        wait_calls(&r[i], 1);
    if (b != NULL)
        b->ops->close(b); /* answers what still waits on it */
    CHECK(ready);
    CHECK_RC(rc, TN_OK);
    CHECK(replayed[0]); /* with wait_ms, same instance */
    CHECK(replayed[1]); /* without */
    CHECK(replayed[2]); /* with wait_ms, the other instance */
    CHECK(replayed[3]); /* without */
    CHECK_RC(src, TN_OK);
    CHECK(s_replayed);
}

/* ---- a crash of PostgreSQL ---- */

/* Run scripts/pg-cluster.sh with args; its first line of output into
 * out (may be NULL).  0 on success. */
static int cluster(const char *args, char *out, size_t cap)
{
    char cmd[512];
    (void)snprintf(cmd, sizeof(cmd), "%s/scripts/pg-cluster.sh %s 2>&1",
                   TN_SOURCE_DIR, args);
    FILE *f = popen(cmd, "r");
    if (f == NULL)
        return -1;
    char line[256] = "";
    if (fgets(line, sizeof(line), f) == NULL)
        line[0] = '\0';
    while (fgetc(f) != EOF)
        ;
    int st = pclose(f);
    if (out != NULL)
        (void)snprintf(out, cap, "%.*s", (int)strcspn(line, "\n"), line);
    if (st != 0)
        fprintf(stderr, "pg-cluster.sh %s: %s\n", args, line);
    return st == 0 ? 0 : -1;
}

/* Acquire n names under x on s, each token above *top, which rises;
 * 503s (the store reconnecting) are tried again for up to 30 s.  False
 * when one is not granted or not above. */
static bool grants_above(struct tn_store *s, const struct sess *x,
                         const char *tag, size_t n, uint64_t *top)
{
    int64_t until = tn_clock_now_ms() + 30000;
    for (size_t i = 0; i < n; i++) {
        char suffix[32];
        struct call g = {0};
        (void)snprintf(suffix, sizeof(suffix), "%s-%zu", tag, i);
        int rc;
        while ((rc = s_acquire(s, &g, x, nm(suffix), "w")) == TN_EUNAVAIL &&
               tn_clock_now_ms() < until)
            run_for(100);
        if (rc != TN_OK || g.res.lease.token <= *top) {
            fprintf(stderr, "%s: %s, token %llu after %llu\n", nm(suffix),
                    tn_errname(rc), (unsigned long long)g.res.lease.token,
                    (unsigned long long)*top);
            return false;
        }
        *top = g.res.lease.token;
    }
    return true;
}

/* Leases under a session get tokens strictly increasing across a crash
 * (SIGKILL of the postmaster) and restart of PostgreSQL, above every
 * token before it; the session itself lives on (its expiry is a row). */
void case_pg_sess_restart(void)
{
    char dir[] = "/tmp/tn-ct-pgcrash.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    CHECK(chmod(dir, 0755) == 0);
    char port[16] = "", args[256], url[128];
    bool ok = cluster("port", port, sizeof(port)) == 0;
    (void)snprintf(args, sizeof(args), "init %s/c %s", dir, port);
    ok = ok && cluster(args, NULL, 0) == 0;
    (void)snprintf(url, sizeof(url),
                   "postgresql://postgres@127.0.0.1:%s/postgres", port);
    struct tn_store *s = NULL;
    ok = ok && open_pg(url, &s) == TN_OK && wait_ready(s, 15000);
    struct sess x;
    struct call c = {0};
    uint64_t top = 0;
    ok = ok && s_open(s, nm("crash"), 60000, &x, &c) == TN_OK;
    bool before = ok && grants_above(s, &x, "crash-a", 5, &top);
    (void)snprintf(args, sizeof(args), "kill %s/c", dir);
    ok = ok && cluster(args, NULL, 0) == 0;
    (void)snprintf(args, sizeof(args), "start %s/c", dir);
    ok = ok && cluster(args, NULL, 0) == 0;
    ok = ok && wait_ready(s, 30000);
    bool after = ok && grants_above(s, &x, "crash-b", 5, &top);
    struct call g = {0};
    bool kept = ok && get_on(s, nm("crash-a-0"), &g) == TN_OK;
    if (s != NULL)
        s->ops->close(s);
    (void)snprintf(args, sizeof(args), "destroy %s/c", dir);
    (void)cluster(args, NULL, 0);
    (void)rmdir(dir);
    CHECK(ok);
    CHECK(before);
    CHECK(after);
    CHECK(kept);
}
