/* SPDX-License-Identifier: MIT */
/* Blocking acquire for the PostgreSQL store: a FIFO queue of waiters per
 * name within this instance (a table keyed by name, as the embedded store
 * hangs its queues on lease entries).  Only the first waiter of a name
 * ever runs the acquire statement, one attempt at a time: when an event
 * says the name was released, revoked or expired, when the holder's
 * expiry (plus lock delay) passes, or when the LISTEN connection comes
 * back.  A non-waiting acquire of a name with local waiters is refused as
 * held, so it never jumps the local queue.  A waiter whose client went
 * away is dropped before its turn; if it went away while its attempt was
 * in flight, the grant is released at once.  Instances do not share
 * queues: across instances the order is not FIFO
 * (docs/internals/postgresql.md). */
#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/hash.h"
#include "store/pg/pg.h"

struct pg_waiter {
    struct tn_pg_waitq *q;           /* its queue */
    struct pg_waiter *next;          /* FIFO */
    struct pg_waiter *prev;          /* FIFO */
    char *owner_id;                  /* owned */
    char *request_id;                /* owned, or NULL */
    char *principal;                 /* owned, or NULL */
    int64_t ttl_ms;                  /* of the grant it asks for */
    int64_t lock_delay_ms;           /* of the grant it asks for */
    uint8_t secret[TN_SECRET_BYTES]; /* drawn by the API */
    bool (*wanted)(void *ctx);       /* is the client still there */
    void *wanted_ctx;                /* its argument */
    bool timed_out;                  /* deadline passed during its attempt */
    struct tn_store_result *out;     /* the caller's result */
    tn_store_done_fn done;           /* the caller's completion */
    void *arg;                       /* its argument */
    struct tn_loop_timer deadline;   /* wait_ms */
};

struct tn_pg_waitq {
    struct tn_pg *p;             /* owner */
    struct tn_pg_waitq *next;    /* bucket chain */
    char *name;                  /* owned */
    uint32_t hash;               /* of name */
    struct pg_waiter *head;      /* first in line */
    struct pg_waiter *tail;      /* last in line */
    size_t n;                    /* waiters */
    bool trying;                 /* an attempt is in flight */
    bool rewake;                 /* woken while trying: try again */
    struct pg_waiter *trier;     /* whom it is for; NULL once answered */
    struct tn_store_result res;  /* the attempt's result */
    struct tn_store_result last; /* the last refusal seen */
    int64_t last_ms;             /* when it was seen, server clock */
    struct tn_loop_timer timer;  /* when the name may be free */
};

/* An acquire refused because the name has waiters: the CHECK that
 * describes the holder for the 409. */
struct refusal {
    struct tn_store_result *out; /* the caller's */
    tn_store_done_fn done;       /* the caller's */
    void *arg;                   /* its argument */
};

static void attempt(struct tn_pg_waitq *q);

static uint32_t hash_of(const char *s)
{
    return (uint32_t)tn_hash(s, strlen(s));
}

int tn_pg_wait_init(struct tn_pg *p, const struct tn_store_config *cfg)
{
    p->max_waiters = cfg->max_waiters;
    p->max_waiters_per_name = cfg->max_waiters_per_name;
    p->max_wait_ms = cfg->max_wait_ms;
    p->wait_buckets = tn_calloc(TN_PG_WAIT_BUCKETS, sizeof(*p->wait_buckets));
    return p->wait_buckets != NULL ? TN_OK : TN_ENOMEM;
}

static struct tn_pg_waitq *find(struct tn_pg *p, const char *name, uint32_t h)
{
    struct tn_pg_waitq *q = p->wait_buckets[h % TN_PG_WAIT_BUCKETS];
    while (q != NULL && (q->hash != h || strcmp(q->name, name) != 0))
        q = q->next;
    return q;
}

static struct tn_pg_waitq *queue_new(struct tn_pg *p, const char *name,
                                     uint32_t h)
{
    struct tn_pg_waitq *q = tn_calloc(1, sizeof(*q));
    if (q == NULL || (q->name = tn_strdup(name)) == NULL) {
        tn_free(q);
        return NULL;
    }
    q->p = p;
    q->hash = h;
    q->next = p->wait_buckets[h % TN_PG_WAIT_BUCKETS];
    p->wait_buckets[h % TN_PG_WAIT_BUCKETS] = q;
    return q;
}

static void queue_unlink(struct tn_pg_waitq *q)
{
    struct tn_pg_waitq **pp = &q->p->wait_buckets[q->hash % TN_PG_WAIT_BUCKETS];
    while (*pp != q)
        pp = &(*pp)->next;
    *pp = q->next;
}

static void queue_free(struct tn_pg_waitq *q)
{
    tn_loop_timer_disarm(q->p->loop, &q->timer);
    tn_store_result_release(&q->res);
    tn_store_result_release(&q->last);
    tn_free(q->name);
    tn_free(q);
}

/* Free q once nobody waits and no attempt is in flight. */
static void queue_free_if_idle(struct tn_pg_waitq *q)
{
    if (q->n > 0 || q->trying)
        return;
    queue_unlink(q);
    queue_free(q);
}

static void unlink_waiter(struct pg_waiter *w)
{
    struct tn_pg_waitq *q = w->q;
    if (w->prev != NULL)
        w->prev->next = w->next;
    else
        q->head = w->next;
    if (w->next != NULL)
        w->next->prev = w->prev;
    else
        q->tail = w->prev;
    q->n--;
    q->p->n_waiters--;
    if (q->trier == w)
        q->trier = NULL;
    tn_loop_timer_disarm(q->p->loop, &w->deadline);
}

static void waiter_free(struct pg_waiter *w)
{
    tn_free(w->owner_id);
    tn_free(w->request_id);
    tn_free(w->principal);
    tn_free(w);
}

/* Answer an unlinked w (which is freed) with out as filled. */
static void finish(struct pg_waiter *w)
{
    tn_store_done_fn done = w->done;
    void *arg = w->arg;
    waiter_free(w);
    done(arg);
}

/* Answer an unlinked w with a store failure rc. */
static void answer_error(struct pg_waiter *w, int rc)
{
    tn_store_result_release(w->out);
    memset(w->out, 0, sizeof(*w->out));
    w->out->rc = rc;
    if (rc == TN_EUNAVAIL)
        w->out->retry_after_ms = TN_PG_RETRY_AFTER_MS;
    finish(w);
}

/* Answer an unlinked w as a non-waiting acquire would have been answered
 * at the last refusal its queue saw, aged since. */
static void answer_refused(struct pg_waiter *w)
{
    struct tn_pg_waitq *q = w->q;
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
        (void)snprintf(out->lease.name, sizeof(out->lease.name), "%s", q->name);
    }
    finish(w);
}

static void on_deadline(void *arg)
{
    struct pg_waiter *w = arg;
    struct tn_pg_waitq *q = w->q;
    if (q->trier == w) {
        w->timed_out = true; /* its attempt decides */
        return;
    }
    unlink_waiter(w);
    q->p->waits_timed_out++;
    answer_refused(w);
    queue_free_if_idle(q);
}

static void wake_timer(void *arg)
{
    attempt(arg);
}

static void arm_at(struct tn_pg_waitq *q, int64_t at_ms)
{
    if (q->head != NULL && !q->p->closing)
        tn_loop_timer_arm(q->p->loop, &q->timer, at_ms, wake_timer, q);
}

static void orphan_released(void *arg)
{
    struct tn_store_result *res = arg;
    tn_store_result_release(res);
    tn_free(res);
}

/* A grant nobody will hold (its waiter left meanwhile): release it. */
static void release_orphan(struct tn_pg *p, const struct tn_pg_waitq *q,
                           const struct tn_lease_view *v)
{
    struct tn_store_result *res = tn_calloc(1, sizeof(*res));
    if (res == NULL)
        return; /* it simply expires */
    struct tn_token_req r = {
        .name = q->name, .name_len = strlen(q->name), .token = v->token};
    memcpy(r.secret, v->secret, TN_SECRET_BYTES);
    tn_pg_submit(p, tn_pg_op_token(TN_PG_RELEASE, &r, res), res,
                 orphan_released, res);
}

/* The attempt granted the name (to w, or to nobody if w is gone). */
static void granted(struct tn_pg_waitq *q, struct pg_waiter *w)
{
    struct tn_pg *p = q->p;
    bool gone = w == NULL || (w->wanted != NULL && !w->wanted(w->wanted_ctx));
    int64_t now = tn_clock_now_ms();
    int64_t ttl_ms = q->res.lease.ttl_ms;
    if (gone && !q->res.replayed)
        release_orphan(p, q, &q->res.lease);
    if (gone && w != NULL) {
        unlink_waiter(w);
        p->waits_dropped++;
        answer_error(w, TN_EUNAVAIL);
    } else if (w != NULL) {
        unlink_waiter(w);
        p->waits_granted++;
        *w->out = q->res;
        memset(&q->res, 0, sizeof(q->res));
        finish(w);
    }
    /* The next in line waits for the release event, or at the latest
     * for the end of this grant. */
    arm_at(q, now + (ttl_ms > 0 ? ttl_ms : 1));
}

/* The attempt was refused (held, or lock delay). */
static void refused(struct tn_pg_waitq *q, struct pg_waiter *w)
{
    int64_t now = tn_clock_now_ms();
    tn_store_result_release(&q->last);
    q->last = q->res;
    q->last_ms = now;
    memset(&q->res, 0, sizeof(q->res));
    if (w != NULL && w->timed_out) {
        unlink_waiter(w);
        q->p->waits_timed_out++;
        answer_refused(w);
    }
    int64_t wait = q->last.retry_after_ms > 0 ? q->last.retry_after_ms : 1;
    /* An event that came during the attempt may have freed the name. */
    arm_at(q, q->rewake ? now : now + wait);
}

static void fail_queue(struct tn_pg_waitq *q, int rc)
{
    while (q->head != NULL) {
        struct pg_waiter *w = q->head;
        unlink_waiter(w);
        answer_error(w, rc);
    }
}

static void attempt_done(void *arg)
{
    struct tn_pg_waitq *q = arg;
    struct pg_waiter *w = q->trier;
    q->trying = false;
    q->trier = NULL;
    int rc = q->res.rc;
    if (rc == TN_OK)
        granted(q, w);
    else if (rc == TN_ECONFLICT || rc == TN_ELOCKDELAY)
        refused(q, w);
    else
        fail_queue(q, rc); /* the store failed: nobody can wait on it */
    queue_free_if_idle(q);
}

/* Drop the waiters at the head whose clients went away. */
static void drop_gone(struct tn_pg_waitq *q)
{
    while (q->head != NULL && q->head->wanted != NULL &&
           !q->head->wanted(q->head->wanted_ctx)) {
        struct pg_waiter *w = q->head;
        unlink_waiter(w);
        q->p->waits_dropped++;
        answer_refused(w);
    }
}

/* Run the acquire statement for the first waiter.  May free q. */
static void attempt(struct tn_pg_waitq *q)
{
    if (q->trying) {
        q->rewake = true;
        return;
    }
    if (q->p->closing)
        return;
    drop_gone(q);
    if (q->head == NULL) {
        queue_free_if_idle(q);
        return;
    }
    struct pg_waiter *w = q->head;
    struct tn_acquire_req r = {.name = q->name,
                               .name_len = strlen(q->name),
                               .owner_id = w->owner_id,
                               .request_id = w->request_id,
                               .principal = w->principal,
                               .ttl_ms = w->ttl_ms,
                               .lock_delay_ms = w->lock_delay_ms,
                               .secret = w->secret};
    tn_loop_timer_disarm(q->p->loop, &q->timer);
    tn_store_result_release(&q->res);
    memset(&q->res, 0, sizeof(q->res));
    q->trying = true;
    q->rewake = false;
    q->trier = w;
    tn_pg_submit(q->p, tn_pg_op_acquire(&r, &q->res), &q->res, attempt_done, q);
}

static struct pg_waiter *waiter_new(const struct tn_acquire_req *r)
{
    struct pg_waiter *w = tn_calloc(1, sizeof(*w));
    if (w == NULL)
        return NULL;
    w->owner_id = tn_strdup(r->owner_id);
    if (r->request_id != NULL)
        w->request_id = tn_strdup(r->request_id);
    if (r->principal != NULL)
        w->principal = tn_strdup(r->principal);
    if (w->owner_id == NULL || (r->request_id != NULL && !w->request_id) ||
        (r->principal != NULL && w->principal == NULL)) {
        waiter_free(w);
        return NULL;
    }
    w->ttl_ms = r->ttl_ms;
    w->lock_delay_ms = r->lock_delay_ms;
    memcpy(w->secret, r->secret, TN_SECRET_BYTES);
    w->wanted = r->wanted;
    w->wanted_ctx = r->wanted_ctx;
    return w;
}

static void enqueue(struct tn_pg_waitq *q, struct pg_waiter *w, int64_t wait)
{
    struct tn_pg *p = q->p;
    w->q = q;
    w->prev = q->tail;
    if (q->tail != NULL)
        q->tail->next = w;
    else
        q->head = w;
    q->tail = w;
    q->n++;
    p->n_waiters++;
    if (wait > p->max_wait_ms)
        wait = p->max_wait_ms;
    tn_loop_timer_arm(p->loop, &w->deadline, tn_clock_now_ms() + wait,
                      on_deadline, w);
}

static void refusal_done(void *arg)
{
    struct refusal *f = arg;
    struct tn_store_result *out = f->out;
    tn_store_done_fn done = f->done;
    void *done_arg = f->arg;
    tn_free(f);
    if (out->rc == TN_OK && out->has_live) {
        out->rc = TN_ECONFLICT;
    } else if (out->rc == TN_OK) {
        out->rc = TN_ELOCKDELAY; /* free, but promised to a waiter */
        out->retry_after_ms = 1;
    }
    done(done_arg);
}

/* Answer a non-waiting acquire of a name with local waiters: 409. */
static void refuse_queued(struct tn_pg *p, const struct tn_acquire_req *r,
                          struct tn_store_result *out, tn_store_done_fn done,
                          void *arg)
{
    struct refusal *f = tn_calloc(1, sizeof(*f));
    struct tn_pg_op *op =
        f != NULL ? tn_pg_op_new(TN_PG_CHECK, r->name, r->name_len, out) : NULL;
    if (op == NULL) {
        tn_free(f);
        out->rc = TN_ENOMEM;
        done(arg);
        return;
    }
    *f = (struct refusal){.out = out, .done = done, .arg = arg};
    tn_pg_submit(p, op, out, refusal_done, f);
}

bool tn_pg_wait_acquire(struct tn_pg *p, const struct tn_acquire_req *r,
                        struct tn_store_result *out, tn_store_done_fn done,
                        void *arg)
{
    char name[TN_NAME_MAX_BYTES + 1];
    if (r->name_len > TN_NAME_MAX_BYTES)
        return false;
    memcpy(name, r->name, r->name_len);
    name[r->name_len] = '\0';
    uint32_t h = hash_of(name);
    struct tn_pg_waitq *q = find(p, name, h);
    if (q == NULL && r->wait_ms <= 0)
        return false; /* the common case: nobody waits, nor does r */
    if (r->wait_ms <= 0) {
        refuse_queued(p, r, out, done, arg);
        return true;
    }
    if (p->n_waiters >= p->max_waiters ||
        (q != NULL ? q->n : 0) >= p->max_waiters_per_name) {
        out->rc = TN_ECAPACITY;
        out->capacity =
            p->n_waiters >= p->max_waiters ? "waiters" : "waiters_per_name";
        out->retry_after_ms = TN_PG_RETRY_AFTER_MS;
        done(arg);
        return true;
    }
    struct pg_waiter *w = waiter_new(r);
    bool fresh = q == NULL;
    if (w != NULL && q == NULL)
        q = queue_new(p, name, h);
    if (w == NULL || q == NULL) {
        if (w != NULL)
            waiter_free(w);
        out->rc = TN_ENOMEM;
        done(arg);
        return true;
    }
    w->out = out;
    w->done = done;
    w->arg = arg;
    enqueue(q, w, r->wait_ms);
    if (fresh)
        attempt(q); /* first in line: try at once */
    return true;
}

void tn_pg_wait_wake(struct tn_pg *p, const char *name)
{
    uint32_t h = hash_of(name);
    struct tn_pg_waitq *q = find(p, name, h);
    if (q != NULL)
        attempt(q);
}

void tn_pg_wait_wake_all(struct tn_pg *p)
{
    for (size_t i = 0; i < TN_PG_WAIT_BUCKETS; i++) {
        struct tn_pg_waitq *q = p->wait_buckets[i];
        while (q != NULL) {
            struct tn_pg_waitq *next = q->next;
            attempt(q); /* may free q */
            q = next;
        }
    }
}

void tn_pg_wait_fail_all(struct tn_pg *p, int rc)
{
    if (p->wait_buckets == NULL)
        return;
    for (size_t i = 0; i < TN_PG_WAIT_BUCKETS; i++) {
        struct tn_pg_waitq *q = p->wait_buckets[i];
        while (q != NULL) {
            struct tn_pg_waitq *next = q->next;
            fail_queue(q, rc);
            queue_free_if_idle(q);
            q = next;
        }
    }
}

void tn_pg_wait_free(struct tn_pg *p)
{
    if (p->wait_buckets == NULL)
        return;
    tn_pg_wait_fail_all(p, TN_EUNAVAIL);
    for (size_t i = 0; i < TN_PG_WAIT_BUCKETS; i++) {
        while (p->wait_buckets[i] != NULL) {
            struct tn_pg_waitq *q = p->wait_buckets[i];
            p->wait_buckets[i] = q->next;
            queue_free(q);
        }
    }
    tn_free(p->wait_buckets);
    p->wait_buckets = NULL;
}

void tn_pg_wait_metrics(struct tn_pg *p, struct tn_buf *out)
{
    (void)tn_buf_printf(out,
                        "# TYPE tenure_waiters gauge\ntenure_waiters %zu\n"
                        "# TYPE tenure_waits_total counter\n"
                        "tenure_waits_total{outcome=\"granted\"} %llu\n"
                        "tenure_waits_total{outcome=\"timed_out\"} %llu\n"
                        "tenure_waits_total{outcome=\"dropped\"} %llu\n",
                        p->n_waiters, (unsigned long long)p->waits_granted,
                        (unsigned long long)p->waits_timed_out,
                        (unsigned long long)p->waits_dropped);
}

/* A scan of every queue: cancels are rare (a client left mid-wait), and
 * the queues are bounded by --max-waiters.  A waiter whose attempt is in
 * flight is unlinked too: a grant that comes back for nobody is released
 * (see granted). */
void tn_pg_wait_cancel(struct tn_pg *p, void *ctx)
{
    for (size_t i = 0; p->wait_buckets != NULL && i < TN_PG_WAIT_BUCKETS; i++) {
        for (struct tn_pg_waitq *q = p->wait_buckets[i]; q != NULL;
             q = q->next) {
            for (struct pg_waiter *w = q->head; w != NULL; w = w->next) {
                if (w->wanted_ctx != ctx)
                    continue;
                unlink_waiter(w);
                p->waits_dropped++;
                answer_error(w, TN_ECANCELED);
                queue_free_if_idle(q);
                return;
            }
        }
    }
}
