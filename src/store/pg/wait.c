/* SPDX-License-Identifier: MIT */
/* Blocking acquire for the PostgreSQL store, on the shared FIFO waiter
 * queue (src/store/waitq.c): one queue per name within this instance.  Only the
 * first waiter of a name ever runs the acquire statement, one attempt at a
 * time: when an event says the name was released, revoked or expired, when the
 * holder's expiry (plus lock delay) passes, or when the LISTEN connection comes
 * back.  A non-waiting acquire of a name with local waiters is refused as
 * held, so it never jumps the local queue.  A waiter whose client went
 * away is dropped before its turn; if it went away while its attempt was
 * in flight, the grant is released at once.  Instances do not share
 * queues: across instances the order is not FIFO
 * (docs/internals/postgresql.md). */
#include "store/pg/wait.h"

#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "store/pg/batch.h"
#include "store/pg/op.h"

/* A name's queue: the shared one, and its one attempt at a time. */
struct pgq {
    struct tn_waitq q;           /* first */
    struct tn_pg *p;             /* owner */
    bool rewake;                 /* woken while trying: try again */
    struct tn_blocked *trier;    /* whom it is for; NULL once answered */
    struct tn_store_result res;  /* the attempt's result */
    struct tn_store_result last; /* the last refusal seen */
    int64_t last_ms;             /* when it was seen, server clock */
};

#define PGQ(x) ((struct pgq *)(x))

static void attempt(struct pgq *q);

static void on_deadline(struct tn_blocked *w);

static void on_free(struct tn_waitq *q)
{
    tn_store_result_release(&PGQ(q)->res);
    tn_store_result_release(&PGQ(q)->last);
}

/* Its attempt no longer answers w. */
static void on_unlink(struct tn_blocked *w)
{
    struct pgq *q = PGQ(w->q);
    if (q->trier == w)
        q->trier = NULL;
}

static const struct tn_waitq_hooks hooks = {.queue_size = sizeof(struct pgq),
                                            .on_deadline = on_deadline,
                                            .on_free = on_free,
                                            .on_unlink = on_unlink};

int tn_pg_wait_init(struct tn_pg *p, const struct tn_store_config *cfg)
{
    return tn_waitq_init(&p->waits, p->loop, cfg, &hooks);
}

/* Answer an unlinked w (which is freed) with out as filled. */
static void finish(struct tn_blocked *w)
{
    tn_store_done_fn done = w->done;
    void *arg = w->arg;
    tn_waitq_blocked_free(w);
    done(arg);
}

/* A store failure rc, and when to retry it. */
static int64_t retry_of(int rc)
{
    return rc == TN_EUNAVAIL ? TN_PG_RETRY_AFTER_MS : 0;
}

/* Answer an unlinked w as a non-waiting acquire would have been answered
 * at the last refusal its queue saw, aged since. */
static void answer_refused(struct tn_blocked *w)
{
    struct pgq *q = PGQ(w->q);
    struct tn_store_result *out = w->out;
    tn_store_result_release(out);
    memset(out, 0, sizeof(*out));
    if (q->last.rc == TN_ECONFLICT || q->last.rc == TN_ELOCKDELAY) {
        *out = q->last;
        int64_t age = tn_clock_now_ms() - q->last_ms;
        int64_t left = out->lease.expires_in_ms - age;
        out->lease.expires_in_ms = left > 0 ? left : 0;
        out->retry_after_ms =
            out->retry_after_ms - age > 1 ? out->retry_after_ms - age : 1;
    } else {
        out->rc = TN_ECONFLICT; /* no attempt came back yet */
        (void)snprintf(out->lease.name, sizeof(out->lease.name), "%s",
                       q->q.name);
    }
    finish(w);
}

static void on_deadline(struct tn_blocked *w)
{
    struct pgq *q = PGQ(w->q);
    if (q->trier == w) {
        w->timed_out = true; /* its attempt decides */
        return;
    }
    tn_waitq_unlink(w);
    q->p->waits.timed_out++;
    answer_refused(w);
    (void)tn_waitq_release(&q->q);
}

static void wake_timer(void *arg)
{
    attempt(arg);
}

static void arm_at(struct pgq *q, int64_t at_ms)
{
    if (!TAILQ_EMPTY(&q->q.waiters) && !q->p->closing)
        tn_loop_timer_arm(q->p->loop, &q->q.timer, at_ms, wake_timer, q);
}

static void orphan_released(void *arg)
{
    struct tn_store_result *res = arg;
    tn_store_result_release(res);
    tn_free(res);
}

/* A grant nobody will hold (its waiter left meanwhile): release it. */
static void release_orphan(struct tn_pg *p, const struct pgq *q,
                           const struct tn_lease_view *v)
{
    struct tn_store_result *res = tn_calloc(1, sizeof(*res));
    if (res == NULL)
        return; /* it simply expires */
    struct tn_token_req r = {
        .name = q->q.name, .name_len = q->q.name_len, .token = v->token};
    memcpy(r.secret, v->secret, TN_SECRET_BYTES);
    tn_pg_submit(p, tn_pg_op_token(TN_PG_RELEASE, &r, res), res,
                 orphan_released, res);
}

/* The attempt granted the name (to w, or to nobody if w is gone). */
static void granted(struct pgq *q, struct tn_blocked *w)
{
    struct tn_pg *p = q->p;
    bool gone = w == NULL || tn_waitq_gone(w);
    int64_t now = tn_clock_now_ms();
    int64_t ttl_ms = q->res.lease.ttl_ms;
    if (gone && !q->res.replayed)
        release_orphan(p, q, &q->res.lease);
    if (gone && w != NULL) {
        tn_waitq_unlink(w);
        p->waits.dropped++;
        tn_waitq_answer(w, TN_EUNAVAIL, retry_of(TN_EUNAVAIL));
    } else if (w != NULL) {
        tn_waitq_unlink(w);
        p->waits.granted++;
        *w->out = q->res;
        memset(&q->res, 0, sizeof(q->res));
        finish(w);
    }
    /* The next in line waits for the release event, or at the latest
     * for the end of this grant. */
    arm_at(q, now + (ttl_ms > 0 ? ttl_ms : 1));
}

/* The attempt was refused (held, or lock delay). */
static void refused(struct pgq *q, struct tn_blocked *w)
{
    int64_t now = tn_clock_now_ms();
    tn_store_result_release(&q->last);
    q->last = q->res;
    q->last_ms = now;
    memset(&q->res, 0, sizeof(q->res));
    if (w != NULL && w->timed_out) {
        tn_waitq_unlink(w);
        q->p->waits.timed_out++;
        answer_refused(w);
    }
    int64_t wait = q->last.retry_after_ms > 0 ? q->last.retry_after_ms : 1;
    /* An event that came during the attempt may have freed the name. */
    arm_at(q, q->rewake ? now : now + wait);
}

/* The attempt was refused for w alone (its session is not live, or not
 * its own): w is answered so, the next in line is tried at once. */
static void refused_alone(struct pgq *q, struct tn_blocked *w)
{
    if (w != NULL) {
        tn_waitq_unlink(w);
        *w->out = q->res;
        memset(&q->res, 0, sizeof(q->res));
        finish(w);
    }
    arm_at(q, tn_clock_now_ms());
}

static void attempt_done(void *arg)
{
    struct pgq *q = arg;
    struct tn_blocked *w = q->trier;
    q->q.busy = false;
    q->trier = NULL;
    int rc = q->res.rc;
    if (rc == TN_OK)
        granted(q, w);
    else if (rc == TN_ECONFLICT || rc == TN_ELOCKDELAY)
        refused(q, w);
    else if (rc == TN_ELOST || rc == TN_EFORBIDDEN)
        refused_alone(q, w);
    else
        /* the store failed, or a capacity limit refused the grant */
        tn_waitq_fail(&q->q, rc, retry_of(rc), q->res.capacity);
    (void)tn_waitq_release(&q->q);
}

/* Drop the waiters at the head whose clients went away. */
static void drop_gone(struct pgq *q)
{
    struct tn_blocked *w;
    while ((w = TAILQ_FIRST(&q->q.waiters)) != NULL && tn_waitq_gone(w)) {
        tn_waitq_unlink(w);
        q->p->waits.dropped++;
        answer_refused(w);
    }
}

/* Run the acquire statement for the first waiter.  May free q. */
static void attempt(struct pgq *q)
{
    if (q->q.busy) {
        q->rewake = true;
        return;
    }
    if (q->p->closing)
        return;
    drop_gone(q);
    if (tn_waitq_release(&q->q))
        return;
    struct tn_blocked *w = TAILQ_FIRST(&q->q.waiters);
    struct tn_acquire_req r = tn_waitq_request(w);
    tn_loop_timer_disarm(q->p->loop, &q->q.timer);
    tn_store_result_release(&q->res);
    memset(&q->res, 0, sizeof(q->res));
    q->q.busy = true;
    q->rewake = false;
    q->trier = w;
    tn_pg_submit(q->p, tn_pg_op_acquire(&r, &q->res), &q->res, attempt_done, q);
}

/* Answer a non-waiting acquire of a name with local waiters: it never
 * jumps them, so the acquire statement runs granting nothing (no_grant):
 * a replay of the live grant (request_id, or the same session) is
 * answered as such, else 409 held with the holder, or lock delay when
 * the name is free but promised to the first waiter. */
static void refuse_queued(struct tn_pg *p, const struct tn_acquire_req *r,
                          struct tn_store_result *out, tn_store_done_fn done,
                          void *arg)
{
    struct tn_pg_op *op = tn_pg_op_acquire(r, out);
    if (op != NULL)
        op->no_grant = true;
    tn_pg_submit(p, op, out, done, arg);
}

/* A waiting acquire that may be a replay, while others wait for its name
 * (issue #36): the replay must answer the original grant, not queue
 * behind them.  A copy of the request while the check runs. */
struct replay {
    struct tn_pg *p;                         /* the store */
    struct tn_acquire_req r;                 /* pointing into the copies */
    char *strs[5];                           /* owned: name, owner_id,
                                                request_id, principal,
                                                session_id */
    uint8_t secret[TN_SECRET_BYTES];         /* the new lease secret */
    uint8_t session_secret[TN_SECRET_BYTES]; /* presented */
    struct tn_store_result *out;             /* the caller's */
    tn_store_done_fn done;                   /* the caller's */
    void *arg;                               /* its argument */
};

static void replay_free(struct replay *x)
{
    for (size_t i = 0; i < sizeof(x->strs) / sizeof(x->strs[0]); i++)
        tn_free(x->strs[i]);
    tn_free(x);
}

static struct replay *replay_new(const struct tn_acquire_req *r)
{
    struct replay *x = tn_calloc(1, sizeof(*x));
    if (x == NULL)
        return NULL;
    x->r = *r;
    const char *src[5] = {NULL, r->owner_id, r->request_id, r->principal,
                          r->session_id};
    bool ok = (x->strs[0] = tn_strndup(r->name, r->name_len)) != NULL;
    for (size_t i = 1; i < 5 && ok; i++)
        ok = src[i] == NULL || (x->strs[i] = tn_strdup(src[i])) != NULL;
    if (!ok) {
        replay_free(x);
        return NULL;
    }
    memcpy(x->secret, r->secret, TN_SECRET_BYTES);
    if (r->session_secret != NULL)
        memcpy(x->session_secret, r->session_secret, TN_SECRET_BYTES);
    x->r.name = x->strs[0];
    x->r.owner_id = x->strs[1];
    x->r.request_id = x->strs[2];
    x->r.principal = x->strs[3];
    x->r.session_id = x->strs[4];
    x->r.secret = x->secret;
    x->r.session_secret = x->session_secret;
    return x;
}

static void enqueue(struct tn_pg *p, const struct tn_acquire_req *r,
                    struct tn_store_result *out, tn_store_done_fn done,
                    void *arg);

/* The check came back: a replay (or a refusal of r alone: its session, a
 * failure) is the answer; else r waits as it asked. */
static void replay_checked(void *arg)
{
    struct replay *x = arg;
    struct tn_store_result *out = x->out;
    tn_store_done_fn done = x->done;
    void *done_arg = x->arg;
    int rc = out->rc;
    bool gone = x->r.wanted != NULL && !x->r.wanted(x->r.wanted_ctx);
    if (rc == TN_ECONFLICT || rc == TN_ELOCKDELAY) {
        tn_store_result_release(out);
        memset(out, 0, sizeof(*out));
        if (gone) {
            out->rc = TN_ECANCELED;
        } else {
            enqueue(x->p, &x->r, out, done, done_arg);
            replay_free(x);
            return;
        }
    }
    replay_free(x);
    done(done_arg);
}

static void check_replay(struct tn_pg *p, const struct tn_acquire_req *r,
                         struct tn_store_result *out, tn_store_done_fn done,
                         void *arg)
{
    struct replay *x = replay_new(r);
    if (x == NULL) {
        out->rc = TN_ENOMEM;
        done(arg);
        return;
    }
    x->p = p;
    x->out = out;
    x->done = done;
    x->arg = arg;
    refuse_queued(p, &x->r, out, replay_checked, x);
}

/* Queue r behind the waiters of its name (the first in line tries at
 * once), or refuse it when the queues are full. */
static void enqueue(struct tn_pg *p, const struct tn_acquire_req *r,
                    struct tn_store_result *out, tn_store_done_fn done,
                    void *arg)
{
    struct tn_waitq *q = tn_waitq_find(&p->waits, r->name, r->name_len);
    out->rc = tn_waitq_admit(&p->waits, q, out, TN_PG_RETRY_AFTER_MS);
    if (out->rc < 0) {
        done(arg);
        return;
    }
    bool fresh = q == NULL;
    if (tn_waitq_push(&p->waits, &q, r, out, done, arg) == NULL) {
        out->rc = TN_ENOMEM;
        done(arg);
        return;
    }
    if (fresh) {
        PGQ(q)->p = p;
        attempt(PGQ(q)); /* first in line: try at once */
    }
}

bool tn_pg_wait_acquire(struct tn_pg *p, const struct tn_acquire_req *r,
                        struct tn_store_result *out, tn_store_done_fn done,
                        void *arg)
{
    if (r->name_len > TN_NAME_MAX_BYTES)
        return false;
    struct tn_waitq *q = tn_waitq_find(&p->waits, r->name, r->name_len);
    if (q == NULL && r->wait_ms <= 0)
        return false; /* the common case: nobody waits, nor does r */
    if (r->wait_ms <= 0)
        refuse_queued(p, r, out, done, arg);
    else if (q != NULL && (r->request_id != NULL || r->session_id != NULL))
        check_replay(p, r, out, done, arg);
    else
        enqueue(p, r, out, done, arg);
    return true;
}

bool tn_pg_wait_has_waiters(struct tn_pg *p, const char *name, size_t len)
{
    const struct tn_waitq *q = tn_waitq_find(&p->waits, name, len);
    return q != NULL && !TAILQ_EMPTY(&q->waiters);
}

void tn_pg_wait_wake(struct tn_pg *p, const char *name)
{
    struct tn_waitq *q = tn_waitq_find(&p->waits, name, strlen(name));
    if (q != NULL)
        attempt(PGQ(q));
}

void tn_pg_wait_wake_all(struct tn_pg *p)
{
    struct tn_waitq *q = LIST_FIRST(&p->waits.all);
    while (q != NULL) {
        struct tn_waitq *next = LIST_NEXT(q, link);
        attempt(PGQ(q)); /* may free q */
        q = next;
    }
}

void tn_pg_wait_fail_all(struct tn_pg *p, int rc)
{
    tn_waitq_fail_all(&p->waits, rc, retry_of(rc));
}

void tn_pg_wait_free(struct tn_pg *p)
{
    tn_pg_wait_fail_all(p, TN_EUNAVAIL);
    tn_waitq_fini(&p->waits);
}

void tn_pg_wait_metrics(struct tn_pg *p, struct tn_buf *out)
{
    tn_waitq_metrics(&p->waits, out);
}

/* A waiter whose attempt is in flight is unlinked too: a grant that comes
 * back for nobody is released (see granted). */
void tn_pg_wait_cancel(struct tn_pg *p, void *ctx)
{
    tn_waitq_cancel(&p->waits, ctx);
}
