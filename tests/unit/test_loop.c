/* SPDX-License-Identifier: MIT */
/* common/loop: timers fire in deadline order (ties in arming order),
 * disarmed and re-armed timers behave, ten thousand timers stay ordered,
 * fd watches fire and stop when removed, deferred calls run once at the
 * end of the turn and late calls after them, posts arrive from another
 * thread.  Timers are armed in the past (due now) or far in the future, so
 * nothing waits on the clock. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <tenure/err.h>

#include "common/clock.h"
#include "common/loop.h"
#include "tn_test.h"

#include <cmocka.h>

#define MAX_FIRED 20000

struct log {
    int fired[MAX_FIRED]; /* ids in firing order */
    int n;                /* used */
};

struct tagged {
    struct tn_loop_timer t; /* armed by the test */
    struct log *log;        /* where it writes its id */
    int id;                 /* its id */
};

static void record(void *arg)
{
    struct tagged *x = arg;
    assert_true(x->log->n < MAX_FIRED);
    x->log->fired[x->log->n++] = x->id;
}

static int setup(void **state)
{
    *state = tn_loop_new();
    return *state == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    tn_loop_free(*state);
    return 0;
}

static void arm(struct tn_loop *loop, struct tagged *x, int64_t due)
{
    tn_loop_timer_arm(loop, &x->t, due, record, x);
}

/* Five timers armed out of order fire by due_ms; equal due_ms fire in
 * arming order; a future one waits. */
static void test_loop__timers_fire_in_deadline_order(void **state)
{
    struct tn_loop *loop = *state;
    static struct log log;
    log.n = 0;
    int64_t now = tn_clock_now_ms();
    static struct tagged x[6];
    const int64_t due[6] = {-30, -10, -50, -10, -40, 3600 * 1000};
    for (int i = 0; i < 6; i++) {
        x[i] = (struct tagged){.log = &log, .id = i};
        arm(loop, &x[i], now + due[i]);
    }
    assert_int_equal(tn_loop_run_once(loop, 0), TN_OK);
    assert_int_equal(log.n, 5);
    const int want[5] = {2, 4, 0, 1, 3};
    for (int i = 0; i < 5; i++)
        assert_int_equal(log.fired[i], want[i]);
    assert_false(x[0].t.armed);
    assert_true(x[5].t.armed); /* an hour away */
    tn_loop_timer_disarm(loop, &x[5].t);
}

/* A disarmed timer never fires; re-arming moves a timer, not copies it. */
static void test_loop__disarm_and_rearm(void **state)
{
    struct tn_loop *loop = *state;
    static struct log log;
    log.n = 0;
    int64_t now = tn_clock_now_ms();
    static struct tagged x[3];
    for (int i = 0; i < 3; i++) {
        x[i] = (struct tagged){.log = &log, .id = i};
        arm(loop, &x[i], now - 10 - i);
    }
    tn_loop_timer_disarm(loop, &x[1].t);
    tn_loop_timer_disarm(loop, &x[1].t); /* twice is harmless */
    assert_false(x[1].t.armed);
    arm(loop, &x[0], now - 100); /* moves 0 before 2 */
    arm(loop, &x[2], now + 3600 * 1000);
    assert_int_equal(tn_loop_run_once(loop, 0), TN_OK);
    assert_int_equal(log.n, 1);
    assert_int_equal(log.fired[0], 0);
    tn_loop_timer_disarm(loop, &x[2].t);
    assert_int_equal(tn_loop_run_once(loop, 0), TN_OK);
    assert_int_equal(log.n, 1);
}

/* Ten thousand deadlines (a full waiter queue), every third disarmed:
 * the rest fire in deadline order, each once. */
static void test_loop__many_timers(void **state)
{
    struct tn_loop *loop = *state;
    enum { M = 10000 };
    static struct log log;
    static struct tagged x[M];
    log.n = 0;
    int64_t now = tn_clock_now_ms();
    for (int i = 0; i < M; i++) {
        x[i] = (struct tagged){.log = &log, .id = i};
        /* a scrambled but known deadline: (i * 7919) mod M ms ago */
        arm(loop, &x[i], now - 1 - (int64_t)((i * 7919) % M));
    }
    for (int i = 0; i < M; i += 3)
        tn_loop_timer_disarm(loop, &x[i].t);
    assert_int_equal(tn_loop_run_once(loop, 0), TN_OK);
    assert_int_equal(log.n, M - (M + 2) / 3);
    for (int k = 1; k < log.n; k++)
        assert_true(x[log.fired[k - 1]].t.due_ms <= x[log.fired[k]].t.due_ms);
    for (int k = 0; k < log.n; k++)
        assert_true(log.fired[k] % 3 != 0);
}

struct fdw {
    struct tn_loop_watch w; /* the watch */
    int calls;              /* callbacks so far */
    uint32_t events;        /* of the last one */
};

static void on_fd(void *arg, uint32_t events)
{
    struct fdw *f = arg;
    f->calls++;
    f->events = events;
}

/* A watch fires when its fd is readable; once removed it does not. */
static void test_loop__fd_watch_and_unwatch(void **state)
{
    struct tn_loop *loop = *state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    struct fdw f = {.calls = 0};
    assert_int_equal(tn_loop_watch_add(loop, &f.w, p[0], EPOLLIN, on_fd, &f),
                     TN_OK);
    assert_int_equal(tn_loop_run_once(loop, 0), TN_OK);
    assert_int_equal(f.calls, 0); /* nothing to read yet */
    assert_int_equal(write(p[1], "x", 1), 1);
    assert_int_equal(tn_loop_run_once(loop, 1000), TN_OK);
    assert_int_equal(f.calls, 1);
    assert_true(f.events & EPOLLIN);
    tn_loop_watch_del(loop, &f.w);
    assert_int_equal(tn_loop_run_once(loop, 0), TN_OK);
    assert_int_equal(f.calls, 1); /* still readable, but forgotten */
    (void)close(p[0]);
    (void)close(p[1]);

    /* The loop's own table: add, fire, delete. */
    assert_int_equal(pipe(p), 0);
    struct fdw g = {.calls = 0};
    assert_int_equal(tn_loop_add_fd(loop, p[0], EPOLLIN, on_fd, &g), TN_OK);
    assert_int_equal(write(p[1], "x", 1), 1);
    assert_int_equal(tn_loop_run_once(loop, 1000), TN_OK);
    assert_int_equal(g.calls, 1);
    tn_loop_del_fd(loop, p[0]);
    assert_int_equal(tn_loop_run_once(loop, 0), TN_OK);
    assert_int_equal(g.calls, 1);
    assert_int_equal(tn_loop_mod_fd(loop, p[0], EPOLLIN), TN_EINVAL);
    (void)close(p[0]);
    (void)close(p[1]);
}

struct deferred {
    struct tn_loop_post p;     /* the deferral */
    struct tn_loop *loop;      /* to defer again */
    struct tn_loop_post *then; /* deferred from inside, or NULL */
    int calls;                 /* runs so far */
    int seen;                  /* *watch when this ran, or -1 */
    const int *watch;          /* a counter to read when this runs */
};

static void on_deferred(void *arg)
{
    struct deferred *d = arg;
    d->calls++;
    d->seen = d->watch != NULL ? *d->watch : -1;
    if (d->then != NULL) {
        tn_loop_defer(d->loop, d->then);
        d->then = NULL;
    }
}

static void count_call(void *arg)
{
    (*(int *)arg)++;
}

/* A deferred call that cancels another one of the same turn, not yet run. */
struct canceller {
    struct tn_loop_post p;       /* the deferral */
    struct tn_loop *loop;        /* to cancel on */
    struct tn_loop_post *victim; /* cancelled when this runs */
};

static void on_cancel(void *arg)
{
    struct canceller *k = arg;
    tn_loop_cancel(k->loop, k->victim);
}

/* Deferred calls run once, after the turn's timers; those they defer run at
 * the end of the next turn (so work that makes work cannot hold the loop);
 * a cancelled one does not run, even when cancelled by a call of its own
 * turn. */
static void test_loop__defer_runs_once_at_end(void **state)
{
    struct tn_loop *loop = *state;
    int timer_calls = 0;
    struct tn_loop_timer t = {.armed = false};
    struct deferred b = {.p = {.fn = on_deferred}, .loop = loop};
    b.p.arg = &b;
    struct deferred a = {.p = {.fn = on_deferred},
                         .loop = loop,
                         .then = &b.p,
                         .watch = &timer_calls};
    a.p.arg = &a;
    struct deferred c = {.p = {.fn = on_deferred}, .loop = loop};
    c.p.arg = &c;
    struct deferred d = {.p = {.fn = on_deferred}, .loop = loop};
    d.p.arg = &d;
    struct canceller k = {.p = {.fn = on_cancel}, .loop = loop, .victim = &d.p};
    k.p.arg = &k;
    tn_loop_defer(loop, &d.p); /* LIFO: runs after k */
    tn_loop_defer(loop, &k.p);
    tn_loop_defer(loop, &a.p);
    tn_loop_defer(loop, &c.p);
    tn_loop_cancel(loop, &c.p);
    tn_loop_timer_arm(loop, &t, tn_clock_now_ms() - 1, count_call,
                      &timer_calls);
    assert_int_equal(tn_loop_run_once(loop, 0), TN_OK);
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.seen, 1);  /* after the due timer */
    assert_int_equal(b.calls, 0); /* deferred from a deferral */
    assert_int_equal(c.calls, 0); /* cancelled */
    assert_int_equal(d.calls, 0); /* cancelled while running */
    assert_int_equal(tn_loop_run_once(loop, 0), TN_OK);
    assert_int_equal(a.calls, 1); /* once each */
    assert_int_equal(b.calls, 1); /* in the next turn */
    assert_int_equal(tn_loop_run_once(loop, 0), TN_OK);
    assert_int_equal(a.calls + b.calls + c.calls + d.calls, 2);
}

/* A late call runs after the iteration's deferred calls, even those
 * deferred after it; what it defers runs in the same iteration, right
 * after it (the inline commit's answers leave with their sync, not one
 * sync later). */
static void test_loop__late_runs_after_deferred(void **state)
{
    struct tn_loop *loop = *state;
    struct deferred x = {.p = {.fn = on_deferred}, .loop = loop};
    x.p.arg = &x;
    struct deferred late = {.p = {.fn = on_deferred},
                            .loop = loop,
                            .then = &x.p,
                            .watch = &x.calls};
    late.p.arg = &late;
    struct deferred d = {
        .p = {.fn = on_deferred}, .loop = loop, .watch = &late.calls};
    d.p.arg = &d;
    tn_loop_defer_late(loop, &late.p);
    tn_loop_defer(loop, &d.p);
    assert_int_equal(tn_loop_run_once(loop, 0), TN_OK);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.seen, 0); /* before the late call */
    assert_int_equal(late.calls, 1);
    assert_int_equal(late.seen, 0); /* x had not run yet */
    assert_int_equal(x.calls, 1);   /* the same iteration */
    tn_loop_defer_late(loop, &late.p);
    tn_loop_cancel(loop, &late.p);
    assert_int_equal(tn_loop_run_once(loop, 0), TN_OK);
    assert_int_equal(late.calls, 1); /* cancelled */
}

struct poster {
    struct tn_loop *loop;  /* target */
    struct tn_loop_post p; /* the post */
};

static void *post_from_thread(void *arg)
{
    struct poster *ps = arg;
    tn_loop_post(ps->loop, &ps->p);
    return NULL;
}

static void stop_loop(void *arg)
{
    tn_loop_stop(arg);
}

/* A post from another thread wakes the loop and runs on it; tn_loop_run
 * returns after a stop. */
static void test_loop__post_from_thread_and_stop(void **state)
{
    struct tn_loop *loop = *state;
    struct poster ps = {.loop = loop, .p = {.fn = stop_loop, .arg = loop}};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, post_from_thread, &ps), 0);
    assert_int_equal(tn_loop_run(loop), TN_OK); /* returns once stopped */
    assert_int_equal(pthread_join(th, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_loop__timers_fire_in_deadline_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loop__disarm_and_rearm, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_loop__many_timers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_loop__fd_watch_and_unwatch, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_loop__defer_runs_once_at_end,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_loop__late_runs_after_deferred,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_loop__post_from_thread_and_stop,
                                        setup, teardown),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
