/* SPDX-License-Identifier: MIT */
/* tenure-check [FILE]: read a history (JSON lines, CONTRACT §8)
 * from FILE or stdin, check it and print the JSON report.  Exit 0 when no
 * violation, 1 with violations, 2 when no verdict is possible (malformed
 * input, unreadable file, bad usage). */
#include <stdio.h>

#include "check/cli.h"

int main(int argc, char **argv)
{
    return tn_check_cli(argc, argv, stdin, stdout, stderr);
}
