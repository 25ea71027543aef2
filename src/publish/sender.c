/* SPDX-License-Identifier: MIT */
/* The publisher's target threads: each reads the log from its durable
 * cursor (the last id its target acknowledged, saved atomically in
 * dir/cursor-<label>), sends batches, and decides a reset when it lags
 * more than the backlog or the log no longer holds what it needs.
 * Sending after the cursor again after a crash is what makes delivery at
 * least once.  See internal.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/log.h"
#include "internal.h"

/* Sleep until the head passes after, stop, or ms pass. */
void tn_pub_wait_for(struct tn_publish *p, uint64_t after, int64_t ms)
{
    struct timespec ts = tn_clock_mono_deadline(ms);
    (void)pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->waiting, 1);
    if (atomic_load(&p->head) <= after && !atomic_load(&p->stopping))
        (void)pthread_cond_timedwait(&p->cv, &p->mu, &ts);
    atomic_fetch_sub(&p->waiting, 1);
    (void)pthread_mutex_unlock(&p->mu);
}

/* ---- cursors ---- */

int tn_pub_save_cursor(struct target *t, uint64_t c)
{
    char tmp[1320];
    (void)snprintf(tmp, sizeof(tmp), "%s.tmp", t->cursor_path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return TN_EIO;
    char line[32];
    int n = snprintf(line, sizeof(line), "%llu\n", (unsigned long long)c);
    bool ok = write(fd, line, (size_t)n) == n && fdatasync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, t->cursor_path) < 0)
        return TN_EIO;
    t->saved = c;
    return TN_OK;
}

/* The saved cursor, or none: then the target starts at the log's end,
 * like a new SSE subscriber (it was never promised older events). */
uint64_t tn_pub_load_cursor(struct target *t, uint64_t head)
{
    FILE *f = fopen(t->cursor_path, "re");
    if (f == NULL)
        return head;
    unsigned long long c = head;
    if (fscanf(f, "%llu", &c) != 1)
        c = head;
    (void)fclose(f);
    return c;
}

/* ---- the target threads ---- */

static void sleep_ms(struct tn_publish *p, int64_t ms)
{
    tn_pub_wait_for(p, UINT64_MAX, ms);
}

static bool should_stop(struct target *t)
{
    struct tn_publish *p = t->p;
    if (!atomic_load(&p->stopping))
        return false;
    return atomic_load(&t->cursor) >= atomic_load(&p->head) ||
           tn_clock_mono_ms() >= atomic_load(&p->drain_until_ms);
}

void tn_pub_decide_reset(struct target *t, uint64_t head, const char *why)
{
    if (!t->reset_pending) {
        atomic_fetch_add(&t->resets, 1);
        tn_log(TN_LOG_WARN, "publish",
               "\"target misses events, sending a reset\" target=\"%s\" "
               "why=\"%s\" cursor=%llu head=%llu",
               t->label, why, (unsigned long long)atomic_load(&t->cursor),
               (unsigned long long)head);
    }
    t->reset_pending = true;
    t->reset_id = head;
}

/* One round: 1 when something was sent, 0 when idle, <0 on failure. */
/* PostgreSQL: only the cluster's publisher sends.  At the start of its
 * term a target goes on from the log's head, its ids mapped above every
 * id reserved before, after a reset if another publisher came first.
 * 1 to go on with the round, 0 when not the publisher, <0 on failure. */
static int pg_term(struct target *t, uint64_t head)
{
    struct tn_publish *p = t->p;
    if (!atomic_load(&p->lead.leader)) {
        atomic_store(&t->cursor, head);
        atomic_store(&t->oldest_ms, 0);
        t->reset_pending = false;
        t->term = 0;
        return 0;
    }
    uint64_t term = atomic_load(&p->lead.term);
    if (term == t->term)
        return 1;
    uint64_t hi = 0;
    int rc = tn_pub_leader_begin(&p->lead, t->label, &hi);
    if (rc < 0)
        return rc;
    /* From the head when the lock was taken, not when this thread noticed:
     * events in between were heard by no other publisher. */
    uint64_t start = atomic_load(&p->lead.term_head);
    if (start < head)
        head = start;
    t->term = term;
    t->reserved = hi;
    t->reset_pending = hi > 0;
    t->reset_id = head;
    t->offset = hi + (hi > 0 ? 1 : 0) - head;
    atomic_store(&t->cursor, head);
    tn_pub_reader_seek(&t->rd, head + 1);
    if (hi > 0)
        tn_log(TN_LOG_INFO, "publish",
               "\"taking over from an earlier publisher, with a reset\" "
               "target=\"%s\" first_id=%llu",
               t->label, (unsigned long long)(hi + 1));
    return 1;
}

/* PostgreSQL: the batch with ids as sent, once they are reserved. */
static int pg_map(struct target *t, size_t n, const struct tn_pub_record **out)
{
    for (size_t i = 0; i < n; i++) {
        t->mapped[i] = t->batch[i];
        t->mapped[i].id += t->offset;
    }
    *out = t->mapped;
    return tn_pub_leader_reserve(&t->p->lead, t->label, t->mapped[n - 1].id,
                                 &t->reserved);
}

static int round_once(struct target *t)
{
    struct tn_publish *p = t->p;
    uint64_t head = atomic_load(&p->head);
    if (p->pg) {
        int rc = pg_term(t, head);
        if (rc <= 0)
            return rc;
    }
    uint64_t cur = atomic_load(&t->cursor);
    if (head > cur && head - cur > p->backlog)
        tn_pub_decide_reset(t, head, "backlog full");
    struct tn_errmsg em = {{0}};
    size_t n = 0, acked = 0;
    if (t->reset_pending) {
        struct tn_pub_record *r = &t->batch[0];
        memset(r, 0, sizeof(*r));
        r->id = t->reset_id;
        r->type = TN_EVENT_RESET;
        r->at_ms = tn_clock_wall_ms();
        n = 1;
    } else {
        if (head <= cur) {
            atomic_store(&t->oldest_ms, 0);
            return 0;
        }
        if (t->rd.next_id != cur + 1)
            tn_pub_reader_seek(&t->rd, cur + 1);
        int rc = tn_pub_reader_next(&t->rd, head, t->batch, BATCH_MAX, &n);
        if (rc == TN_ENOTFOUND) {
            tn_pub_decide_reset(t, head,
                                "the event log no longer holds the cursor");
            return 1;
        }
        if (rc < 0) {
            tn_log(TN_LOG_ERROR, "publish",
                   "\"cannot read the event log\" err=%s", tn_errname(rc));
            return rc;
        }
        if (n == 0)
            return 0;
        atomic_store(&t->oldest_ms, t->batch[0].at_ms);
    }
    const struct tn_pub_record *send = t->batch;
    int rc = p->pg ? pg_map(t, n, &send) : TN_OK;
    if (rc == 0)
        rc = t->ops->send(t->impl, send, n, &acked, &em);
    if (acked > 0) {
        uint64_t last = t->batch[acked - 1].id;
        if (t->reset_pending) {
            t->reset_pending = false;
            tn_pub_reader_seek(&t->rd, last + 1);
        }
        atomic_store(&t->cursor, last);
        atomic_fetch_add(&t->published, acked);
        if (acked < n)
            atomic_store(&t->oldest_ms, t->batch[acked].at_ms);
    }
    if (rc < 0) {
        if (atomic_load(&t->up))
            tn_log(TN_LOG_WARN, "publish",
                   "\"target down, keeping a backlog\" target=\"%s\" "
                   "err=%s detail=\"%s\"",
                   t->label, tn_errname(rc), em.text);
        atomic_store(&t->up, false);
        return rc;
    }
    if (!atomic_load(&t->up))
        tn_log(TN_LOG_INFO, "publish", "\"target up\" target=\"%s\"", t->label);
    atomic_store(&t->up, true);
    return 1;
}

void *tn_pub_target_main(void *arg)
{
    struct target *t = arg;
    struct tn_publish *p = t->p;
    int64_t backoff = BACKOFF_MIN_MS;
    int64_t last_save = 0;
    while (!should_stop(t)) {
        int rc = round_once(t);
        uint64_t cur = atomic_load(&t->cursor);
        int64_t now = tn_clock_mono_ms();
        if (cur != t->saved && (rc <= 0 || now - last_save >= CURSOR_SAVE_MS)) {
            (void)tn_pub_save_cursor(t, cur);
            last_save = now;
        }
        if (rc < 0) {
            sleep_ms(p, backoff);
            backoff =
                backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
            continue;
        }
        backoff = BACKOFF_MIN_MS;
        if (rc == 0)
            tn_pub_wait_for(p, cur, 200);
    }
    uint64_t cur = atomic_load(&t->cursor);
    if (cur != t->saved)
        (void)tn_pub_save_cursor(t, cur);
    return NULL;
}
