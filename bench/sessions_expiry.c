/* SPDX-License-Identifier: MIT */
/* expiry N TTL_MS expire|delete BEFORE_S AFTER_S: a session of N leases
 * ends at once while an unrelated client acquires new names one after
 * another on its own connection.  The session is opened with TTL_MS, kept
 * by renews while its N names are claimed (1,000 a request) and for
 * BEFORE_S more, then either no longer renewed (expire: it ends TTL_MS
 * after its last renew was sent, at the earliest) or ended by DELETE.  A
 * third connection reads tenure_session_leases_settled_total from /metrics
 * every 50 ms: "during" lasts from the end to the first read that counts
 * all N settled (their rows, ledger entries and events written), then
 * AFTER_S more.  Prints the unrelated client's acquire latency before,
 * during and after (by the instant each was sent), how long the settling
 * took, and the server's CPU meanwhile.
 *
 * fill SESSIONS PER TTL_MS FILE CONNS: opens SESSIONS sessions of TTL_MS
 * and claims PER names under each (one claim each), CONNS requests at
 * once; writes "id secret name-prefix" per session to FILE.
 * verify FILE PER: after a restart, whether every session of FILE is live
 * with its PER leases: lists the live sessions (GET /v1/sessions), renews
 * each (PATCH), reads one lease of each (GET /v1/leases/NAME). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sessions_http.h"

enum { KEEPER, PROBE, POLLER, FILL0, NCONN = FILL0 + 4 };

static struct {
    size_t n, claimed, claim_sent, probes;
    long ttl_ms;
    bool stop_renew, ended, settled, delete;
    char sid[33], sec[33];
    int64_t due, last_renew, t_end, t_first, t_settled, next_poll;
    long long settled0;
    int64_t cpu_end, cpu_settled, db_end, db_settled, cpu_last, db_last;
    int64_t *lat, *sent;
    size_t nlat, cap, errors;
    struct hl_str b;
} E;

static void exp_done(struct hl_conn *c, int st)
{
    int64_t now = hl_now_ns();
    switch (c->idx) {
    case KEEPER:
        if (E.delete &&E.stop_renew) {
            E.errors += st != 204;
            return;
        }
        E.errors += st != 200;
        E.last_renew = c->sent_ns;
        E.due = c->sent_ns + (int64_t)E.ttl_ms * 1000000 / 3;
        return;
    case PROBE:
        E.errors += st != 201;
        if (E.nlat == E.cap) {
            E.cap = E.cap ? 2 * E.cap : 65536;
            E.lat = realloc(E.lat, E.cap * sizeof(int64_t));
            E.sent = realloc(E.sent, E.cap * sizeof(int64_t));
        }
        E.lat[E.nlat] = now - c->sent_ns;
        E.sent[E.nlat++] = c->sent_ns;
        return;
    case POLLER: {
        const char *p =
            strstr(c->body, "\ntenure_session_leases_settled_total ");
        long long v = p != NULL ? strtoll(strchr(p + 1, ' '), NULL, 10) : -1;
        int64_t cpu = server_cpu(), db = db_cpu();
        if (!E.ended) {
            E.cpu_last = cpu;
            E.db_last = db;
        }
        if (E.ended && !E.t_first && v > E.settled0)
            E.t_first = now;
        if (E.ended && !E.settled && v - E.settled0 >= (long long)E.n) {
            E.settled = true;
            E.t_settled = now;
            E.cpu_settled = cpu;
            E.db_settled = db;
        }
        return;
    }
    default:
        E.errors += st != 200;
        E.claimed += hl_count(c->body, "lease_secret");
    }
}

static bool exp_next(struct hl_conn *c)
{
    int64_t now = hl_now_ns();
    char path[96], body[160];
    if (c->idx == KEEPER) {
        if (E.stop_renew || now < E.due)
            return false;
        snprintf(path, sizeof(path), "/v1/sessions/%s", E.sid);
        snprintf(body, sizeof(body), "{\"session_secret\":\"%s\"}", E.sec);
        hl_send(c, "PATCH", path, body, strlen(body), exp_done, 0);
    } else if (c->idx == PROBE) {
        if (E.claim_sent < E.n)
            return false;
        snprintf(
            body, sizeof(body),
            "{\"name\":\"%s-p%zu\",\"owner_id\":\"probe\",\"ttl_ms\":60000}",
            run_id, E.probes++);
        hl_send(c, "POST", "/v1/leases", body, strlen(body), exp_done, 0);
    } else if (c->idx == POLLER) {
        if (now < E.next_poll || E.claim_sent < E.n)
            return false;
        E.next_poll = now + 50000000;
        hl_send(c, "GET", "/metrics", NULL, 0, exp_done, 0);
    } else {
        if (E.claim_sent >= E.n)
            return false;
        size_t k = E.n - E.claim_sent < 1000 ? E.n - E.claim_sent : 1000;
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "%s-e-", run_id);
        claim_body(&E.b, E.sec, prefix, E.claim_sent, k);
        E.claim_sent += k;
        snprintf(path, sizeof(path), "/v1/sessions/%s/leases", E.sid);
        hl_send(c, "POST", path, E.b.p, E.b.len, exp_done, 0);
    }
    return true;
}

static bool filled(void)
{
    return E.claimed >= E.n || E.errors > 0;
}

static bool keeper_idle(void)
{
    return !H.conns[KEEPER].busy;
}

static bool all_settled(void)
{
    return E.settled || hl_now_ns() > E.t_end + 300 * 1000000000LL;
}

/* Latencies pooled over rounds: before, during, after. */
static struct {
    int64_t *v[3];
    size_t n[3], cap[3];
    double settle_ms[64], first_ms[64], cpu_ms[64], db_ms[64];
} P;

/* Pools the latencies of the probes sent in [from, to) as phase k. */
static void pool(int k, int64_t from, int64_t to)
{
    for (size_t i = 0; i < E.nlat; i++) {
        if (E.sent[i] < from || E.sent[i] >= to)
            continue;
        if (P.n[k] == P.cap[k]) {
            P.cap[k] = P.cap[k] ? 2 * P.cap[k] : 65536;
            P.v[k] = realloc(P.v[k], P.cap[k] * sizeof(int64_t));
        }
        P.v[k][P.n[k]++] = E.lat[i];
    }
}

static void end_session(void)
{
    char path[96], body[96];
    snprintf(path, sizeof(path), "/v1/sessions/%s", E.sid);
    snprintf(body, sizeof(body), "{\"session_secret\":\"%s\"}", E.sec);
    E.t_end = hl_now_ns();
    hl_send(&H.conns[KEEPER], "DELETE", path, body, strlen(body), exp_done, 0);
}

/* One session of E.n leases filled, ended, settled; its figures pooled. */
static int one_round(int r, long before, long after, double *fill_s)
{
    E.nlat = E.claimed = E.claim_sent = 0;
    E.stop_renew = E.ended = E.settled = false;
    E.t_first = E.t_settled = 0;
    if (open_session(&H.conns[KEEPER], E.ttl_ms, E.sid, E.sec) < 0)
        return -1;
    E.due = hl_now_ns() + (int64_t)E.ttl_ms * 1000000 / 3;
    int64_t t0 = hl_now_ns();
    run_until(0, NCONN, exp_next, filled);
    *fill_s = (double)(hl_now_ns() - t0) / 1e9;
    E.settled0 =
        metric(&H.conns[POLLER], "tenure_session_leases_settled_total");
    if (E.errors || E.claimed < E.n || E.settled0 < 0)
        return fprintf(stderr, "expiry: fill failed (%zu errors)\n", E.errors),
               -1;
    int64_t p0 = hl_now_ns();
    run_for(0, NCONN, exp_next, before * 1000);
    E.stop_renew = true;
    run_until(0, NCONN, exp_next, keeper_idle);
    if (E.delete)
        end_session();
    else
        E.t_end = E.last_renew + (int64_t)E.ttl_ms * 1000000;
    /* "ended" once the end instant passed: polls before it are before */
    while (hl_now_ns() < E.t_end)
        run_for(0, NCONN, exp_next, 1);
    E.ended = true;
    E.cpu_end = E.cpu_last;
    E.db_end = E.db_last;
    run_until(0, NCONN, exp_next, all_settled);
    int64_t t2 = E.settled ? E.t_settled : hl_now_ns();
    run_for(0, NCONN, exp_next, after * 1000);
    pool(0, p0, E.t_end);
    pool(1, E.t_end, t2);
    pool(2, t2, hl_now_ns());
    P.settle_ms[r] = E.settled ? (double)(E.t_settled - E.t_end) / 1e6 : -1;
    P.first_ms[r] = E.t_first ? (double)(E.t_first - E.t_end) / 1e6 : -1;
    P.cpu_ms[r] = (double)(E.cpu_settled - E.cpu_end) / 1e6;
    P.db_ms[r] = (double)(E.db_settled - E.db_end) / 1e6;
    return E.settled ? 0 : -1;
}

int mode_expiry(int argc, char **argv)
{
    if (argc < 5)
        return fprintf(stderr, "expiry N TTL_MS expire|delete BEFORE_S "
                               "AFTER_S [ROUNDS]\n"),
               -1;
    E.n = strtoul(argv[0], NULL, 10);
    E.ttl_ms = strtol(argv[1], NULL, 10);
    E.delete = strcmp(argv[2], "delete") == 0;
    long before = strtol(argv[3], NULL, 10), after = strtol(argv[4], NULL, 10);
    long rounds = argc > 5 ? strtol(argv[5], NULL, 10) : 1;
    if (rounds < 1 || rounds > 64 || hl_open(&H, target, NCONN) < 0)
        return -1;
    for (long r = 0; r < rounds; r++) {
        double fill_s = 0;
        int rc = one_round((int)r, before, after, &fill_s);
        printf("expiry round=%ld how=%s n=%zu fill_s=%.1f settled=%d "
               "settle_ms=%.0f first_settled_ms=%.0f server_cpu_ms=%.0f "
               "db_cpu_ms=%.0f errors=%zu\n",
               r + 1, argv[2], E.n, fill_s, E.settled, P.settle_ms[r],
               P.first_ms[r], P.cpu_ms[r], P.db_ms[r], E.errors);
        if (rc < 0)
            return -1;
    }
    printf("expiry how=%s n=%zu ttl_ms=%ld rounds=%ld", argv[2], E.n, E.ttl_ms,
           rounds);
    static const char *phase[] = {"before", "during", "after"};
    for (int k = 0; k < 3; k++)
        print_lat(phase[k], P.v[k], P.n[k]);
    printf("\n");
    return 0;
}
