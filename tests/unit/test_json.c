/* SPDX-License-Identifier: MIT */
/* The JSON arena (src/common/json.c): with the hooks installed, the trees a
 * thread parses inside a scope come from its arena, the arena rewinds when
 * the last of them is freed, a value that outlives its scope stays intact
 * and only keeps the arena from rewinding, big trees spill to the heap, and
 * outside a scope nothing touches the arena.  Parsing stays strict. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"

#include <cmocka.h>

static struct tn_json_arena A;

static const char BODY[] =
    "{\"name\":\"shard:8841\",\"owner_id\":\"indexer-17\",\"ttl_ms\":10000}";

static json_t *parse(const char *s)
{
    json_t *o = NULL;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_json_parse_object(s, strlen(s), false, &o, &em), 0);
    return o;
}

static int in_arena(const void *p)
{
    const unsigned char *c = p;
    return c >= A.mem && c < A.mem + sizeof(A.mem);
}

static void test_scope_allocates_and_rewinds(void **state)
{
    (void)state;
    tn_json_arena_enter(&A);
    json_t *o = parse(BODY);
    tn_json_arena_leave();
    assert_true(in_arena(o));
    assert_true(A.live > 0);
    assert_true(A.used > 0);
    const char *name = NULL;
    size_t len = 0;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_json_get_str(o, "name", &name, &len, &em), 0);
    assert_true(in_arena(name));
    assert_string_equal(name, "shard:8841");
    json_decref(o);
    assert_int_equal(A.live, 0);
    assert_int_equal(A.used, 0);
}

static void test_outside_scope_uses_heap(void **state)
{
    (void)state;
    json_t *o = parse(BODY);
    assert_false(in_arena(o));
    assert_int_equal(A.live, 0);
    assert_int_equal(A.used, 0);
    json_decref(o);
}

static void test_survivor_blocks_rewind(void **state)
{
    (void)state;
    tn_json_arena_enter(&A);
    json_t *keep = parse(BODY);
    tn_json_arena_leave();
    size_t used = A.used;
    assert_true(in_arena(keep));

    /* A second request's tree goes above the survivor, and freeing it
     * must not hand the survivor's bytes out again. */
    tn_json_arena_enter(&A);
    json_t *o = parse("{\"name\":\"other\",\"owner_id\":\"w\",\"ttl_ms\":5}");
    tn_json_arena_leave();
    assert_true(A.used > used);
    json_decref(o);
    assert_true(A.live > 0);
    assert_true(A.used > 0);

    tn_json_arena_enter(&A);
    json_t *third = parse("{\"name\":\"zzzzzzzzzzzzzzzzzzzz\"}");
    tn_json_arena_leave();
    const char *name = NULL;
    size_t len = 0;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_json_get_str(keep, "name", &name, &len, &em), 0);
    assert_string_equal(name, "shard:8841");
    json_decref(third);
    json_decref(keep);
    assert_int_equal(A.live, 0);
    assert_int_equal(A.used, 0);
}

static void test_big_tree_spills_to_heap(void **state)
{
    (void)state;
    /* An array of 2000 small objects: far more than the arena holds. */
    static char big[64 * 1024];
    size_t n = 0;
    big[n++] = '{';
    for (int i = 0; i < 2000; i++)
        n += (size_t)snprintf(big + n, sizeof(big) - n, "%s\"k%d\":\"v%d\"",
                              i ? "," : "", i, i);
    big[n++] = '}';
    big[n] = '\0';
    tn_json_arena_enter(&A);
    json_t *o = parse(big);
    tn_json_arena_leave();
    assert_int_equal(json_object_size(o), 2000);
    assert_true(A.used <= sizeof(A.mem));
    const char *v = NULL;
    size_t len = 0;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_json_get_str(o, "k1999", &v, &len, &em), 0);
    assert_string_equal(v, "v1999");
    json_decref(o);
    assert_int_equal(A.live, 0);
    assert_int_equal(A.used, 0);
}

static void test_still_strict(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"a\":1,\"a\":2}", "{\"a\":1} x", "[1]", "{\"a\":", "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *o = NULL;
        struct tn_errmsg em = {{0}};
        tn_json_arena_enter(&A);
        int rc = tn_json_parse_object(bad[i], strlen(bad[i]), false, &o, &em);
        tn_json_arena_leave();
        assert_int_equal(rc, TN_EINVAL);
        assert_null(o);
        assert_true(em.text[0] != '\0');
        assert_int_equal(A.live, 0); /* a failed parse frees what it made */
    }
}

int main(void)
{
    tn_json_use_arenas();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scope_allocates_and_rewinds),
        cmocka_unit_test(test_outside_scope_uses_heap),
        cmocka_unit_test(test_survivor_blocks_rewind),
        cmocka_unit_test(test_big_tree_spills_to_heap),
        cmocka_unit_test(test_still_strict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
