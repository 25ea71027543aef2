/* SPDX-License-Identifier: MIT */
/* Revocation streams: tenured's events appended to Redis Streams and Kafka
 * topics (--publish URL).  Every event the store announces is written to
 * a local, append-only event log (data dir/publish/) on the loop thread,
 * in the same pass that answers the request, with one write(2) and no
 * fsync; a thread per target reads the log from its durable cursor (the
 * last id the target acknowledged) and sends what follows, so a slow or
 * dead target never delays a grant.  A target that lags more than
 * backlog events gets one "reset" record instead of the events it
 * missed.  Events carry no safety (docs/FENCING.md): these streams only
 * let honest holders stop sooner. */
#ifndef TN_PUBLISH_PUBLISH_H
#define TN_PUBLISH_PUBLISH_H

#include <stddef.h>
#include <stdint.h>

#include <tenure/err.h>

#include "common/buf.h"
#include "store/store.h"

#define TN_PUBLISH_MAX_TARGETS 8
#define TN_PUBLISH_MAX_OPTS 32

struct tn_publish;

struct tn_publish_config {
    const char *dir;         /* the log's directory (created) */
    const char *const *urls; /* redis://, rediss://, kafka:// */
    size_t n_urls;           /* 1..TN_PUBLISH_MAX_TARGETS */
    const char *const *opts; /* "key=value", passed to the libraries */
    size_t n_opts;           /* 0..TN_PUBLISH_MAX_OPTS */
    uint64_t backlog;        /* events a target may lag, then reset */
    uint64_t maxlen;         /* Redis MAXLEN ~ (0: no trimming) */
    uint64_t segment_events; /* events per log file (0: default) */
    const char *pg_url;      /* PostgreSQL store: only the instance holding
                                the advisory lock publishes; NULL for the
                                embedded store */
};

/* Open the log (recovering a torn tail; after an unclean stop the log
 * gets a reset record, since events of the last instant before a crash
 * may never have reached it), parse every URL, and start one thread per
 * target.  0, TN_EINVAL (bad URL or option, detail in em), TN_EIO,
 * TN_ENOMEM.  Loop thread. */
int tn_publish_start(const struct tn_publish_config *cfg,
                     struct tn_publish **out, struct tn_errmsg *em);

/* tn_store_event_fn: append ev to the log (loop thread).  Never blocks on
 * a target; a failed write makes the next record a reset. */
void tn_publish_event(void *p, const struct tn_event *ev);

/* Append Prometheus lines (any thread). */
void tn_publish_metrics(struct tn_publish *p, struct tn_buf *out);

/* Stop the target threads (each gets up to grace_ms to send what the log
 * holds), save cursors, mark the log clean.  NULL is a no-op. */
void tn_publish_stop(struct tn_publish *p, int64_t grace_ms);

#endif
