/* SPDX-License-Identifier: MIT */
/* tn-pg-history: concurrent clients contending on a few names across
 * several tenured instances, recording every operation as a history line
 * (CONTRACT §8) for tenure-check.  Times are CLOCK_MONOTONIC ns,
 * taken just before a request is sent and just after its answer.  An
 * answer that leaves the outcome unknown (timeout, broken connection,
 * 503) is "info"; only definite refusals are "fail".
 *   tn-pg-history --urls U1,U2,.. --out FILE [--workers N] [--names N]
 *                 [--duration-ms MS] [--ttl-min MS] [--ttl-max MS]
 * Exits 0 after writing FILE (a summary on stderr), 2 on bad usage. */
#include <curl/curl.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/rand.h"

#define MAX_URLS 8
#define BODY_MAX 4096

struct opts {
    const char *urls[MAX_URLS]; /* tenured base URLs */
    size_t n_urls;              /* used */
    const char *out;            /* history file */
    int workers;                /* client threads */
    int names;                  /* contended names */
    int64_t duration_ms;        /* run time */
    int64_t ttl_min;            /* ms */
    int64_t ttl_max;            /* ms */
};

enum outcome { OUT_OK = 0, OUT_FAIL, OUT_INFO, N_OUT };

struct worker {
    pthread_t th;             /* the thread */
    int id;                   /* w<id> */
    const struct opts *o;     /* shared options */
    uint64_t rng;             /* xorshift state */
    CURL *h[MAX_URLS];        /* one handle (keep-alive) per URL */
    struct tn_buf lines;      /* history lines */
    char body[BODY_MAX + 1];  /* last response */
    size_t body_len;          /* bytes in body */
    uint64_t count[3][N_OUT]; /* op x outcome */
};

static uint64_t next_rand(struct worker *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

static int64_t pick(struct worker *w, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(next_rand(w) % (uint64_t)(hi - lo + 1));
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct worker *w = arg;
    size_t len = size * n;
    size_t room = BODY_MAX - w->body_len;
    size_t take = len < room ? len : room;
    memcpy(w->body + w->body_len, p, take);
    w->body_len += take;
    w->body[w->body_len] = '\0';
    return len;
}

/* Send one request; returns the HTTP status, 0 when the outcome is
 * unknown, -1 when it certainly never reached a server. */
static long http(struct worker *w, size_t u, const char *method,
                 const char *path, const char *json)
{
    CURL *h = w->h[u];
    char url[512];
    (void)snprintf(url, sizeof(url), "%s%s", w->o->urls[u], path);
    w->body_len = 0;
    w->body[0] = '\0';
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, json);
    CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_COULDNT_CONNECT)
        return -1;
    if (rc != CURLE_OK)
        return 0;
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    return code;
}

static void line(struct worker *w, int64_t t, const char *op, const char *phase,
                 const char *name, int64_t token, int64_t ttl_ms)
{
    (void)tn_buf_printf(&w->lines,
                        "{\"t\":%" PRId64 ",\"proc\":\"w%d\",\"op\":\"%s\","
                        "\"phase\":\"%s\",\"name\":\"%s\"",
                        t, w->id, op, phase, name);
    if (token > 0)
        (void)tn_buf_printf(&w->lines, ",\"token\":%" PRId64, token);
    if (ttl_ms > 0)
        (void)tn_buf_printf(&w->lines, ",\"ttl_ms\":%" PRId64, ttl_ms);
    (void)tn_buf_printf(&w->lines, "}\n");
}

static enum outcome classify(long code, long ok_code)
{
    if (code == ok_code)
        return OUT_OK;
    if (code == 0 || code == 503 || code >= 500)
        return OUT_INFO;
    return OUT_FAIL; /* refused: 409, 403, 4xx, or never connected */
}

static const char *phase_name(enum outcome oc)
{
    return oc == OUT_OK ? "ok" : oc == OUT_FAIL ? "fail" : "info";
}

struct grant {
    int64_t token;   /* > 0 when held */
    int64_t ttl_ms;  /* of the grant or last renew */
    char secret[40]; /* hex */
};

static enum outcome do_acquire(struct worker *w, const char *name,
                               struct grant *g)
{
    size_t u = (size_t)pick(w, 0, (int64_t)w->o->n_urls - 1);
    int64_t ttl = pick(w, w->o->ttl_min, w->o->ttl_max);
    char json[256];
    (void)snprintf(json, sizeof(json),
                   "{\"name\":\"%s\",\"owner_id\":\"w%d\",\"ttl_ms\":%" PRId64
                   "}",
                   name, w->id, ttl);
    line(w, tn_clock_mono_ns(), "acquire", "invoke", name, 0, ttl);
    long code = http(w, u, "POST", "/v1/leases", json);
    int64_t t = tn_clock_mono_ns();
    enum outcome oc = classify(code, 201);
    g->token = 0;
    if (oc == OUT_OK) {
        json_t *o = json_loads(w->body, 0, NULL);
        json_t *tok = json_object_get(o, "token");
        const char *sec = json_string_value(json_object_get(o, "lease_secret"));
        if (json_is_integer(tok) && sec != NULL) {
            g->token = (int64_t)json_integer_value(tok);
            g->ttl_ms = ttl;
            (void)snprintf(g->secret, sizeof(g->secret), "%s", sec);
        } else {
            oc = OUT_INFO; /* 201 without a token: treat as unknown */
        }
        json_decref(o);
    }
    line(w, t, "acquire", phase_name(oc), name, g->token, 0);
    w->count[0][oc]++;
    return oc;
}

static enum outcome do_token_op(struct worker *w, bool renew, const char *name,
                                struct grant *g)
{
    size_t u = (size_t)pick(w, 0, (int64_t)w->o->n_urls - 1);
    /* A renew never shortens the lease here: the checker counts a lease
     * valid until the latest of its grant's and its renews' bounds. */
    int64_t ttl = renew ? pick(w, g->ttl_ms, w->o->ttl_max) : 0;
    char json[256];
    char path[128];
    (void)snprintf(path, sizeof(path), "/v1/leases/%s", name);
    if (renew)
        (void)snprintf(json, sizeof(json),
                       "{\"token\":%" PRId64 ",\"lease_secret\":\"%s\","
                       "\"ttl_ms\":%" PRId64 "}",
                       g->token, g->secret, ttl);
    else
        (void)snprintf(json, sizeof(json),
                       "{\"token\":%" PRId64 ",\"lease_secret\":\"%s\"}",
                       g->token, g->secret);
    const char *op = renew ? "renew" : "release";
    line(w, tn_clock_mono_ns(), op, "invoke", name, g->token, ttl);
    long code = http(w, u, renew ? "PATCH" : "DELETE", path, json);
    int64_t t = tn_clock_mono_ns();
    enum outcome oc = classify(code, renew ? 200 : 204);
    line(w, t, op, phase_name(oc), name, oc == OUT_OK ? g->token : 0, 0);
    w->count[renew ? 1 : 2][oc]++;
    if (renew && oc == OUT_OK)
        g->ttl_ms = ttl;
    return oc;
}

static void pause_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(ms * 1000000)};
    (void)nanosleep(&ts, NULL);
}

static void *run(void *arg)
{
    struct worker *w = arg;
    int64_t end = tn_clock_mono_ms() + w->o->duration_ms;
    while (tn_clock_mono_ms() < end) {
        char name[32];
        (void)snprintf(name, sizeof(name), "mi-%d",
                       (int)pick(w, 0, w->o->names - 1));
        struct grant g;
        if (do_acquire(w, name, &g) != OUT_OK) {
            pause_ms(pick(w, 0, 3));
            continue;
        }
        pause_ms(pick(w, 0, w->o->ttl_max / 2));
        int64_t r = pick(w, 0, 3);
        if (r >= 1 && do_token_op(w, true, name, &g) == OUT_OK)
            pause_ms(pick(w, 0, w->o->ttl_max / 2));
        if (r >= 2)
            (void)do_token_op(w, false, name, &g);
    }
    return NULL;
}

static int worker_init(struct worker *w, int id, const struct opts *o)
{
    w->id = id;
    w->o = o;
    (void)tn_rand_bytes(&w->rng, sizeof(w->rng));
    w->rng |= 1;
    tn_buf_init(&w->lines, (size_t)1 << 28);
    for (size_t u = 0; u < o->n_urls; u++) {
        CURL *h = curl_easy_init();
        if (h == NULL)
            return -1;
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, w);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 2000L);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 500L);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        w->h[u] = h;
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    static char urls[4096];
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i];
        const char *v = argv[i + 1];
        if (strcmp(k, "--urls") == 0) {
            (void)snprintf(urls, sizeof(urls), "%s", v);
            for (char *p = urls; p != NULL && o->n_urls < MAX_URLS;) {
                o->urls[o->n_urls++] = p;
                p = strchr(p, ',');
                if (p != NULL)
                    *p++ = '\0';
            }
        } else if (strcmp(k, "--out") == 0) {
            o->out = v;
        } else if (strcmp(k, "--workers") == 0) {
            o->workers = (int)strtol(v, NULL, 10);
        } else if (strcmp(k, "--names") == 0) {
            o->names = (int)strtol(v, NULL, 10);
        } else if (strcmp(k, "--duration-ms") == 0) {
            o->duration_ms = strtoll(v, NULL, 10);
        } else if (strcmp(k, "--ttl-min") == 0) {
            o->ttl_min = strtoll(v, NULL, 10);
        } else if (strcmp(k, "--ttl-max") == 0) {
            o->ttl_max = strtoll(v, NULL, 10);
        } else {
            return -1;
        }
    }
    if (o->n_urls == 0 || o->out == NULL || o->workers < 1 ||
        o->workers > 256 || o->names < 1 || o->ttl_min < 1 ||
        o->ttl_max < o->ttl_min)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {.workers = 16,
                     .names = 4,
                     .duration_ms = 8000,
                     .ttl_min = 1,
                     .ttl_max = 50};
    if (parse_args(argc, argv, &o) < 0) {
        fprintf(stderr, "usage: tn-pg-history --urls U1,U2 --out FILE "
                        "[--workers N] [--names N] [--duration-ms MS] "
                        "[--ttl-min MS] [--ttl-max MS]\n");
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    struct worker *ws = tn_calloc((size_t)o.workers, sizeof(*ws));
    if (ws == NULL)
        return 1;
    for (int i = 0; i < o.workers; i++) {
        if (worker_init(&ws[i], i, &o) < 0 ||
            pthread_create(&ws[i].th, NULL, run, &ws[i]) != 0)
            return 1;
    }
    FILE *f = fopen(o.out, "w");
    uint64_t total[3][N_OUT] = {{0}};
    for (int i = 0; i < o.workers; i++) {
        pthread_join(ws[i].th, NULL);
        if (f != NULL)
            (void)fwrite(ws[i].lines.data, 1, ws[i].lines.len, f);
        for (int a = 0; a < 3; a++) {
            for (int b = 0; b < N_OUT; b++)
                total[a][b] += ws[i].count[a][b];
        }
        for (size_t u = 0; u < o.n_urls; u++)
            curl_easy_cleanup(ws[i].h[u]);
        tn_buf_release(&ws[i].lines);
    }
    tn_free(ws);
    curl_global_cleanup();
    if (f == NULL || fclose(f) != 0) {
        fprintf(stderr, "tn-pg-history: cannot write %s\n", o.out);
        return 1;
    }
    static const char *const ops[3] = {"acquire", "renew", "release"};
    for (int a = 0; a < 3; a++)
        fprintf(stderr, "%s ok=%" PRIu64 " fail=%" PRIu64 " info=%" PRIu64 "\n",
                ops[a], total[a][OUT_OK], total[a][OUT_FAIL],
                total[a][OUT_INFO]);
    return 0;
}
