/* SPDX-License-Identifier: MIT */
/* The one way every cmocka program of tests/ runs its cases:
 *
 *     return TN_RUN_TESTS(tests, setup, teardown);
 *
 * TN_TEST_FILTER=PATTERN runs only the cases whose name matches PATTERN
 * (cmocka's glob: `*` any run of characters, `?` one character), and
 * TN_TEST_SKIP=PATTERN skips the ones that match.  A filter that matches
 * no case fails the program, so a typo cannot pass as a green run:
 *
 *     TN_TEST_FILTER=acquire_free_name build/dev/bin/test_lease
 *     TN_TEST_FILTER='renew_*' ctest --preset dev -R unit/test_lease
 */
#ifndef TN_TEST_H
#define TN_TEST_H

#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

/* 0 when the filters of the environment are set in cmocka and leave at
 * least one of the n cases to run; -1 (after saying so) when they leave
 * none. */
static inline int tn_test_filter(const struct CMUnitTest *tests, size_t n)
{
    const char *only = getenv("TN_TEST_FILTER");
    const char *skip = getenv("TN_TEST_SKIP");
    if (only != NULL && only[0] == '\0')
        only = NULL;
    if (skip != NULL && skip[0] == '\0')
        skip = NULL;
    if (only != NULL)
        cmocka_set_test_filter(only);
    if (skip != NULL)
        cmocka_set_skip_filter(skip);
    if (only == NULL)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (fnmatch(only, tests[i].name, 0) == 0 &&
            (skip == NULL || fnmatch(skip, tests[i].name, 0) != 0))
            return 0;
    }
    fprintf(stderr, "TN_TEST_FILTER=%s matches no case of this program\n",
            only);
    return -1;
}

#define TN_RUN_TESTS(tests, setup, teardown)                                   \
    (tn_test_filter((tests), sizeof(tests) / sizeof((tests)[0])) != 0          \
         ? 1                                                                   \
         : cmocka_run_group_tests((tests), (setup), (teardown)))

#endif
