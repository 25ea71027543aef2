/* SPDX-License-Identifier: MIT */
/* The decode arena (src/common/json_arena.c): bodies decoded between
 * begin and end live in the arena and give it back whole when the last
 * of them is dropped; a body still held is never overwritten by the next
 * one; what is made outside begin/end, or does not fit, is malloc's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/json_arena.h"
#include "tn_test.h"

#include <cmocka.h>

static json_t *decode(const char *body)
{
    struct tn_errmsg em = {{0}};
    json_t *o = NULL;
    tn_json_arena_begin();
    int rc = tn_json_parse_object(body, strlen(body), false, &o, &em);
    tn_json_arena_end();
    assert_int_equal(rc, TN_OK);
    return o;
}

static const char *str(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static void test_arena__body_lives_there_and_gives_it_back(void **state)
{
    (void)state;
    json_t *o = decode("{\"name\":\"a\",\"owner_id\":\"w\",\"ttl_ms\":5}");
    assert_true(tn_json_arena_owns(o));
    assert_true(tn_json_arena_owns(str(o, "name")));
    assert_true(tn_json_arena_live() > 0);
    json_decref(o);
    assert_int_equal(tn_json_arena_live(), 0);
}

/* The hazard an arena brings: a body still held when the next is decoded
 * must keep its bytes. */
static void test_arena__held_body_is_not_overwritten(void **state)
{
    (void)state;
    json_t *a = decode("{\"name\":\"first-name\",\"owner_id\":\"alice\"}");
    size_t live_a = tn_json_arena_live();
    json_t *b = decode("{\"name\":\"second-one\",\"owner_id\":\"bobby\"}");
    assert_true(tn_json_arena_owns(b));
    assert_true(tn_json_arena_live() > live_a);
    assert_string_equal(str(a, "name"), "first-name");
    assert_string_equal(str(a, "owner_id"), "alice");
    assert_string_equal(str(b, "name"), "second-one");
    json_decref(a);
    assert_string_equal(str(b, "owner_id"), "bobby");
    json_t *c = decode("{\"name\":\"third-name\",\"owner_id\":\"carol\"}");
    assert_string_equal(str(b, "name"), "second-one");
    assert_string_equal(str(c, "name"), "third-name");
    json_decref(b);
    json_decref(c);
    assert_int_equal(tn_json_arena_live(), 0);
}

static void test_arena__outside_and_overflow_are_malloc(void **state)
{
    (void)state;
    json_t *o = json_object(); /* outside begin/end */
    assert_false(tn_json_arena_owns(o));
    json_decref(o);
    /* A body bigger than the arena: what does not fit is malloc's, and
     * all of it reads back whole. */
    size_t n = 40000;
    char *big = malloc(n + 32);
    assert_non_null(big);
    int at = snprintf(big, 32, "{\"k\":\"");
    memset(big + at, 'x', n);
    (void)snprintf(big + at + n, 32, "\",\"j\":1}");
    o = decode(big);
    assert_int_equal(strlen(str(o, "k")), n);
    assert_false(tn_json_arena_owns(str(o, "k")));
    assert_int_equal(json_integer_value(json_object_get(o, "j")), 1);
    json_decref(o);
    free(big);
    assert_int_equal(tn_json_arena_live(), 0);
}

int main(void)
{
    tn_json_arena_install();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arena__body_lives_there_and_gives_it_back),
        cmocka_unit_test(test_arena__held_body_is_not_overwritten),
        cmocka_unit_test(test_arena__outside_and_overflow_are_malloc),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
