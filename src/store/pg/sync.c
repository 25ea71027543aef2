/* SPDX-License-Identifier: MIT */
/* The synchronous standby check (docs/HA.md): SYNC_SQL (src/store/pg/sql.c)
 * asks the primary whether a standby is in sync_state sync or quorum, and
 * whether this session's synchronous_commit is remote_apply, on every new
 * statement connection and every CHECK_MS after.  Without
 * --require-sync-standby a bad answer is a warning (logged when the answer
 * changes) and tenure_pg_sync_standby 0.  With it the instance refuses
 * every request (503, /readyz 503) from each new connection until a check
 * answers "sync", and again as soon as one does not: p->sync.gate, which
 * batch.c reads; refused for ROTATE_MS, the connections try the other
 * hosts of the string first (maybe_rotate).  It does not make commits safe by
 * itself (a standby can leave between two checks: PostgreSQL then holds the
 * commits); it keeps an instance from serving a primary that is set up to lose
 * them.  Loop thread only. */
#include "store/pg/sync.h"

#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "store/pg/batch.h"
#include "store/pg/conn.h"
#include "store/pg/op.h"

#define CHECK_MS 1000
/* While refusing, the check comes five times as often: the instance
 * serves again within GATED_CHECK_MS of the new primary's standby
 * attaching, instead of within a second. */
#define GATED_CHECK_MS 200
#define ROTATE_MS 1000

static const char *const why[TN_PG_SYNC_N_STATES] = {
    [TN_PG_SYNC_OK] = "a standby is synchronous",
    [TN_PG_SYNC_NONE] = "no standby is synchronous: a failover can lose "
                        "acknowledged grants and reissue their tokens",
    [TN_PG_SYNC_HIDDEN] = "the role may not see pg_stat_replication's "
                          "sync_state: grant it pg_monitor",
    [TN_PG_SYNC_UNNAMED] = "synchronous_standby_names is empty on the "
                           "primary: replication is asynchronous",
    [TN_PG_SYNC_COMMIT] = "synchronous_commit is not remote_apply in "
                          "tenured's session (a pooler dropping session "
                          "settings?)",
    [TN_PG_SYNC_UNKNOWN] = "not checked yet",
};

static void check_fire(void *arg);

static void arm(struct tn_pg *p, int64_t in_ms)
{
    tn_loop_timer_arm(p->loop, &p->sync.timer, tn_clock_now_ms() + in_ms,
                      check_fire, p);
}

static void log_change(struct tn_pg *p)
{
    struct tn_pg_sync *s = &p->sync;
    if (s->state == s->logged || s->state == TN_PG_SYNC_UNKNOWN)
        return;
    s->logged = s->state;
    char host[128];
    tn_pg_hosts_name(&p->hosts, p->hosts.hint, host, sizeof(host));
    if (s->state == TN_PG_SYNC_OK) {
        tn_log(TN_LOG_INFO, "store",
               "\"postgresql primary has a synchronous standby\" "
               "standbys=%lld host=\"%s\"",
               (long long)s->standbys, host);
        return;
    }
    tn_log(TN_LOG_WARN, "store",
           "\"postgresql primary without a synchronous standby\" why=\"%s\" "
           "standbys=%lld required=%s host=\"%s\"",
           why[s->state], (long long)s->standbys,
           s->require ? "true (refusing requests)" : "false", host);
}

/* Required, and the primary has had no synchronous standby for
 * ROTATE_MS: with several hosts, it may be a primary the cluster has left
 * behind (its cluster manager died and another node was promoted; nothing
 * fences it), so the statement connections go to the other hosts first.
 * With no other primary they come back here; with one they stay there.
 * Each round costs a reconnection, only while refusing anyway. */
static void rotate_fire(void *arg);

static void maybe_rotate(struct tn_pg *p)
{
    struct tn_pg_sync *s = &p->sync;
    bool none = s->state == TN_PG_SYNC_NONE || s->state == TN_PG_SYNC_UNNAMED;
    int64_t now = tn_clock_now_ms();
    if (!s->require || !none || p->hosts.n < 2) {
        s->bad_since_ms = 0;
        return;
    }
    if (s->bad_since_ms == 0)
        s->bad_since_ms = now;
    if (now - s->bad_since_ms < ROTATE_MS)
        return;
    s->bad_since_ms = 0;
    /* Not from here: this runs inside a batch's answers (batch.c), and a
     * drop fails that very batch. */
    tn_loop_timer_arm(p->loop, &s->rotate, now, rotate_fire, p);
}

static void rotate_fire(void *arg)
{
    struct tn_pg *p = arg;
    tn_log(TN_LOG_WARN, "store",
           "\"postgresql primary without a synchronous standby for a while; "
           "trying the other hosts first\" after_ms=%d",
           ROTATE_MS);
    for (int i = 0; i < TN_PG_CONNS; i++) {
        struct tn_pg_conn *c = &p->conns[i];
        if (c->state != TN_PG_READY)
            continue;
        tn_pg_hosts_avoid(&p->hosts, c->link.host);
        tn_pg_conn_drop(c, "primary without a synchronous standby");
    }
}

static void check_done(void *arg)
{
    struct tn_pg *p = arg;
    struct tn_pg_sync *s = &p->sync;
    s->checking = false;
    if (p->closing)
        return;
    size_t st = s->result.n_items;
    if (s->result.rc == TN_OK && st < TN_PG_SYNC_UNKNOWN && !s->again) {
        s->state = (int)st;
        s->standbys = (int64_t)s->result.floor;
        s->n_checks++;
        s->gate = s->require && s->state != TN_PG_SYNC_OK;
        log_change(p);
        maybe_rotate(p);
    }
    arm(p, s->again ? 0 : s->gate ? GATED_CHECK_MS : CHECK_MS);
    s->again = false;
}

static void check_fire(void *arg)
{
    struct tn_pg *p = arg;
    struct tn_pg_sync *s = &p->sync;
    tn_loop_timer_disarm(p->loop, &s->timer);
    if (s->checking) {
        s->again = true;
        return;
    }
    if (!tn_pg_is_up(p)) {
        arm(p, CHECK_MS);
        return;
    }
    tn_store_result_release(&s->result);
    memset(&s->result, 0, sizeof(s->result));
    s->checking = true;
    tn_pg_submit(p, tn_pg_op_new(TN_PG_SYNC, "", 0, &s->result), &s->result,
                 check_done, p);
}

void tn_pg_sync_start(struct tn_pg *p, bool require)
{
    struct tn_pg_sync *s = &p->sync;
    s->require = require;
    s->gate = require;
    s->state = TN_PG_SYNC_UNKNOWN;
    s->logged = TN_PG_SYNC_UNKNOWN;
    arm(p, CHECK_MS);
}

void tn_pg_sync_conn_up(struct tn_pg *p)
{
    struct tn_pg_sync *s = &p->sync;
    s->state = TN_PG_SYNC_UNKNOWN;
    s->gate = s->require;
    check_fire(p);
}

void tn_pg_sync_heard(struct tn_pg *p, size_t host, bool has_standby)
{
    struct tn_pg_sync *s = &p->sync;
    if (!s->require || has_standby || p->closing)
        return;
    bool here = false;
    for (int i = 0; i < TN_PG_CONNS; i++)
        here |=
            p->conns[i].state == TN_PG_READY && p->conns[i].link.host == host;
    if (!here)
        return; /* the statement connections are elsewhere: the LISTEN
                   connection follows them at its next heartbeat */
    if (s->state == TN_PG_SYNC_OK || s->state == TN_PG_SYNC_UNKNOWN)
        s->state = TN_PG_SYNC_NONE;
    s->gate = true;
    log_change(p);
    maybe_rotate(p);
}

void tn_pg_sync_stop(struct tn_pg *p)
{
    tn_loop_timer_disarm(p->loop, &p->sync.timer);
    tn_loop_timer_disarm(p->loop, &p->sync.rotate);
}

void tn_pg_sync_free(struct tn_pg *p)
{
    tn_store_result_release(&p->sync.result);
}

void tn_pg_sync_metrics(struct tn_pg *p, struct tn_buf *out)
{
    const struct tn_pg_sync *s = &p->sync;
    (void)tn_buf_printf(
        out,
        "# TYPE tenure_pg_sync_standby gauge\ntenure_pg_sync_standby %d\n"
        "# TYPE tenure_pg_sync_required gauge\ntenure_pg_sync_required %d\n"
        "# TYPE tenure_pg_sync_checks_total counter\n"
        "tenure_pg_sync_checks_total %llu\n",
        s->state == TN_PG_SYNC_OK, s->require, (unsigned long long)s->n_checks);
}
