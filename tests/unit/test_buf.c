/* SPDX-License-Identifier: MIT */
/* The capped buffer (src/common/buf.c): appends and printf grow it and keep
 * it NUL-terminated; the cap is exact (reaching it is fine, one byte more
 * is TN_ETOOBIG) and a refused or failed append leaves the buffer as it
 * was; reset keeps the storage, release frees it and keeps the cap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "tn_test.h"

#include <cmocka.h>

static void test_buf__starts_empty(void **state)
{
    (void)state;
    struct tn_buf b;
    tn_buf_init(&b, 100);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.max_bytes, 100);
    /* An empty append still gives text that parsers can take. */
    assert_int_equal(tn_buf_append(&b, "", 0), TN_OK);
    assert_non_null(b.data);
    assert_string_equal(b.data, "");
    tn_buf_release(&b);
}

static void test_buf__append_grows_and_terminates(void **state)
{
    (void)state;
    struct tn_buf b;
    tn_buf_init(&b, 1 << 20);
    char chunk[100];
    memset(chunk, 'x', sizeof(chunk));
    for (int i = 0; i < 50; i++) {
        assert_int_equal(tn_buf_append(&b, chunk, sizeof(chunk)), TN_OK);
        assert_int_equal(b.len, (size_t)(i + 1) * sizeof(chunk));
        assert_true(b.cap >= b.len);
        assert_int_equal(b.data[b.len], '\0');
    }
    assert_int_equal(strlen(b.data), 5000);
    /* doubling from 256: 5000 bytes fit in 8192 */
    assert_int_equal(b.cap, 8192);
    tn_buf_release(&b);
}

static void test_buf__cap_is_exact(void **state)
{
    (void)state;
    struct tn_buf b;
    tn_buf_init(&b, 300);
    char big[300];
    memset(big, 'a', sizeof(big));
    assert_int_equal(tn_buf_append(&b, big, 299), TN_OK);
    assert_int_equal(tn_buf_append(&b, "b", 1), TN_OK); /* exactly 300 */
    assert_int_equal(b.len, 300);
    assert_int_equal(b.cap, 300); /* never allocated past the cap */
    assert_int_equal(tn_buf_append(&b, "c", 1), TN_ETOOBIG);
    assert_int_equal(b.len, 300);
    assert_int_equal(b.data[299], 'b');
    assert_int_equal(b.data[300], '\0');
    /* a length that would wrap size_t is refused too */
    assert_int_equal(tn_buf_append(&b, "c", SIZE_MAX), TN_ETOOBIG);
    tn_buf_release(&b);
}

static void test_buf__zero_cap(void **state)
{
    (void)state;
    struct tn_buf b;
    tn_buf_init(&b, 0);
    assert_int_equal(tn_buf_append(&b, "x", 1), TN_ETOOBIG);
    assert_int_equal(tn_buf_printf(&b, "%d", 1), TN_ETOOBIG);
    assert_int_equal(b.len, 0);
    tn_buf_release(&b);
}

static void test_buf__printf_short_and_long(void **state)
{
    (void)state;
    struct tn_buf b;
    tn_buf_init(&b, 4096);
    assert_int_equal(tn_buf_printf(&b, "%s=%d;", "a", 1), TN_OK);
    assert_string_equal(b.data, "a=1;");
    /* longer than printf's 512-byte stack buffer: the second path */
    char longer[1000];
    memset(longer, 'z', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    assert_int_equal(tn_buf_printf(&b, "[%s]", longer), TN_OK);
    assert_int_equal(b.len, 4 + 1001);
    assert_int_equal(b.data[4], '[');
    assert_int_equal(b.data[4 + 1000], ']');
    assert_int_equal(b.data[b.len], '\0');
    tn_buf_release(&b);
}

static void test_buf__printf_over_cap_changes_nothing(void **state)
{
    (void)state;
    struct tn_buf b;
    tn_buf_init(&b, 600);
    assert_int_equal(tn_buf_printf(&b, "head"), TN_OK);
    char longer[700];
    memset(longer, 'q', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    assert_int_equal(tn_buf_printf(&b, "%s", longer), TN_ETOOBIG); /* long */
    assert_int_equal(tn_buf_printf(&b, "%.597s", longer), TN_ETOOBIG);
    assert_int_equal(tn_buf_printf(&b, "%.596s", longer), TN_OK); /* 600 */
    assert_int_equal(b.len, 600);
    assert_memory_equal(b.data, "headqq", 6);
    tn_buf_release(&b);
}

static void test_buf__reset_keeps_storage(void **state)
{
    (void)state;
    struct tn_buf b;
    tn_buf_init(&b, 1000);
    assert_int_equal(tn_buf_append(&b, "hello", 5), TN_OK);
    char *data = b.data;
    size_t cap = b.cap;
    tn_buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_ptr_equal(b.data, data);
    assert_int_equal(b.cap, cap);
    assert_string_equal(b.data, "");
    assert_int_equal(tn_buf_append(&b, "hi", 2), TN_OK);
    assert_string_equal(b.data, "hi");
    tn_buf_release(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.max_bytes, 1000);
    /* reset of a buffer that never allocated is harmless */
    tn_buf_reset(&b);
    assert_null(b.data);
}

static void test_buf__out_of_memory_changes_nothing(void **state)
{
    (void)state;
    struct tn_buf b;
    tn_buf_init(&b, 1 << 20);
    assert_int_equal(tn_buf_append(&b, "keep", 4), TN_OK);
    char big[1000];
    memset(big, 'm', sizeof(big));
    tn_alloc_fail_at(1);
    assert_int_equal(tn_buf_append(&b, big, sizeof(big)), TN_ENOMEM);
    tn_alloc_fail_at(1);
    assert_int_equal(tn_buf_printf(&b, "%.999s", big), TN_ENOMEM);
    tn_alloc_fail_at(0);
    assert_int_equal(b.len, 4);
    assert_string_equal(b.data, "keep");
    assert_int_equal(tn_buf_append(&b, big, sizeof(big)), TN_OK);
    assert_int_equal(b.len, 1004);
    tn_buf_release(&b);
}

/* The printf-free pieces give what printf would, and obey the cap. */
static void test_buf__append_str_and_uint(void **state)
{
    (void)state;
    struct tn_buf b;
    tn_buf_init(&b, 64);
    assert_int_equal(tn_buf_append_str(&b, "n="), TN_OK);
    assert_int_equal(tn_buf_append_uint(&b, 0), TN_OK);
    assert_int_equal(tn_buf_append_str(&b, ","), TN_OK);
    assert_int_equal(tn_buf_append_uint(&b, 201), TN_OK);
    assert_int_equal(tn_buf_append_str(&b, ","), TN_OK);
    assert_int_equal(tn_buf_append_uint(&b, UINT64_MAX), TN_OK);
    assert_string_equal(b.data, "n=0,201,18446744073709551615");
    tn_buf_release(&b);
    tn_buf_init(&b, 3);
    assert_int_equal(tn_buf_append_uint(&b, 1234), TN_ETOOBIG);
    assert_int_equal(b.len, 0);
    assert_int_equal(tn_buf_append_uint(&b, 123), TN_OK);
    assert_string_equal(b.data, "123");
    tn_buf_release(&b);
}

/* Two digits at a time: every number of up to 5 digits, and each power
 * of ten and its neighbours, print as printf prints them. */
static void test_buf__append_uint_matches_printf(void **state)
{
    (void)state;
    static uint64_t vals[200064];
    size_t n = 0;
    for (uint64_t v = 0; v < 100000; v++)
        vals[n++] = v;
    for (uint64_t p = 10; p <= 1000000000000000000u; p *= 10) {
        vals[n++] = p - 1;
        vals[n++] = p;
        vals[n++] = p + 1;
    }
    vals[n++] = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        struct tn_buf b;
        char want[32];
        tn_buf_init(&b, 64);
        assert_int_equal(tn_buf_append_uint(&b, vals[i]), TN_OK);
        (void)snprintf(want, sizeof(want), "%llu", (unsigned long long)vals[i]);
        assert_string_equal(b.data, want);
        tn_buf_release(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf__starts_empty),
        cmocka_unit_test(test_buf__append_grows_and_terminates),
        cmocka_unit_test(test_buf__cap_is_exact),
        cmocka_unit_test(test_buf__zero_cap),
        cmocka_unit_test(test_buf__printf_short_and_long),
        cmocka_unit_test(test_buf__printf_over_cap_changes_nothing),
        cmocka_unit_test(test_buf__reset_keeps_storage),
        cmocka_unit_test(test_buf__out_of_memory_changes_nothing),
        cmocka_unit_test(test_buf__append_str_and_uint),
        cmocka_unit_test(test_buf__append_uint_matches_printf),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
