/* SPDX-License-Identifier: MIT */
/* The abort path of TN_ASSERT. */
#include "assert.h"

#include <stdio.h>
#include <stdlib.h>

void tn_assert_fail(const char *file, int line, const char *expr)
{
    (void)fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}
