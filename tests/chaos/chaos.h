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
    unsigned sessions;     /* > 0: each thread is a worker that holds its
                              leases under one session, claiming up to this
                              many names per batch (chaos_session.c) */
    uint64_t seed;
};

/* The harness's HTTP response bodies are read whole up to this size (a
 * batch claim's answer lists every name). */
#define CHAOS_BODY_CAP 65536
/* --url may list several servers, comma-separated (the HA profile). */
#define CHAOS_MAX_URLS 8
#define CHAOS_URL_CAP 256

struct rd_kafka_s;

/* One recording thread (one "proc" of the history, or one worker whose
 * batch items are procs of their own). */
struct chaos_worker {
    const struct chaos_opts *o;
    unsigned idx;
    int hist;
    char proc[64];
    uint64_t rng;
    void *easy; /* CURL * */
    struct sqlite3 *sink;
    struct rd_kafka_s *rk; /* Kafka mode: the producer of stamped records */
    char urls[CHAOS_MAX_URLS][CHAOS_URL_CAP]; /* the servers of --url */
    unsigned n_urls;                          /* >= 1 */
    unsigned cur; /* the one the next request goes to */
    char body[CHAOS_BODY_CAP];
    size_t body_len;
    /* counters */
    uint64_t ops, writes, admitted, rejected;
};

/* ---- chaos_worker.c: what every kind of worker does ---- */

void chaos_sleep_ms(int64_t ms);
/* Split --url into w->urls; each thread starts on another server.
 * Returns -1 when a URL is empty or too long. */
int chaos_split_urls(struct chaos_worker *w, const char *list);
/* Send one request (json NULL: a GET).  Returns the HTTP status, or 0
 * when no answer came (the outcome is unknown), or -1 when no server
 * accepted the connection (nothing was sent).  The body is in w->body. */
long chaos_http(struct chaos_worker *w, const char *method, const char *path,
                const char *json);
/* The token of the last answer's body, 0 when there is none. */
uint64_t chaos_body_token(struct chaos_worker *w);
/* The string member key of the last answer's body into out; -1 when
 * absent, not a string, or too long. */
int chaos_body_str(struct chaos_worker *w, const char *key, char *out,
                   size_t cap);
/* ",\"error\":\"<code>\"" of a 4xx answer's body into tail (else ""). */
const char *chaos_error_tail(struct chaos_worker *w, long status, char *tail,
                             size_t cap);
/* The same for any failure: the 4xx code, or unavailable (503), refused
 * (no connection), timeout (no answer), server_error (another 5xx). */
const char *chaos_fail_tail(struct chaos_worker *w, long status, char *tail,
                            size_t cap);
/* Phase for a completion: ok when status is the success code, fail for a
 * 4xx or a refused connection, info otherwise. */
const char *chaos_phase_of(long status, long ok_status);
/* One history line of proc (NULL: w->proc): name, session, token > 0 and
 * ttl_ms > 0 when given, then tail (",\"k\":v..." or ""). */
void chaos_rec(struct chaos_worker *w, const char *proc, const char *tail,
               const char *op, const char *phase, const char *name,
               const char *session, uint64_t token, int64_t ttl_ms, int64_t t);
/* One fenced write of (name, token) to the sink (or Kafka). */
void chaos_write(struct chaos_worker *w, const char *name, uint64_t token);
/* The run is over: its time is up, or the nemesis made the stop file. */
bool chaos_run_over(const struct chaos_worker *w, int64_t end_ns);

/* ---- chaos_session.c ---- */

/* One session's life: open, claims, rounds of writes and renews, batch
 * releases, then an end (or its expiry), and checks of its leases. */
void chaos_session_life(struct chaos_worker *w, int64_t end_ns);

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
/* Fenced writes of n (resource, token) pairs in one transaction, each
 * decided on its own (a worker that writes a round of its shards at
 * once); admitted[i] says each one's decision.  Returns 0, or negative on
 * an infrastructure error (nothing committed). */
int chaos_sink_write_many(struct sqlite3 *db, const char *const *resources,
                          const uint64_t *tokens, size_t n, const char *proc,
                          bool *admitted);
/* Print the committed decisions as history lines, in the sink's order. */
int chaos_sink_dump(const char *path);
/* Print the proc of the latest admitted write (nothing when none): the
 * stop-client profile pauses a process that has just written, so that it
 * wakes up as a zombie. */
int chaos_sink_last_writer(const char *path);

int chaos_client_run(const struct chaos_opts *o);

#endif
