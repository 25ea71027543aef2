/* SPDX-License-Identifier: MIT */
/* The end of a session through the store vtable (docs/SESSIONS.md,
 * invariants 2 and 3): DELETE releases every lease of it, force revokes
 * each, an expiry expires each; all at that one instant, every floor kept,
 * the next grant of each name above it, a lock delay after an expiry
 * only; the events: session_ended first, then each lease's own. */
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "contract_sessions.h"

#define N_END 3

/* A session of N_END claimed leases (lock delay delay_ms each): their
 * names in names[], their tokens in tokens[]. */
static int session_of_three(struct sess *s, const char *tag, int64_t ttl_ms,
                            int64_t delay_ms, const char **names,
                            uint64_t *tokens)
{
    static char buf[N_END][64];
    struct call c;
    for (int i = 0; i < N_END; i++) {
        (void)snprintf(buf[i], sizeof(buf[i]), "%s%s-%d", E.prefix, tag, i);
        names[i] = buf[i];
    }
    char owner[80];
    (void)snprintf(owner, sizeof(owner), "%s%s", E.prefix, tag);
    int rc = sess_open(s, owner, NULL, ttl_ms, &c);
    if (rc == TN_OK)
        rc = sess_claim(s, names, N_END, NULL, delay_ms, &c);
    for (int i = 0; rc == TN_OK && i < N_END; i++) {
        if (c.res.claims[i].outcome != TN_CLAIM_GRANTED)
            rc = TN_ECONFLICT;
        tokens[i] = c.res.claims[i].token;
    }
    tn_store_result_release(&c.res);
    return rc;
}

/* After the end of the session of names[]: each name is ended (404, its
 * floor its own token, not current), and one acquire by another owner
 * each answers want (delay: the lock delay must still run). */
static void ended_leases(const char **names, const uint64_t *tokens, int want)
{
    struct call c, a;
    for (int i = 0; i < N_END; i++) {
        CHECK_RC(get(names[i], &c), TN_ENOTFOUND);
        CHECK_RC(check(names[i], tokens[i], &c), TN_OK);
        CHECK(!c.res.current && !c.res.has_live && c.res.floor == tokens[i]);
        CHECK_RC(acquire(&a, names[i], "next", 5000, NULL, 0), want);
        if (want == TN_OK) {
            CHECK(a.res.lease.token > tokens[N_END - 1]);
            CHECK_RC(release(&a, &c), TN_OK);
        }
    }
}

/* The events of the end, in order: session_ended (end), then one `type`
 * per lease. */
static void end_events(const struct sess *s, enum tn_grant_end end,
                       enum tn_event_type type, const uint64_t *tokens)
{
    struct tn_event ev[16];
    size_t n = 0;
    for (int i = 0; i < 300 && n < 1 + N_END; i++) {
        run_for(10);
        n = 0;
        struct tn_event all[64];
        size_t got = events_all(all, 64);
        for (size_t k = 0; k < got && n < 16; k++)
            if (all[k].type == TN_EVENT_SESSION_ENDED || all[k].type == type)
                ev[n++] = all[k];
    }
    CHECK(n == 1 + N_END);
    CHECK(ev[0].type == TN_EVENT_SESSION_ENDED && ev[0].end == end &&
          strcmp(ev[0].session_id, s->id) == 0 && ev[0].name[0] == '\0');
    for (size_t k = 1; k < n; k++) {
        bool ours = false;
        for (int i = 0; i < N_END; i++)
            ours =
                ours || (ev[k].token == tokens[i] && ev[k].floor == tokens[i]);
        CHECK(ev[k].type == type && ours && ev[k].session_id[0] == '\0');
    }
}

/* DELETE: every lease released at once, no lock delay, events in order. */
void case_session_end_releases_all(void)
{
    struct sess s;
    struct call c;
    const char *names[N_END];
    uint64_t tokens[N_END];
    if (!sessions_here("session_end_releases_all"))
        return;
    events_watch(nm("end-rel"));
    CHECK_RC(session_of_three(&s, "end-rel", 5000, 5000, names, tokens), TN_OK);
    CHECK_RC(sess_end(&s, false, &c), TN_OK);
    CHECK_RC(sess_get(s.id, &c), TN_ENOTFOUND);
    CHECK_RC(sess_renew(&s, 0, NULL, &c), TN_ELOST);
    if (E.b->caps.events)
        end_events(&s, TN_GRANT_RELEASED, TN_EVENT_RELEASED, tokens);
    ended_leases(names, tokens, TN_OK); /* released: no lock delay */
    events_watch("");
}

/* Force: every lease revoked. */
void case_session_force_end(void)
{
    struct sess s;
    struct call c;
    const char *names[N_END];
    uint64_t tokens[N_END];
    if (!sessions_here("session_force_end"))
        return;
    events_watch(nm("end-frc"));
    CHECK_RC(session_of_three(&s, "end-frc", 5000, 5000, names, tokens), TN_OK);
    CHECK_RC(sess_end(&s, true, &c), TN_OK);
    CHECK_RC(sess_end(&s, true, &c), TN_ELOST);
    if (E.b->caps.events)
        end_events(&s, TN_GRANT_REVOKED, TN_EVENT_REVOKED, tokens);
    ended_leases(names, tokens, TN_OK);
    events_watch("");
}

/* An expiry: every lease expired at the session's end, each keeping its
 * own lock delay from there; the session never comes back. */
void case_session_expiry_lock_delay(void)
{
    struct sess s;
    struct call c, a;
    const char *names[N_END];
    uint64_t tokens[N_END];
    if (!sessions_here("session_expiry_lock_delay"))
        return;
    events_watch(nm("end-exp"));
    CHECK_RC(session_of_three(&s, "end-exp", 300, 5000, names, tokens), TN_OK);
    CHECK_RC(sess_renew(&s, 0, NULL, &c), TN_OK);
    CHECK_RC(check(names[0], tokens[0], &c), TN_OK);
    CHECK(c.res.current && c.res.lease.token == tokens[0]); /* renew kept it */
    run_for(400);
    CHECK_RC(sess_renew(&s, 0, NULL, &c), TN_ELOST);
    CHECK_RC(sess_get(s.id, &c), TN_ENOTFOUND);
    if (E.b->caps.events)
        end_events(&s, TN_GRANT_EXPIRED, TN_EVENT_EXPIRED, tokens);
    ended_leases(names, tokens, TN_ELOCKDELAY);
    CHECK_RC(acquire(&a, names[0], "next", 5000, NULL, 0), TN_ELOCKDELAY);
    CHECK(a.res.retry_after_ms > 4000 && a.res.retry_after_ms <= 5000);
    events_watch("");
}

/* The session's own events: opened, then ended, with its id and owner. */
void case_session_events(void)
{
    struct sess s;
    struct call c;
    struct tn_event ev[8];
    if (!sessions_here("session_events") ||
        !has_cap(E.b->caps.events, "session_events", "events"))
        return;
    events_watch(nm("sev"));
    CHECK_RC(sess_open(&s, nm("sev"), NULL, 5000, &c), TN_OK);
    CHECK_RC(sess_renew(&s, 0, NULL, &c), TN_OK); /* not an event */
    CHECK_RC(sess_end(&s, false, &c), TN_OK);
    size_t n = 0;
    for (int i = 0; i < 300 && n < 2; i++) {
        run_for(10);
        n = events_all(ev, 8);
    }
    run_for(50);
    n = events_all(ev, 8);
    CHECK(n == 2);
    CHECK(ev[0].type == TN_EVENT_SESSION_OPENED &&
          strcmp(ev[0].session_id, s.id) == 0 &&
          strcmp(ev[0].owner_id, nm("sev")) == 0 && ev[0].name[0] == '\0');
    CHECK(ev[1].type == TN_EVENT_SESSION_ENDED &&
          strcmp(ev[1].session_id, s.id) == 0 &&
          ev[1].end == TN_GRANT_RELEASED);
    events_watch("");
}
