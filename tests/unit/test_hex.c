/* SPDX-License-Identifier: MIT */
/* Hex and constant-time comparison (src/common/rand.c, on libsodium):
 * lease secrets and proofs are decoded with tn_hex_decode, so it must take
 * exactly 2*len hex digits of either case and nothing else (no separators,
 * no odd digit, no short input), and leave a failure visible. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tenure/err.h>

#include "common/rand.h"
#include "tn_test.h"

#include <cmocka.h>

static void test_hex__encode_is_lower_case(void **state)
{
    (void)state;
    static const uint8_t bytes[] = {0x00, 0x0f, 0xa5, 0xff};
    char out[2 * sizeof(bytes) + 1];
    memset(out, 'x', sizeof(out));
    tn_hex_encode(bytes, sizeof(bytes), out);
    assert_string_equal(out, "000fa5ff");
}

static void test_hex__decode_round_trips_either_case(void **state)
{
    (void)state;
    uint8_t out[4] = {0};
    assert_int_equal(tn_hex_decode("000fA5fF", 8, out, sizeof(out)), 0);
    static const uint8_t want[] = {0x00, 0x0f, 0xa5, 0xff};
    assert_memory_equal(out, want, sizeof(want));
}

static void test_hex__decode_is_strict(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "000fa5f",    /* odd: 7 digits */
        "000fa5",     /* short */
        "000fa5ff00", /* long */
        "000fa5fg",   /* not a digit */
        "00:0fa5ff",  /* separator (libsodium could skip it; we must not) */
        "00 0fa5ff",  /* space */
        "0x0fa5ff",   /* prefix */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint8_t out[4] = {0};
        assert_int_equal(
            tn_hex_decode(bad[i], strlen(bad[i]), out, sizeof(out)), TN_EINVAL);
    }
}

static void test_hex__ct_equal(void **state)
{
    (void)state;
    static const uint8_t a[] = {1, 2, 3, 4};
    static const uint8_t b[] = {1, 2, 3, 5};
    assert_true(tn_ct_equal(a, a, sizeof(a)));
    assert_false(tn_ct_equal(a, b, sizeof(a)));
    assert_true(tn_ct_equal(a, b, 3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hex__encode_is_lower_case),
        cmocka_unit_test(test_hex__decode_round_trips_either_case),
        cmocka_unit_test(test_hex__decode_is_strict),
        cmocka_unit_test(test_hex__ct_equal),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
