/* SPDX-License-Identifier: MIT */
/* fill and verify: many sessions of many leases, made before a restart and
 * checked after it (sessions_expiry.c's comment says how). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sessions_http.h"

static struct {
    size_t sessions, per, opened, open_sent, claim_sent, claimed, done;
    size_t errors;
    long ttl_ms;
    char (*id)[33], (*sec)[33];
    struct hl_str b;
} F;

static void fill_done(struct hl_conn *c, int st)
{
    size_t j = (size_t)c->tag;
    F.done++;
    if (F.opened < F.sessions) {
        F.errors += st != 201;
        hl_json_str(c->body, "session_id", F.id[j], 33);
        hl_json_str(c->body, "session_secret", F.sec[j], 33);
        F.opened++;
        return;
    }
    F.errors += st != 200;
    F.claimed += hl_count(c->body, "lease_secret");
}

static bool fill_next(struct hl_conn *c)
{
    char body[160], path[96], prefix[64];
    if (F.open_sent < F.sessions) {
        snprintf(body, sizeof(body), "{\"owner_id\":\"%s/%zu\",\"ttl_ms\":%ld}",
                 run_id, F.open_sent, F.ttl_ms);
        hl_send(c, "POST", "/v1/sessions", body, strlen(body), fill_done,
                (long)F.open_sent++);
        return true;
    }
    if (F.opened < F.sessions || F.claim_sent >= F.sessions)
        return false;
    size_t j = F.claim_sent++;
    snprintf(prefix, sizeof(prefix), "%s-s%zu-", run_id, j);
    claim_body(&F.b, F.sec[j], prefix, 0, F.per);
    snprintf(path, sizeof(path), "/v1/sessions/%s/leases", F.id[j]);
    hl_send(c, "POST", path, F.b.p, F.b.len, fill_done, (long)j);
    return true;
}

static bool fill_over(void)
{
    return F.done >= 2 * F.sessions || F.errors > 0;
}

int mode_fill(int argc, char **argv)
{
    if (argc < 5)
        return fprintf(stderr, "fill SESSIONS PER TTL_MS FILE CONNS\n"), -1;
    F.sessions = strtoul(argv[0], NULL, 10);
    F.per = strtoul(argv[1], NULL, 10);
    F.ttl_ms = strtol(argv[2], NULL, 10);
    int conns = (int)strtol(argv[4], NULL, 10);
    F.id = calloc(F.sessions, 33);
    F.sec = calloc(F.sessions, 33);
    if (hl_open(&H, target, conns) < 0)
        return -1;
    int64_t t0 = hl_now_ns(), c0 = server_cpu();
    run_until(0, conns, fill_next, fill_over);
    int64_t t1 = hl_now_ns(), c1 = server_cpu();
    FILE *f = fopen(argv[3], "w");
    for (size_t j = 0; f != NULL && j < F.sessions; j++)
        fprintf(f, "%s %s %s-s%zu-\n", F.id[j], F.sec[j], run_id, j);
    if (f == NULL || fclose(f) != 0 || F.errors) {
        fprintf(stderr, "fill: %zu errors\n", F.errors);
        return -1;
    }
    printf("fill sessions=%zu leases=%zu wall_s=%.1f server_cpu_s=%.1f\n",
           F.opened, F.claimed, (double)(t1 - t0) / 1e9,
           (double)(c1 - c0) / 1e9);
    return 0;
}

/* ------------------------------------------------------------------ verify */

struct sess {
    char id[33], sec[33], prefix[64];
    long long leases, expires;
    bool listed;
};

static int by_id(const void *a, const void *b)
{
    return strcmp(((const struct sess *)a)->id, ((const struct sess *)b)->id);
}

/* Marks the sessions of one page of GET /v1/sessions; the last id. */
static size_t take_page(struct sess *s, size_t n, const char *body, char *last)
{
    size_t got = 0;
    for (const char *p = strstr(body, "{\"session_id\""); p != NULL;
         p = strstr(p + 1, "{\"session_id\"")) {
        struct sess key;
        if (!hl_json_str(p, "session_id", key.id, sizeof(key.id)))
            break;
        snprintf(last, 40, "%s", key.id);
        got++;
        struct sess *x = bsearch(&key, s, n, sizeof(*s), by_id);
        if (x == NULL)
            continue;
        x->listed = true;
        x->leases = hl_json_num(p, "leases");
        x->expires = hl_json_num(p, "expires_in_ms");
    }
    return got;
}

int mode_verify(int argc, char **argv)
{
    if (argc < 2)
        return fprintf(stderr, "verify FILE PER\n"), -1;
    long long per = strtoll(argv[1], NULL, 10);
    FILE *f = fopen(argv[0], "r");
    size_t n = 0, cap = 1024;
    struct sess *s = calloc(cap, sizeof(*s));
    while (f != NULL &&
           fscanf(f, "%32s %32s %63s", s[n].id, s[n].sec, s[n].prefix) == 3) {
        if (++n == cap)
            s = realloc(s, (cap *= 2) * sizeof(*s));
    }
    if (f == NULL || n == 0 || hl_open(&H, target, 1) < 0)
        return fprintf(stderr, "verify: nothing in %s\n", argv[0]), -1;
    fclose(f);
    qsort(s, n, sizeof(*s), by_id);
    struct hl_conn *c = &H.conns[0];
    char path[256], last[40] = "", owner[32];
    snprintf(owner, sizeof(owner), "%.*s", (int)strcspn(s[0].prefix, "-"),
             s[0].prefix);
    size_t pages = 0;
    int64_t t0 = hl_now_ns();
    for (;;) {
        snprintf(path, sizeof(path), "/v1/sessions?prefix=%s/&limit=1000%s%s",
                 owner, last[0] ? "&after=" : "", last);
        if (hl_call(&H, c, "GET", path, NULL) != 200)
            return fprintf(stderr, "verify: list %s\n", c->body), -1;
        pages++;
        if (take_page(s, n, c->body, last) == 0 ||
            strstr(c->body, "\"next\":null") != NULL)
            break;
    }
    size_t listed = 0, full = 0, renewed = 0, read_ok = 0;
    long long emin = -1, emax = -1, leases = 0;
    for (size_t i = 0; i < n; i++) {
        if (!s[i].listed)
            continue;
        listed++;
        full += s[i].leases == per;
        leases += s[i].leases;
        emin = emin < 0 || s[i].expires < emin ? s[i].expires : emin;
        emax = s[i].expires > emax ? s[i].expires : emax;
    }
    double list_ms = (double)(hl_now_ns() - t0) / 1e6;
    for (size_t i = 0; i < n; i++) {
        char body[96];
        snprintf(path, sizeof(path), "/v1/sessions/%s", s[i].id);
        snprintf(body, sizeof(body), "{\"session_secret\":\"%s\"}", s[i].sec);
        renewed += hl_call(&H, c, "PATCH", path, body) == 200 &&
                   hl_json_num(c->body, "leases") == per;
        snprintf(path, sizeof(path), "/v1/leases/%s%lld", s[i].prefix, per - 1);
        read_ok += hl_call(&H, c, "GET", path, NULL) == 200 &&
                   strstr(c->body, s[i].id) != NULL;
    }
    printf("verify sessions=%zu listed=%zu with_all_leases=%zu leases=%lld "
           "expires_in_ms_min=%lld expires_in_ms_max=%lld list_ms=%.0f "
           "pages=%zu renewed=%zu lease_read_live=%zu\n",
           n, listed, full, leases, emin, emax, list_ms, pages, renewed,
           read_ok);
    return listed == n && full == n && renewed == n && read_ok == n ? 0 : -1;
}
