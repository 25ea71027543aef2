/* SPDX-License-Identifier: MIT */
/* The reply writer (src/api/reply.c): members join with commas, strings
 * are escaped, and integers print exactly at their extremes; every reply
 * built here must parse back with jansson to the values written. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/reply.h"
#include "tn_test.h"

#include <cmocka.h>

static void test_members(void **state)
{
    (void)state;
    struct tn_buf b;
    tn_buf_init(&b, 4096);
    (void)tn_buf_append(&b, "{", 1);
    tn_reply_kv_str(&b, "name", "shard:8841", true);
    tn_reply_kv_uint(&b, "token", 0, false);
    tn_reply_kv_int(&b, "min", INT64_MIN, false);
    tn_reply_kv_int(&b, "neg", -1, false);
    tn_reply_kv_int(&b, "big", INT64_MAX, false);
    tn_reply_kv_str(&b, "esc", "a\"b\\c\n\x01", false);
    tn_reply_key(&b, "list", false);
    (void)tn_buf_append(&b, "[]}", 3);
    assert_string_equal(b.data,
                        "{\"name\":\"shard:8841\",\"token\":0,"
                        "\"min\":-9223372036854775808,\"neg\":-1,"
                        "\"big\":9223372036854775807,"
                        "\"esc\":\"a\\\"b\\\\c\\u000a\\u0001\",\"list\":[]}");
    json_error_t err;
    json_t *o = json_loadb(b.data, b.len, JSON_REJECT_DUPLICATES, &err);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "esc")),
                        "a\"b\\c\n\x01");
    assert_int_equal(json_integer_value(json_object_get(o, "min")), INT64_MIN);
    json_decref(o);
    tn_buf_release(&b);
}

/* The escaper reads 8 bytes at a time where it can: each byte that needs
 * escaping, at every position of strings of every length up to 40, comes
 * out as the bytewise reading writes it. */
static void expect_escaped(const char *s)
{
    char want[512];
    size_t o = 0;
    want[o++] = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p != 0; p++) {
        if (*p == '"' || *p == '\\')
            o += (size_t)snprintf(want + o, sizeof(want) - o, "\\%c", *p);
        else if (*p < 0x20)
            o += (size_t)snprintf(want + o, sizeof(want) - o, "\\u%04x", *p);
        else
            want[o++] = (char)*p;
    }
    want[o++] = '"';
    want[o] = '\0';
    struct tn_buf b;
    tn_buf_init(&b, 4096);
    tn_reply_str(&b, s);
    assert_string_equal(b.data, want);
    tn_buf_release(&b);
}

static void test_escape_every_position(void **state)
{
    (void)state;
    static const unsigned char special[] = {'"', '\\', 0x01, 0x1f, '\n'};
    static const unsigned char plain[] = {' ',  '!',  '#',  '[',  ']',
                                          0x7f, 0x80, 0xc3, 0xe9, 0xff};
    char s[48];
    for (size_t len = 0; len <= 40; len++) {
        for (size_t i = 0; i < len; i++)
            s[i] = (char)('a' + i % 26);
        s[len] = '\0';
        expect_escaped(s);
        for (size_t at = 0; at < len; at++) {
            char keep = s[at];
            for (size_t k = 0; k < sizeof(special); k++) {
                s[at] = (char)special[k];
                expect_escaped(s);
            }
            for (size_t k = 0; k < sizeof(plain); k++) {
                s[at] = (char)plain[k];
                expect_escaped(s);
            }
            s[at] = keep;
        }
    }
}

static void test_uint_max(void **state)
{
    (void)state;
    struct tn_buf b;
    tn_buf_init(&b, 4096);
    tn_reply_kv_uint(&b, "max", UINT64_MAX, true);
    tn_reply_kv_uint(&b, "ten", 10, false);
    assert_string_equal(b.data, "\"max\":18446744073709551615,\"ten\":10");
    tn_buf_release(&b);
}

static void test_long_key(void **state)
{
    (void)state;
    char key[100];
    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    struct tn_buf b;
    tn_buf_init(&b, 4096);
    tn_reply_key(&b, key, false);
    assert_int_equal(b.len, sizeof(key) - 1 + 4);
    assert_int_equal(b.data[0], ',');
    assert_int_equal(b.data[1], '"');
    assert_int_equal(b.data[b.len - 2], '"');
    assert_int_equal(b.data[b.len - 1], ':');
    tn_buf_release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_members),
        cmocka_unit_test(test_uint_max),
        cmocka_unit_test(test_escape_every_position),
        cmocka_unit_test(test_long_key),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
