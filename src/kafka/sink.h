/* SPDX-License-Identifier: MIT */
/* The materializer's sink: where admitted rows, rejected rows, marks and
 * next offsets are written in one transaction per batch.  A small vtable
 * with one implementation per file (sink_sqlite.c, sink_pg.c), registered
 * in sinks.c; the materializer never sees SQL.  Not
 * thread-safe: one sink per materializer. */
#ifndef TN_KAFKA_SINK_H
#define TN_KAFKA_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/err.h>

/* One decided record, borrowed from the consumed message.  A sink may keep
 * the row (and what it points to) until the batch's commit or rollback:
 * the messages must live that long. */
struct tn_sink_row {
    const char *topic;    /* NUL-terminated */
    int32_t partition;    /* source partition */
    int64_t offset;       /* source offset */
    const char *resource; /* lease name, NULL when there is none */
    size_t resource_len;  /* bytes */
    bool has_token;       /* false: token column is NULL */
    uint64_t token;       /* parsed token */
    const void *key;      /* record key, may be NULL */
    size_t key_len;       /* bytes */
    const void *value;    /* record value, NULL for a null payload */
    size_t value_len;     /* bytes */
    bool claim;           /* a claim record */
};

struct tn_sink;

struct tn_sink_ops {
    /* Start the batch transaction. */
    int (*begin)(struct tn_sink *s, struct tn_errmsg *em);
    /* 0 admitted (mark raised), TN_ESTALE, or an error; the mark before
     * goes to *hwm_before_out when not NULL. */
    int (*advance)(struct tn_sink *s, const char *resource, size_t len,
                   uint64_t token, uint64_t *hwm_before_out,
                   struct tn_errmsg *em);
    int (*admit)(struct tn_sink *s, const struct tn_sink_row *r,
                 struct tn_errmsg *em);
    int (*reject)(struct tn_sink *s, const struct tn_sink_row *r,
                  const char *reason, struct tn_errmsg *em);
    /* Compare-and-set of a next offset: TN_ECONFLICT when the stored value
     * is not expected (another writer moved it). */
    int (*cas_offset)(struct tn_sink *s, const char *topic, int32_t partition,
                      int64_t expected, int64_t next, struct tn_errmsg *em);
    int (*commit)(struct tn_sink *s, struct tn_errmsg *em);
    void (*rollback)(struct tn_sink *s);
    /* Make sure rows exist for partitions [0, n) (0 when new) and read
     * them into next_out[0..n).  Runs its own transaction. */
    int (*load_offsets)(struct tn_sink *s, const char *topic, int32_t n,
                        int64_t *next_out, struct tn_errmsg *em);
    void (*close)(struct tn_sink *s);
};

struct tn_sink {
    const struct tn_sink_ops *ops; /* never NULL */
};

/* Open the sink a --sink spec names, creating its tables: the first line
 * of sinks.def whose prefix starts spec.  On success *out is
 * the sink (close it with ops->close).  TN_EINVAL for an unknown spec. */
int tn_sink_open(const char *spec, struct tn_sink **out, struct tn_errmsg *em);
/* "sqlite:PATH or postgresql://...": how each sink of sinks.def is
 * written, for usage and errors (cut to cap bytes). */
void tn_sink_spellings(char *out, size_t cap);

/* Each sink's open function, one for each line of sinks.def (defined in
 * sink_NAME.c): on success *out is the sink, its tables created. */
#define TN_SINK(name, prefix, strip, hint)                                     \
    int tn_sink_##name##_open(const char *arg, struct tn_sink **out,           \
                              struct tn_errmsg *em);
#include "kafka/sinks.def"
#undef TN_SINK

#endif
