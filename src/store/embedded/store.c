/* SPDX-License-Identifier: MIT */
/* The embedded store: decisions by the lease state machine on the loop
 * thread, durability by group commit to SQLite.  A response that reveals a
 * change waits for the commit of the batch holding that change (gated by
 * change numbers: a lease whose seq is above durable_seq is not yet
 * durable).  A failed commit turns the store unavailable; on disk full it
 * recovers by itself and reloads the table from the file, on any other I/O
 * error it stays read-only-503 until restarted (after a failed fsync the
 * file's state is unknown). */
#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"
#include "lease/table.h"
#include "store/backend.h"
#include "store/embedded/announce.h"
#include "store/embedded/change.h"
#include "store/embedded/claim.h"
#include "store/embedded/commit.h"
#include "store/embedded/disk.h"
#include "store/embedded/events.h"
#include "store/embedded/history.h"
#include "store/embedded/metrics.h"
#include "store/embedded/read.h"
#include "store/embedded/retire.h"
#include "store/embedded/session.h"
#include "store/embedded/sqlite.h"
#include "store/embedded/wait.h"

/* Grants remembered for GET .../history, across all names. */
#define LEDGER_RECORDS 65536

/* A name with waiters is refused to newcomers that do not wait: a
 * non-waiting acquire never jumps the queue. */
static void refuse_queued(struct embedded *e, struct tn_lease_entry *l,
                          int64_t now, struct tn_store_result *out,
                          tn_store_done_fn done, void *arg)
{
    tn_embedded_note_expiry(e, l, now); /* lock_delay reveals the end */
    tn_store_view_from_lease(&out->lease, l, now);
    out->rc = TN_ECONFLICT;
    if (!tn_lease_is_live(l, now)) {
        out->rc = TN_ELOCKDELAY;
        int64_t free_at = l->expires_at_ms + l->lock_delay_ms;
        out->retry_after_ms = free_at > now ? free_at - now : 1;
    }
    tn_embedded_finish(e, l->seq, out, done, arg);
}

/* --max-leases and --max-names: a grant that would pass one is refused
 * with TN_ECAPACITY (answered now; nothing changed). */
static bool refuse_if_full(struct embedded *e, const struct tn_lease_entry *l,
                           int64_t now, struct tn_store_result *out,
                           tn_store_done_fn done, void *arg)
{
    if (!tn_lease_is_free(l, now))
        return false;
    if (e->max_leases > 0 && e->n_live >= e->max_leases)
        out->capacity = "leases";
    else if (l == NULL && e->max_names > 0 &&
             tn_lease_table_count(&e->table) >= e->max_names)
        out->capacity = "names";
    else
        return false;
    out->rc = TN_ECAPACITY;
    out->retry_after_ms = RETRY_AFTER_MS;
    done(arg);
    return true;
}

/* An acquire under a session that is not live (or not the caller's):
 * answered lost (or forbidden) once the end it reveals is durable.  True
 * if answered. */
static bool refuse_session(struct embedded *e, const struct tn_acquire_req *r,
                           int64_t now, struct tn_store_result *out,
                           tn_store_done_fn done, void *arg)
{
    if (r->session_id == NULL)
        return false;
    struct tn_session_req sr = {.id = r->session_id, .principal = r->principal};
    memcpy(sr.secret, r->session_secret, TN_SECRET_BYTES);
    struct tn_session *s;
    return tn_embedded_session_refuse(e, &sr, now, out, done, arg, &s);
}

/* The live grant r asks for again: answered with its token and secret
 * once it is durable. */
static void replay(struct embedded *e, struct tn_lease_entry *l, int64_t now,
                   struct tn_store_result *out, tn_store_done_fn done,
                   void *arg)
{
    out->rc = TN_OK;
    out->replayed = true;
    tn_store_view_from_lease(&out->lease, l, now);
    tn_embedded_finish(e, l->seq, out, done, arg);
}

static void e_acquire(struct tn_store *s, const struct tn_acquire_req *r,
                      struct tn_store_result *out, tn_store_done_fn done,
                      void *arg)
{
    uint32_t h = tn_lease_hash(r->name, r->name_len); /* find and grant */
    int64_t now;
    struct embedded *e = tn_embedded_op_begin(s, out, done, arg, &now);
    if (e == NULL)
        return;
    struct tn_lease_entry *l =
        tn_lease_find_h(&e->table, h, r->name, r->name_len);
    if (refuse_session(e, r, now, out, done, arg))
        return;
    if (tn_lease_is_replay(l, r, now)) {
        /* Issue #36: a replay gets its grant back before anything else,
         * however many others wait for the name (it would otherwise be
         * refused as queued, or queued behind a grant it holds). */
        replay(e, l, now, out, done, arg);
        return;
    }
    if (tn_embedded_has_waiters(l))
        tn_embedded_wake(e, l); /* serve the queue first if the name is free */
    if (tn_embedded_has_waiters(l) && r->wait_ms <= 0) {
        refuse_queued(e, l, now, out, done, arg);
        return;
    }
    if (tn_embedded_has_waiters(l)) {
        out->rc = tn_embedded_wait(e, l, r, out, done, arg);
        if (out->rc < 0)
            done(arg);
        return;
    }
    tn_embedded_note_expiry(e, l, now);
    if (refuse_if_full(e, l, now, out, done, arg))
        return;
    out->rc = tn_lease_acquire_h(&e->table, h, r, now, &l, &out->replayed,
                                 &out->retry_after_ms);
    if (l != NULL)
        tn_store_view_from_lease(&out->lease, l, now);
    if ((out->rc == TN_ECONFLICT || out->rc == TN_ELOCKDELAY) &&
        r->wait_ms > 0) {
        int rc = tn_embedded_wait(e, l, r, out, done, arg);
        if (rc == TN_OK)
            return;
        out->rc = rc;
    }
    if (out->rc == TN_OK && !out->replayed) {
        tn_embedded_commit_change(e, l, out, done, arg);
        tn_embedded_ledger_grant(e, l, now);
        tn_embedded_emit(e, TN_EVENT_ACQUIRED, l);
        tn_embedded_track_expiry(e, l);
    } else {
        tn_embedded_finish(e, l != NULL ? l->seq : 0, out, done, arg);
    }
}

/* Renew and release: the table's verdict on the token, then on a yes
 * what the operation changes (granted commits it), on a no the answer
 * (`lost`) reveals the end it saw. */
struct token_op {
    int (*apply)(struct tn_lease_table *t, const struct tn_token_req *r,
                 int64_t now_ms, struct tn_lease_entry **out);
    void (*granted)(struct embedded *e, struct tn_lease_entry *l,
                    const struct tn_token_req *r, int64_t now,
                    struct tn_store_result *out, tn_store_done_fn done,
                    void *arg);
    bool view_refused; /* a refusal shows the lease it found */
};

static void token_op(struct tn_store *s, const struct token_op *op,
                     const struct tn_token_req *r, struct tn_store_result *out,
                     tn_store_done_fn done, void *arg)
{
    int64_t now;
    struct embedded *e = tn_embedded_op_begin(s, out, done, arg, &now);
    if (e == NULL)
        return;
    struct tn_lease_entry *l = NULL;
    out->rc = op->apply(&e->table, r, now, &l);
    if (l != NULL && (out->rc == TN_OK || op->view_refused))
        tn_store_view_from_lease(&out->lease, l, now);
    if (out->rc == TN_OK) {
        op->granted(e, l, r, now, out, done, arg);
    } else {
        if (out->rc == TN_EINVAL)
            out->reason = "renew the session: a lease under a session is "
                          "renewed only by its session's renew";
        tn_embedded_note_expiry(e, l, now);
        tn_embedded_finish(e, l != NULL ? l->seq : 0, out, done, arg);
    }
}

static void renewed(struct embedded *e, struct tn_lease_entry *l,
                    const struct tn_token_req *r, int64_t now,
                    struct tn_store_result *out, tn_store_done_fn done,
                    void *arg)
{
    (void)r, (void)now;
    tn_embedded_commit_change(e, l, out, done, arg);
    tn_embedded_track_expiry(e, l);
    tn_embedded_wake(e, l); /* the expiry moved */
}

static void e_renew(struct tn_store *s, const struct tn_token_req *r,
                    struct tn_store_result *out, tn_store_done_fn done,
                    void *arg)
{
    static const struct token_op op = {tn_lease_renew, renewed, false};
    token_op(s, &op, r, out, done, arg);
}

static void released(struct embedded *e, struct tn_lease_entry *l,
                     const struct tn_token_req *r, int64_t now,
                     struct tn_store_result *out, tn_store_done_fn done,
                     void *arg)
{
    tn_embedded_uncount(e, l);
    tn_embedded_commit_change(e, l, out, done, arg);
    tn_embedded_ledger_end(
        e, l, r->force ? TN_GRANT_REVOKED : TN_GRANT_RELEASED, now);
    tn_embedded_emit(e, r->force ? TN_EVENT_REVOKED : TN_EVENT_RELEASED, l);
    tn_embedded_wake(e, l); /* granted at once to the first waiter */
}

static void e_release(struct tn_store *s, const struct tn_token_req *r,
                      struct tn_store_result *out, tn_store_done_fn done,
                      void *arg)
{
    static const struct token_op op = {tn_lease_release, released, true};
    token_op(s, &op, r, out, done, arg);
}

static bool e_is_ready(struct tn_store *s)
{
    return ((struct embedded *)s)->degraded_rc == 0;
}

/* Loop thread: a batch came back from the committer. */
static void on_batch(void *ctx, struct tn_batch *b)
{
    struct embedded *e = ctx;
    int client_rc = TN_OK;
    if (b->rc == TN_OK) {
        if (b->last_seq > e->durable_seq)
            e->durable_seq = b->last_seq;
        tn_embedded_settle_kick(e);
        if (b->n_rows > 0) {
            e->commits++;
            e->rows += b->n_rows;
            tn_metrics_hist_observe(e->batch_hist, N_BATCH_BUCKETS, 1,
                                    b->n_rows);
            tn_metrics_hist_observe(e->lat_hist, N_LAT_BUCKETS, 64,
                                    (uint64_t)b->write_us);
            e->write_seconds += (double)b->write_us / 1e6;
            tn_metrics_hist_observe(e->sync_hist, N_LAT_BUCKETS, 64,
                                    (uint64_t)b->sync_us);
            e->sync_seconds += (double)b->sync_us / 1e6;
        }
    } else {
        client_rc = b->rc == TN_ENOSPC ? TN_ENOSPC : TN_EUNAVAIL;
        e->failures++;
        if (e->degraded_rc == 0) {
            e->degraded_rc = b->rc == TN_ENOSPC ? TN_ENOSPC : TN_EIO;
            tn_log(TN_LOG_ERROR, "store",
                   "\"commit failed, refusing requests until %s\" err=%s",
                   b->rc == TN_ENOSPC ? "space returns" : "restarted",
                   tn_errname(b->rc));
            tn_commit_fail_open(e->commit, client_rc);
            tn_embedded_fail_waiters(e, client_rc);
        }
    }
    for (size_t i = 0; i < b->n_waiters; i++) {
        struct tn_waiter *w = &b->waiters[i];
        if (client_rc != TN_OK) {
            tn_store_result_release(w->out);
            w->out->rc = client_rc;
            w->out->retry_after_ms = RETRY_AFTER_MS;
        }
        w->done(w->arg);
    }
    tn_commit_recycle(e->commit, b);
}

static int c_write(void *ctx, struct tn_batch *b)
{
    struct embedded *e = ctx;
    return tn_disk_write(e->disk, b);
}

/* Committer thread, idle: record that the server is alive. */
static int c_heartbeat(void *ctx)
{
    struct embedded *e = ctx;
    return tn_disk_probe(e->disk);
}

/* Committer thread: after a failure, wait for space, then reload. */
static int c_recover(void *ctx)
{
    struct embedded *e = ctx;
    if (e->degraded_rc == TN_EIO)
        return TN_EIO; /* after a failed fsync nothing is trusted */
    int rc = tn_disk_recover(e->disk);
    if (rc < 0)
        return rc;
    tn_lease_table_release(&e->reloaded);
    rc = tn_lease_table_init(&e->reloaded, tn_lease_table_count(&e->table));
    if (rc == 0)
        rc = tn_disk_load(e->disk, &e->reloaded, tn_clock_now_ms(), true, NULL);
    return rc;
}

/* After a load: count the held leases whose end is not recorded and track
 * their expiries (tracking counts them; a due one is recorded and
 * uncounted by the expiry timer, docs/safety/revealed-end.md). */
static void track_loaded(struct embedded *e)
{
    e->n_live = 0;
    tn_embedded_track_all(e);
}

/* Loop thread: the store takes writes again; adopt the reloaded table. */
static void on_recovered(void *ctx)
{
    struct embedded *e = ctx;
    uint64_t seq = e->table.seq;
    tn_embedded_clear_expiries(e);
    tn_embedded_sessions_clear(e);
    tn_embedded_ledger_clear(e); /* it points into the old table */
    tn_lease_table_release(&e->table);
    e->table = e->reloaded;
    memset(&e->reloaded, 0, sizeof(e->reloaded));
    e->table.seq = seq;
    e->durable_seq = seq;
    e->retired_seq = 0;
    e->degraded_rc = 0;
    track_loaded(e);
    tn_embedded_sessions_loaded(e);
    tn_log(TN_LOG_INFO, "store", "\"store writable again, table reloaded\"");
}

static void e_drain(struct tn_store *s)
{
    tn_embedded_fail_waiters((struct embedded *)s, TN_EUNAVAIL);
}

static void e_close(struct tn_store *s)
{
    struct embedded *e = (struct embedded *)s;
    tn_embedded_fail_waiters(e, TN_EUNAVAIL);
    tn_waitq_fini(&e->waits);
    tn_embedded_retire_stop(e);
    tn_commit_stop(e->commit);
    /* The last commits' answers ran inside the stop and may have asked
     * for the next settling slice: never after this. */
    tn_embedded_sessions_clear(e);
    tn_disk_close(e->disk);
    tn_lease_table_release(&e->table);
    tn_lease_table_release(&e->reloaded);
    tn_embedded_clear_expiries(e);
    tn_heap_release(&e->expiries);
    tn_heap_release(&e->session_expiries);
    tn_embedded_ledger_free(e);
    tn_embedded_free_events(e);
    tn_free(e);
}

static void e_cancel_wait(struct tn_store *s, void *ctx)
{
    tn_embedded_cancel_wait((struct embedded *)s, ctx);
}

static int e_open(struct tn_loop *loop, const struct tn_store_config *cfg,
                  struct tn_store **out, struct tn_errmsg *em);

/* Its line in the registry: src/store/backends.def. */
extern const struct tn_store_ops tn_store_embedded_ops;
const struct tn_store_ops tn_store_embedded_ops = {
    .version = TN_STORE_OPS_VERSION,
    .open = e_open,
    .acquire = e_acquire,
    .renew = e_renew,
    .release = e_release,
    .get = tn_embedded_get,
    .check = tn_embedded_check,
    .list = tn_embedded_list,
    .history = tn_embedded_history,
    .is_ready = e_is_ready,
    .metrics = tn_embedded_metrics,
    .drain = e_drain,
    .close = e_close,
    .cancel_wait = e_cancel_wait,
    .session_open = tn_embedded_session_open,
    .session_renew = tn_embedded_session_renew,
    .session_end = tn_embedded_session_end,
    .session_get = tn_embedded_session_get,
    .session_list = tn_embedded_session_list,
    .claim = tn_embedded_claim,
    .unclaim = tn_embedded_unclaim,
};

/* Track each loaded lease's expiry while its entry is still in the cache
 * (a walk of the table afterwards missed the cache once per lease).  An
 * entry told of again (a second row of its name) may have ended. */
static void track_one_loaded(void *ctx, struct tn_lease_entry *l)
{
    tn_embedded_track_loaded(ctx, l);
}

static int open_db(struct embedded *e, const struct tn_store_config *cfg,
                   struct tn_errmsg *em)
{
    struct tn_sqlite_load_hook hook = {.loaded = track_one_loaded, .ctx = e};
    int rc = tn_disk_open(cfg->data_dir, cfg->journal_bytes, &e->disk, em);
    if (rc == 0)
        rc = tn_lease_table_init(&e->table, cfg->expected_leases);
    if (rc == 0)
        rc = tn_disk_load_hooked(e->disk, &e->table, tn_clock_now_ms(), false,
                                 &hook, em);
    return rc;
}

/* Load the table (restart rules of CONTRACT §4.5) and start the committer
 * thread.  0, TN_EIO (with em) or TN_ENOMEM. */
static int e_open(struct tn_loop *loop, const struct tn_store_config *cfg,
                  struct tn_store **out, struct tn_errmsg *em)
{
    *out = NULL;
    struct embedded *e = tn_calloc(1, sizeof(*e));
    if (e == NULL)
        return TN_ENOMEM;
    e->base.ops = &tn_store_embedded_ops;
    e->loop = loop;
    e->retain_ms = cfg->retain_ms;
    e->max_leases = cfg->max_leases;
    e->max_names = cfg->max_names;
    e->max_sessions = cfg->max_sessions;
    e->on_event = cfg->on_event;
    tn_embedded_sessions_init(e);
    e->event_ctx = cfg->event_ctx;
    int rc = tn_embedded_wait_init(e, cfg);
    if (rc == 0)
        rc = tn_embedded_ledger_init(e, LEDGER_RECORDS);
    if (rc == 0)
        rc = open_db(e, cfg, em);
    if (rc < 0)
        goto out_free;
    struct tn_commit_config cc = {.loop = loop,
                                  .write = c_write,
                                  .done = on_batch,
                                  .recover = c_recover,
                                  .recovered = on_recovered,
                                  .ctx = e,
                                  .heartbeat = c_heartbeat,
                                  .recover_interval_ms = 500,
                                  .heartbeat_ms = 1000,
                                  .in_loop = cfg->commit_in_loop};
    e->commit = tn_commit_start(&cc);
    if (e->commit == NULL) {
        rc = TN_ENOMEM;
        goto out_free;
    }
    tn_embedded_retire_start(e);
    tn_embedded_sessions_loaded(e);
    tn_log(TN_LOG_INFO, "store",
           "\"embedded store open\" dir=\"%s\" leases=%zu sessions=%zu "
           "last_token=%llu retired_floor=%llu commit=%s",
           cfg->data_dir, tn_lease_table_count(&e->table),
           tn_session_count(&e->table), (unsigned long long)e->table.last_token,
           (unsigned long long)e->table.retired_floor,
           cfg->commit_in_loop ? "inline" : "thread");
    *out = &e->base;
    return TN_OK;
out_free:
    tn_embedded_clear_expiries(e); /* the load tracked into them */
    tn_heap_release(&e->expiries);
    tn_heap_release(&e->session_expiries);
    tn_disk_close(e->disk);
    tn_lease_table_release(&e->table);
    tn_embedded_ledger_free(e);
    tn_waitq_fini(&e->waits);
    tn_free(e);
    return rc;
}
