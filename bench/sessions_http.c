/* SPDX-License-Identifier: MIT */
/* bench_sessions_http MODE URL PIDS ARGS...
 *   URL   http://HOST:PORT of tenured, or of etcd's client port
 *   PIDS  SERVER[:DB]: the process whose CPU is the server's (tenured or
 *         etcd), and PostgreSQL's postmaster (its CPU and its children's
 *         are the database's), 0 for none
 *
 *   keep KIND N TTL_MS SECS CONNS        (sessions_keep.c)
 *   claims N ROUNDS CONNS                (sessions_claims.c)
 *   attach tenured|etcd N BLOCKS PER CONNS
 *   expiry N TTL_MS expire|delete BEFORE_S AFTER_S  (sessions_expiry.c)
 *   fill SESSIONS PER TTL_MS FILE CONNS
 *   verify FILE PER
 *
 * CPU times are read from /proc (each thread's schedstat: nanoseconds of
 * run time, whatever else the machine runs), so they are what the server
 * spent, not how long the machine took. */
#include "sessions_http.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct hl H;
const char *target;
char run_id[24];
static pid_t srv_pid, db_pid;

int64_t server_cpu(void)
{
    return hl_cpu_ns(srv_pid, false);
}

int64_t db_cpu(void)
{
    return hl_cpu_ns(db_pid, true);
}

void run_until(int from, int to, next_fn *next, bool (*stop)(void))
{
    while (!stop()) {
        for (int i = from; i < to; i++) {
            if (!H.conns[i].busy)
                (void)next(&H.conns[i]);
        }
        hl_poll(&H, 1);
    }
}

static int64_t until_ns;
static bool time_up(void)
{
    return hl_now_ns() >= until_ns;
}

void run_for(int from, int to, next_fn *next, int64_t ms)
{
    until_ns = hl_now_ns() + ms * 1000000;
    run_until(from, to, next, time_up);
}

void claim_body(struct hl_str *b, const char *secret, const char *prefix,
                size_t from, size_t n)
{
    b->len = 0;
    hl_str_add(b, "{\"session_secret\":\"%s\",\"names\":[", secret);
    for (size_t i = 0; i < n; i++)
        hl_str_add(b, "%s\"%s%zu\"", i ? "," : "", prefix, from + i);
    hl_str_add(b, "]}");
}

int open_session(struct hl_conn *c, long ttl_ms, char *id, char *secret)
{
    char body[160];
    snprintf(body, sizeof(body), "{\"owner_id\":\"%s/%d\",\"ttl_ms\":%ld}",
             run_id, c->idx, ttl_ms);
    int st = hl_call(&H, c, "POST", "/v1/sessions", body);
    if (st != 201 || !hl_json_str(c->body, "session_id", id, 33) ||
        !hl_json_str(c->body, "session_secret", secret, 33)) {
        fprintf(stderr, "open session: %d %s\n", st, c->body);
        return -1;
    }
    return 0;
}

long long metric(struct hl_conn *c, const char *name)
{
    if (hl_call(&H, c, "GET", "/metrics", NULL) != 200)
        return -1;
    char pat[128];
    snprintf(pat, sizeof(pat), "\n%s ", name);
    const char *p = strstr(c->body, pat);
    return p != NULL ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

void print_lat(const char *name, int64_t *v, size_t n)
{
    int64_t p50 = hl_quantile(v, n, 0.5), p99 = hl_quantile(v, n, 0.99);
    int64_t mx = n ? v[n - 1] : 0;
    printf(" %s_p50_ms=%.2f %s_p99_ms=%.2f %s_max_ms=%.2f %s_n=%zu", name,
           (double)p50 / 1e6, name, (double)p99 / 1e6, name, (double)mx / 1e6,
           name, n);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_sessions_http MODE URL PIDS ARGS... "
                        "(see bench/sessions_http.c)\n");
        return 2;
    }
    target = argv[2];
    srv_pid = (pid_t)strtol(argv[3], NULL, 10);
    const char *colon = strchr(argv[3], ':');
    db_pid = colon != NULL ? (pid_t)strtol(colon + 1, NULL, 10) : 0;
    snprintf(run_id, sizeof(run_id), "b%d", (int)getpid());
    signal(SIGPIPE, SIG_IGN); /* a write to a closed connection fails */
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } modes[] = {{"keep", mode_keep},     {"claims", mode_claims},
                 {"attach", mode_attach}, {"expiry", mode_expiry},
                 {"fill", mode_fill},     {"verify", mode_verify}};
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        if (strcmp(argv[1], modes[i].name) == 0) {
            setvbuf(stdout, NULL, _IOLBF, 0);
            return modes[i].fn(argc - 4, argv + 4) < 0 ? 1 : 0;
        }
    }
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 2;
}
