/* SPDX-License-Identifier: MIT */
/* One FIFO waiter queue for every backend (waitq.h). */
#include "store/waitq.h"

#include <stddef.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/map.h"

static bool name_eq(const void *entry, const void *key, size_t len)
{
    const struct tn_waitq *q = entry;
    return q->name_len == len && memcmp(q->name, key, len) == 0;
}

static const struct tn_map_type queue_map = {
    .link_off = offsetof(struct tn_waitq, chain),
    .hash_off = offsetof(struct tn_waitq, hash),
    .eq = name_eq,
};

int tn_waitq_init(struct tn_waitq_set *s, struct tn_loop *loop,
                  const struct tn_store_config *cfg,
                  const struct tn_waitq_hooks *hooks)
{
    memset(s, 0, sizeof(*s));
    s->loop = loop;
    s->hooks = hooks;
    s->max_waiters = cfg->max_waiters;
    s->max_waiters_per_name = cfg->max_waiters_per_name;
    s->max_wait_ms = cfg->max_wait_ms;
    LIST_INIT(&s->all);
    return tn_map_init(&s->names, &queue_map, 0);
}

struct tn_waitq *tn_waitq_find(struct tn_waitq_set *s, const char *name,
                               size_t name_len)
{
    return tn_map_find(&s->names, tn_map_hash(name, name_len), name, name_len);
}

static struct tn_waitq *queue_new(struct tn_waitq_set *s, const char *name,
                                  size_t name_len)
{
    struct tn_waitq *q = tn_calloc(1, s->hooks->queue_size);
    if (q == NULL || (q->name = tn_malloc(name_len + 1)) == NULL) {
        tn_free(q);
        return NULL;
    }
    memcpy(q->name, name, name_len);
    q->name[name_len] = '\0';
    q->name_len = name_len;
    q->set = s;
    TAILQ_INIT(&q->waiters);
    q->hash = tn_map_hash(name, name_len);
    tn_map_insert(&s->names, q);
    LIST_INSERT_HEAD(&s->all, q, link);
    return q;
}

static void queue_free(struct tn_waitq *q)
{
    struct tn_waitq_set *s = q->set;
    if (s->hooks->on_free != NULL)
        s->hooks->on_free(q);
    tn_loop_timer_disarm(s->loop, &q->timer);
    (void)tn_map_remove(&s->names, q);
    LIST_REMOVE(q, link);
    tn_free(q->name);
    tn_free(q);
}

bool tn_waitq_release(struct tn_waitq *q)
{
    if (q->n > 0 || q->busy)
        return false;
    queue_free(q);
    return true;
}

void tn_waitq_fini(struct tn_waitq_set *s)
{
    if (s->names.buckets == NULL)
        return; /* never set up */
    while (!LIST_EMPTY(&s->all))
        queue_free(LIST_FIRST(&s->all));
    tn_map_release(&s->names);
}

int tn_waitq_admit(const struct tn_waitq_set *s, const struct tn_waitq *q,
                   struct tn_store_result *out, int64_t retry_ms)
{
    bool all = s->n_waiters >= s->max_waiters;
    if (!all && (q != NULL ? q->n : 0) < s->max_waiters_per_name)
        return TN_OK;
    out->capacity = all ? "waiters" : "waiters_per_name";
    out->retry_after_ms = retry_ms;
    return TN_ECAPACITY;
}

void tn_waitq_blocked_free(struct tn_blocked *w)
{
    tn_free(w->owner_id);
    tn_free(w->request_id);
    tn_free(w->principal);
    tn_free(w->session_id);
    tn_free(w);
}

static struct tn_blocked *blocked_new(const struct tn_acquire_req *r)
{
    struct tn_blocked *w = tn_calloc(1, sizeof(*w));
    if (w == NULL)
        return NULL;
    w->owner_id = tn_strdup(r->owner_id);
    if (r->request_id != NULL)
        w->request_id = tn_strdup(r->request_id);
    if (r->principal != NULL)
        w->principal = tn_strdup(r->principal);
    if (r->session_id != NULL) {
        w->session_id = tn_strdup(r->session_id);
        memcpy(w->session_secret, r->session_secret, TN_SECRET_BYTES);
    }
    if (w->owner_id == NULL || (r->request_id != NULL && !w->request_id) ||
        (r->principal != NULL && w->principal == NULL) ||
        (r->session_id != NULL && w->session_id == NULL)) {
        tn_waitq_blocked_free(w);
        return NULL;
    }
    w->ttl_ms = r->ttl_ms;
    w->lock_delay_ms = r->lock_delay_ms;
    memcpy(w->secret, r->secret, TN_SECRET_BYTES);
    w->wanted = r->wanted;
    w->wanted_ctx = r->wanted_ctx;
    return w;
}

static void on_deadline(void *arg)
{
    struct tn_blocked *w = arg;
    w->q->set->hooks->on_deadline(w);
}

struct tn_blocked *tn_waitq_push(struct tn_waitq_set *s, struct tn_waitq **qp,
                                 const struct tn_acquire_req *r,
                                 struct tn_store_result *out,
                                 tn_store_done_fn done, void *arg)
{
    struct tn_blocked *w = blocked_new(r);
    struct tn_waitq *q = *qp;
    if (w != NULL && q == NULL)
        q = queue_new(s, r->name, r->name_len);
    if (w == NULL || q == NULL) {
        if (w != NULL)
            tn_waitq_blocked_free(w);
        return NULL;
    }
    *qp = q;
    w->q = q;
    w->out = out;
    w->done = done;
    w->arg = arg;
    TAILQ_INSERT_TAIL(&q->waiters, w, link);
    q->n++;
    s->n_waiters++;
    int64_t wait = r->wait_ms < s->max_wait_ms ? r->wait_ms : s->max_wait_ms;
    tn_loop_timer_arm(s->loop, &w->deadline, tn_clock_now_ms() + wait,
                      on_deadline, w);
    return w;
}

void tn_waitq_unlink(struct tn_blocked *w)
{
    struct tn_waitq *q = w->q;
    TAILQ_REMOVE(&q->waiters, w, link);
    if (q->set->hooks->on_unlink != NULL)
        q->set->hooks->on_unlink(w);
    q->n--;
    q->set->n_waiters--;
    tn_loop_timer_disarm(q->set->loop, &w->deadline);
}

struct tn_blocked *tn_waitq_find_ctx(struct tn_waitq_set *s, void *ctx)
{
    struct tn_waitq *q;
    struct tn_blocked *w;
    LIST_FOREACH(q, &s->all, link)
    {
        TAILQ_FOREACH(w, &q->waiters, link)
        {
            if (w->wanted_ctx == ctx)
                return w;
        }
    }
    return NULL;
}

bool tn_waitq_gone(const struct tn_blocked *w)
{
    return w->wanted != NULL && !w->wanted(w->wanted_ctx);
}

struct tn_acquire_req tn_waitq_request(const struct tn_blocked *w)
{
    return (struct tn_acquire_req){.name = w->q->name,
                                   .name_len = w->q->name_len,
                                   .owner_id = w->owner_id,
                                   .request_id = w->request_id,
                                   .principal = w->principal,
                                   .ttl_ms = w->ttl_ms,
                                   .lock_delay_ms = w->lock_delay_ms,
                                   .secret = w->secret,
                                   .session_id = w->session_id,
                                   .session_secret = w->session_secret};
}

void tn_waitq_answer(struct tn_blocked *w, int rc, int64_t retry_ms)
{
    tn_store_done_fn done = w->done;
    void *arg = w->arg;
    w->out->rc = rc;
    if (retry_ms > 0)
        w->out->retry_after_ms = retry_ms;
    tn_waitq_blocked_free(w);
    done(arg);
}

void tn_waitq_fail(struct tn_waitq *q, int rc, int64_t retry_ms,
                   const char *capacity)
{
    struct tn_blocked *w;
    while ((w = TAILQ_FIRST(&q->waiters)) != NULL) {
        tn_waitq_unlink(w);
        if (capacity != NULL)
            w->out->capacity = capacity;
        tn_waitq_answer(w, rc, retry_ms);
    }
}

void tn_waitq_fail_all(struct tn_waitq_set *s, int rc, int64_t retry_ms)
{
    struct tn_waitq *q = LIST_FIRST(&s->all);
    while (q != NULL) {
        struct tn_waitq *next = LIST_NEXT(q, link);
        tn_waitq_fail(q, rc, retry_ms, NULL);
        (void)tn_waitq_release(q);
        q = next;
    }
}

void tn_waitq_cancel(struct tn_waitq_set *s, void *ctx)
{
    struct tn_blocked *w = tn_waitq_find_ctx(s, ctx);
    if (w == NULL)
        return;
    struct tn_waitq *q = w->q;
    tn_waitq_unlink(w);
    s->dropped++;
    tn_waitq_answer(w, TN_ECANCELED, 0);
    (void)tn_waitq_release(q);
}

void tn_waitq_metrics(const struct tn_waitq_set *s, struct tn_buf *out)
{
    (void)tn_buf_printf(out,
                        "# TYPE tenure_waiters gauge\ntenure_waiters %zu\n"
                        "# TYPE tenure_waits_total counter\n"
                        "tenure_waits_total{outcome=\"granted\"} %llu\n"
                        "tenure_waits_total{outcome=\"timed_out\"} %llu\n"
                        "tenure_waits_total{outcome=\"dropped\"} %llu\n",
                        s->n_waiters, (unsigned long long)s->granted,
                        (unsigned long long)s->timed_out,
                        (unsigned long long)s->dropped);
}
