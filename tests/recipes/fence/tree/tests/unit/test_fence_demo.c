/* SPDX-License-Identifier: MIT */
/* The demo fence through the rule (tn_fence_advance): equal tokens
 * admitted, lower ones rejected with the mark unchanged, no check outside
 * a transaction, and an aborted transaction's marks gone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tenure/fence_demo.h>

#include "tn_test.h"

#include <cmocka.h>

static int advance(struct tn_fence_demo *f, uint64_t token, uint64_t *before)
{
    return tn_fence_advance(&tn_fence_demo_ops, f, "shard:1", 7, token, before,
                            NULL);
}

static uint64_t mark(struct tn_fence_demo *f)
{
    uint64_t hwm = 99;
    assert_int_equal(
        tn_fence_get(&tn_fence_demo_ops, f, "shard:1", 7, &hwm, NULL), 0);
    return hwm;
}

static void test_fence_demo__admits_equal_rejects_lower(void **state)
{
    (void)state;
    struct tn_fence_demo f = {0};
    uint64_t before = 99;
    tn_fence_demo_begin(&f);
    assert_int_equal(advance(&f, 5, &before), 0);
    assert_int_equal(before, 0);
    assert_int_equal(advance(&f, 5, &before), 0); /* the same holder */
    assert_int_equal(advance(&f, 4, &before), TN_ESTALE);
    assert_int_equal(before, 5);
    tn_fence_demo_commit(&f);
    assert_int_equal(mark(&f), 5); /* the mark never moved down */
}

static void test_fence_demo__refused_outside_a_transaction(void **state)
{
    (void)state;
    struct tn_fence_demo f = {0};
    assert_int_equal(advance(&f, 1, NULL), TN_EINVAL);
    assert_int_equal(mark(&f), 0);
}

static void test_fence_demo__abort_keeps_the_mark(void **state)
{
    (void)state;
    struct tn_fence_demo f = {0};
    tn_fence_demo_begin(&f);
    assert_int_equal(advance(&f, 3, NULL), 0);
    tn_fence_demo_commit(&f);
    tn_fence_demo_begin(&f);
    assert_int_equal(advance(&f, 9, NULL), 0);
    tn_fence_demo_abort(&f); /* the guarded write failed */
    assert_int_equal(mark(&f), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fence_demo__admits_equal_rejects_lower),
        cmocka_unit_test(test_fence_demo__refused_outside_a_transaction),
        cmocka_unit_test(test_fence_demo__abort_keeps_the_mark),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
