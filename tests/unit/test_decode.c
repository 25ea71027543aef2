/* SPDX-License-Identifier: MIT */
/* The decoder of request bodies (src/api/decode.c): what it keeps, what
 * it refuses (each a strictness rule of the API), and the messages of its
 * typed fields, which the 400s carry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "common/alloc.h"
#include "tn_test.h"

#include <cmocka.h>

static char msg[200];

static void decode_ok(const char *s, size_t len, struct tn_body *b)
{
    msg[0] = '\0';
    int rc = tn_decode_json(s, len, false, b, msg, sizeof(msg));
    if (rc != 0)
        fail_msg("refused %.*s: %s", (int)len, s, msg);
}

static const struct tn_body_field *
field(const struct tn_body *b, const char *key, enum tn_body_type type)
{
    const struct tn_body_field *f = tn_decode_field(b, key);
    assert_non_null(f);
    assert_int_equal(f->type, type);
    return f;
}

static void test_keeps_the_top_level_fields(void **state)
{
    (void)state;
    static const char s[] =
        "{\"name\":\"shard:8841\",\"owner_id\":\"indexer-17\",\"ttl_ms\":10000,"
        "\"x\":{\"name\":\"inner\",\"y\":[1,{\"z\":null}]},\"f\":false,"
        "\"t\":true,\"n\":null,\"r\":1.5,\"a\":[],\"esc\":\"a\\\"\\n\\u00e9"
        "\\ud83d\\ude00\\\\ud800\"}";
    struct tn_body b;
    decode_ok(s, sizeof(s) - 1, &b);
    assert_int_equal(b.n, 10);
    assert_string_equal(field(&b, "name", TN_BODY_STRING)->str, "shard:8841");
    assert_int_equal(field(&b, "name", TN_BODY_STRING)->str_len, 10);
    assert_string_equal(field(&b, "owner_id", TN_BODY_STRING)->str,
                        "indexer-17");
    assert_true(field(&b, "ttl_ms", TN_BODY_INT)->num == 10000);
    (void)field(&b, "x", TN_BODY_OBJECT);
    assert_true(field(&b, "f", TN_BODY_BOOL)->num == 0);
    assert_true(field(&b, "t", TN_BODY_BOOL)->num == 1);
    (void)field(&b, "n", TN_BODY_NULL);
    (void)field(&b, "r", TN_BODY_REAL);
    (void)field(&b, "a", TN_BODY_ARRAY);
    /* Escapes decoded; a surrogate pair is one 4-byte character; an
     * escaped backslash before "ud800" is text, not an escape. */
    const struct tn_body_field *e = field(&b, "esc", TN_BODY_STRING);
    assert_int_equal(e->str_len, 15);
    assert_memory_equal(e->str, "a\"\n\xc3\xa9\xf0\x9f\x98\x80\\ud800", 15);
    assert_null(tn_decode_field(&b, "y"));
    assert_null(tn_decode_field(&b, "nam"));
    tn_decode_done(&b);
}

static void test_refuses(void **state)
{
    (void)state;
    static const struct {
        const char *what, *body;
    } bad[] = {
        {"duplicate key", "{\"a\":1,\"b\":2,\"a\":3}"},
        {"duplicate key, nested", "{\"a\":{\"b\":1,\"b\":2}}"},
        {"duplicate key, in an array", "{\"a\":[{\"b\":1},{\"c\":1,\"c\":1}]}"},
        {"trailing garbage", "{\"a\":1} x"},
        {"a second object", "{\"a\":1}{}"},
        {"an unterminated string after", "{\"a\":1}\"x"},
        {"a quote after", "{\"a\":1} \""},
        {"not an object: array", "[{\"a\":1}]"},
        {"not an object: string", "\"a\""},
        {"not an object: number", "42"},
        {"not an object: null", "null"},
        {"unterminated", "{\"a\":"},
        {"whitespace only", "  \n"},
        {"a comment", "/* c */{\"a\":1}"},
        {"single quotes", "{'a':1}"},
        {"a leading zero", "{\"a\":01}"},
        {"NaN", "{\"a\":NaN}"},
        {"a trailing comma", "{\"a\":1,}"},
        {"escaped NUL in a string", "{\"a\":\"x\\u0000y\"}"},
        {"escaped NUL in a key", "{\"x\\u0000\":1}"},
        {"escaped NUL, nested", "{\"a\":[\"\\u0000\"]}"},
        {"raw control byte in a string", "{\"a\":\"x\x01y\"}"},
        {"form feed between tokens", "{\"a\":\f1}"},
        {"vertical tab between tokens", "{\v\"a\":1}"},
        {"overlong UTF-8", "{\"a\":\"\xc0\xaf\"}"},
        {"UTF-8 of a surrogate", "{\"a\":\"\xed\xa0\x80\"}"},
        {"UTF-8 past U+10FFFF", "{\"a\":\"\xf4\x90\x80\x80\"}"},
        {"a cut UTF-8 sequence", "{\"a\":\"\xe2\x82\"}"},
        {"a lone high surrogate", "{\"a\":\"\\ud800x\"}"},
        {"a lone high surrogate at the end", "{\"a\":\"\\ud800\"}"},
        {"a high surrogate before a non-surrogate",
         "{\"a\":\"\\ud800\\u0041\"}"},
        {"a lone low surrogate", "{\"a\":\"\\udc00\"}"},
        {"two high surrogates", "{\"a\":\"\\ud800\\ud800\"}"},
        {"a bad escape", "{\"a\":\"\\x41\"}"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tn_body b;
        msg[0] = '\0';
        int rc = tn_decode_json(bad[i].body, strlen(bad[i].body), false, &b,
                                msg, sizeof(msg));
        if (rc != TN_EINVAL)
            fail_msg("%s: accepted %s", bad[i].what, bad[i].body);
        assert_true(msg[0] != '\0');
        tn_decode_done(&b);
    }
}

/* 32 levels are fine, 33 are not: a body has no use for depth, and the
 * bound keeps the decoder's state fixed. */
static void test_depth(void **state)
{
    (void)state;
    char s[200];
    for (int depth = 31; depth <= 33; depth++) {
        size_t n = 0;
        memcpy(s, "{\"a\":", 5);
        n = 5;
        for (int i = 1; i < depth; i++)
            s[n++] = '[';
        s[n++] = '1';
        for (int i = 1; i < depth; i++)
            s[n++] = ']';
        s[n++] = '}';
        struct tn_body b;
        int rc = tn_decode_json(s, n, false, &b, msg, sizeof(msg));
        assert_int_equal(rc, depth <= TN_DECODE_MAX_DEPTH ? 0 : TN_EINVAL);
        if (rc != 0)
            assert_non_null(strstr(msg, "nested deeper than 32 levels"));
        tn_decode_done(&b);
    }
}

/* Many keys: all kept, and one repeated far apart is still found. */
static void test_many_keys(void **state)
{
    (void)state;
    enum { N = 2000 };
    char *s = malloc(N * 16 + 32);
    assert_non_null(s);
    for (int dup = 0; dup <= 1; dup++) {
        size_t n = 0;
        s[n++] = '{';
        for (int i = 0; i < N; i++)
            n += (size_t)snprintf(s + n, 32, "%s\"k%d\":%d", i ? "," : "",
                                  dup && i == N - 1 ? 7 : i, i);
        s[n++] = '}';
        struct tn_body b;
        int rc = tn_decode_json(s, n, false, &b, msg, sizeof(msg));
        assert_int_equal(rc, dup ? TN_EINVAL : 0);
        if (!dup) {
            assert_int_equal(b.n, N);
            assert_true(field(&b, "k1234", TN_BODY_INT)->num == 1234);
        }
        tn_decode_done(&b);
    }
    free(s);
}

static void test_empty(void **state)
{
    (void)state;
    struct tn_body b;
    assert_int_equal(tn_decode_json("", 0, true, &b, msg, sizeof(msg)), 0);
    assert_int_equal(b.n, 0);
    assert_null(tn_decode_field(&b, "a"));
    tn_decode_done(&b);
    assert_int_equal(tn_decode_json("", 0, false, &b, msg, sizeof(msg)),
                     TN_EINVAL);
    assert_string_equal(msg, "a JSON object body is required");
    tn_decode_done(&b);
    assert_int_equal(tn_decode_json("[]", 2, true, &b, msg, sizeof(msg)),
                     TN_EINVAL);
    assert_string_equal(msg, "the body must be a JSON object");
    tn_decode_done(&b);
}

/* The typed fields' messages, which the API's 400s carry. */
static void test_field_messages(void **state)
{
    (void)state;
    static const char s[] =
        "{\"a\":1,\"b\":\"x\",\"c\":null,\"d\":\"\\u0001\"}";
    struct tn_body b;
    decode_ok(s, sizeof(s) - 1, &b);
    const char *str = NULL;
    size_t len = 0;
    int64_t n = 0;
    assert_int_equal(tn_decode_str(&b, "a", &str, &len, msg, sizeof(msg)),
                     TN_EINVAL);
    assert_string_equal(msg, "field \"a\" must be a string");
    assert_int_equal(tn_decode_int(&b, "b", 0, 9, true, &n, msg, sizeof(msg)),
                     TN_EINVAL);
    assert_string_equal(msg, "field \"b\" must be an integer");
    assert_int_equal(tn_decode_int(&b, "a", 2, 10, true, &n, msg, sizeof(msg)),
                     TN_EINVAL);
    assert_string_equal(msg, "field \"a\" must be between 2 and 10");
    assert_int_equal(tn_decode_int(&b, "c", 2, 10, true, &n, msg, sizeof(msg)),
                     TN_EINVAL);
    assert_string_equal(msg, "field \"c\" is required");
    n = 42;
    assert_int_equal(tn_decode_int(&b, "c", 2, 10, false, &n, msg, sizeof(msg)),
                     0);
    assert_true(n == 42); /* null is absent: untouched */
    assert_int_equal(tn_decode_str(&b, "zz", &str, &len, msg, sizeof(msg)),
                     TN_ENOTFOUND);
    assert_int_equal(
        tn_decode_name(&b, "zz", 8, true, &str, NULL, msg, sizeof(msg)),
        TN_EINVAL);
    assert_string_equal(msg, "field \"zz\" is required");
    len = 7;
    assert_int_equal(
        tn_decode_name(&b, "zz", 8, false, &str, &len, msg, sizeof(msg)), 0);
    assert_null(str);
    assert_int_equal(len, 0);
    assert_int_equal(
        tn_decode_name(&b, "d", 8, true, &str, NULL, msg, sizeof(msg)),
        TN_EINVAL);
    assert_string_equal(msg,
                        "field \"d\" must be 1-8 bytes of printable UTF-8");
    assert_int_equal(
        tn_decode_name(&b, "b", 8, true, &str, &len, msg, sizeof(msg)), 0);
    assert_string_equal(str, "x");
    assert_int_equal(len, 1); /* the length the decoder knew */
    assert_int_equal(tn_decode_int(&b, "a", 1, 1, true, &n, msg, sizeof(msg)),
                     0);
    assert_true(n == 1);
    tn_decode_done(&b);
}

/* tn_decode_json_items of s into b (must decode). */
static void items_ok(const char *s, size_t max_items, struct tn_body *b)
{
    msg[0] = '\0';
    int rc = tn_decode_json_items(s, strlen(s), max_items, b, msg, sizeof(msg));
    if (rc != 0)
        fail_msg("refused %s: %s", s, msg);
}

/* What top-level arrays hold is kept only when asked for: one item per
 * element, then the members of an element that is an object; nothing
 * deeper, and nothing of nested arrays. */
static void test_items(void **state)
{
    (void)state;
    static const char s[] =
        "{\"names\":[\"a\",\"b\\u0041\",{\"name\":\"c\",\"token\":7,"
        "\"x\":[1,{\"y\":2}]},[\"deep\"],null],\"k\":{\"z\":[\"no\"]}}";
    struct tn_body b;
    items_ok(s, 100, &b);
    const struct tn_body_field *f = field(&b, "names", TN_BODY_ARRAY);
    assert_int_equal(f->n_elems, 5);
    assert_int_equal(f->n_items, 8);
    assert_false(f->items_cut);
    const struct tn_body_item *it = &b.items[f->item0];
    assert_null(it[0].key);
    assert_string_equal(it[0].str, "a");
    assert_string_equal(it[1].str, "bA");
    assert_int_equal(it[2].type, TN_BODY_OBJECT);
    assert_int_equal(it[2].elem, 2);
    assert_string_equal(it[3].key, "name");
    assert_string_equal(it[3].str, "c");
    assert_string_equal(it[4].key, "token");
    assert_true(it[4].num == 7 && it[4].elem == 2);
    assert_string_equal(it[5].key, "x");
    assert_int_equal(it[5].type, TN_BODY_ARRAY);
    assert_int_equal(it[6].type, TN_BODY_ARRAY);
    assert_null(it[6].key);
    assert_int_equal(it[7].type, TN_BODY_NULL);
    assert_int_equal(it[7].elem, 4);
    assert_int_equal(b.n_items, 8); /* nothing of "k" */
    tn_decode_done(&b);
    /* Not asked for: counted, not kept. */
    decode_ok(s, sizeof(s) - 1, &b);
    assert_int_equal(field(&b, "names", TN_BODY_ARRAY)->n_elems, 5);
    assert_int_equal(b.n_items, 0);
    assert_null(b.items);
    tn_decode_done(&b);
    /* Past the cap the field says so; the array never grows past it. */
    items_ok(s, 3, &b);
    f = field(&b, "names", TN_BODY_ARRAY);
    assert_true(f->items_cut);
    assert_int_equal(b.n_items, 3);
    assert_true(b.cap_items <= 3);
    tn_decode_done(&b);
}

/* The names of s (decoded into b, which they point into: the caller
 * tn_decode_done()s it once done with them). */
static int names_of(const char *s, size_t max, struct tn_body *b,
                    struct tn_name_ref **out, size_t *n)
{
    items_ok(s, max + 1, b);
    return tn_decode_names(b, "names", max, out, n, msg, sizeof(msg));
}

/* "names": 1..max distinct lease names, each a string. */
static void test_names(void **state)
{
    (void)state;
    struct tn_name_ref *v = NULL;
    size_t n = 0;
    struct tn_body b;
    items_ok("{\"names\":[\"shard:1\",\"shard:2\",\"x\"]}", 4, &b);
    assert_int_equal(tn_decode_names(&b, "names", 3, &v, &n, msg, sizeof(msg)),
                     0);
    assert_int_equal(n, 3);
    assert_string_equal(v[1].name, "shard:2");
    assert_int_equal(v[1].len, 7);
    tn_free(v);
    tn_decode_done(&b);
    static const struct {
        const char *body, *msg;
    } bad[] = {
        {"{}", "field \"names\" is required"},
        {"{\"names\":null}", "field \"names\" is required"},
        {"{\"names\":\"a\"}", "field \"names\" must be an array of names"},
        {"{\"names\":[]}", "field \"names\" must not be empty"},
        {"{\"names\":[\"a\",\"b\",\"c\",\"d\"]}",
         "field \"names\" holds 4 names; at most 3 are accepted "
         "(--max-batch-names)"},
        {"{\"names\":[\"a\",1]}",
         "names[1] must be a lease name (1-256 bytes of printable UTF-8)"},
        {"{\"names\":[\"\"]}",
         "names[0] must be a lease name (1-256 bytes of printable UTF-8)"},
        {"{\"names\":[\"a\\u0001\"]}",
         "names[0] must be a lease name (1-256 bytes of printable UTF-8)"},
        {"{\"names\":[{\"name\":\"a\"}]}",
         "names[0] must be a lease name (1-256 bytes of printable UTF-8)"},
        {"{\"names\":[\"a\",\"b\",\"a\"]}",
         "field \"names\" gives the name \"a\" twice"},
        {"{\"junk\":[1,2,3,4,5],\"names\":[\"a\"]}",
         "field \"names\": too many array elements and members in the body"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        v = (void *)&n; /* set to NULL on failure */
        assert_int_equal(names_of(bad[i].body, 3, &b, &v, &n), TN_EINVAL);
        tn_decode_done(&b);
        assert_null(v);
        assert_string_equal(msg, bad[i].msg);
    }
    /* 257 bytes is one too many for a name. */
    char big[300];
    int len = snprintf(big, sizeof(big), "{\"names\":[\"%0257d\"]}", 0);
    assert_true(len > 0 && (size_t)len < sizeof(big));
    assert_int_equal(names_of(big, 3, &b, &v, &n), TN_EINVAL);
    tn_decode_done(&b);
    (void)snprintf(big, sizeof(big), "{\"names\":[\"%0256d\"]}", 0);
    assert_int_equal(names_of(big, 3, &b, &v, &n), 0);
    assert_int_equal(v[0].len, 256);
    tn_free(v);
    tn_decode_done(&b);
}

/* The leases of s, decoded into b as names_of does. */
static int leases_of(const char *s, size_t max, struct tn_body *b,
                     struct tn_name_token **out, size_t *n)
{
    items_ok(s, 4 * (max + 1), b);
    return tn_decode_name_tokens(b, "leases", max, out, n, msg, sizeof(msg));
}

/* "leases": 1..max objects {"name", "token"} of distinct names. */
static void test_leases(void **state)
{
    (void)state;
    struct tn_name_token *v = NULL;
    size_t n = 0;
    struct tn_body body;
    assert_int_equal(leases_of("{\"leases\":[{\"name\":\"a\",\"token\":7},"
                               "{\"token\":9007199254740991,\"name\":\"b\","
                               "\"note\":[1]}]}",
                               2, &body, &v, &n),
                     0);
    assert_int_equal(n, 2);
    assert_string_equal(v[0].name, "a");
    assert_true(v[0].token == 7);
    assert_string_equal(v[1].name, "b");
    assert_true(v[1].token == 9007199254740991ULL);
    tn_free(v);
    tn_decode_done(&body);
    static const struct {
        const char *body, *msg;
    } bad[] = {
        {"{\"leases\":[\"a\"]}",
         "leases[0] must be an object {\"name\", \"token\"}"},
        {"{\"leases\":[{\"name\":\"a\"}]}",
         "leases[0] must be an object with both \"name\" and \"token\""},
        {"{\"leases\":[{\"name\":\"a\",\"token\":1},{\"token\":2}]}",
         "leases[1] must be an object with both \"name\" and \"token\""},
        {"{\"leases\":[{\"name\":\"a\",\"token\":\"1\"}]}",
         "leases[0] must be an object whose \"token\" is an integer in "
         "1..2^53-1"},
        {"{\"leases\":[{\"name\":\"a\",\"token\":0}]}",
         "leases[0] must be an object whose \"token\" is an integer in "
         "1..2^53-1"},
        {"{\"leases\":[{\"name\":\"a\",\"token\":99999999999999999999}]}",
         "leases[0] must be an object whose \"token\" is an integer in "
         "1..2^53-1"},
        {"{\"leases\":[{\"name\":\"a\",\"token\":9007199254740992}]}",
         "leases[0] must be an object whose \"token\" is an integer in "
         "1..2^53-1"},
        {"{\"leases\":[{\"name\":7,\"token\":1}]}",
         "leases[0] must be an object whose \"name\" is a lease name"},
        {"{\"leases\":[{\"name\":\"a\",\"token\":1,\"token\":2}]}", NULL},
        {"{\"leases\":[{\"name\":\"a\",\"token\":1},"
         "{\"name\":\"a\",\"token\":2}]}",
         "field \"leases\" gives the name \"a\" twice"},
        {"{\"leases\":[]}", "field \"leases\" must not be empty"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tn_body b;
        msg[0] = '\0';
        int rc = tn_decode_json_items(bad[i].body, strlen(bad[i].body), 12, &b,
                                      msg, sizeof(msg));
        if (rc == 0)
            rc = tn_decode_name_tokens(&b, "leases", 2, &v, &n, msg,
                                       sizeof(msg));
        tn_decode_done(&b);
        assert_int_equal(rc, TN_EINVAL);
        if (bad[i].msg != NULL)
            assert_string_equal(msg, bad[i].msg);
        else
            assert_non_null(strstr(msg, "duplicate key"));
    }
}

/* A number is valid JSON whatever its size (RFC 8259 section 6), and
 * unknown fields are ignored (docs/API.md): one past int64 or past a
 * double's range is kept, and refused only by the getter of a field that
 * takes an integer, with its range (issue #36, 2026-12-07: such a body was
 * refused whole).  int64's own ends are exact. */
static void test_numbers_of_any_size(void **state)
{
    (void)state;
    static const char s[] =
        "{\"a\":99999999999999999999,\"b\":-99999999999999999999,"
        "\"c\":1e400,\"d\":-9223372036854775808,\"e\":9223372036854775807,"
        "\"f\":9223372036854775808,\"g\":[18446744073709551616],"
        "\"h\":{\"i\":-1e-400}}";
    struct tn_body b;
    decode_ok(s, sizeof(s) - 1, &b);
    assert_int_equal(b.n, 8);
    assert_true(field(&b, "a", TN_BODY_INT)->out_of_range);
    assert_true(field(&b, "b", TN_BODY_INT)->out_of_range);
    (void)field(&b, "c", TN_BODY_REAL);
    assert_true(field(&b, "d", TN_BODY_INT)->num == INT64_MIN);
    assert_false(field(&b, "d", TN_BODY_INT)->out_of_range);
    assert_true(field(&b, "e", TN_BODY_INT)->num == INT64_MAX);
    assert_true(field(&b, "f", TN_BODY_INT)->out_of_range);
    int64_t n = 0;
    assert_int_equal(
        tn_decode_int(&b, "f", 0, INT64_MAX, true, &n, msg, sizeof(msg)),
        TN_EINVAL);
    assert_string_equal(
        msg, "field \"f\" must be between 0 and 9223372036854775807");
    assert_int_equal(
        tn_decode_int(&b, "b", INT64_MIN, 0, true, &n, msg, sizeof(msg)),
        TN_EINVAL);
    assert_int_equal(tn_decode_int(&b, "c", 0, 9, true, &n, msg, sizeof(msg)),
                     TN_EINVAL);
    assert_string_equal(msg, "field \"c\" must be an integer");
    assert_int_equal(
        tn_decode_int(&b, "e", 0, INT64_MAX, true, &n, msg, sizeof(msg)), 0);
    assert_true(n == INT64_MAX);
    tn_decode_done(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keeps_the_top_level_fields),
        cmocka_unit_test(test_refuses),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_many_keys),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_field_messages),
        cmocka_unit_test(test_items),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_leases),
        cmocka_unit_test(test_numbers_of_any_size),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
