/* SPDX-License-Identifier: MIT */
/* What a publish target is: one file per kind (redis.c, kafka.c), each a
 * tn_pub_target_ops registered in publish.c's table.  A target's calls
 * run on its own thread only, and may block. */
#ifndef TN_PUBLISH_TARGET_H
#define TN_PUBLISH_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/err.h>

#include "common/buf.h"
#include "store/names.h" /* a record's type and end, as text */
#include "store/store.h"

/* One record of the log: an event, or a reset. */
struct tn_pub_record {
    uint64_t id;                            /* log id, increasing */
    enum tn_event_type type;                /* TN_EVENT_RESET for a reset */
    uint64_t token;                         /* the grant's token */
    uint64_t floor;                         /* the name's floor after it */
    int64_t at_ms;                          /* wall clock when logged */
    char name[TN_NAME_MAX_BYTES + 1];       /* NUL-terminated, "" on reset
                                               and session records */
    char owner_id[TN_OWNER_MAX_BYTES + 1];  /* NUL-terminated, "" on reset */
    char session_id[TN_SESSION_ID_HEX + 1]; /* session records: the
                                               session, else "" */
    enum tn_grant_end end; /* session ended: TN_GRANT_RELEASED, _EXPIRED
                              or _REVOKED */
};

struct tn_pub_target_opts {
    const char *const *kv; /* "key=value" from --publish-opt; borrowed by
                              open() only: a target copies what it keeps */
    size_t n_kv;           /* count */
    uint64_t maxlen;       /* Redis MAXLEN ~, 0 for none */
};

struct tn_pub_target_ops {
    const char *scheme; /* URL scheme without "://" */
    /* Parse url and configure (no I/O needed yet).  0 or TN_EINVAL with
     * em, TN_ENOMEM. */
    int (*open)(const char *url, const struct tn_pub_target_opts *o, void **out,
                struct tn_errmsg *em);
    /* Deliver recs[0..n) in order; *acked is set to how many, from the
     * first, the target has durably taken.  0 when all were, else a
     * TN_E* code (TN_EUNAVAIL: target down, try again later). */
    int (*send)(void *t, const struct tn_pub_record *recs, size_t n,
                size_t *acked, struct tn_errmsg *em);
    void (*close)(void *t);
};

extern const struct tn_pub_target_ops tn_pub_redis_ops;
extern const struct tn_pub_target_ops tn_pub_rediss_ops;
extern const struct tn_pub_target_ops tn_pub_kafka_ops;

/* Whether t is a session's event (no name, token or floor). */
static inline bool tn_pub_is_session(enum tn_event_type t)
{
    return t == TN_EVENT_SESSION_OPENED || t == TN_EVENT_SESSION_ENDED;
}
/* Append s as a JSON string (quoted, escaped). */
void tn_pub_json_str(struct tn_buf *b, const char *s);
/* Append the record as one JSON object (the Kafka value). */
void tn_pub_json_record(struct tn_buf *b, const struct tn_pub_record *r);

#endif
