/* SPDX-License-Identifier: MIT */
/* claims N ROUNDS CONNS: one batch claim of N names (one request, one
 * commit) against N acquires one after another on one connection and N
 * acquires over CONNS connections at once; per round, in an order that
 * rotates, each on fresh names: wall time and the server's (and the
 * database's) CPU.
 *
 * attach tenured|etcd N BLOCKS PER CONNS: whether attaching a lease to a
 * large group costs more than to a small one.  tenured: two sessions, one
 * holding 10 leases and one N; BLOCKS blocks each (alternated ABBA) of PER
 * acquires under the session over CONNS connections (the latency of each,
 * the server's CPU per acquire), then their releases (CPU per release).
 * etcd: two leases, one with 10 keys and one with N, PER puts of new keys
 * attached to one (latency, CPU per put), then their deletes: etcd issue
 * 15993, a put with a lease taking time linear in the lease's keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sessions_http.h"

static struct {
    size_t n, sent, done, errors;
    long round;
    int kind;
    int conns;
} C;

static bool acq_next(struct hl_conn *c);

static void acq_done(struct hl_conn *c, int st)
{
    (void)c;
    C.done++;
    C.errors += st != 201;
}

static bool acq_next(struct hl_conn *c)
{
    if (C.sent >= C.n)
        return false;
    char body[160];
    snprintf(body, sizeof(body),
             "{\"name\":\"%s-c%ld-%d-%zu\",\"owner_id\":\"%s\","
             "\"ttl_ms\":3600000}",
             run_id, C.round, C.kind, C.sent++, run_id);
    hl_send(c, "POST", "/v1/leases", body, strlen(body), acq_done, 0);
    return true;
}

static bool acq_over(void)
{
    return C.done >= C.n;
}

static double med(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++) /* insertion sort: n is small */
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}

/* One measurement of kind k (0 batch, 1 one by one, 2 at once): wall,
 * server CPU and database CPU, ms. */
static int measure(int k, double *out)
{
    struct hl_conn *c = &H.conns[0];
    char sid[33], sec[33], path[96], prefix[64];
    struct hl_str b = {0};
    if (k == 0) {
        if (open_session(c, 3600000, sid, sec) < 0)
            return -1;
        snprintf(prefix, sizeof(prefix), "%s-b%ld-", run_id, C.round);
        claim_body(&b, sec, prefix, 0, C.n);
        snprintf(path, sizeof(path), "/v1/sessions/%s/leases", sid);
    }
    usleep(200000); /* let the previous measurement's work end */
    C.sent = C.done = C.errors = 0;
    C.kind = k;
    int64_t t0 = hl_now_ns(), c0 = server_cpu(), d0 = db_cpu();
    if (k == 0) {
        int st = hl_call(&H, c, "POST", path, b.p);
        C.errors = st != 200 || hl_count(c->body, "lease_secret") != C.n;
    } else {
        run_until(0, k == 1 ? 1 : C.conns, acq_next, acq_over);
    }
    int64_t t1 = hl_now_ns(), c1 = server_cpu(), d1 = db_cpu();
    hl_str_free(&b);
    if (C.errors) {
        fprintf(stderr, "claims: %zu errors (kind %d): %s\n", C.errors, k,
                c->body);
        return -1;
    }
    out[0] = (double)(t1 - t0) / 1e6;
    out[1] = (double)(c1 - c0) / 1e6;
    out[2] = (double)(d1 - d0) / 1e6;
    return 0;
}

int mode_claims(int argc, char **argv)
{
    if (argc < 3)
        return fprintf(stderr, "claims N ROUNDS CONNS\n"), -1;
    C.n = strtoul(argv[0], NULL, 10);
    long rounds = strtol(argv[1], NULL, 10);
    C.conns = (int)strtol(argv[2], NULL, 10);
    if (rounds < 1 || hl_open(&H, target, C.conns) < 0)
        return -1;
    double *v[3][3];
    for (int k = 0; k < 3; k++)
        for (int m = 0; m < 3; m++)
            v[k][m] = calloc((size_t)rounds, sizeof(double));
    double *ratio[2] = {calloc((size_t)rounds, sizeof(double)),
                        calloc((size_t)rounds, sizeof(double))};
    static const char *names[] = {"batch", "one_by_one", "at_once"};
    for (C.round = 0; C.round < rounds; C.round++) {
        double r[3][3];
        for (int j = 0; j < 3; j++) {
            int k = (int)((C.round + j) % 3);
            if (measure(k, r[k]) < 0)
                return -1;
        }
        for (int k = 0; k < 3; k++) {
            for (int m = 0; m < 3; m++)
                v[k][m][C.round] = r[k][m];
            printf("claims round=%ld how=%s wall_ms=%.1f server_cpu_ms=%.2f "
                   "db_cpu_ms=%.2f\n",
                   C.round + 1, names[k], r[k][0], r[k][1], r[k][2]);
        }
        ratio[0][C.round] = (r[1][1] + r[1][2]) / (r[0][1] + r[0][2]);
        ratio[1][C.round] = (r[2][1] + r[2][2]) / (r[0][1] + r[0][2]);
    }
    for (int k = 0; k < 3; k++)
        printf("claims median how=%s n=%zu wall_ms=%.1f server_cpu_ms=%.2f "
               "db_cpu_ms=%.2f\n",
               names[k], C.n, med(v[k][0], (size_t)rounds),
               med(v[k][1], (size_t)rounds), med(v[k][2], (size_t)rounds));
    printf("claims ratio cpu_one_by_one_over_batch=%.1f "
           "cpu_at_once_over_batch=%.1f\n",
           med(ratio[0], (size_t)rounds), med(ratio[1], (size_t)rounds));
    return 0;
}

/* ------------------------------------------------------------------ attach */

static struct {
    bool etcd;
    size_t per, sent, done, errors;
    int side; /* 0: the small group, 1: the large */
    long block;
    bool release;
    char sid[2][33], sec[2][33];
    uint64_t lease[2];
    uint64_t *token;
    char (*secret)[33];
    int64_t *lat[2];
    size_t nlat[2];
    size_t fill_n, fill_sent;
} A;

static void name_of(size_t i, char *out, size_t cap)
{
    snprintf(out, cap, "%s-a%ld-%zu", run_id, A.block, i);
}

static void att_done(struct hl_conn *c, int st)
{
    size_t i = (size_t)c->tag;
    A.done++;
    if (A.release) {
        A.errors += st != 204 && st != 200;
        return;
    }
    if (st != 201 && st != 200 && A.errors++ < 3)
        fprintf(stderr, "attach: %d %s\n", st, c->body);
    A.lat[A.side][A.nlat[A.side]++] = hl_now_ns() - c->sent_ns;
    if (!A.etcd) {
        A.token[i] = (uint64_t)hl_json_num(c->body, "token");
        hl_json_str(c->body, "lease_secret", A.secret[i], 33);
    }
}

static bool att_next(struct hl_conn *c)
{
    if (A.sent >= A.per)
        return false;
    size_t i = A.sent++;
    char name[96], body[256], path[160], key[160];
    name_of(i, name, sizeof(name));
    if (A.etcd) {
        snprintf(body, sizeof(body), "/%s", name);
        hl_b64(body, strlen(body), key);
        if (A.release)
            snprintf(body, sizeof(body), "{\"key\":\"%s\"}", key);
        else
            snprintf(body, sizeof(body),
                     "{\"key\":\"%s\",\"value\":\"eA==\",\"lease\":\"%llu\"}",
                     key, (unsigned long long)A.lease[A.side]);
        hl_send(c, "POST", A.release ? "/v3/kv/deleterange" : "/v3/kv/put",
                body, strlen(body), att_done, (long)i);
    } else if (A.release) {
        snprintf(path, sizeof(path), "/v1/leases/%s", name);
        snprintf(body, sizeof(body), "{\"token\":%llu,\"lease_secret\":\"%s\"}",
                 (unsigned long long)A.token[i], A.secret[i]);
        hl_send(c, "DELETE", path, body, strlen(body), att_done, (long)i);
    } else {
        snprintf(body, sizeof(body),
                 "{\"name\":\"%s\",\"owner_id\":\"%s\",\"session_id\":\"%s\","
                 "\"session_secret\":\"%s\"}",
                 name, run_id, A.sid[A.side], A.sec[A.side]);
        hl_send(c, "POST", "/v1/leases", body, strlen(body), att_done, (long)i);
    }
    return true;
}

static bool att_over(void)
{
    return A.done >= A.per;
}

/* Fills side s with n leases (keys): claims of 1000, or puts. */
static bool fill_next(struct hl_conn *c)
{
    if (A.fill_sent >= A.fill_n)
        return false;
    A.sent++; /* requests, for fill_over */
    char body[256], key[128], path[96], prefix[64];
    static struct hl_str b;
    if (A.etcd) { /* a txn of 128 puts: etcd's --max-txn-ops */
        b.len = 0;
        hl_str_add(&b, "{\"success\":[");
        for (int k = 0; k < 128 && A.fill_sent < A.fill_n; k++) {
            snprintf(body, sizeof(body), "/%s-f%d/%zu", run_id, A.side,
                     A.fill_sent++);
            hl_b64(body, strlen(body), key);
            hl_str_add(&b,
                       "%s{\"requestPut\":{\"key\":\"%s\",\"value\":\"eA==\","
                       "\"lease\":\"%llu\"}}",
                       k ? "," : "", key, (unsigned long long)A.lease[A.side]);
        }
        hl_str_add(&b, "]}");
        hl_send(c, "POST", "/v3/kv/txn", b.p, b.len, att_done, 0);
        return true;
    }
    size_t n = A.fill_n - A.fill_sent < 1000 ? A.fill_n - A.fill_sent : 1000;
    snprintf(prefix, sizeof(prefix), "%s-f%d-", run_id, A.side);
    claim_body(&b, A.sec[A.side], prefix, A.fill_sent, n);
    A.fill_sent += n;
    snprintf(path, sizeof(path), "/v1/sessions/%s/leases", A.sid[A.side]);
    hl_send(c, "POST", path, b.p, b.len, att_done, 0);
    return true;
}

static bool fill_over(void)
{
    return A.fill_sent >= A.fill_n && A.done >= A.sent;
}

static int make_side(int s, size_t n, int conns)
{
    struct hl_conn *c = &H.conns[0];
    if (!A.etcd) {
        if (open_session(c, 3600000, A.sid[s], A.sec[s]) < 0)
            return -1;
    } else {
        if (hl_call(&H, c, "POST", "/v3/lease/grant", "{\"TTL\":3600}") != 200)
            return -1;
        A.lease[s] = (uint64_t)hl_json_num(c->body, "ID");
    }
    A.side = s;
    A.fill_n = n;
    A.fill_sent = A.sent = A.done = 0;
    A.release = true; /* att_done counts, records nothing */
    run_until(0, conns, fill_next, fill_over);
    A.release = false;
    return 0;
}

int mode_attach(int argc, char **argv)
{
    if (argc < 5)
        return fprintf(stderr, "attach tenured|etcd N BLOCKS PER CONNS\n"), -1;
    A.etcd = strcmp(argv[0], "etcd") == 0;
    size_t n = strtoul(argv[1], NULL, 10);
    long blocks = strtol(argv[2], NULL, 10);
    A.per = strtoul(argv[3], NULL, 10);
    int conns = (int)strtol(argv[4], NULL, 10);
    if (hl_open(&H, target, conns) < 0)
        return -1;
    A.token = calloc(A.per, sizeof(uint64_t));
    A.secret = calloc(A.per, 33);
    int64_t fill0 = hl_now_ns();
    if (make_side(0, 10, conns) < 0 || make_side(1, n, conns) < 0)
        return -1;
    double fill_s = (double)(hl_now_ns() - fill0) / 1e9;
    int64_t cpu[2][2] = {{0}};
    for (int s = 0; s < 2; s++)
        A.lat[s] = calloc((size_t)blocks * A.per, sizeof(int64_t));
    for (A.block = 0; A.block < 2 * blocks; A.block++) {
        A.side = (int)((A.block + A.block / 2) % 2); /* ABBA */
        for (int rel = 0; rel < 2; rel++) {
            A.release = rel;
            A.sent = A.done = 0;
            int64_t c0 = server_cpu() + db_cpu();
            run_until(0, conns, att_next, att_over);
            cpu[A.side][rel] += server_cpu() + db_cpu() - c0;
        }
    }
    if (A.errors) {
        fprintf(stderr, "attach: %zu errors\n", A.errors);
        return -1;
    }
    static const char *side[] = {"small", "large"};
    for (int s = 0; s < 2; s++) {
        double ops = (double)blocks * (double)A.per;
        printf("attach target=%s side=%s leases=%zu fill_s=%.1f",
               A.etcd ? "etcd" : "tenured", side[s], s ? n : 10, fill_s);
        print_lat("attach", A.lat[s], A.nlat[s]);
        printf(" attach_cpu_us=%.1f detach_cpu_us=%.1f\n",
               (double)cpu[s][0] / 1e3 / ops, (double)cpu[s][1] / 1e3 / ops);
    }
    return 0;
}
