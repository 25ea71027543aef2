/* SPDX-License-Identifier: MIT */
/* Sessions across restarts, and what they cost (docs/SESSIONS.md,
 * invariants 5 to 7): a session that may have been live at the restart is
 * live again with its leases (on a store that restarts, for its full TTL
 * from there); a recorded end stays, the session's and every lease's,
 * also when the store stops between the end's commit and the settling of
 * its leases; a renew is one write whatever the number of leases;
 * --max-sessions, and a claim past --max-leases or --max-names refused
 * whole. */
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "contract_sessions.h"

/* Rows the store has written so far (-1: it does not say). */
static long rows_written(void)
{
    return store_gauge(E.s, "tenure_commit_rows_total");
}

/* One renew of a session of 200 leases writes one row: the session's. */
static void renew_steps(void)
{
    struct sess s;
    struct call c;
    CHECK_RC(sess_open(&s, nm("one"), NULL, 5000, &c), TN_OK);
    CHECK(sess_claim_many(&s, nm("one"), 200) == 0);
    run_for(50); /* every commit of the claims is back */
    long before = rows_written();
    CHECK_RC(sess_renew(&s, 0, NULL, &c), TN_OK);
    CHECK(c.res.session.n_leases == 200);
    long after = rows_written();
    if (before >= 0)
        printf("%s/session_renew_one_write: %ld row(s) for a renew of a "
               "session of 200 leases\n",
               E.b->name, after - before);
    CHECK(before < 0 || after - before == 1);
    CHECK_RC(sess_end(&s, false, &c), TN_OK);
}

void case_session_renew_one_write(void)
{
    if (!sessions_here("session_renew_one_write"))
        return;
    struct tn_store_config cfg = base_config();
    if (private_store_begin("one", &cfg) < 0) {
        E.failures++;
        return;
    }
    renew_steps();
    private_store_end();
}

/* Every name of names[0..n) is free: nothing was granted. */
static bool all_free(const char *const *names, size_t n)
{
    struct call c;
    for (size_t i = 0; i < n; i++)
        if (get(names[i], &c) != TN_ENOTFOUND)
            return false;
    return true;
}

static void capacity_steps(void)
{
    struct sess s1, s2, s3;
    struct call c;
    NM(n0, "cap-a");
    NM(n1, "cap-b");
    NM(n2, "cap-c");
    NM(n3, "cap-d");
    NM(n4, "cap-e");
    const char *n[] = {n0, n1, n2, n3, n4};
    CHECK_RC(sess_open(&s1, nm("cap1"), NULL, 10000, &c), TN_OK);
    CHECK_RC(sess_open(&s2, nm("cap2"), NULL, 10000, &c), TN_OK);
    CHECK_RC(sess_open(&s3, nm("cap3"), NULL, 10000, &c), TN_ECAPACITY);
    CHECK(c.res.capacity != NULL && strcmp(c.res.capacity, "sessions") == 0);
    /* max_leases 3: a claim of five is refused whole. */
    CHECK_RC(sess_claim(&s1, n, 5, NULL, 0, &c), TN_ECAPACITY);
    CHECK(strcmp(c.res.capacity, "leases") == 0 && c.res.retry_after_ms > 0);
    CHECK(all_free(n, 5));
    CHECK_RC(sess_claim(&s1, n, 3, NULL, 0, &c), TN_OK);
    uint64_t ta = c.res.claims[0].token, tb = c.res.claims[1].token;
    uint8_t sa[TN_SECRET_BYTES], sb[TN_SECRET_BYTES];
    memcpy(sa, c.res.claims[0].secret, TN_SECRET_BYTES);
    memcpy(sb, c.res.claims[1].secret, TN_SECRET_BYTES);
    tn_store_result_release(&c.res);
    CHECK_RC(sess_claim(&s1, n + 3, 1, NULL, 0, &c), TN_ECAPACITY);
    /* Claims of what it holds are answered again, full or not. */
    CHECK_RC(sess_claim(&s1, n, 3, NULL, 0, &c), TN_OK);
    CHECK(c.res.claims[2].outcome == TN_CLAIM_GRANTED);
    tn_store_result_release(&c.res);
    /* max_names 4: two leases free, three names known; two new names would
     * make five. */
    CHECK_RC(token_op(false, n[0], ta, sa, 0, false, &c), TN_OK);
    CHECK_RC(token_op(false, n[1], tb, sb, 0, false, &c), TN_OK);
    CHECK_RC(sess_claim(&s1, n + 3, 2, NULL, 0, &c), TN_ECAPACITY);
    CHECK(strcmp(c.res.capacity, "names") == 0);
    CHECK(all_free(n + 3, 2));
    const char *fit[] = {n[3], n[0]};
    CHECK_RC(sess_claim(&s1, fit, 2, NULL, 0, &c), TN_OK);
    CHECK(c.res.claims[0].outcome == TN_CLAIM_GRANTED &&
          c.res.claims[1].outcome == TN_CLAIM_GRANTED);
    tn_store_result_release(&c.res);
    CHECK_RC(sess_end(&s2, false, &c), TN_OK);
    CHECK_RC(sess_open(&s3, nm("cap3"), NULL, 10000, &c), TN_OK);
    CHECK_RC(sess_end(&s3, false, &c), TN_OK);
    CHECK_RC(sess_end(&s1, false, &c), TN_OK);
}

void case_session_capacity(void)
{
    if (!sessions_here("session_capacity") ||
        !has_cap(E.b->caps.limits, "session_capacity", "limits"))
        return;
    struct tn_store_config cfg = base_config();
    cfg.max_leases = 3;
    cfg.max_names = 4;
    cfg.max_sessions = 2;
    if (private_store_begin("cap", &cfg) < 0) {
        E.failures++;
        return;
    }
    capacity_steps();
    private_store_end();
}

/* A live session and its leases across a restart; then a recorded end. */
void case_session_restart(void)
{
    struct sess s, x;
    struct call c, a, b;
    if (!sessions_here("session_restart"))
        return;
    NM(n, "rs-a");
    NM(m, "rs-x");
    CHECK_RC(sess_open(&s, nm("rs"), NULL, 3000, &c), TN_OK);
    CHECK_RC(sess_acquire(&s, &a, n, "w", NULL, 5000), TN_OK);
    CHECK_RC(sess_open(&x, nm("rsx"), NULL, 200, &c), TN_OK);
    CHECK_RC(sess_acquire(&x, &b, m, "w", NULL, 0), TN_OK);
    run_for(1200);
    CHECK_RC(check(m, b.res.lease.token, &c), TN_OK);
    CHECK(!c.res.current); /* x's end revealed before the restart */
    CHECK(reopen_store() == 0);
    CHECK_RC(sess_get(s.id, &c), TN_OK);
    /* A store that restarts holds it for its whole TTL from there (about
     * 1800 ms were left, the full TTL is 3000). */
    if (E.b->caps.in_data_dir)
        CHECK(c.res.session.expires_in_ms > 2000);
    CHECK(c.res.session.expires_in_ms > 0 && c.res.session.n_leases == 1);
    CHECK_RC(check(n, a.res.lease.token, &c), TN_OK);
    CHECK(c.res.current);
    CHECK_RC(sess_renew(&s, 0, NULL, &c), TN_OK);
    CHECK_RC(check(m, b.res.lease.token, &c), TN_OK);
    CHECK(!c.res.current && c.res.floor == b.res.lease.token);
    CHECK_RC(sess_renew(&x, 0, NULL, &c), TN_ELOST);
    /* A recorded end stays ended, whatever restarts: released, so its
     * lock delay never applies. */
    CHECK_RC(sess_end(&s, false, &c), TN_OK);
    run_for(100); /* settled, and the session gone */
    CHECK(reopen_store() == 0);
    CHECK_RC(sess_get(s.id, &c), TN_ENOTFOUND);
    CHECK_RC(sess_renew(&s, 0, NULL, &c), TN_ELOST);
    CHECK_RC(check(n, a.res.lease.token, &c), TN_OK);
    CHECK(!c.res.current && c.res.floor == a.res.lease.token);
    CHECK_RC(acquire(&c, n, "next", 5000, NULL, 0), TN_OK);
    CHECK(c.res.lease.token > b.res.lease.token);
}

/* Close E.s and open it again on the same data with cfg. */
static int reopen_with(const struct tn_store_config *cfg)
{
    E.s->ops->close(E.s);
    E.s = NULL;
    if (open_url(E.url, cfg, &E.s) < 0 || !wait_ready(E.s, 15000))
        return -1;
    return 0;
}

/* Revealed, then restarted before the store wrote anything else (no other
 * case's work, no heartbeat yet: only the recorded end can keep it). */
static void revealed_steps(const struct tn_store_config *cfg)
{
    struct sess x;
    struct call c, b;
    NM(m, "rv-x");
    CHECK_RC(sess_open(&x, nm("rv"), NULL, 200, &c), TN_OK);
    CHECK_RC(sess_acquire(&x, &b, m, "w", NULL, 0), TN_OK);
    run_for(260);
    /* Revealed by the session's renew alone: only the session's recorded
     * end is written then (a lease's check would also write its row). */
    CHECK_RC(sess_renew(&x, 0, NULL, &c), TN_ELOST);
    CHECK(reopen_with(cfg) == 0);
    CHECK_RC(check(m, b.res.lease.token, &c), TN_OK);
    CHECK(!c.res.current);
    CHECK_RC(sess_renew(&x, 0, NULL, &c), TN_ELOST);
    CHECK_RC(sess_get(x.id, &c), TN_ENOTFOUND);
}

/* docs/safety/revealed-end.md for sessions: a session's end that was
 * revealed (here: its renew answered lost) stays after a restart that
 * comes before anything else was written, and its leases with it. */
void case_session_revealed_end_stays(void)
{
    if (!sessions_here("session_revealed_end_stays"))
        return;
    struct tn_store_config cfg = base_config();
    if (private_store_begin("rv", &cfg) < 0) {
        E.failures++;
        return;
    }
    revealed_steps(&cfg);
    private_store_end();
}

#define CRASH_LEASES 30000

/* The store stops right after the end of a session of CRASH_LEASES leases
 * is answered, while their settling (a slice per loop turn) is under way:
 * none of them may come back. */
static void crash_steps(const char *prefix)
{
    struct sess s;
    struct call c;
    CHECK_RC(sess_open(&s, nm("crash"), NULL, 60000, &c), TN_OK);
    CHECK(sess_claim_many(&s, prefix, CRASH_LEASES) == 0);
    CHECK_RC(sess_get(s.id, &c), TN_OK);
    CHECK(c.res.session.n_leases == CRASH_LEASES);
    long before = store_gauge(E.s, "tenure_session_leases_settled_total");
    CHECK_RC(sess_end(&s, false, &c), TN_OK);
    long after = store_gauge(E.s, "tenure_session_leases_settled_total");
    CHECK(reopen_store() == 0);
    if (before >= 0) {
        printf("%s/session_end_then_crash: %ld of %d leases settled when "
               "the store stopped\n",
               E.b->name, after - before, CRASH_LEASES);
        CHECK(after - before < CRASH_LEASES); /* the case is the case */
    }
    CHECK_RC(sess_get(s.id, &c), TN_ENOTFOUND);
    CHECK_RC(sess_renew(&s, 0, NULL, &c), TN_ELOST);
    char name[80];
    size_t live = 0;
    for (size_t i = 0; i < CRASH_LEASES; i++) {
        (void)snprintf(name, sizeof(name), "%s-%zu", prefix, i);
        if (check(name, 0, &c) != TN_OK || c.res.has_live || c.res.floor == 0)
            live++;
    }
    if (live > 0)
        fprintf(stderr, "%zu of %d leases came back after the restart\n", live,
                CRASH_LEASES);
    CHECK(live == 0);
    (void)snprintf(name, sizeof(name), "%s-%d", prefix, CRASH_LEASES - 1);
    CHECK_RC(acquire(&c, name, "next", 5000, NULL, 0), TN_OK); /* released */
}

void case_session_end_then_crash(void)
{
    if (!sessions_here("session_end_then_crash"))
        return;
    NM(prefix, "crash");
    crash_steps(prefix);
}
