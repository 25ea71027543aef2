/* SPDX-License-Identifier: MIT */
/* http_load: the small HTTP/1.1 client of bench_sessions_http, one thread
 * and one epoll set driving many keep-alive connections, each with at most
 * one request in flight (a closed loop per connection, like wrk without
 * pipelining).  Answers with Content-Length and chunked answers (etcd's
 * gateway streams) are read whole before the request's callback runs.
 * Also: the CPU time of a server process from /proc, and the few JSON and
 * timing helpers the modes share.  A bench tool: it measures, it asserts
 * nothing. */
#ifndef TN_BENCH_HTTP_LOAD_H
#define TN_BENCH_HTTP_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct hl_conn;
/* Called once the whole answer to the connection's request is read: the
 * status (0 when the connection failed) and the body in c->body. */
typedef void hl_done_fn(struct hl_conn *c, int status);

struct hl_conn {
    int fd;
    int idx;          /* its place in hl.conns */
    bool busy;        /* a request is in flight */
    bool pollout;     /* epoll watches it for writing */
    int64_t sent_ns;  /* when it was written (monotonic) */
    hl_done_fn *done; /* the request's callback */
    int status;       /* of the last answer (0: the connection failed) */
    long tag;         /* the request's own number, for the callback */
    char *in;         /* what was read of the answer */
    size_t in_have, in_cap;
    char *out; /* the request, and how much of it is written */
    size_t out_len, out_off, out_cap;
    char *body; /* the answer's body, NUL-terminated */
    size_t body_len, body_cap;
};

struct hl {
    int ep;
    char host[64];
    int port;
    struct hl_conn *conns;
    int n;
};

/* Connects n connections to URL (http://HOST:PORT); 0, or -1 with a
 * message on stderr. */
int hl_open(struct hl *h, const char *url, int n);
void hl_close(struct hl *h);
/* Writes a request on an idle connection; done runs with its answer. */
void hl_send(struct hl_conn *c, const char *method, const char *path,
             const char *body, size_t len, hl_done_fn *done, long tag);
/* Waits up to timeout_ms for the connections, reads and writes what is
 * ready and runs the callbacks of complete answers. */
void hl_poll(struct hl *h, int timeout_ms);
/* A request on c, waited for (other connections' answers are handled
 * meanwhile); the status, the body in c->body. */
int hl_call(struct hl *h, struct hl_conn *c, const char *method,
            const char *path, const char *body);

/* A growable string for request bodies. */
struct hl_str {
    char *p;
    size_t len, cap;
};
void hl_str_add(struct hl_str *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void hl_str_free(struct hl_str *s);

/* CLOCK_MONOTONIC, ns. */
int64_t hl_now_ns(void);
/* CPU time of pid, all its threads (and, with tree, all its child
 * processes': PostgreSQL's backends), ns, from /proc/PID/task/ TID/schedstat
 * (or /proc/PID/stat's ticks where there is none); 0 for pid 0. */
int64_t hl_cpu_ns(pid_t pid, bool tree);
/* Our own CPU time, ns. */
int64_t hl_self_cpu_ns(void);

/* The string value of "key" in JSON text (first match), copied into out;
 * false if absent.  The number value (quoted or not), or -1. */
bool hl_json_str(const char *text, const char *key, char *out, size_t cap);
long long hl_json_num(const char *text, const char *key);
/* Occurrences of needle in text. */
size_t hl_count(const char *text, const char *needle);
/* Base64 of s into out (cap >= 4 * (len + 2) / 3 + 1), by libsodium. */
void hl_b64(const char *s, size_t len, char *out);

/* Sorts v[0..n) and returns the q-quantile (nearest rank), 0 if n == 0. */
int64_t hl_quantile(int64_t *v, size_t n, double q);

#endif
