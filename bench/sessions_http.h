/* SPDX-License-Identifier: MIT */
/* bench_sessions_http: what sessions cost over HTTP, against a running
 * tenured (either store) or etcd (its JSON gateway), for bench/sessions.sh.
 * The modes (sessions_http.c says how each is run):
 *   keep    N leases kept alive for a while: per-lease renews, one
 *           session, one etcd lease with N keys, N etcd leases
 *   claims  a claim of 1,000 names against 1,000 single acquires
 *   attach  a claim under a session of 10 leases against one of 100,000
 *           (etcd: a put attached to a lease of 10 keys against 100,000)
 *   expiry  an unrelated client's acquires while a session of 100,000
 *           leases expires (or is deleted)
 *   fill, verify  1,000 sessions of 1,000 leases: made, then checked
 *           after a restart
 * Each prints "key=value" lines for the script to tabulate. */
#ifndef TN_BENCH_SESSIONS_HTTP_H
#define TN_BENCH_SESSIONS_HTTP_H

#include "http_load.h"

extern struct hl H;
extern const char *target; /* the URL */
extern char run_id[24];    /* this run's prefix of names and owners */

/* The server's CPU time (tenured or etcd: the process given), and the
 * database's (PostgreSQL: its postmaster and every child), ns. */
int64_t server_cpu(void);
int64_t db_cpu(void);

/* Offers each idle connection in [from, to) to next (which sends a request
 * on it, or declines) and handles answers, until stop says so. */
typedef bool next_fn(struct hl_conn *c);
void run_until(int from, int to, next_fn *next, bool (*stop)(void));
/* Runs for ms, connections in [from, to) offered to next. */
void run_for(int from, int to, next_fn *next, int64_t ms);

/* JSON of up to n names "PREFIX<i>" for i in [from, from + n): a batch
 * claim's body for the session id/secret. */
void claim_body(struct hl_str *b, const char *secret, const char *prefix,
                size_t from, size_t n);
/* Opens a session of ttl_ms on c: its id and secret (33 bytes each). */
int open_session(struct hl_conn *c, long ttl_ms, char *id, char *secret);
/* A gauge or counter of /metrics (first sample of that name), or -1. */
long long metric(struct hl_conn *c, const char *name);
/* Prints "name=p50/p99/max/n" of latencies in ns, as ms. */
void print_lat(const char *name, int64_t *v, size_t n);

int mode_keep(int argc, char **argv);
int mode_claims(int argc, char **argv);
int mode_attach(int argc, char **argv);
int mode_expiry(int argc, char **argv);
int mode_fill(int argc, char **argv);
int mode_verify(int argc, char **argv);

#endif
