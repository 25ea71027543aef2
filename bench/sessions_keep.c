/* SPDX-License-Identifier: MIT */
/* keep KIND N TTL_MS SECS CONNS [FILL_MAX_S]: N leases kept alive, and
 * what keeping them costs the server.
 *   leases     N tenured leases of TTL_MS, each acquired then renewed
 *              (PATCH) a third of its TTL after its previous renew was
 *              sent, as the clients' keepalives do, CONNS renews at once
 *              (the clients' default is 32)
 *   session    one tenured session of TTL_MS renewed every third of it,
 *              the N names claimed under it 1,000 a request
 *   etcd-one   one etcd lease of TTL_MS (whole seconds) with N keys put
 *              on it, kept by its keepalive (POST /v3/lease/keepalive)
 *   etcd-many  N etcd leases, one key on each, each kept by a keepalive
 *              every third of its TTL, one keepalive a request, CONNS at
 *              once.  (Several keepalives in one request body, as clientv3
 *              sends them on one stream, lose some: etcd's gateway stops
 *              reading a request body once it has begun the answer, as
 *              Go's HTTP/1 server does, so those are never renewed.)
 * Each lease is kept from its grant on, renews going before new grants.
 * Once all are granted (or FILL_MAX_S, default 180, have passed: no more
 * grants are sent; or the one session or etcd lease is lost; "attached"
 * counts the leases granted, or the names or keys put under the one) the
 * server's CPU and the requests answered are counted
 * for SECS.  A lease is lost when a renew answers that it ended (409, an
 * etcd TTL of 0), or when the answer to its renew comes after the safe
 * time of the one before ran out (the client's keepalive reports it lost
 * then): its renews stop, as a client's would.  Prints one line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sessions_http.h"

#define MAXC 256

enum kind { LEASES, SESSION, ETCD_ONE, ETCD_MANY };
enum op { OP_GRANT, OP_RENEW, OP_ATTACH, OP_PUT };

struct item {
    int64_t safe_until; /* the client's safe time runs out (ns) */
    int64_t due;        /* its next renew (ns) */
    uint64_t token;     /* tenured token, or etcd lease id */
    char secret[33];    /* tenured lease secret */
    int32_t next;       /* in the FIFO of kept items */
    bool lost;
};

static struct {
    enum kind kind;
    size_t n;
    long ttl_ms;
    int64_t ttl;
    struct item *it;
    int32_t head, tail; /* kept items in the order of their next renew */
    size_t next_new;    /* next name (or key) to grant */
    size_t *retry, n_retry;
    size_t *putq, n_put; /* etcd-many: granted leases without their key */
    size_t attached, lost, lost_win, renews, requests, errors, pending;
    bool window, no_grants, draining;
    enum op op[MAXC];
    char sid[33], ssec[33];
    struct hl_str body;
} K;

static void push(size_t i)
{
    K.it[i].next = -1;
    if (K.tail >= 0)
        K.it[K.tail].next = (int32_t)i;
    else
        K.head = (int32_t)i;
    K.tail = (int32_t)i;
}

static size_t pop(void)
{
    size_t i = (size_t)K.head;
    K.head = K.it[i].next;
    if (K.head < 0)
        K.tail = -1;
    return i;
}

static void lose(size_t i)
{
    size_t n = K.kind == SESSION || K.kind == ETCD_ONE ? K.n : 1;
    K.it[i].lost = true;
    K.lost += n;
    if (K.window)
        K.lost_win += n;
}

/* The answer to a renew (or grant) of item i sent at sent: kept or lost. */
static void renewed(size_t i, int64_t sent, int st, bool ok)
{
    struct item *x = &K.it[i];
    int64_t now = hl_now_ns();
    if (ok && now <= x->safe_until) {
        x->safe_until = sent + K.ttl;
        x->due = sent + K.ttl / 3;
        push(i);
    } else if (!ok && st != 409 && st != 200 && now < x->safe_until) {
        K.errors++; /* neither kept nor refused: try again at once */
        x->due = now;
        push(i);
    } else {
        lose(i);
    }
}

static void key_of(size_t i, char *out)
{
    char k[64];
    int n = snprintf(k, sizeof(k), "/%s/%zu", run_id, i);
    hl_b64(k, (size_t)n, out);
}

static void on_answer(struct hl_conn *c, int st)
{
    size_t i = (size_t)c->tag;
    if (K.window)
        K.requests++;
    switch (K.op[c->idx]) {
    case OP_GRANT:
        K.pending--;
        if (st != 200 && st != 201) {
            K.errors++;
            K.retry[K.n_retry++] = i;
            return;
        }
        if (K.kind == LEASES) {
            K.it[i].token = (uint64_t)hl_json_num(c->body, "token");
            hl_json_str(c->body, "lease_secret", K.it[i].secret, 33);
        } else {
            K.it[i].token = (uint64_t)hl_json_num(c->body, "ID");
            K.putq[K.n_put++] = i;
        }
        K.attached++; /* a lease granted, kept (or lost) from now on */
        K.it[i].safe_until = INT64_MAX;
        renewed(i, c->sent_ns, st, true);
        return;
    case OP_ATTACH:
    case OP_PUT:
        K.pending--;
        if (st != 200)
            K.errors++;
        else if (K.kind != ETCD_MANY) /* counted at its lease's grant */
            K.attached +=
                K.kind == SESSION ? hl_count(c->body, "lease_secret") : 1;
        return;
    case OP_RENEW:
        break;
    }
    if (K.window)
        K.renews++;
    bool ok = st == 200;
    if (K.kind == ETCD_ONE || K.kind == ETCD_MANY)
        ok = ok && hl_json_num(c->body, "TTL") > 0;
    renewed(i, c->sent_ns, st, ok);
}

static void send_renew(struct hl_conn *c)
{
    size_t i = pop();
    char path[128], body[160];
    K.op[c->idx] = OP_RENEW;
    switch (K.kind) {
    case LEASES:
        snprintf(path, sizeof(path), "/v1/leases/%s-%zu", run_id, i);
        snprintf(body, sizeof(body), "{\"token\":%llu,\"lease_secret\":\"%s\"}",
                 (unsigned long long)K.it[i].token, K.it[i].secret);
        hl_send(c, "PATCH", path, body, strlen(body), on_answer, (long)i);
        return;
    case SESSION:
        snprintf(path, sizeof(path), "/v1/sessions/%s", K.sid);
        snprintf(body, sizeof(body), "{\"session_secret\":\"%s\"}", K.ssec);
        hl_send(c, "PATCH", path, body, strlen(body), on_answer, (long)i);
        return;
    case ETCD_ONE:
    case ETCD_MANY:
        snprintf(body, sizeof(body), "{\"ID\":\"%llu\"}",
                 (unsigned long long)K.it[i].token);
        hl_send(c, "POST", "/v3/lease/keepalive", body, strlen(body), on_answer,
                (long)i);
        return;
    }
}

/* A new grant (or attach) on c, if one is left to send. */
static bool send_new(struct hl_conn *c)
{
    char body[256], key[128];
    if (K.kind == ETCD_MANY && K.n_put > 0) {
        size_t i = K.putq[--K.n_put];
        key_of(i, key);
        snprintf(body, sizeof(body),
                 "{\"key\":\"%s\",\"value\":\"eA==\",\"lease\":\"%llu\"}", key,
                 (unsigned long long)K.it[i].token);
        K.op[c->idx] = OP_PUT;
        K.pending++;
        hl_send(c, "POST", "/v3/kv/put", body, strlen(body), on_answer, 0);
        return true;
    }
    if (K.no_grants || (K.n_retry == 0 && K.next_new >= K.n))
        return false;
    size_t i = K.n_retry > 0 ? K.retry[--K.n_retry] : K.next_new++;
    K.pending++;
    switch (K.kind) {
    case LEASES:
        K.op[c->idx] = OP_GRANT;
        snprintf(body, sizeof(body),
                 "{\"name\":\"%s-%zu\",\"owner_id\":\"%s\",\"ttl_ms\":%ld}",
                 run_id, i, run_id, K.ttl_ms);
        hl_send(c, "POST", "/v1/leases", body, strlen(body), on_answer,
                (long)i);
        return true;
    case ETCD_MANY:
        K.op[c->idx] = OP_GRANT;
        snprintf(body, sizeof(body), "{\"TTL\":%ld}", (K.ttl_ms + 999) / 1000);
        hl_send(c, "POST", "/v3/lease/grant", body, strlen(body), on_answer,
                (long)i);
        return true;
    case SESSION: {
        size_t n = K.n - i < 1000 ? K.n - i : 1000;
        K.next_new = i + n; /* a retry of a claim is not needed: none fail */
        char path[96], prefix[64];
        snprintf(path, sizeof(path), "/v1/sessions/%s/leases", K.sid);
        snprintf(prefix, sizeof(prefix), "%s-", run_id);
        claim_body(&K.body, K.ssec, prefix, i, n);
        K.op[c->idx] = OP_ATTACH;
        hl_send(c, "POST", path, K.body.p, K.body.len, on_answer, (long)i);
        return true;
    }
    case ETCD_ONE:
        key_of(i, key);
        snprintf(body, sizeof(body),
                 "{\"key\":\"%s\",\"value\":\"eA==\",\"lease\":\"%llu\"}", key,
                 (unsigned long long)K.it[0].token);
        K.op[c->idx] = OP_PUT;
        hl_send(c, "POST", "/v3/kv/put", body, strlen(body), on_answer, 0);
        return true;
    }
    return false;
}

static bool keep_next(struct hl_conn *c)
{
    if (K.draining)
        return false;
    bool one = K.kind == SESSION || K.kind == ETCD_ONE;
    if ((!one || c->idx == 0) && K.head >= 0 &&
        K.it[K.head].due <= hl_now_ns()) {
        send_renew(c);
        return true;
    }
    return (!one || c->idx > 0) && send_new(c);
}

static int64_t fill_deadline;
static bool fill_over(void)
{
    bool all =
        K.next_new >= K.n && K.n_retry == 0 && K.n_put == 0 && K.pending == 0;
    bool one = K.kind == SESSION || K.kind == ETCD_ONE;
    return all || hl_now_ns() >= fill_deadline || (one && K.it[0].lost);
}

static bool idle(void)
{
    for (int i = 0; i < H.n; i++) {
        if (H.conns[i].busy)
            return false;
    }
    return true;
}

/* Live leases (or keys) on the server at the end, or -1. */
static long long live_end(void)
{
    struct hl_conn *c = &H.conns[0];
    if (K.kind == LEASES || K.kind == SESSION)
        return metric(c, "tenure_leases_live");
    char from[64], to[64], body[256];
    int n = snprintf(body, sizeof(body), "/%s/", run_id);
    hl_b64(body, (size_t)n, from);
    n = snprintf(body, sizeof(body), "/%s0", run_id);
    hl_b64(body, (size_t)n, to);
    snprintf(body, sizeof(body),
             "{\"key\":\"%s\",\"range_end\":\"%s\",\"count_only\":true}", from,
             to);
    if (hl_call(&H, c, "POST", "/v3/kv/range", body) != 200)
        return -1;
    long long v = hl_json_num(c->body, "count");
    return v < 0 ? 0 : v;
}

/* The single session or etcd lease, granted before the fill. */
static int grant_one(void)
{
    struct item *x = &K.it[0];
    int64_t sent = hl_now_ns();
    if (K.kind == SESSION) {
        if (open_session(&H.conns[0], K.ttl_ms, K.sid, K.ssec) < 0)
            return -1;
    } else {
        char body[64];
        snprintf(body, sizeof(body), "{\"TTL\":%ld}", (K.ttl_ms + 999) / 1000);
        if (hl_call(&H, &H.conns[0], "POST", "/v3/lease/grant", body) != 200)
            return -1;
        x->token = (uint64_t)hl_json_num(H.conns[0].body, "ID");
    }
    x->safe_until = INT64_MAX;
    renewed(0, sent, 200, true);
    return 0;
}

int mode_keep(int argc, char **argv)
{
    if (argc < 5)
        return fprintf(stderr, "keep KIND N TTL_MS SECS CONNS [FILL_MAX_S]\n"),
               -1;
    static const char *kinds[] = {"leases", "session", "etcd-one", "etcd-many"};
    K.kind = LEASES;
    while (K.kind <= ETCD_MANY && strcmp(kinds[K.kind], argv[0]) != 0)
        K.kind++;
    K.n = strtoul(argv[1], NULL, 10);
    K.ttl_ms = strtol(argv[2], NULL, 10);
    K.ttl = (int64_t)K.ttl_ms * 1000000;
    long secs = strtol(argv[3], NULL, 10);
    int conns = (int)strtol(argv[4], NULL, 10);
    long fill_max = argc > 5 ? strtol(argv[5], NULL, 10) : 180;
    if (K.kind > ETCD_MANY || conns < 2 || conns > MAXC ||
        hl_open(&H, target, conns) < 0)
        return -1;
    bool one = K.kind == SESSION || K.kind == ETCD_ONE;
    K.it = calloc(one ? 1 : K.n, sizeof(*K.it));
    K.retry = calloc(K.n, sizeof(size_t));
    K.putq = calloc(K.n, sizeof(size_t));
    K.head = K.tail = -1;
    if (one && grant_one() < 0)
        return -1;
    int64_t t0 = hl_now_ns();
    fill_deadline = t0 + fill_max * 1000000000LL;
    run_until(0, conns, keep_next, fill_over);
    int64_t w0 = hl_now_ns(), cpu0 = server_cpu(), self0 = hl_self_cpu_ns();
    size_t lost_fill = K.lost, attached = K.attached;
    K.no_grants = true;
    K.window = true;
    run_for(0, conns, keep_next, secs * 1000);
    int64_t w1 = hl_now_ns(), cpu1 = server_cpu(), self1 = hl_self_cpu_ns();
    K.window = false;
    K.draining = true;
    run_until(0, conns, keep_next, idle);
    double win = (double)(w1 - w0) / 1e9;
    printf("keep kind=%s n=%zu ttl_ms=%ld conns=%d fill_s=%.1f attached=%zu "
           "lost_fill=%zu lost=%zu kept=%zu renews=%zu renews_per_s=%.0f "
           "requests_per_s=%.0f server_cpu_ms=%.0f server_cpu_pct=%.2f "
           "client_cpu_pct=%.1f errors=%zu window_s=%.1f live_end=%lld\n",
           argv[0], K.n, K.ttl_ms, conns, (double)(w0 - t0) / 1e9, attached,
           lost_fill, K.lost_win, attached - K.lost, K.renews,
           (double)K.renews / win, (double)K.requests / win,
           (double)(cpu1 - cpu0) / 1e6, (double)(cpu1 - cpu0) / 1e7 / win,
           (double)(self1 - self0) / 1e7 / win, K.errors, win, live_end());
    return 0;
}
