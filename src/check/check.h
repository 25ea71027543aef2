/* SPDX-License-Identifier: MIT */
/* The history checker: judges a parsed history against the token contract
 * (docs/CONTRACT.md sections 4 and 6).  Every rule gives unknown outcomes
 * (info, no completion) the reading most favourable to the server, so every
 * violation it reports is certain.  O(N log N) in the number of events.
 * The rules are written out in docs/safety/tenure-check.md. */
#ifndef TN_CHECK_CHECK_H
#define TN_CHECK_CHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "check/history.h"

enum tn_check_class {
    TN_CHECK_DUPLICATE_TOKEN = 0,
    TN_CHECK_TOKEN_ORDER,
    TN_CHECK_OVERLAPPING_GRANT,
    TN_CHECK_SUPERSEDED_SUCCESS,
    TN_CHECK_RENEW_TOKEN_CHANGED,
    TN_CHECK_SINK_BELOW_MARK,
    TN_CHECK_SINK_NEVER_GRANTED,
    TN_CHECK_SINK_MARK_MOVED_DOWN,
    TN_CHECK_SINK_MARK_MISMATCH,
    TN_CHECK_RENEW_AFTER_LOST, /* docs/safety/revealed-end.md */
    TN_CHECK_CHECK_REVIVED,
    TN_CHECK_N_CLASSES
};

/* One event of a witness: a client operation or a sink decision. */
struct tn_check_ref {
    bool sink;  /* true: index into h->sinks, false: into h->ops */
    size_t idx; /* index into that array */
};

/* The smallest set of events that shows one violation of a class. */
struct tn_check_witness {
    struct tn_check_ref ev[4]; /* the events, earliest-role first */
    unsigned n_ev;             /* used entries of ev, 0 = no witness */
    int64_t bound;             /* class-specific figure (see docs/safety) */
};

struct tn_check_report {
    size_t count[TN_CHECK_N_CLASSES];                    /* violations */
    struct tn_check_witness witness[TN_CHECK_N_CLASSES]; /* first found */
};

/* Stable snake_case name of a class ("duplicate_token", ...). */
const char *tn_check_class_name(unsigned cls);

/* Check h (finished) and fill out.  Returns 0 or TN_ENOMEM. */
int tn_check_run(const struct tn_history *h, struct tn_check_report *out);

/* True when the report holds no violation. */
bool tn_check_is_clean(const struct tn_check_report *r);

/* The report as a new JSON object: {"valid", "events", "operations",
 * "sink_decisions", "counts", "violations": [{"class", "count", "why",
 * "events": [...]}]}.  NULL on out of memory. */
json_t *tn_check_report_json(const struct tn_history *h,
                             const struct tn_check_report *r);

/* One operation or sink decision of h as the report shows it (line,
 * proc, op, name, times, tokens, outcome; or line, t, resource, token,
 * decision, hwm_before).  A new object, NULL on out of memory. */
json_t *tn_check_op_json(const struct tn_history *h, size_t idx);
json_t *tn_check_sink_json(const struct tn_history *h, size_t idx);

/* Write one self-contained HTML page (no external resources) showing the
 * checked history as a timeline, one lane per resource, with the sink's
 * decisions as marks and every violation of r highlighted with the rule it
 * breaks.  title is shown as the page's title (escaped).  Returns 0,
 * TN_ENOMEM or TN_EIO. */
int tn_check_html_write(FILE *out, const char *title,
                        const struct tn_history *h,
                        const struct tn_check_report *r);

#endif
