/* SPDX-License-Identifier: MIT */
/* The history of a run as tenure-check reads it (CONTRACT §8): JSON
 * lines of client operations (invoke + completion, paired per process) and
 * sink decisions (in the sink's own order).  This module only parses and
 * pairs; it judges nothing.  Every string is interned to a small id.
 * Malformed input is an error with the line number, never a guess. */
#ifndef TN_CHECK_HISTORY_H
#define TN_CHECK_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <tenure/err.h>

#include "common/buf.h"
#include "common/map.h"

/* Longest accepted line (bytes, without the newline). */
#define TN_HISTORY_MAX_LINE_BYTES ((size_t)1 << 20)
/* Largest accepted "t", token and hwm_before; keeps t + ttl from
 * overflowing. */
#define TN_HISTORY_MAX_VALUE ((int64_t)1 << 62)
/* Largest accepted ttl_ms. */
#define TN_HISTORY_MAX_TTL_MS ((int64_t)1 << 40)
/* "No value" for the optional int64 fields and "never" for complete_t. */
#define TN_HISTORY_NONE ((int64_t)-1)
#define TN_HISTORY_NEVER INT64_MAX
/* "No string" for the optional interned ids. */
#define TN_HISTORY_NO_ID UINT32_MAX

enum tn_history_kind {
    TN_HISTORY_ACQUIRE = 0,
    TN_HISTORY_RENEW = 1,
    TN_HISTORY_RELEASE = 2,
    /* GET .../check?token= (docs/safety/revealed-end.md) */
    TN_HISTORY_CHECK = 3,
    /* the session operations (docs/safety/sessions.md) */
    TN_HISTORY_SESSION_OPEN = 4,  /* POST /v1/sessions */
    TN_HISTORY_SESSION_RENEW = 5, /* PATCH /v1/sessions/{id} */
    TN_HISTORY_SESSION_END = 6,   /* DELETE /v1/sessions/{id} */
};
#define TN_HISTORY_N_KINDS 7

/* True for the three session operations (they name a session, no lease). */
static inline bool tn_history_is_session_op(unsigned kind)
{
    return kind >= TN_HISTORY_SESSION_OPEN;
}

enum tn_history_outcome {
    TN_HISTORY_PENDING = 0, /* no completion line (yet): unknown outcome */
    TN_HISTORY_OK = 1,
    TN_HISTORY_FAIL = 2,
    TN_HISTORY_INFO = 3,
};

/* One client operation: its invoke and (maybe) its completion. */
struct tn_history_op {
    int64_t invoke_t;       /* ns; >= 0 */
    int64_t complete_t;     /* ns; >= invoke_t, or TN_HISTORY_NEVER */
    int64_t token_in;       /* renew/release invoke token, or NONE */
    int64_t token_out;      /* token the completion carried, or NONE */
    int64_t ttl_ms;         /* from the invoke (> 0), or NONE */
    uint32_t proc;          /* interned "proc" */
    uint32_t name;          /* interned "name", NO_ID on session ops */
    uint32_t session;       /* interned "session" (the id), or NO_ID: on
                               session ops, and on acquires under one */
    uint32_t request_id;    /* interned "request_id" of the invoke, or NO_ID */
    uint32_t invoke_line;   /* 1-based line number */
    uint32_t complete_line; /* 1-based, 0 when there is no completion */
    uint8_t kind;           /* enum tn_history_kind */
    uint8_t outcome;        /* enum tn_history_outcome; PENDING read as INFO */
    bool current;           /* an ok check: the "current" it answered */
    bool lost;              /* the completion carried "error":"lost" */
};

/* One sink decision. */
struct tn_history_sink {
    int64_t t;          /* ns */
    int64_t token;      /* >= 0 */
    int64_t hwm_before; /* the sink's own mark before deciding, or NONE */
    uint32_t resource;  /* interned "resource" */
    uint32_t line;      /* 1-based line number */
    bool admit;         /* decision: admit (true) or reject */
};

struct tn_history {
    struct tn_history_op *ops;     /* in invoke order (line order) */
    size_t n_ops;                  /* used */
    size_t cap_ops;                /* allocated */
    struct tn_history_sink *sinks; /* in the sink's order (line order) */
    size_t n_sinks;                /* used */
    size_t cap_sinks;              /* allocated */
    char **strs;                   /* interned strings, by id (in map) */
    size_t n_strs;                 /* used */
    size_t cap_strs;               /* allocated */
    struct tn_map interned;        /* owns the strings, by content */
    uint32_t *pending;             /* per proc id: op index + 1, 0 = idle */
    size_t cap_pending;            /* entries allocated in pending */
    uint32_t n_lines;              /* lines consumed so far */
    size_t n_events;               /* non-blank lines accepted */
    struct tn_buf partial;         /* stream reading: an unfinished line */
};

/* Zero h; it owns nothing yet. */
void tn_history_init(struct tn_history *h);
/* Free everything h owns and leave it as after init. */
void tn_history_release(struct tn_history *h);

/* For the reader (history_read.c): the id of s[0..len) interned in h
 * (the same id for the same bytes); 0, TN_ETOOBIG or TN_ENOMEM. */
int tn_history_intern(struct tn_history *h, const char *s, size_t len,
                      uint32_t *id_out);
/* Room in *arr (of *cap elements of elem bytes) for one past used. */
int tn_history_grow(void **arr, size_t *cap, size_t used, size_t elem);
/* Room in h->pending for process proc. */
int tn_history_pending_reserve(struct tn_history *h, uint32_t proc);

/* The interned string for id (borrowed from h until release). */
const char *tn_history_str(const struct tn_history *h, uint32_t id);

/* Names for output: "acquire", "ok", ... */
const char *tn_history_kind_name(unsigned kind);
const char *tn_history_outcome_name(unsigned outcome);

#endif
