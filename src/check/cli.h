/* SPDX-License-Identifier: MIT */
/* The tenure-check command line, callable in-process.  Not thread-safe
 * (it writes to the streams it is given). */
#ifndef TN_CHECK_CLI_H
#define TN_CHECK_CLI_H

#include <stdio.h>

enum tn_check_exit {
    TN_CHECK_EXIT_CLEAN = 0,      /* no violation (or --help) */
    TN_CHECK_EXIT_VIOLATION = 1,  /* violations, report on out */
    TN_CHECK_EXIT_NO_VERDICT = 2, /* malformed input, I/O or usage error */
};

/* Run "tenure-check argv[1..argc)": the history comes from the file named
 * in argv or from in, the JSON report goes to out, diagnostics to err.
 * Returns the exit status (enum tn_check_exit).  Borrows every stream. */
int tn_check_cli(int argc, char **argv, FILE *in, FILE *out, FILE *err);

#endif
