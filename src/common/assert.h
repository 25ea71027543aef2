/* SPDX-License-Identifier: MIT */
/* TN_ASSERT stays on in release builds: a lock service running with a broken
 * invariant is worse than one that restarts, and fencing makes a restart
 * safe.  TN_ALWAYS/TN_NEVER guard "impossible" branches: they abort in debug
 * builds and evaluate to the condition in release builds. */
#ifndef TN_COMMON_ASSERT_H
#define TN_COMMON_ASSERT_H

#include <stdbool.h>

_Noreturn void tn_assert_fail(const char *file, int line, const char *expr);

#define TN_ASSERT(x) ((x) ? (void)0 : tn_assert_fail(__FILE__, __LINE__, #x))

#ifdef NDEBUG
#    define TN_ALWAYS(x) (!!(x))
#    define TN_NEVER(x) (!!(x))
#else
#    define TN_ALWAYS(x)                                                       \
        ((x) ? true : (tn_assert_fail(__FILE__, __LINE__, #x), false))
#    define TN_NEVER(x)                                                        \
        ((x) ? (tn_assert_fail(__FILE__, __LINE__, #x), true) : false)
#endif

#endif
