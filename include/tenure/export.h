/* SPDX-License-Identifier: MIT */
/* TN_EXTERN marks what the tenure libraries export.  They are built with
 * -fvisibility=hidden: a function or object is visible to programs only
 * when its declaration in include/tenure/ carries TN_EXTERN, and every
 * declaration there does (scripts/check-exports.sh compares the two). */
#ifndef TENURE_EXPORT_H
#define TENURE_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#    define TN_EXTERN __attribute__((visibility("default")))
#else
#    define TN_EXTERN
#endif

#endif
