/* SPDX-License-Identifier: MIT */
/* Strict parsing of request bodies (src/common/json.c), and the flat-body
 * decoder (src/common/json_flat.c): inputs in its subset give
 * exactly jansson's values, everything else is reported as not in the
 * subset, and its getters say what jansson's getters say. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/json_flat_same.h"
#include "common/json.h"
#include "common/json_flat.h"
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

/* Each member of f is in jansson's object for the same bytes, with the
 * same value, and jansson's object has no other member. */
static void assert_same_as_jansson(const char *s, size_t len,
                                   const struct tn_json_flat *f)
{
    json_t *ref = json_loadb(s, len, JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(ref);
    assert_true(json_is_object(ref));
    const char *differs = tn_json_flat_differs(ref, f);
    if (differs != NULL)
        fail_msg("the flat decoder and jansson differ in %s", differs);
    json_decref(ref);
}

struct flat_case {
    const char *in;
    size_t len;     /* 0: strlen(in) */
    bool in_subset; /* the decoder must take it */
    size_t members; /* when in_subset */
};

static const struct flat_case flat_cases[] = {
    {BODY, 0, true, 3},
    {"{}", 0, true, 0},
    {" \t\r\n{ \t\r\n} \t\r\n", 0, true, 0},
    {"{ \"a\" : 1 , \"b\"\n:\t\"x\" }", 0, true, 2},
    {"{\"a\":1,\"b\":-2,\"c\":true,\"d\":false,\"e\":null,\"f\":\"\"}", 0, true,
     6},
    {"{\"\":\"\"}", 0, true, 1},
    {"{\"a\":0}", 0, true, 1},
    {"{\"a\":999999999999999999}", 0, true, 1},
    {"{\"a\":-999999999999999999}", 0, true, 1},
    {"{\"a\":\" !#$%&'()*+,-./0123456789:;<=>?@AZ[]^_`az{|}~\"}", 0, true, 1},
    {"{\"1\":1,\"2\":2,\"3\":3,\"4\":4,\"5\":5,\"6\":6,\"7\":7,\"8\":8}", 0,
     true, 8},
    {"{\"a\":1,\"ab\":2}", 0, true, 2},
    /* Out of the subset: some are valid JSON for jansson, some are not. */
    {"", 0, false, 0},
    {" ", 0, false, 0},
    {"{\"a\":\"x\\ny\"}", 0, false, 0},
    {"{\"a\":\"\\u00e9\"}", 0, false, 0},
    {"{\"a\\\"\":1}", 0, false, 0},
    {"{\"a\":\"\xc3\xa9\"}", 0, false, 0},
    {"{\"\xc3\xa9\":1}", 0, false, 0},
    {"{\"a\":\"\x7f\"}", 0, false, 0},
    {"{\"a\":\"x\ty\"}", 0, false, 0},
    {"{\"a\":-0}", 0, false, 0},
    {"{\"a\":1234567890123456789}", 0, false, 0},
    {"{\"a\":-1234567890123456789}", 0, false, 0},
    {"{\"a\":99999999999999999999999}", 0, false, 0},
    {"{\"a\":1e3}", 0, false, 0},
    {"{\"a\":1E3}", 0, false, 0},
    {"{\"a\":1.0}", 0, false, 0},
    {"{\"a\":-1.5e-3}", 0, false, 0},
    {"{\"a\":1.}", 0, false, 0},
    {"{\"a\":01}", 0, false, 0},
    {"{\"a\":+1}", 0, false, 0},
    {"{\"a\":-}", 0, false, 0},
    {"{\"a\":1,\"a\":2}", 0, false, 0},
    {"{\"a\":null,\"a\":null}", 0, false, 0},
    {"{\"1\":1,\"2\":2,\"3\":3,\"4\":4,\"5\":5,\"6\":6,\"7\":7,\"8\":8,"
     "\"9\":9}",
     0, false, 0},
    {"{\"a\":1} x", 0, false, 0},
    {"{\"a\":1}}", 0, false, 0},
    {"{\"a\":1}{}", 0, false, 0},
    {"{\"a\":1}\0", 8, false, 0},
    {"{\"a\":[1]}", 0, false, 0},
    {"{\"a\":{}}", 0, false, 0},
    {"{\"a\":{\"b\":1}}", 0, false, 0},
    {"[1]", 0, false, 0},
    {"\"x\"", 0, false, 0},
    {"1", 0, false, 0},
    {"null", 0, false, 0},
    {"{\"a\":tru}", 0, false, 0},
    {"{\"a\":truex}", 0, false, 0},
    {"{\"a\":nul}", 0, false, 0},
    {"{\"a\":NaN}", 0, false, 0},
    {"{\"a\":1,}", 0, false, 0},
    {"{,}", 0, false, 0},
    {"{\"a\" 1}", 0, false, 0},
    {"{\"a\":}", 0, false, 0},
    {"{'a':1}", 0, false, 0},
    {"{a:1}", 0, false, 0},
    {"{\"a\":\"x", 0, false, 0},
    {"{\"a\":1", 0, false, 0},
    {"{\"a\"", 0, false, 0},
    {"{", 0, false, 0},
    {"\xef\xbb\xbf{}", 0, false, 0},
    {"{\"a\":1}\v", 0, false, 0},
    {"\f{}", 0, false, 0},
};

static void test_flat__subset_or_not(void **state)
{
    (void)state;
    static struct tn_json_flat f;
    for (size_t i = 0; i < sizeof(flat_cases) / sizeof(flat_cases[0]); i++) {
        const struct flat_case *c = &flat_cases[i];
        size_t len = c->len != 0 ? c->len : strlen(c->in);
        int rc = tn_json_flat_parse(c->in, len, &f);
        if (rc != (c->in_subset ? TN_OK : TN_EPROTO))
            fail_msg("case %zu \"%s\": rc %d", i, c->in, rc);
        if (!c->in_subset)
            continue;
        assert_int_equal(f.n, c->members);
        assert_same_as_jansson(c->in, len, &f);
    }
}

static void test_flat__values(void **state)
{
    (void)state;
    static struct tn_json_flat f;
    assert_int_equal(tn_json_flat_parse(BODY, strlen(BODY), &f), TN_OK);
    assert_int_equal(f.n, 3);
    assert_string_equal(f.m[0].key, "name");
    assert_int_equal(f.m[0].type, TN_JSON_FLAT_STRING);
    assert_string_equal(f.m[0].str, "shard:8841");
    assert_int_equal(f.m[0].str_len, 10);
    assert_string_equal(f.m[1].key, "owner_id");
    assert_string_equal(f.m[1].str, "indexer-17");
    assert_string_equal(f.m[2].key, "ttl_ms");
    assert_int_equal(f.m[2].type, TN_JSON_FLAT_INTEGER);
    assert_true(f.m[2].num == 10000);
    const char *neg = "{\"a\":-999999999999999999}";
    assert_int_equal(tn_json_flat_parse(neg, strlen(neg), &f), TN_OK);
    assert_true(f.m[0].num == -999999999999999999LL);
}

/* Keys and strings that do not fit in the copy buffer are not taken, and
 * jansson gets them; a body that just fits is taken. */
static void test_flat__byte_cap(void **state)
{
    (void)state;
    static struct tn_json_flat f;
    static char big[TN_JSON_FLAT_BYTES + 64];
    /* {"k":"xxx..."}: key "k" takes 2 bytes, the value n + 1. */
    size_t n = TN_JSON_FLAT_BYTES - 2 - 1;
    size_t len = 0;
    memcpy(big, "{\"k\":\"", 6);
    len = 6;
    memset(big + len, 'x', n);
    len += n;
    memcpy(big + len, "\"}", 2);
    len += 2;
    assert_int_equal(tn_json_flat_parse(big, len, &f), TN_OK);
    assert_int_equal(f.m[0].str_len, n);
    assert_same_as_jansson(big, len, &f);
    memmove(big + 7, big + 6, len - 6);
    big[6] = 'x';
    len++;
    assert_int_equal(tn_json_flat_parse(big, len, &f), TN_EPROTO);
    json_t *o = NULL;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_json_parse_object(big, len, false, &o, &em), 0);
    json_decref(o);
}

static const int64_t int_bounds[][2] = {
    {1, 3600000}, {0, INT64_MAX}, {INT64_MIN, INT64_MAX}, {43, 50}, {-7, -7},
};

static void same_getters(const char *body, const char *key)
{
    static struct tn_json_flat f;
    json_t *o = parse(body);
    assert_int_equal(tn_json_flat_parse(body, strlen(body), &f), TN_OK);
    const char *differs = tn_json_flat_getters_differ(
        o, &f, key, int_bounds, sizeof(int_bounds) / sizeof(int_bounds[0]));
    if (differs != NULL)
        fail_msg("%s differs on \"%s\" in %s", differs, key, body);
    json_decref(o);
}

static void test_flat__getters_match_jansson(void **state)
{
    (void)state;
    static const char *const bodies[] = {
        "{\"s\":\"str\",\"i\":42,\"n\":-7,\"t\":true,\"f\":false,\"z\":null,"
        "\"big\":999999999999999999,\"e\":\"\"}",
        "{\"s\":1,\"i\":\"42\",\"n\":false,\"t\":0,\"f\":\"false\","
        "\"z\":\"null\",\"big\":-999999999999999999,\"e\":null}",
        BODY,
        "{}",
    };
    static const char *const keys[] = {
        "s", "i", "n", "t", "f", "z", "big", "e", "missing", "name", "ttl_ms"};
    for (size_t b = 0; b < sizeof(bodies) / sizeof(bodies[0]); b++)
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
            same_getters(bodies[b], keys[k]);
}

/* The messages themselves, so that both paths cannot drift together. */
static void test_flat__getter_messages(void **state)
{
    (void)state;
    static struct tn_json_flat f;
    const char *body = "{\"a\":1,\"b\":\"x\",\"c\":null}";
    assert_int_equal(tn_json_flat_parse(body, strlen(body), &f), TN_OK);
    struct tn_errmsg em = {{0}};
    const char *s = NULL;
    size_t len = 0;
    int64_t n = 0;
    bool b = false;
    assert_int_equal(tn_json_flat_get_str(&f, "a", &s, &len, &em), TN_EINVAL);
    assert_string_equal(em.text, "field \"a\" must be a string");
    assert_int_equal(tn_json_flat_get_int(&f, "b", 0, 9, &n, &em), TN_EINVAL);
    assert_string_equal(em.text, "field \"b\" must be an integer");
    assert_int_equal(tn_json_flat_get_bool(&f, "a", &b, &em), TN_EINVAL);
    assert_string_equal(em.text, "field \"a\" must be a boolean");
    assert_int_equal(tn_json_flat_get_int(&f, "a", 2, 10, &n, &em), TN_EINVAL);
    assert_string_equal(em.text, "field \"a\" must be between 2 and 10");
    assert_int_equal(tn_json_flat_get_int(&f, "c", 2, 10, &n, &em),
                     TN_ENOTFOUND);
    assert_int_equal(tn_json_flat_get_str(&f, "d", &s, &len, &em),
                     TN_ENOTFOUND);
    assert_int_equal(tn_json_flat_get_int(&f, "a", 1, 1, &n, NULL), TN_OK);
    assert_true(n == 1);
}

/* The decoder never calls into jansson: it allocates nothing there. */
static void test_flat__no_jansson_allocation(void **state)
{
    (void)state;
    static struct tn_json_flat f;
    unsigned long before = jansson_allocs;
    assert_int_equal(tn_json_flat_parse(BODY, strlen(BODY), &f), TN_OK);
    assert_int_equal(jansson_allocs, before);
}

int main(void)
{
    json_set_alloc_funcs(counting_malloc, counting_free);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_still_strict),
        cmocka_unit_test(test_flat__subset_or_not),
        cmocka_unit_test(test_flat__values),
        cmocka_unit_test(test_flat__byte_cap),
        cmocka_unit_test(test_flat__getters_match_jansson),
        cmocka_unit_test(test_flat__getter_messages),
        cmocka_unit_test(test_flat__no_jansson_allocation),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
