/* SPDX-License-Identifier: MIT */
/* common/map: find, insert, remove, each and scan, across the incremental
 * doubling (entries in either bucket array are found and visited once),
 * with a shadow array as the model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "common/map.h"
#include "tn_test.h"

#include <cmocka.h>

struct item {
    void *next;     /* map link */
    uint32_t hash;  /* map hash */
    char key[24];   /* NUL-terminated */
    size_t key_len; /* bytes */
    int visits;     /* times each/scan saw it */
    bool in;        /* in the map (the model) */
};

static bool item_eq(const void *entry, const void *key, size_t len)
{
    const struct item *it = entry;
    return it->key_len == len && memcmp(it->key, key, len) == 0;
}

static const struct tn_map_type item_type = {
    .link_off = offsetof(struct item, next),
    .hash_off = offsetof(struct item, hash),
    .eq = item_eq,
};

#define N 5000
static struct item items[N];

static void make_items(void)
{
    for (int i = 0; i < N; i++) {
        memset(&items[i], 0, sizeof(items[i]));
        int n = snprintf(items[i].key, sizeof(items[i].key), "k%d", i);
        items[i].key_len = (size_t)n;
        items[i].hash = tn_map_hash(items[i].key, items[i].key_len);
    }
}

static struct item *find(const struct tn_map *m, const struct item *like)
{
    return tn_map_find(m, like->hash, like->key, like->key_len);
}

static void test_map__insert_find_remove(void **state)
{
    (void)state;
    make_items();
    struct tn_map m;
    assert_int_equal(tn_map_init(&m, &item_type, 0), TN_OK);
    int rehashing_seen = 0;
    for (int i = 0; i < N; i++) {
        assert_null(find(&m, &items[i]));
        tn_map_insert(&m, &items[i]);
        assert_ptr_equal(find(&m, &items[i]), &items[i]);
        /* Entries inserted before the doubling began are still found. */
        assert_ptr_equal(find(&m, &items[i / 2]), &items[i / 2]);
        rehashing_seen += m.old != NULL;
    }
    assert_true(rehashing_seen > 0);
    assert_int_equal(m.count, N);
    for (int i = 0; i < N; i += 2)
        assert_true(tn_map_remove(&m, &items[i]));
    assert_false(tn_map_remove(&m, &items[0])); /* already out */
    assert_int_equal(m.count, N / 2);
    for (int i = 0; i < N; i++)
        assert_ptr_equal(find(&m, &items[i]), i % 2 ? &items[i] : NULL);
    tn_map_release(&m);
    assert_null(m.buckets);
}

/* A hash that every key shares: the chains carry the map, eq decides. */
static void test_map__colliding_hashes(void **state)
{
    (void)state;
    make_items();
    struct tn_map m;
    assert_int_equal(tn_map_init(&m, &item_type, 0), TN_OK);
    for (int i = 0; i < 100; i++) {
        items[i].hash = 7;
        tn_map_insert(&m, &items[i]);
    }
    for (int i = 0; i < 100; i++)
        assert_ptr_equal(find(&m, &items[i]), &items[i]);
    assert_true(tn_map_remove(&m, &items[50]));
    assert_null(find(&m, &items[50]));
    assert_ptr_equal(find(&m, &items[51]), &items[51]);
    tn_map_release(&m);
}

static bool visit(void *entry, void *ctx)
{
    struct item *it = entry;
    it->visits++;
    if (it - items < 10) /* fn may remove the entry it is given */
        assert_true(tn_map_remove(ctx, it));
    return true;
}

static bool stop_at_first(void *entry, void *ctx)
{
    (void)entry;
    (*(int *)ctx)++;
    return false;
}

/* each visits every entry once, mid-doubling too, and stops on false. */
static void test_map__each_visits_once(void **state)
{
    (void)state;
    make_items();
    struct tn_map m;
    assert_int_equal(tn_map_init(&m, &item_type, 0), TN_OK);
    for (int i = 0; i < 600; i++)
        tn_map_insert(&m, &items[i]);
    assert_non_null(m.old); /* 600 > 512 buckets: a doubling under way */
    tn_map_each(&m, visit, &m);
    for (int i = 0; i < 600; i++)
        assert_int_equal(items[i].visits, 1);
    assert_int_equal(m.count, 590);
    int calls = 0;
    tn_map_each(&m, stop_at_first, &calls);
    assert_int_equal(calls, 1);
    tn_map_release(&m);
}

static void scan_one(void *entry, void *ctx)
{
    (void)ctx;
    ((struct item *)entry)->visits++;
}

/* A full round of the scan cursor visits every entry exactly once. */
static void test_map__scan_round_visits_all(void **state)
{
    (void)state;
    make_items();
    struct tn_map m;
    assert_int_equal(tn_map_init(&m, &item_type, 0), TN_OK);
    for (int i = 0; i < N; i++)
        tn_map_insert(&m, &items[i]);
    size_t cursor = 0;
    size_t seen = tn_map_scan(&m, &cursor, m.mask + 1, scan_one, NULL);
    assert_null(m.old); /* the scan finished the doubling first */
    assert_int_equal(seen, N);
    for (int i = 0; i < N; i++)
        assert_int_equal(items[i].visits, 1);
    assert_int_equal(cursor, 0); /* wrapped around */
    tn_map_release(&m);
}

static void test_map__reserve_sizes_empty_map(void **state)
{
    (void)state;
    make_items();
    struct tn_map m;
    assert_int_equal(tn_map_init(&m, &item_type, 0), TN_OK);
    tn_map_reserve(&m, 3000);
    assert_true(m.mask + 1 >= 3000);
    for (int i = 0; i < 3000; i++)
        tn_map_insert(&m, &items[i]);
    assert_null(m.old); /* no doubling during the load */
    tn_map_release(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map__insert_find_remove),
        cmocka_unit_test(test_map__colliding_hashes),
        cmocka_unit_test(test_map__each_visits_once),
        cmocka_unit_test(test_map__scan_round_visits_all),
        cmocka_unit_test(test_map__reserve_sizes_empty_map),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
