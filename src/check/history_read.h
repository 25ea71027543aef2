/* SPDX-License-Identifier: MIT */
/* Reading a history (history.h) from its JSON lines (CONTRACT §8). */
#ifndef TN_CHECK_HISTORY_READ_H
#define TN_CHECK_HISTORY_READ_H

#include <stddef.h>
#include <stdio.h>

#include <tenure/err.h>

#include "check/history.h"

/* Parse one line (no newline; blank lines are skipped).  Returns 0,
 * TN_EINVAL when the line is malformed (detail with the line number in em),
 * TN_ETOOBIG for an over-long line, or TN_ENOMEM. */
int tn_history_add_line(struct tn_history *h, const char *line, size_t len,
                        struct tn_errmsg *em);

/* Parse buf[0..len) as lines and finish the history (see
 * tn_history_finish).  Same return codes as tn_history_add_line. */
int tn_history_parse(struct tn_history *h, const char *buf, size_t len,
                     struct tn_errmsg *em);

/* Read every line of f and finish the history.  Returns 0, TN_EINVAL,
 * TN_ETOOBIG, TN_ENOMEM or TN_EIO (read error, detail in em). */
int tn_history_read_stream(struct tn_history *h, FILE *f, struct tn_errmsg *em);

/* End of input: operations still pending keep TN_HISTORY_PENDING, which
 * every rule reads as an unknown outcome (like info).  Always 0. */
int tn_history_finish(struct tn_history *h);

#endif
