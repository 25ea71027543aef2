/* SPDX-License-Identifier: MIT */
/* common/heap: pops come out in order (min- and max-heaps alike), removal
 * from the middle keeps the order, `moved` always tells the true index,
 * and a fixed heap neither grows nor writes past its storage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/err.h>

#include "common/heap.h"
#include "tn_test.h"

#include <cmocka.h>

static bool less_int(const void *a, const void *b)
{
    return *(const int *)a < *(const int *)b;
}

static bool more_int(const void *a, const void *b)
{
    return *(const int *)a > *(const int *)b;
}

/* xorshift: the test's own sequence, the same every run. */
static uint32_t next_rand(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void test_heap__pops_in_order(void **state)
{
    (void)state;
    struct tn_heap h;
    tn_heap_init(&h, sizeof(int), less_int, NULL);
    uint32_t seed = 12345;
    for (int i = 0; i < 10000; i++) {
        int v = (int)(next_rand(&seed) % 1000);
        assert_int_equal(tn_heap_push(&h, &v), TN_OK);
    }
    int prev = -1;
    while (tn_heap_count(&h) > 0) {
        int v;
        tn_heap_pop(&h, &v);
        assert_true(v >= prev);
        prev = v;
    }
    assert_null(tn_heap_top(&h));
    tn_heap_release(&h);
}

struct tracked {
    int key;      /* order */
    size_t index; /* set by moved */
};

static bool less_tracked(const void *a, const void *b)
{
    const struct tracked *const *x = a;
    const struct tracked *const *y = b;
    return (*x)->key < (*y)->key;
}

static void tracked_moved(void *elem, size_t i)
{
    (*(struct tracked **)elem)->index = i;
}

static void check_indexes(const struct tn_heap *h)
{
    for (size_t i = 0; i < tn_heap_count(h); i++) {
        struct tracked *t = *(struct tracked **)tn_heap_at(h, i);
        assert_int_equal(t->index, i);
    }
}

/* Elements removed from anywhere by their index; the rest stay in order
 * and their indexes stay true. */
static void test_heap__remove_from_middle(void **state)
{
    (void)state;
    enum { M = 2000 };
    static struct tracked t[M];
    struct tn_heap h;
    tn_heap_init(&h, sizeof(struct tracked *), less_tracked, tracked_moved);
    uint32_t seed = 99;
    for (int i = 0; i < M; i++) {
        t[i].key = (int)(next_rand(&seed) % 500);
        struct tracked *p = &t[i];
        assert_int_equal(tn_heap_push(&h, &p), TN_OK);
    }
    check_indexes(&h);
    for (int i = 0; i < M; i += 3) {
        struct tracked *out;
        tn_heap_remove(&h, t[i].index, &out);
        assert_ptr_equal(out, &t[i]);
        check_indexes(&h);
    }
    int prev = -1;
    size_t left = 0;
    while (tn_heap_count(&h) > 0) {
        struct tracked *p;
        tn_heap_pop(&h, &p);
        assert_true(p->key >= prev);
        assert_true((p - t) % 3 != 0);
        prev = p->key;
        left++;
    }
    assert_int_equal(left, M - (M + 2) / 3);
    tn_heap_release(&h);
}

/* A bounded max-heap in caller storage keeps the k smallest values. */
static void test_heap__fixed_keeps_k_smallest(void **state)
{
    (void)state;
    int store[8 + 1];
    store[8] = 0x5a5a; /* a guard past the storage */
    struct tn_heap h;
    tn_heap_init_fixed(&h, store, 8, sizeof(int), more_int);
    for (int v = 100; v > 0; v--) {
        if (tn_heap_push(&h, &v) == TN_OK)
            continue;
        assert_int_equal(tn_heap_push(&h, &v), TN_ETOOBIG);
        if (v < *(int *)tn_heap_top(&h))
            tn_heap_replace_top(&h, &v);
    }
    assert_int_equal(tn_heap_count(&h), 8);
    assert_int_equal(store[8], 0x5a5a);
    for (int want = 8; want >= 1; want--) {
        int v;
        tn_heap_pop(&h, &v);
        assert_int_equal(v, want);
    }
    tn_heap_release(&h); /* caller storage: not freed */
}

/* tn_heap_keep, as the lease and session lists use it: the k smallest of
 * values offered in any order, and whether something was left out. */
static void test_heap__keep_offers(void **state)
{
    (void)state;
    int store[4];
    struct tn_heap h;
    tn_heap_init_fixed(&h, store, 4, sizeof(int), more_int);
    static const int offered[] = {7, 3, 9, 1, 8, 2, 6};
    bool left_out = false;
    for (size_t i = 0; i < sizeof(offered) / sizeof(offered[0]); i++) {
        bool out = tn_heap_keep(&h, &offered[i]);
        assert_true(out == (i >= 4)); /* full from the fifth on */
        left_out = left_out || out;
    }
    assert_true(left_out);
    for (int want = 6; want >= 1; want--) {
        if (want == 4 || want == 5)
            continue;
        int v;
        tn_heap_pop(&h, &v);
        assert_int_equal(v, want);
    }
    assert_int_equal(tn_heap_count(&h), 0);
    /* No room at all: everything is left out. */
    tn_heap_init_fixed(&h, store, 0, sizeof(int), more_int);
    assert_true(tn_heap_keep(&h, &offered[0]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heap__pops_in_order),
        cmocka_unit_test(test_heap__remove_from_middle),
        cmocka_unit_test(test_heap__fixed_keeps_k_smallest),
        cmocka_unit_test(test_heap__keep_offers),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
