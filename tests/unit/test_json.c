/* SPDX-License-Identifier: MIT */
/* Strict parsing of JSON objects (src/common/json.c), which the client
 * reads answers and the server its auth file with: what it refuses, and
 * the messages of its typed getters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "tn_test.h"

#include <cmocka.h>

/* jansson's allocations, counted through its hooks (installed in main):
 * all it ever asked for, and what it holds now. */
static unsigned long jansson_allocs;
static long jansson_live;

static void *counting_malloc(size_t n)
{
    void *p = malloc(n);
    if (p != NULL) {
        jansson_allocs++;
        jansson_live++;
    }
    return p;
}

static void counting_free(void *p)
{
    if (p != NULL)
        jansson_live--;
    free(p);
}

static const char BODY[] =
    "{\"name\":\"shard:8841\",\"owner_id\":\"indexer-17\",\"ttl_ms\":10000}";

static json_t *parse(const char *s)
{
    json_t *o = NULL;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_json_parse_object(s, strlen(s), false, &o, &em), 0);
    return o;
}

static void test_still_strict(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"a\":1,\"a\":2}", "{\"a\":1} x", "[1]", "{\"a\":", "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        long live = jansson_live;
        json_t *o = NULL;
        struct tn_errmsg em = {{0}};
        int rc = tn_json_parse_object(bad[i], strlen(bad[i]), false, &o, &em);
        assert_int_equal(rc, TN_EINVAL);
        assert_null(o);
        assert_true(em.text[0] != '\0');
        assert_int_equal(jansson_live, live); /* a failed parse frees all */
    }
}

/* The getters' messages, which the 400s of the API carry. */
static void test_getter_messages(void **state)
{
    (void)state;
    json_t *o = parse("{\"a\":1,\"b\":\"x\",\"c\":null}");
    struct tn_errmsg em = {{0}};
    const char *s = NULL;
    size_t len = 0;
    int64_t n = 0;
    bool b = false;
    assert_int_equal(tn_json_get_str(o, "a", &s, &len, &em), TN_EINVAL);
    assert_string_equal(em.text, "field \"a\" must be a string");
    assert_int_equal(tn_json_get_int(o, "b", 0, 9, &n, &em), TN_EINVAL);
    assert_string_equal(em.text, "field \"b\" must be an integer");
    assert_int_equal(tn_json_get_bool(o, "a", &b, &em), TN_EINVAL);
    assert_string_equal(em.text, "field \"a\" must be a boolean");
    assert_int_equal(tn_json_get_int(o, "a", 2, 10, &n, &em), TN_EINVAL);
    assert_string_equal(em.text, "field \"a\" must be between 2 and 10");
    assert_int_equal(tn_json_get_int(o, "c", 2, 10, &n, &em), TN_ENOTFOUND);
    assert_int_equal(tn_json_get_str(o, "d", &s, &len, &em), TN_ENOTFOUND);
    assert_int_equal(tn_json_get_int(o, "a", 1, 1, &n, NULL), TN_OK);
    assert_true(n == 1);
    assert_int_equal(tn_json_get_str(o, "b", &s, &len, &em), TN_OK);
    assert_int_equal(len, 1);
    assert_string_equal(s, "x");
    json_decref(o);
    o = parse(BODY);
    assert_int_equal(tn_json_get_str(o, "owner_id", &s, &len, &em), TN_OK);
    assert_string_equal(s, "indexer-17");
    json_decref(o);
}

int main(void)
{
    json_set_alloc_funcs(counting_malloc, counting_free);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_still_strict),
        cmocka_unit_test(test_getter_messages),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
