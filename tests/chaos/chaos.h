/* SPDX-License-Identifier: MIT */
/* tn-chaos: the clients of the fault-injection harness.  They drive tenured
 * over HTTP from several threads, write to a fenced SQLite sink, and record
 * the history of docs/safety/tenure-check.md with one clock
 * (CLOCK_MONOTONIC ns, tn_clock_mono_ns). */
#ifndef TN_CHAOS_H
#define TN_CHAOS_H

/* Busy timeout of the shared sink: a loaded CI host can hold its locks
 * for seconds. */
#define CHAOS_SINK_BUSY_MS 30000

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sqlite3;

/* Options of `tn-chaos client`. */
struct chaos_opts {
    const char *url;         /* tenured base URL(s), comma-separated */
    const char *out;         /* history file (appended) */
    const char *sink;        /* SQLite sink path, NULL = no sink writes */
    const char *brokers;     /* Kafka: write stamped records instead */
    const char *topic;       /* the topic of those records */
    const char *proc_prefix; /* proc names are <prefix>.<thread> */
    const char *name_prefix; /* lease names are <prefix><i> */
    unsigned threads;        /* concurrent clients */
    unsigned names;          /* distinct lease names */
    int64_t ttl_min_ms;      /* ttl drawn in [min, max] */
    int64_t ttl_max_ms;
    int64_t duration_ms;   /* stop starting operations after this */
    const char *stop_file; /* or once this file exists (NULL: never) */
    int64_t timeout_ms;    /* whole request; past it the outcome is info */
    unsigned abort_pct;    /* sink transactions rolled back on purpose */
    unsigned max_rounds;   /* renews per lease in [0, max] (0: none) */
    unsigned reveal;       /* > 0: each lease is left to expire, then probed
                              this many times (check + renew), across the
                              nemesis's kills (docs/safety/revealed-end.md) */
    uint64_t seed;
};

/* One xorshift64* generator per thread (no global state). */
uint64_t chaos_rand(uint64_t *s);
/* Uniform in [lo, hi]. */
int64_t chaos_between(uint64_t *s, int64_t lo, int64_t hi);

/* The history file: one write(2) per line, shared by the threads. */
int chaos_hist_open(const char *path);
void chaos_hist_line(int fd, const char *line, size_t len);

/* Sink: open (and create the tables of) the SQLite sink. */
int chaos_sink_open(const char *path, struct sqlite3 **out);
/* One fenced write of (resource, token) in one transaction, rolled back
 * instead of committed when abort is true.  Returns 1 admitted, 0 rejected
 * (stale), negative on an infrastructure error (nothing committed). */
int chaos_sink_write(struct sqlite3 *db, const char *resource, uint64_t token,
                     const char *proc, bool abort);
/* Print the committed decisions as history lines, in the sink's order. */
int chaos_sink_dump(const char *path);
/* Print the proc of the latest admitted write (nothing when none): the
 * stop-client profile pauses a process that has just written, so that it
 * wakes up as a zombie. */
int chaos_sink_last_writer(const char *path);

int chaos_client_run(const struct chaos_opts *o);

#endif
