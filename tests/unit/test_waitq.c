/* SPDX-License-Identifier: MIT */
/* store/waitq: the one waiter queue of every backend, on a real loop.
 * Waiters line up FIFO per name and are found by name and by client;
 * admission refuses over the total cap first, then the per-name cap; a
 * deadline (wait_ms, capped by max_wait_ms) calls the backend's hook;
 * cancel, fail and fail_all answer waiters and free the queues nobody
 * waits on (a busy one stays); the backend hears every unlink and every
 * free; thousands of names live in the map at once.  Deadlines are armed
 * due now (wait_ms 0, or a cap of 0) or a minute ahead, so nothing waits
 * on the clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "common/loop.h"
#include "store/waitq.h"
#include "tn_test.h"

#include <cmocka.h>

#define MAX_LOG 64

/* What the hooks and the completions saw. */
struct seen {
    int answered[MAX_LOG]; /* ids of the first answered waiters, in order */
    int n_answered;        /* answered waiters */
    struct tn_blocked *deadline[MAX_LOG]; /* waiters whose deadline passed */
    int n_deadline;
    int n_unlinked; /* on_unlink calls */
    int n_freed;    /* on_free calls */
};

static struct seen seen;

/* A backend's queue struct: the shared one first. */
struct bq {
    struct tn_waitq q;
    int tag;
};

static void on_deadline(struct tn_blocked *w)
{
    assert_true(seen.n_deadline < MAX_LOG);
    seen.deadline[seen.n_deadline++] = w;
}

static void on_free(struct tn_waitq *q)
{
    assert_int_equal(q->n, 0);
    seen.n_freed++;
}

static void on_unlink(struct tn_blocked *w)
{
    assert_non_null(w->q);
    seen.n_unlinked++;
}

static const struct tn_waitq_hooks hooks = {.queue_size = sizeof(struct bq),
                                            .on_deadline = on_deadline,
                                            .on_free = on_free,
                                            .on_unlink = on_unlink};

/* One caller: its result and its id. */
struct caller {
    struct tn_store_result out;
    int id;
};

static void done(void *arg)
{
    struct caller *c = arg;
    if (seen.n_answered < MAX_LOG)
        seen.answered[seen.n_answered] = c->id;
    seen.n_answered++;
}

struct fixture {
    struct tn_loop *loop;
    struct tn_waitq_set set;
};

static struct tn_store_config limits(size_t all, size_t per_name,
                                     int64_t max_wait_ms)
{
    return (struct tn_store_config){.max_waiters = all,
                                    .max_waiters_per_name = per_name,
                                    .max_wait_ms = max_wait_ms};
}

static int setup(void **state)
{
    static struct fixture f;
    memset(&f, 0, sizeof(f));
    memset(&seen, 0, sizeof(seen));
    f.loop = tn_loop_new();
    if (f.loop == NULL)
        return -1;
    struct tn_store_config cfg = limits(8, 4, 60000);
    if (tn_waitq_init(&f.set, f.loop, &cfg, &hooks) < 0)
        return -1;
    *state = &f;
    return 0;
}

/* Every case answers its waiters: their callers live on its stack. */
static int teardown(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(f->set.n_waiters, 0);
    tn_waitq_fini(&f->set);
    tn_loop_free(f->loop);
    return 0;
}

static const uint8_t secret[TN_SECRET_BYTES] = {1, 2, 3};

/* Queue caller c on name (ctx: its client) for wait_ms. */
static struct tn_blocked *push(struct tn_waitq_set *s, const char *name,
                               struct caller *c, void *ctx, int64_t wait_ms)
{
    struct tn_waitq *q = tn_waitq_find(s, name, strlen(name));
    struct tn_acquire_req r = {.name = name,
                               .name_len = strlen(name),
                               .owner_id = "owner",
                               .request_id = "rid",
                               .ttl_ms = 5000,
                               .lock_delay_ms = 7,
                               .secret = secret,
                               .wait_ms = wait_ms,
                               .wanted_ctx = ctx};
    struct tn_blocked *w = tn_waitq_push(s, &q, &r, &c->out, done, c);
    assert_non_null(w);
    assert_ptr_equal(w->q, q);
    return w;
}

static void fifo_per_name_and_request_copy(void **state)
{
    struct fixture *f = *state;
    struct caller c[4] = {{.id = 1}, {.id = 2}, {.id = 3}, {.id = 4}};
    push(&f->set, "a", &c[0], NULL, 60000);
    push(&f->set, "b", &c[1], NULL, 60000);
    push(&f->set, "a", &c[2], NULL, 60000);
    push(&f->set, "a", &c[3], NULL, 60000);
    struct tn_waitq *a = tn_waitq_find(&f->set, "a", 1);
    assert_non_null(a);
    assert_non_null(tn_waitq_find(&f->set, "b", 1));
    assert_null(tn_waitq_find(&f->set, "c", 1));
    assert_null(tn_waitq_find(&f->set, "ab", 2));
    assert_int_equal(a->n, 3);
    assert_int_equal(f->set.n_waiters, 4);
    struct tn_acquire_req r = tn_waitq_request(TAILQ_FIRST(&a->waiters));
    assert_int_equal(r.name_len, 1);
    assert_memory_equal(r.name, "a", 1);
    assert_string_equal(r.owner_id, "owner");
    assert_string_equal(r.request_id, "rid");
    assert_int_equal(r.ttl_ms, 5000);
    assert_int_equal(r.lock_delay_ms, 7);
    assert_memory_equal(r.secret, secret, TN_SECRET_BYTES);
    assert_int_equal(r.wait_ms, 0); /* the re-run acquire does not wait */
    struct tn_blocked *w;
    while ((w = TAILQ_FIRST(&a->waiters)) != NULL) {
        tn_waitq_unlink(w);
        tn_waitq_answer(w, TN_OK, 0);
    }
    int want[] = {1, 3, 4};
    assert_int_equal(seen.n_answered, 3);
    assert_memory_equal(seen.answered, want, sizeof(want));
    assert_int_equal(seen.n_unlinked, 3);
    assert_int_equal(f->set.n_waiters, 1);
    assert_true(tn_waitq_release(a));
    assert_int_equal(seen.n_freed, 1);
    assert_null(tn_waitq_find(&f->set, "a", 1));
    tn_waitq_fail_all(&f->set, TN_EUNAVAIL, 0);
    assert_int_equal(seen.answered[3], 2);
}

static void admit_total_cap_before_per_name(void **state)
{
    struct fixture *f = *state;
    struct tn_store_result out = {0};
    struct caller c[8];
    for (int i = 0; i < 8; i++)
        c[i] = (struct caller){.id = i};
    for (int i = 0; i < 4; i++)
        push(&f->set, "full", &c[i], NULL, 60000);
    struct tn_waitq *full = tn_waitq_find(&f->set, "full", 4);
    assert_int_equal(tn_waitq_admit(&f->set, full, &out, 1000), TN_ECAPACITY);
    assert_string_equal(out.capacity, "waiters_per_name");
    assert_int_equal(out.retry_after_ms, 1000);
    assert_int_equal(tn_waitq_admit(&f->set, NULL, &out, 1000), TN_OK);
    for (int i = 4; i < 8; i++)
        push(&f->set, i < 6 ? "x" : "y", &c[i], NULL, 60000);
    memset(&out, 0, sizeof(out));
    assert_int_equal(tn_waitq_admit(&f->set, NULL, &out, 250), TN_ECAPACITY);
    assert_string_equal(out.capacity, "waiters");
    assert_int_equal(out.retry_after_ms, 250);
    assert_int_equal(tn_waitq_admit(&f->set, full, &out, 250), TN_ECAPACITY);
    assert_string_equal(out.capacity, "waiters");
    tn_waitq_fail_all(&f->set, TN_EUNAVAIL, 1000);
    assert_int_equal(seen.n_answered, 8);
    assert_int_equal(f->set.n_waiters, 0);
}

static void deadline_capped_by_max_wait(void **state)
{
    struct fixture *f = *state;
    struct caller c[3] = {{.id = 1}, {.id = 2}, {.id = 3}};
    struct tn_blocked *now = push(&f->set, "d", &c[0], NULL, 0);
    push(&f->set, "d", &c[1], NULL, 60000);
    assert_int_equal(tn_loop_run_once(f->loop, 0), 0);
    assert_int_equal(seen.n_deadline, 1);
    assert_ptr_equal(seen.deadline[0], now);
    /* A set whose cap is 0 ends every wait at once, whatever wait_ms. */
    struct tn_waitq_set capped;
    struct tn_store_config cfg = limits(8, 4, 0);
    assert_int_equal(tn_waitq_init(&capped, f->loop, &cfg, &hooks), 0);
    struct tn_blocked *long_wait = push(&capped, "d", &c[2], NULL, 60000);
    assert_int_equal(tn_loop_run_once(f->loop, 0), 0);
    assert_int_equal(seen.n_deadline, 2);
    assert_ptr_equal(seen.deadline[1], long_wait);
    /* Unlinking disarms: the hook is not called again. */
    tn_waitq_fail_all(&capped, TN_EUNAVAIL, 0);
    tn_waitq_fini(&capped);
    tn_waitq_fail_all(&f->set, TN_EUNAVAIL, 0);
    assert_int_equal(tn_loop_run_once(f->loop, 0), 0);
    assert_int_equal(seen.n_deadline, 2);
}

static void cancel_finds_the_client(void **state)
{
    struct fixture *f = *state;
    struct caller c[3] = {{.id = 1}, {.id = 2}, {.id = 3}};
    int k1, k2, k3;
    push(&f->set, "n", &c[0], &k1, 60000);
    push(&f->set, "n", &c[1], &k2, 60000);
    push(&f->set, "m", &c[2], &k3, 60000);
    int other;
    tn_waitq_cancel(&f->set, &other); /* nobody: nothing happens */
    assert_int_equal(seen.n_answered, 0);
    tn_waitq_cancel(&f->set, &k1);
    assert_int_equal(seen.n_answered, 1);
    assert_int_equal(seen.answered[0], 1);
    assert_int_equal(c[0].out.rc, TN_ECANCELED);
    assert_int_equal(f->set.dropped, 1);
    struct tn_waitq *n = tn_waitq_find(&f->set, "n", 1);
    assert_non_null(n); /* k2 still waits */
    assert_ptr_equal(TAILQ_FIRST(&n->waiters)->wanted_ctx, &k2);
    tn_waitq_cancel(&f->set, &k2);
    assert_null(tn_waitq_find(&f->set, "n", 1)); /* freed when empty */
    assert_int_equal(seen.n_freed, 1);
    assert_int_equal(f->set.dropped, 2);
    assert_int_equal(f->set.n_waiters, 1);
    tn_waitq_fail_all(&f->set, TN_EUNAVAIL, 0);
}

/* wanted(ctx): the client is there while *ctx is nonzero. */
static bool still_there(void *ctx)
{
    return *(int *)ctx != 0;
}

static void gone_asks_the_client(void **state)
{
    struct fixture *f = *state;
    struct caller c[2] = {{.id = 1}, {.id = 2}};
    int here = 1;
    struct tn_blocked *nobody = push(&f->set, "g", &c[0], NULL, 60000);
    struct tn_blocked *w = push(&f->set, "g", &c[1], &here, 60000);
    w->wanted = still_there;
    assert_false(tn_waitq_gone(nobody)); /* no wanted: always there */
    assert_false(tn_waitq_gone(w));
    here = 0;
    assert_true(tn_waitq_gone(w));
    tn_waitq_fail_all(&f->set, TN_EUNAVAIL, 0);
}

static void fail_all_keeps_busy_queues(void **state)
{
    struct fixture *f = *state;
    struct caller c[3] = {{.id = 1}, {.id = 2}, {.id = 3}};
    push(&f->set, "idle", &c[0], NULL, 60000);
    push(&f->set, "busy", &c[1], NULL, 60000);
    push(&f->set, "busy", &c[2], NULL, 60000);
    struct tn_waitq *busy = tn_waitq_find(&f->set, "busy", 4);
    busy->busy = true;
    tn_waitq_fail_all(&f->set, TN_EUNAVAIL, 1000);
    assert_int_equal(seen.n_answered, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(c[i].out.rc, TN_EUNAVAIL);
        assert_int_equal(c[i].out.retry_after_ms, 1000);
    }
    assert_null(tn_waitq_find(&f->set, "idle", 4));
    assert_ptr_equal(tn_waitq_find(&f->set, "busy", 4), busy);
    assert_int_equal(busy->n, 0);
    assert_false(tn_waitq_release(busy)); /* still busy */
    busy->busy = false;
    assert_true(tn_waitq_release(busy));
    assert_int_equal(seen.n_freed, 2);
}

static void thousands_of_names(void **state)
{
    struct fixture *f = *state;
    enum { N = 5000 };
    struct tn_waitq_set big;
    struct tn_store_config cfg = limits(N, 1, 60000);
    assert_int_equal(tn_waitq_init(&big, f->loop, &cfg, &hooks), 0);
    static struct caller c[N];
    char name[32];
    for (int i = 0; i < N; i++) {
        c[i] = (struct caller){.id = i};
        (void)snprintf(name, sizeof(name), "name:%d", i);
        push(&big, name, &c[i], &c[i], 60000);
    }
    for (int i = 0; i < N; i++) {
        (void)snprintf(name, sizeof(name), "name:%d", i);
        struct tn_waitq *q = tn_waitq_find(&big, name, strlen(name));
        assert_non_null(q);
        assert_int_equal(q->name_len, strlen(name));
        assert_string_equal(q->name, name);
    }
    assert_ptr_equal(tn_waitq_find_ctx(&big, &c[N - 1])->arg, &c[N - 1]);
    for (int i = 0; i < N; i += 2)
        tn_waitq_cancel(&big, &c[i]);
    assert_int_equal(seen.n_answered, N / 2);
    assert_int_equal(big.n_waiters, N / 2);
    assert_int_equal(big.names.count, N / 2);
    assert_null(tn_waitq_find(&big, "name:0", 6));
    assert_non_null(tn_waitq_find(&big, "name:1", 6));
    tn_waitq_fail_all(&big, TN_EUNAVAIL, 0);
    assert_int_equal(seen.n_answered, N);
    assert_int_equal(big.names.count, 0);
    assert_int_equal(seen.n_freed, N);
    tn_waitq_fini(&big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(fifo_per_name_and_request_copy, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(admit_total_cap_before_per_name, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(deadline_capped_by_max_wait, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(cancel_finds_the_client, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(gone_asks_the_client, setup, teardown),
        cmocka_unit_test_setup_teardown(fail_all_keeps_busy_queues, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(thousands_of_names, setup, teardown),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
