/* SPDX-License-Identifier: MIT */
/* common/name: what a name may be, and cutting one for a message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include "common/name.h"
#include "tn_test.h"

#include <cmocka.h>

static void test_name__utf8_prefix_ends_on_a_character(void **state)
{
    (void)state;
    /* "a" then five 3-byte characters (U+20AC): 16 bytes. */
    const char *s = "a\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
                    "\xe2\x82\xac";
    size_t len = strlen(s);
    assert_int_equal(tn_utf8_prefix(s, len, 64), len);
    assert_int_equal(tn_utf8_prefix(s, len, 1), 1);
    /* 2 or 3 bytes would cut the first euro sign: stop before it. */
    assert_int_equal(tn_utf8_prefix(s, len, 2), 1);
    assert_int_equal(tn_utf8_prefix(s, len, 3), 1);
    assert_int_equal(tn_utf8_prefix(s, len, 4), 4);
    assert_int_equal(tn_utf8_prefix(s, len, 6), 4);
    assert_int_equal(tn_utf8_prefix(s, len, 0), 0);
}

static void test_name__utf8_prefix_counts_stray_bytes_as_one(void **state)
{
    (void)state;
    const char s[] = {'x', (char)0x80, (char)0xff, 'y'};
    assert_int_equal(tn_utf8_prefix(s, sizeof(s), 3), 3);
    assert_int_equal(tn_utf8_prefix(s, sizeof(s), 64), sizeof(s));
}

/* Issue #36 follow-up (2026-12-07): a 403 quoting a name cut at 64 bytes
 * split a character and its body was not UTF-8. */
static void test_name__cut_name_stays_valid(void **state)
{
    (void)state;
    char name[80];
    memset(name, 's', 62);
    memcpy(name + 62, "\xf0\x9d\x84\x9e", 4); /* bytes 62..65 */
    size_t n = tn_utf8_prefix(name, 66, 64);
    assert_int_equal(n, 62);
    assert_true(tn_name_is_valid(name, n, 256));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name__utf8_prefix_ends_on_a_character),
        cmocka_unit_test(test_name__utf8_prefix_counts_stray_bytes_as_one),
        cmocka_unit_test(test_name__cut_name_stays_valid),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
