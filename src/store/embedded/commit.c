/* SPDX-License-Identifier: MIT */
/* The committer thread and the batch hand-over.  `mu` guards open, free
 * list, flags; a batch taken by the committer belongs to it until posted,
 * then to the loop thread until recycled.  With cfg.in_loop the loop
 * thread takes and writes the open batch itself, at the end of the
 * iteration, and the thread only recovers and beats; `io_mu` keeps the
 * writer, the heartbeat and recovery from ever running at once. */
#include "store/embedded/commit.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "common/clock.h"
#include "common/log.h"

enum state {
    ST_OK,         /* writing batches */
    ST_FAILED,     /* a write failed; batches are failed unwritten */
    ST_RECOVERING, /* the loop dropped the open batch; run recover */
};

struct tn_commit {
    struct tn_commit_config cfg;        /* callbacks */
    pthread_t thread;                   /* the committer */
    pthread_mutex_t io_mu;              /* held around every callback */
    pthread_mutex_t mu;                 /* guards everything below */
    pthread_cond_t cv;                  /* committer waits here */
    struct tn_batch *open;              /* the loop appends here */
    struct tn_batch *free_list;         /* recycled batches */
    enum state state;                   /* see enum */
    int fail_rc;                        /* error of the failed write */
    bool stopping;                      /* tn_commit_stop was called */
    struct tn_loop_post recovered_post; /* runs cfg.recovered */
    struct tn_loop_post kick_post;      /* wakes the committer */
    bool kick_queued;                   /* kick_post is deferred (loop) */
    bool parked;                        /* the committer waits for work */
    bool held;                          /* the loop asked: do not cut */
    int64_t last_io_ns;                 /* end of the last write or beat */
};

static void post_batch(struct tn_commit *c, struct tn_batch *b);
static void kick_later(struct tn_commit *c);
static void flush(void *arg);

static int64_t elapsed_us(int64_t start_ns)
{
    return (tn_clock_mono_ns() - start_ns) / 1000;
}

/* mu held: time since the last write or heartbeat. */
static int64_t idle_ms(struct tn_commit *c)
{
    return (tn_clock_mono_ns() - c->last_io_ns) / 1000000;
}

/* Wait for work (mu held).  When nothing was written for heartbeat_ms (by
 * this thread or, in_loop, by the loop), run the heartbeat, so that the
 * store records that the server was alive (restart rule: leases that
 * expired while it was alive stay expired). */
static void wait_or_heartbeat(struct tn_commit *c)
{
    int64_t left = c->cfg.heartbeat_ms - idle_ms(c);
    struct timespec ts = tn_clock_mono_deadline(left > 0 ? left : 0);
    c->parked = true;
    int rc = pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    c->parked = false;
    if (rc != ETIMEDOUT)
        return;
    /* io_mu before mu, as write_batch takes them: a write that failed
     * has set ST_FAILED by the time the heartbeat could run. */
    pthread_mutex_unlock(&c->mu);
    pthread_mutex_lock(&c->io_mu);
    pthread_mutex_lock(&c->mu);
    bool due = idle_ms(c) >= c->cfg.heartbeat_ms;
    bool beat = due && c->state == ST_OK && c->cfg.heartbeat != NULL;
    pthread_mutex_unlock(&c->mu);
    if (beat)
        (void)c->cfg.heartbeat(c->cfg.ctx);
    pthread_mutex_lock(&c->mu);
    if (due) /* the next one a whole interval later, beat or not */
        c->last_io_ns = tn_clock_mono_ns();
    pthread_mutex_unlock(&c->io_mu);
}

/* mu held: the open batch, swapped for a fresh one, if it is to be
 * written now (not while recovering: the loop dropped what was open). */
static struct tn_batch *take_ready(struct tn_commit *c)
{
    if (c->state == ST_RECOVERING || tn_batch_is_empty(c->open))
        return NULL;
    struct tn_batch *b = c->open;
    struct tn_batch *fresh = c->free_list;
    if (fresh != NULL)
        c->free_list = fresh->next;
    else if ((fresh = tn_batch_new(c)) == NULL)
        TN_ASSERT(!"out of memory for a commit batch");
    c->open = fresh;
    return b;
}

/* Committer thread: is there a batch for it (never in_loop, nor while
 * the loop holds the open one)? */
static bool thread_has_batch(struct tn_commit *c)
{
    return !c->cfg.in_loop && !c->held && !tn_batch_is_empty(c->open);
}

/* Committer thread: take the open batch, or NULL when stopping with
 * nothing for it, or to recover. */
static struct tn_batch *take_open(struct tn_commit *c)
{
    pthread_mutex_lock(&c->mu);
    while (!c->stopping && c->state != ST_RECOVERING && !thread_has_batch(c))
        wait_or_heartbeat(c);
    struct tn_batch *b = thread_has_batch(c) ? take_ready(c) : NULL;
    pthread_mutex_unlock(&c->mu);
    return b;
}

/* Write b (make it durable) and set b->rc: the one write path, run by the
 * committer thread or, in_loop, by the loop thread. */
static void write_batch(struct tn_commit *c, struct tn_batch *b)
{
    pthread_mutex_lock(&c->mu);
    enum state st = c->state;
    int fail_rc = c->fail_rc;
    pthread_mutex_unlock(&c->mu);
    if (st != ST_OK) {
        b->rc = fail_rc;
        return;
    }
    pthread_mutex_lock(&c->io_mu);
    int64_t t0 = tn_clock_mono_ns();
    b->sync_us = 0;
    b->rc = b->n_rows > 0 ? c->cfg.write(c->cfg.ctx, b) : TN_OK;
    b->write_us = elapsed_us(t0);
    pthread_mutex_lock(&c->mu);
    if (b->rc < 0) {
        c->state = ST_FAILED;
        c->fail_rc = b->rc;
    }
    c->last_io_ns = tn_clock_mono_ns();
    pthread_mutex_unlock(&c->mu);
    pthread_mutex_unlock(&c->io_mu);
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (long)(ms % 1000) * 1000000};
    (void)nanosleep(&ts, NULL);
}

/* Loop thread: the store takes writes again.  In_loop, what was added
 * while recovering is written at the end of this iteration (the thread
 * would take it next). */
static void on_recovered(void *arg)
{
    struct tn_commit *c = arg;
    c->cfg.recovered(c->cfg.ctx);
    if (c->cfg.in_loop)
        kick_later(c);
}

/* ST_RECOVERING: retry until the store takes writes, or stop. */
static void recover(struct tn_commit *c)
{
    for (;;) {
        pthread_mutex_lock(&c->mu);
        bool stop = c->stopping;
        pthread_mutex_unlock(&c->mu);
        if (stop)
            return;
        pthread_mutex_lock(&c->io_mu);
        int rc = c->cfg.recover(c->cfg.ctx);
        pthread_mutex_unlock(&c->io_mu);
        if (rc == TN_OK)
            break;
        sleep_ms(c->cfg.recover_interval_ms);
    }
    pthread_mutex_lock(&c->mu);
    c->state = ST_OK;
    c->last_io_ns = tn_clock_mono_ns(); /* recover ends with a probe */
    pthread_mutex_unlock(&c->mu);
    c->recovered_post.fn = on_recovered;
    c->recovered_post.arg = c;
    tn_loop_post(c->cfg.loop, &c->recovered_post);
}

static void *committer_main(void *arg)
{
    struct tn_commit *c = arg;
    for (;;) {
        struct tn_batch *b = take_open(c);
        if (b != NULL) {
            write_batch(c, b);
            post_batch(c, b);
            continue;
        }
        pthread_mutex_lock(&c->mu);
        bool recovering = c->state == ST_RECOVERING;
        bool stop = c->stopping;
        pthread_mutex_unlock(&c->mu);
        if (stop)
            return NULL;
        if (recovering)
            recover(c);
    }
}

/* The post carries the batch; cfg.done runs on the loop thread. */
static void on_posted(void *arg)
{
    struct tn_batch *b = arg;
    b->owner->cfg.done(b->owner->cfg.ctx, b);
}

static void post_batch(struct tn_commit *c, struct tn_batch *b)
{
    b->post.fn = on_posted;
    b->post.arg = b;
    tn_loop_post(c->cfg.loop, &b->post);
}

struct tn_commit *tn_commit_start(const struct tn_commit_config *cfg)
{
    struct tn_commit *c = tn_calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->cfg = *cfg;
    c->open = tn_batch_new(c);
    if (c->open == NULL) {
        tn_free(c);
        return NULL;
    }
    c->last_io_ns = tn_clock_mono_ns();
    pthread_mutex_init(&c->io_mu, NULL);
    pthread_mutex_init(&c->mu, NULL);
    if (tn_clock_cond_init(&c->cv) < 0 ||
        pthread_create(&c->thread, NULL, committer_main, c) != 0) {
        tn_batch_free(c->open);
        tn_free(c);
        return NULL;
    }
    return c;
}

void tn_commit_stop(struct tn_commit *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    c->stopping = true;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    (void)pthread_join(c->thread, NULL);
    /* Batches posted before the join are still queued on the loop: run
     * them now, while c is alive, so every waiter is answered. */
    tn_loop_run_posts(c->cfg.loop);
    /* In_loop, the loop writes what is open, as the thread did above. */
    if (c->cfg.in_loop) {
        if (c->kick_queued)
            tn_loop_cancel(c->cfg.loop, &c->kick_post);
        flush(c);
    }
    /* A kick deferred before the stop, or by a done callback just now,
     * must not run on the freed committer (rows added after the stop are
     * never written, as before). */
    if (c->kick_queued)
        tn_loop_cancel(c->cfg.loop, &c->kick_post);
    tn_batch_free(c->open);
    while (c->free_list != NULL) {
        struct tn_batch *b = c->free_list;
        c->free_list = b->next;
        tn_batch_free(b);
    }
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->io_mu);
    tn_free(c);
}

bool tn_commit_parked(struct tn_commit *c)
{
    pthread_mutex_lock(&c->mu);
    bool parked = c->parked;
    pthread_mutex_unlock(&c->mu);
    return parked;
}

/* Wake the committer once per loop iteration rather than once per row:
 * it then takes everything the iteration produced as one batch, instead
 * of committing the first row alone while the rest of the iteration's
 * requests wait a whole commit behind it. */
static void kick(void *arg)
{
    struct tn_commit *c = arg;
    c->kick_queued = false;
    pthread_mutex_lock(&c->mu);
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* In_loop, the kick is the write itself: at the end of the iteration,
 * after every ready fd and due timer added its rows and the answers that
 * were ready have left (a late call, tn_loop_defer_late), the loop writes
 * the open batch (pwrite + fdatasync) and only then answers its waiters;
 * those answers leave in the same iteration, before the loop reads
 * anything new. */
static void flush(void *arg)
{
    struct tn_commit *c = arg;
    c->kick_queued = false;
    pthread_mutex_lock(&c->mu);
    struct tn_batch *b = take_ready(c);
    pthread_mutex_unlock(&c->mu);
    if (b == NULL)
        return;
    write_batch(c, b);
    c->cfg.done(c->cfg.ctx, b);
}

static void kick_later(struct tn_commit *c)
{
    if (c->kick_queued)
        return;
    c->kick_queued = true;
    c->kick_post.arg = c;
    if (c->cfg.in_loop) {
        c->kick_post.fn = flush;
        tn_loop_defer_late(c->cfg.loop, &c->kick_post);
    } else {
        c->kick_post.fn = kick;
        tn_loop_defer(c->cfg.loop, &c->kick_post);
    }
}

void tn_commit_add_row(struct tn_commit *c, const struct tn_lease_entry *l,
                       uint64_t last_token)
{
    pthread_mutex_lock(&c->mu);
    tn_batch_put_lease(c->open, l, last_token);
    pthread_mutex_unlock(&c->mu);
    kick_later(c);
}

void tn_commit_hold(struct tn_commit *c, bool hold)
{
    pthread_mutex_lock(&c->mu);
    c->held = hold;
    pthread_mutex_unlock(&c->mu);
    if (!hold)
        kick_later(c);
}

void tn_commit_add_session(struct tn_commit *c, const struct tn_session *s,
                           bool gone, uint64_t last_token)
{
    pthread_mutex_lock(&c->mu);
    tn_batch_put_session(c->open, s, gone, last_token);
    pthread_mutex_unlock(&c->mu);
    kick_later(c);
}

void tn_commit_add_retire(struct tn_commit *c, const struct tn_lease_entry *l,
                          uint64_t floor)
{
    pthread_mutex_lock(&c->mu);
    tn_batch_put_retire(c->open, l, floor);
    pthread_mutex_unlock(&c->mu);
    kick_later(c);
}

void tn_commit_add_waiter(struct tn_commit *c, tn_store_done_fn done, void *arg,
                          struct tn_store_result *out)
{
    pthread_mutex_lock(&c->mu);
    tn_batch_add_waiter(c->open, done, arg, out);
    pthread_mutex_unlock(&c->mu);
    kick_later(c);
}

void tn_commit_fail_open(struct tn_commit *c, int rc)
{
    pthread_mutex_lock(&c->mu);
    struct tn_batch *b = c->open;
    size_t n = b->n_waiters;
    struct tn_waiter *w = b->waiters;
    b->waiters = NULL;
    b->cap_waiters = 0;
    tn_batch_reset(b);
    c->state = ST_RECOVERING;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; i < n; i++) {
        w[i].out->rc = rc;
        w[i].done(w[i].arg);
    }
    tn_free(w);
}

void tn_commit_recycle(struct tn_commit *c, struct tn_batch *b)
{
    tn_batch_reset(b);
    pthread_mutex_lock(&c->mu);
    b->next = c->free_list;
    c->free_list = b;
    pthread_mutex_unlock(&c->mu);
}
