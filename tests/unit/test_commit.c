/* SPDX-License-Identifier: MIT */
/* The group committer (src/store/embedded/commit.c) on a real loop and a
 * real committer thread, with a writer that records what it was given:
 * what one loop iteration adds is written as one batch, rows in the order
 * they were added; a batch that forms while the previous one is being
 * written waits for it and is written next, as one; every waiter is
 * answered on the loop thread, in order, and only after the write (the
 * fsync) of its batch has returned; a failed write fails its waiters and
 * every batch after it unwritten until the loop drops the open batch and
 * recovery succeeds; stop writes what is open and answers every waiter;
 * an idle committer runs the heartbeat.  The same cases run with in_loop
 * (--commit=inline) where they do not need a blocked writer; in that mode
 * everything that one loop pass adds (ready fds, due timers) is written as
 * one batch on the loop thread at the end of that pass, and its waiters
 * are answered in the same pass, after the write has returned. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <tenure/err.h>

#include "common/clock.h"
#include "common/loop.h"
#include "store/embedded/commit.h"
#include "tn_test.h"

#include <cmocka.h>

#define MAX 64

struct rig;

struct waiter {
    struct rig *rig;
    uint64_t token;             /* of the row it waits for */
    struct tn_store_result res; /* rc written by the done callback */
    bool answered;
};

struct rig {
    struct tn_loop *loop;
    struct tn_commit *c;
    pthread_mutex_t mu; /* guards the writer's side below */
    pthread_cond_t cv;
    bool gate;             /* the writer blocks while set */
    bool in_write;         /* the writer is blocked at the gate */
    int fail_next;         /* rc of the next write, then 0 */
    int recover_rc;        /* what recover answers */
    int writes;            /* calls of the writer */
    int batch_rows[MAX];   /* rows of each write */
    uint64_t written[MAX]; /* tokens, in the order written */
    int n_written;
    uint64_t durable_upto; /* highest token whose write returned */
    int recovers, heartbeats;
    /* loop thread only */
    int recovered;
    uint64_t answered[MAX]; /* tokens, in the order answered */
    int n_answered;
    bool answered_early; /* a waiter ran before its write */
    bool wrote_off_loop; /* in_loop, a write ran off the loop thread */
    bool in_loop;        /* the rig's mode */
    bool off_loop;       /* a done callback ran off the loop */
    pthread_t loop_thread;
    struct waiter w[MAX];
    int n_w;
};

static int on_write(void *ctx, struct tn_batch *b)
{
    struct rig *r = ctx;
    pthread_mutex_lock(&r->mu);
    if (r->in_loop && !pthread_equal(pthread_self(), r->loop_thread))
        r->wrote_off_loop = true;
    r->batch_rows[r->writes++] = (int)b->n_rows;
    for (size_t i = 0; i < b->n_rows; i++)
        r->written[r->n_written++] = b->rows[i].token;
    r->in_write = true;
    pthread_cond_broadcast(&r->cv);
    while (r->gate)
        pthread_cond_wait(&r->cv, &r->mu);
    r->in_write = false;
    int rc = r->fail_next;
    r->fail_next = 0;
    /* the write has returned: what it held is durable */
    if (rc == 0 && b->n_rows > 0)
        r->durable_upto = b->rows[b->n_rows - 1].token;
    pthread_mutex_unlock(&r->mu);
    return rc;
}

/* As the store does: answer the waiters with the batch's result. */
static void on_done(void *ctx, struct tn_batch *b)
{
    struct rig *r = ctx;
    if (!pthread_equal(pthread_self(), r->loop_thread))
        r->off_loop = true;
    for (size_t i = 0; i < b->n_waiters; i++) {
        if (b->rc < 0)
            b->waiters[i].out->rc = b->rc;
        b->waiters[i].done(b->waiters[i].arg);
    }
    tn_commit_recycle(r->c, b);
}

static void on_answer(void *arg)
{
    struct waiter *w = arg;
    struct rig *r = w->rig;
    pthread_mutex_lock(&r->mu);
    if (w->res.rc == 0 && w->token > r->durable_upto)
        r->answered_early = true;
    pthread_mutex_unlock(&r->mu);
    w->answered = true;
    r->answered[r->n_answered++] = w->token;
}

static int on_recover(void *ctx)
{
    struct rig *r = ctx;
    pthread_mutex_lock(&r->mu);
    r->recovers++;
    int rc = r->recover_rc;
    pthread_mutex_unlock(&r->mu);
    return rc;
}

static void on_recovered(void *arg)
{
    ((struct rig *)arg)->recovered++;
}

static int on_heartbeat(void *ctx)
{
    struct rig *r = ctx;
    pthread_mutex_lock(&r->mu);
    r->heartbeats++;
    pthread_mutex_unlock(&r->mu);
    return 0;
}

static bool mode_thread = false, mode_in_loop = true;

/* The mode a test runs in (its prestate). */
static bool mode(void **state)
{
    return *state != NULL && *(bool *)*state;
}

static struct rig *rig_new(int64_t heartbeat_ms, bool in_loop)
{
    struct rig *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->loop_thread = pthread_self();
    r->in_loop = in_loop;
    r->loop = tn_loop_new();
    assert_non_null(r->loop);
    struct tn_commit_config cfg = {
        .loop = r->loop,
        .write = on_write,
        .done = on_done,
        .recover = on_recover,
        .recovered = on_recovered,
        .heartbeat = on_heartbeat,
        .ctx = r,
        .recover_interval_ms = 5,
        .heartbeat_ms = heartbeat_ms,
        .in_loop = in_loop,
    };
    r->c = tn_commit_start(&cfg);
    assert_non_null(r->c);
    return r;
}

static void rig_free(struct rig *r)
{
    if (r->c != NULL)
        tn_commit_stop(r->c);
    tn_loop_free(r->loop);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    assert_false(r->off_loop);
    assert_false(r->answered_early);
    assert_false(r->wrote_off_loop);
    free(r);
}

/* One mutation as the store makes it: its row, then its waiter. */
static void add(struct rig *r, uint64_t token)
{
    char name[32];
    snprintf(name, sizeof(name), "n%llu", (unsigned long long)token);
    struct tn_lease_entry l = {0};
    l.name = name;
    l.owner_id = (char *)"owner";
    l.token = token;
    l.seq = token;
    l.row_id = (uint32_t)token;
    l.held = true;
    tn_commit_add_row(r->c, &l, token);
    struct waiter *w = &r->w[r->n_w++];
    w->rig = r;
    w->token = token;
    tn_commit_add_waiter(r->c, on_answer, w, &w->res);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Run the loop until *done reaches want (a generous bound, not a timing
 * goal: only a hang fails). */
static void pump_until(struct rig *r, const int *count, int want)
{
    int64_t end = now_ms() + 20000;
    while (*count < want && now_ms() < end)
        assert_int_equal(tn_loop_run_once(r->loop, 5), 0);
    assert_int_equal(*count, want);
}

static void wait_in_write(struct rig *r)
{
    pthread_mutex_lock(&r->mu);
    while (!r->in_write) {
        pthread_mutex_unlock(&r->mu);
        assert_int_equal(tn_loop_run_once(r->loop, 5), 0);
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
}

static void open_gate(struct rig *r, bool open)
{
    pthread_mutex_lock(&r->mu);
    r->gate = !open;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static void test_commit__one_iteration_one_batch(void **state)
{
    struct rig *r = rig_new(60000, mode(state));
    /* A committer still starting, not yet asleep, would take whatever is
     * open when it first looks: start from the sleeping committer. */
    while (!tn_commit_parked(r->c))
        assert_int_equal(tn_loop_run_once(r->loop, 1), 0);
    for (uint64_t t = 1; t <= 3; t++)
        add(r, t);
    pump_until(r, &r->n_answered, 3);
    assert_int_equal(r->writes, 1);
    assert_int_equal(r->batch_rows[0], 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(r->written[i], i + 1);
        assert_int_equal(r->answered[i], i + 1);
        assert_int_equal(r->w[i].res.rc, 0);
    }
    rig_free(r);
}

/* What arrives during a write waits for it, then goes as one batch. */
static void test_commit__batches_form_during_a_write(void **state)
{
    (void)state;
    struct rig *r = rig_new(60000, false);
    open_gate(r, false);
    add(r, 1);
    wait_in_write(r);
    for (uint64_t t = 2; t <= 6; t++)
        add(r, t);
    for (int i = 0; i < 20; i++)
        assert_int_equal(tn_loop_run_once(r->loop, 1), 0);
    assert_int_equal(r->n_answered, 0); /* nothing before the fsync */
    open_gate(r, true);
    pump_until(r, &r->n_answered, 6);
    assert_int_equal(r->writes, 2);
    assert_int_equal(r->batch_rows[0], 1);
    assert_int_equal(r->batch_rows[1], 5);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(r->written[i], i + 1);
        assert_int_equal(r->answered[i], i + 1);
    }
    rig_free(r);
}

static void test_commit__failure_then_recovery(void **state)
{
    struct rig *r = rig_new(60000, mode(state));
    r->fail_next = TN_EIO;
    add(r, 1);
    pump_until(r, &r->n_answered, 1);
    assert_int_equal(r->w[0].res.rc, TN_EIO);
    /* failed: the next batch is failed without being written */
    add(r, 2);
    pump_until(r, &r->n_answered, 2);
    assert_int_equal(r->w[1].res.rc, TN_EIO);
    assert_int_equal(r->writes, 1);
    /* the loop drops the open batch: its waiter is answered at once */
    r->recover_rc = TN_EIO; /* the first attempts fail */
    add(r, 3);
    tn_commit_fail_open(r->c, TN_EUNAVAIL);
    assert_true(r->w[2].answered);
    assert_int_equal(r->w[2].res.rc, TN_EUNAVAIL);
    int64_t end = now_ms() + 20000;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        int n = r->recovers;
        if (n >= 2)
            r->recover_rc = 0;
        pthread_mutex_unlock(&r->mu);
        if (n >= 2 || now_ms() > end)
            break;
        assert_int_equal(tn_loop_run_once(r->loop, 5), 0);
    }
    pump_until(r, &r->recovered, 1);
    assert_int_equal(r->writes, 1); /* the dropped row was never written */
    add(r, 4);
    pump_until(r, &r->n_answered, 4);
    assert_int_equal(r->w[3].res.rc, 0);
    assert_int_equal(r->writes, 2);
    assert_int_equal(r->written[1], 4);
    rig_free(r);
}

/* Stop writes what is open and answers every waiter before it returns. */
static void test_commit__stop_writes_and_answers(void **state)
{
    struct rig *r = rig_new(60000, mode(state));
    for (uint64_t t = 1; t <= 4; t++)
        add(r, t);
    tn_commit_stop(r->c);
    r->c = NULL;
    assert_int_equal(r->n_answered, 4);
    assert_int_equal(r->n_written, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(r->answered[i], i + 1);
        assert_int_equal(r->w[i].res.rc, 0);
    }
    rig_free(r);
}

static void test_commit__stop_while_writing(void **state)
{
    (void)state;
    struct rig *r = rig_new(60000, false);
    open_gate(r, false);
    add(r, 1);
    wait_in_write(r);
    add(r, 2);
    open_gate(r, true);
    tn_commit_stop(r->c);
    r->c = NULL;
    assert_int_equal(r->n_answered, 2);
    assert_int_equal(r->n_written, 2);
    rig_free(r);
}

static void test_commit__idle_heartbeat(void **state)
{
    struct rig *r = rig_new(10, mode(state));
    int64_t end = now_ms() + 20000;
    int n = 0;
    while (n < 3 && now_ms() < end) {
        assert_int_equal(tn_loop_run_once(r->loop, 5), 0);
        pthread_mutex_lock(&r->mu);
        n = r->heartbeats;
        pthread_mutex_unlock(&r->mu);
    }
    assert_true(n >= 3);
    assert_int_equal(r->writes, 0); /* a heartbeat is not a batch */
    rig_free(r);
}

/* Row images carry the lease as it was when added, strings included. */
static int check_rows(void *ctx, struct tn_batch *b)
{
    int *ok = ctx;
    assert_int_equal(b->n_rows, 2);
    const struct tn_row *g = &b->rows[0], *x = &b->rows[1];
    assert_string_equal(tn_batch_str(b, g->name_off), "jobs/a");
    assert_string_equal(tn_batch_str(b, g->owner_off), "w1");
    assert_string_equal(tn_batch_str(b, g->rid_off), "req-9");
    assert_null(tn_batch_str(b, g->principal_off));
    assert_int_equal(g->row_id, 7);
    assert_int_equal(g->token, 42);
    assert_int_equal(g->ttl_ms, 5000);
    assert_int_equal(g->expires_at_ms, 123456);
    assert_int_equal(g->lock_delay_ms, 250);
    assert_int_equal(g->secret[0], 0xab);
    assert_true(g->held);
    assert_true(g->ended);
    assert_false(g->retired);
    assert_string_equal(tn_batch_str(b, x->name_off), "jobs/b");
    assert_string_equal(tn_batch_str(b, x->owner_off), "");
    assert_null(tn_batch_str(b, x->rid_off));
    assert_true(x->retired);
    assert_false(x->held);
    assert_int_equal(x->token, 99); /* the retirement floor */
    assert_int_equal(b->last_token, 99);
    assert_int_equal(b->last_seq, 11);
    *ok = 1;
    return 0;
}

static void done_recycle(void *ctx, struct tn_batch *b)
{
    (void)ctx;
    tn_commit_recycle(b->owner, b);
}

static void test_commit__row_images(void **state)
{
    struct tn_loop *loop = tn_loop_new();
    assert_non_null(loop);
    int ok = 0;
    struct tn_commit_config cfg = {.loop = loop,
                                   .write = check_rows,
                                   .done = done_recycle,
                                   .recover = NULL,
                                   .ctx = &ok,
                                   .heartbeat_ms = 60000,
                                   .in_loop = mode(state)};
    struct tn_commit *c = tn_commit_start(&cfg);
    assert_non_null(c);
    char name[] = "jobs/a", owner[] = "w1", rid[] = "req-9";
    struct tn_lease_entry l = {0};
    l.name = name;
    l.owner_id = owner;
    l.request_id = rid;
    l.row_id = 7;
    l.token = 42;
    l.seq = 10;
    l.ttl_ms = 5000;
    l.expires_at_ms = 123456;
    l.lock_delay_ms = 250;
    l.secret[0] = 0xab;
    l.held = true;
    l.expiry_noted = true;
    tn_commit_add_row(c, &l, 42);
    char name_b[] = "jobs/b";
    struct tn_lease_entry rb = {0};
    rb.name = name_b;
    rb.row_id = 8;
    rb.seq = 11;
    tn_commit_add_retire(c, &rb, 99);
    tn_commit_stop(c);
    assert_int_equal(ok, 1);
    tn_loop_free(loop);
}

/* In_loop: nothing is written or answered while the pass runs; at its
 * end one write takes the pass's rows, on the loop thread, and every
 * waiter is answered in that same pass, after the write returned. */
static void test_commit__in_loop_answers_after_the_write(void **state)
{
    (void)state;
    struct rig *r = rig_new(60000, true);
    for (uint64_t t = 1; t <= 3; t++)
        add(r, t);
    assert_int_equal(r->writes, 0);
    assert_int_equal(r->n_answered, 0);
    assert_int_equal(tn_loop_run_once(r->loop, 0), 0);
    assert_int_equal(r->writes, 1);
    assert_int_equal(r->batch_rows[0], 3);
    assert_int_equal(r->durable_upto, 3);
    assert_int_equal(r->n_answered, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(r->answered[i], i + 1);
    rig_free(r); /* answered_early and wrote_off_loop stay false */
}

/* An answer as the HTTP layer sends it: by a deferred tick. */
struct sender {
    struct tn_loop_post p;
    struct rig *r;
    int sent_at; /* writes that had run when the tick sent */
    struct tn_store_result res;
};

static void on_send(void *arg)
{
    struct sender *s = arg;
    s->sent_at = s->r->writes;
}

static void answer_later(void *arg)
{
    struct sender *s = arg;
    tn_loop_defer(s->r->loop, &s->p);
}

/* In_loop: a batch's answers leave in the pass of its write (not a sync
 * later); an answer ready before a pass's write leaves before it. */
static void test_commit__in_loop_answers_leave_with_their_write(void **state)
{
    (void)state;
    struct rig *r = rig_new(60000, true);
    struct sender tick = {
        .p = {.fn = on_send, .arg = &tick}, .r = r, .sent_at = -1};
    add(r, 1);
    tn_commit_add_waiter(r->c, answer_later, &tick, &tick.res);
    assert_int_equal(tn_loop_run_once(r->loop, 0), 0);
    assert_int_equal(r->writes, 1);
    assert_int_equal(tick.sent_at, 1); /* in the pass of write 1 */
    tn_loop_defer(r->loop, &tick.p);   /* a read's answer, ready at once */
    add(r, 2);                         /* then a change */
    assert_int_equal(tn_loop_run_once(r->loop, 0), 0);
    assert_int_equal(r->writes, 2);
    assert_int_equal(tick.sent_at, 1); /* before write 2 */
    rig_free(r);
}

struct source {
    struct rig *r;
    int fd;         /* an eventfd, or -1 for the timer */
    uint64_t token; /* the row it adds */
    struct tn_loop_timer timer;
};

static void source_ready(void *arg, uint32_t events)
{
    (void)events;
    struct source *s = arg;
    uint64_t n;
    if (s->fd >= 0)
        assert_int_equal(read(s->fd, &n, sizeof(n)), sizeof(n));
    add(s->r, s->token);
}

static void source_due(void *arg)
{
    source_ready(arg, 0);
}

/* In_loop: three ready fds and a due timer of one pass make one batch. */
static void test_commit__in_loop_one_pass_one_batch(void **state)
{
    (void)state;
    struct rig *r = rig_new(60000, true);
    struct source src[4];
    uint64_t one = 1;
    for (int i = 0; i < 3; i++) {
        src[i] = (struct source){.r = r, .token = (uint64_t)i + 1};
        src[i].fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        assert_true(src[i].fd >= 0);
        assert_int_equal(
            tn_loop_add_fd(r->loop, src[i].fd, EPOLLIN, source_ready, &src[i]),
            0);
        assert_int_equal(write(src[i].fd, &one, sizeof(one)), sizeof(one));
    }
    src[3] = (struct source){.r = r, .fd = -1, .token = 4};
    tn_loop_timer_arm(r->loop, &src[3].timer, tn_clock_now_ms(), source_due,
                      &src[3]);
    assert_int_equal(tn_loop_run_once(r->loop, 1000), 0);
    assert_int_equal(r->writes, 1);
    assert_int_equal(r->batch_rows[0], 4);
    assert_int_equal(r->n_answered, 4);
    for (int i = 0; i < 3; i++) {
        tn_loop_del_fd(r->loop, src[i].fd);
        close(src[i].fd);
    }
    rig_free(r);
}

/* A case in both modes; the second is named NAME_in_loop. */
#define BOTH(f)                                                                \
    cmocka_unit_test_prestate(f, &mode_thread),                                \
    {                                                                          \
        .name = #f "_in_loop", .test_func = f, .initial_state = &mode_in_loop  \
    }

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH(test_commit__one_iteration_one_batch),
        cmocka_unit_test(test_commit__batches_form_during_a_write),
        BOTH(test_commit__failure_then_recovery),
        BOTH(test_commit__stop_writes_and_answers),
        cmocka_unit_test(test_commit__stop_while_writing),
        BOTH(test_commit__idle_heartbeat),
        BOTH(test_commit__row_images),
        cmocka_unit_test(test_commit__in_loop_answers_after_the_write),
        cmocka_unit_test(test_commit__in_loop_one_pass_one_batch),
        cmocka_unit_test(test_commit__in_loop_answers_leave_with_their_write),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
