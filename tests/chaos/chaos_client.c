/* SPDX-License-Identifier: MIT */
/* The recording clients.  Each thread is one process of the history
 * ("proc"): it acquires a random name with a random TTL, writes to the
 * fenced sink while it believes it holds the lease, renews a few times, and
 * releases it or lets it expire.  Every operation is recorded with an
 * invoke line taken just before the request is sent and an ok/fail/info
 * line right after the answer: ok for the success status, fail for an
 * answer that says the request was refused (4xx), info when the outcome is
 * unknown (timeout, connection lost, 5xx: a failed commit may still have
 * reached the disk).  The workers deliberately do not look at the clock
 * before writing to the sink: a paused worker writes as a zombie when it
 * wakes, and the fence must reject it. */
#include <curl/curl.h>
#include <inttypes.h>
#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tenure/fence_kafka.h>

#include "chaos.h"
#include "common/clock.h"

#define BODY_CAP 8192
/* --url may list several servers, comma-separated (the HA profile). */
#define MAX_URLS 8
#define URL_CAP 256

struct worker {
    const struct chaos_opts *o;
    unsigned idx;
    int hist;
    char proc[64];
    uint64_t rng;
    CURL *easy;
    sqlite3 *sink;
    rd_kafka_t *rk; /* Kafka mode: the producer of stamped records */
    char urls[MAX_URLS][URL_CAP]; /* the servers of --url */
    unsigned n_urls;              /* >= 1 */
    unsigned cur;                 /* the one the next request goes to */
    char body[BODY_CAP];
    size_t body_len;
    /* counters */
    uint64_t ops, writes, admitted, rejected;
};

uint64_t chaos_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ULL;
}

int64_t chaos_between(uint64_t *s, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (int64_t)(chaos_rand(s) % (uint64_t)(hi - lo + 1));
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    struct worker *w = ud;
    size_t len = size * n;
    size_t room = BODY_CAP - 1 - w->body_len;
    size_t take = len < room ? len : room;
    memcpy(w->body + w->body_len, p, take);
    w->body_len += take;
    w->body[w->body_len] = '\0';
    return len;
}

/* Split --url into w->urls; each thread starts on another server.
 * Returns -1 when a URL is empty or too long. */
static int split_urls(struct worker *w, const char *list)
{
    w->n_urls = 0;
    for (const char *p = list; w->n_urls < MAX_URLS;) {
        size_t n = strcspn(p, ",");
        if (n == 0 || n >= URL_CAP)
            return -1;
        memcpy(w->urls[w->n_urls], p, n);
        w->urls[w->n_urls++][n] = '\0';
        if (p[n] == '\0')
            break;
        p += n + 1;
    }
    w->cur = w->idx % w->n_urls;
    return 0;
}

static long http_one(struct worker *w, const char *method, const char *path,
                     const char *json);

/* Send one request.  Returns the HTTP status, or 0 when no answer came
 * (the outcome is unknown), or -1 when no server accepted the connection
 * (nothing was sent).  A refused connection moves on to the next server at
 * once, since nothing was sent; after no answer or a 503 the request is
 * not sent again (its outcome is what the history records), but the next
 * one goes to the next server. */
static long http(struct worker *w, const char *method, const char *path,
                 const char *json)
{
    long st = -1;
    for (unsigned k = 0; k < w->n_urls && st == -1; k++) {
        st = http_one(w, method, path, json);
        if (st == -1 || st == 0 || st == 503)
            w->cur = (w->cur + 1) % w->n_urls;
    }
    return st;
}

static long http_one(struct worker *w, const char *method, const char *path,
                     const char *json)
{
    char url[512];
    (void)snprintf(url, sizeof(url), "%s%s", w->urls[w->cur], path);
    struct curl_slist *h =
        curl_slist_append(NULL, "Content-Type: application/json");
    w->body_len = 0;
    w->body[0] = '\0';
    curl_easy_setopt(w->easy, CURLOPT_URL, url);
    if (json != NULL) {
        curl_easy_setopt(w->easy, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(w->easy, CURLOPT_POSTFIELDS, json);
    } else { /* a plain GET, no body */
        curl_easy_setopt(w->easy, CURLOPT_CUSTOMREQUEST, NULL);
        curl_easy_setopt(w->easy, CURLOPT_HTTPGET, 1L);
    }
    curl_easy_setopt(w->easy, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(w->easy, CURLOPT_TIMEOUT_MS, (long)w->o->timeout_ms);
    curl_easy_setopt(w->easy, CURLOPT_CONNECTTIMEOUT_MS,
                     (long)w->o->timeout_ms);
    curl_easy_setopt(w->easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(w->easy, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(w->easy, CURLOPT_NOSIGNAL, 1L);
    CURLcode cc = curl_easy_perform(w->easy);
    curl_slist_free_all(h);
    if (cc == CURLE_COULDNT_CONNECT)
        return -1;
    if (cc != CURLE_OK)
        return 0;
    long status = 0;
    curl_easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

/* The token of the last answer's body, 0 when there is none. */
static uint64_t body_token(struct worker *w)
{
    json_t *root = json_loads(w->body, 0, NULL);
    uint64_t t = 0;
    json_t *v = root != NULL ? json_object_get(root, "token") : NULL;
    if (json_is_integer(v) && json_integer_value(v) > 0)
        t = (uint64_t)json_integer_value(v);
    json_decref(root);
    return t;
}

static int body_secret(struct worker *w, char *out, size_t cap)
{
    json_t *root = json_loads(w->body, 0, NULL);
    json_t *v = root != NULL ? json_object_get(root, "lease_secret") : NULL;
    int rc = -1;
    if (json_is_string(v) && strlen(json_string_value(v)) < cap) {
        (void)snprintf(out, cap, "%s", json_string_value(v));
        rc = 0;
    }
    json_decref(root);
    return rc;
}

/* ",\"error\":\"<code>\"" of a 4xx answer's body into tail (else ""). */
static const char *error_tail(struct worker *w, long status, char *tail,
                              size_t cap)
{
    tail[0] = '\0';
    if (status < 400 || status >= 500)
        return tail;
    json_t *root = json_loads(w->body, 0, NULL);
    json_t *v = root != NULL ? json_object_get(root, "error") : NULL;
    if (json_is_string(v) && strlen(json_string_value(v)) < 32 &&
        strpbrk(json_string_value(v), "\"\\") == NULL)
        (void)snprintf(tail, cap, ",\"error\":\"%s\"", json_string_value(v));
    json_decref(root);
    return tail;
}

/* The same for an acquire, whatever its failure: the 4xx error code, or
 * unavailable (503), refused (no server took the connection), timeout (no
 * answer), server_error (another 5xx).  The HA profile tells refusals
 * from contention by it (tests/tools/ha_check.py). */
static const char *acquire_tail(struct worker *w, long status, char *tail,
                                size_t cap)
{
    const char *what = NULL;
    if (status == -1)
        what = "refused";
    else if (status == 0)
        what = "timeout";
    else if (status == 503)
        what = "unavailable";
    else if (status >= 500)
        what = "server_error";
    if (what == NULL)
        return error_tail(w, status, tail, cap);
    (void)snprintf(tail, cap, ",\"error\":\"%s\"", what);
    return tail;
}

static void rec(struct worker *w, const char *fmt_tail, const char *op,
                const char *phase, const char *name, uint64_t token,
                int64_t ttl_ms, int64_t t)
{
    char line[768];
    int n = snprintf(line, sizeof(line),
                     "{\"t\":%" PRId64 ",\"proc\":\"%s\",\"op\":\"%s\","
                     "\"phase\":\"%s\",\"name\":\"%s\"",
                     t, w->proc, op, phase, name);
    if (token > 0)
        n += snprintf(line + n, sizeof(line) - (size_t)n, ",\"token\":%" PRIu64,
                      token);
    if (ttl_ms > 0)
        n += snprintf(line + n, sizeof(line) - (size_t)n,
                      ",\"ttl_ms\":%" PRId64, ttl_ms);
    n += snprintf(line + n, sizeof(line) - (size_t)n, "%s}\n", fmt_tail);
    chaos_hist_line(w->hist, line, (size_t)n);
}

/* Phase for a completion: ok when status is the success code. */
static const char *phase_of(long status, long ok_status)
{
    if (status == ok_status)
        return "ok";
    if (status == -1 || (status >= 400 && status < 500))
        return "fail";
    return "info";
}

/* Kafka mode: produce a record stamped with the token; the materializer
 * decides, and its sink tables give the history's sink lines. */
static void kafka_write(struct worker *w, const char *name, uint64_t token)
{
    struct tn_fence_write kw = {.topic = w->o->topic,
                                .name = name,
                                .name_len = strlen(name),
                                .token = token,
                                .value = w->proc,
                                .value_len = strlen(w->proc)};
    if (tn_fence_produce_sync(w->rk, &kw, 3000, NULL, NULL, NULL) == 0)
        w->writes++;
}

static void sink_write(struct worker *w, const char *name, uint64_t token)
{
    if (w->rk != NULL) {
        kafka_write(w, name, token);
        return;
    }
    if (w->sink == NULL)
        return;
    bool abort =
        w->o->abort_pct > 0 && chaos_rand(&w->rng) % 100 < w->o->abort_pct;
    w->writes++;
    int rc = chaos_sink_write(w->sink, name, token, w->proc, abort);
    if (rc == 1)
        w->admitted++;
    else if (rc == 0)
        w->rejected++;
}

/* The run is over: its time is up, or the nemesis made the stop file. */
static bool run_over(const struct worker *w, int64_t end_ns)
{
    return tn_clock_mono_ns() >= end_ns ||
           (w->o->stop_file != NULL && access(w->o->stop_file, F_OK) == 0);
}

static void one_lease(struct worker *w, int64_t end_ns)
{
    const struct chaos_opts *o = w->o;
    char name[128], path[256], json[512], secret[256];
    (void)snprintf(name, sizeof(name), "%s%u", o->name_prefix,
                   (unsigned)(chaos_rand(&w->rng) % o->names));
    int64_t ttl = chaos_between(&w->rng, o->ttl_min_ms, o->ttl_max_ms);
    (void)snprintf(json, sizeof(json),
                   "{\"name\":\"%s\",\"owner_id\":\"%s\",\"ttl_ms\":%" PRId64
                   "}",
                   name, w->proc, ttl);
    int64_t t0 = tn_clock_mono_ns();
    rec(w, "", "acquire", "invoke", name, 0, ttl, t0);
    long st = http(w, "POST", "/v1/leases", json);
    int64_t t1 = tn_clock_mono_ns();
    w->ops++;
    uint64_t token = st == 201 ? body_token(w) : 0;
    if (st == 201 && (token == 0 || body_secret(w, secret, sizeof(secret))))
        st = 0; /* an answer we cannot read: outcome unknown */
    char atail[64];
    rec(w, st == 201 ? "" : acquire_tail(w, st, atail, sizeof(atail)),
        "acquire", phase_of(st, 201), name, token, 0, t1);
    if (st != 201) {
        sleep_ms(chaos_between(&w->rng, 10, 60));
        return;
    }
    (void)snprintf(path, sizeof(path), "/v1/leases/%s", name);
    (void)snprintf(json, sizeof(json),
                   "{\"token\":%" PRIu64 ",\"lease_secret\":\"%s\","
                   "\"ttl_ms\":%" PRId64 "}",
                   token, secret, ttl);
    int rounds = (int)chaos_between(&w->rng, o->max_rounds > 0 ? 1 : 0,
                                    (int64_t)o->max_rounds);
    bool live = true;
    for (int r = 0; r < rounds && live; r++) {
        sink_write(w, name, token);
        sleep_ms(chaos_between(&w->rng, ttl / 5, ttl / 3));
        sink_write(w, name, token);
        if (run_over(w, end_ns))
            break;
        t0 = tn_clock_mono_ns();
        rec(w, "", "renew", "invoke", name, token, ttl, t0);
        st = http(w, "PATCH", path, json);
        t1 = tn_clock_mono_ns();
        w->ops++;
        uint64_t got = st == 200 ? body_token(w) : 0;
        char tail[64];
        rec(w, error_tail(w, st, tail, sizeof(tail)), "renew",
            phase_of(st, 200), name, got, 0, t1);
        live = st == 200;
    }
    if (live)
        sink_write(w, name, token);
    if (chaos_rand(&w->rng) % 5 == 0)
        return; /* abandon it: let it expire */
    (void)snprintf(json, sizeof(json),
                   "{\"token\":%" PRIu64 ",\"lease_secret\":\"%s\"}", token,
                   secret);
    t0 = tn_clock_mono_ns();
    rec(w, "", "release", "invoke", name, token, 0, t0);
    st = http(w, "DELETE", path, json);
    t1 = tn_clock_mono_ns();
    w->ops++;
    char tail[64];
    rec(w, error_tail(w, st, tail, sizeof(tail)), "release", phase_of(st, 204),
        name, 0, 0, t1);
}

/* The crash-after-reveal probe (docs/safety/revealed-end.md): acquire a name
 * of this thread's own, let the lease run out, then ask about it
 * until o->reveal checks were answered, a check and a renew each time,
 * some 80-250 ms apart, so that the first answers reveal the end and the
 * later ones come after whatever kill and restart the nemesis put in
 * between.  A server that
 * undoes a revealed expiry answers one of them current:true or 200. */
static void reveal_lease(struct worker *w)
{
    const struct chaos_opts *o = w->o;
    char name[128], path[256], json[512], secret[256], tail[64];
    (void)snprintf(name, sizeof(name), "%s%s", o->name_prefix, w->proc);
    int64_t ttl = chaos_between(&w->rng, o->ttl_min_ms, o->ttl_max_ms);
    (void)snprintf(json, sizeof(json),
                   "{\"name\":\"%s\",\"owner_id\":\"%s\",\"ttl_ms\":%" PRId64
                   "}",
                   name, w->proc, ttl);
    rec(w, "", "acquire", "invoke", name, 0, ttl, tn_clock_mono_ns());
    long st = http(w, "POST", "/v1/leases", json);
    w->ops++;
    uint64_t token = st == 201 ? body_token(w) : 0;
    if (st == 201 && (token == 0 || body_secret(w, secret, sizeof(secret))))
        st = 0;
    rec(w, "", "acquire", phase_of(st, 201), name, token, 0,
        tn_clock_mono_ns());
    if (st != 201) {
        sleep_ms(chaos_between(&w->rng, 20, 100));
        return;
    }
    sleep_ms(ttl + chaos_between(&w->rng, 20, 80));
    (void)snprintf(path, sizeof(path), "/v1/leases/%s", name);
    /* Questions that got no answer (the server is down) do not count:
     * the later ones must reach the restarted server. */
    unsigned answered = 0;
    for (unsigned i = 0; answered < o->reveal && i < 10 * o->reveal; i++) {
        char cpath[300];
        (void)snprintf(cpath, sizeof(cpath), "%s/check?token=%" PRIu64, path,
                       token);
        rec(w, "", "check", "invoke", name, token, 0, tn_clock_mono_ns());
        st = http(w, "GET", cpath, NULL);
        w->ops++;
        const char *ph = phase_of(st, 200);
        tail[0] = '\0';
        if (st == 200) {
            json_t *root = json_loads(w->body, 0, NULL);
            json_t *v = root != NULL ? json_object_get(root, "current") : NULL;
            if (json_is_boolean(v))
                (void)snprintf(tail, sizeof(tail), ",\"current\":%s",
                               json_is_true(v) ? "true" : "false");
            else
                ph = "info"; /* an answer we cannot read */
            json_decref(root);
        } else {
            (void)error_tail(w, st, tail, sizeof(tail));
        }
        rec(w, tail, "check", ph, name, 0, 0, tn_clock_mono_ns());
        answered += st == 200;
        (void)snprintf(json, sizeof(json),
                       "{\"token\":%" PRIu64 ",\"lease_secret\":\"%s\"}", token,
                       secret);
        rec(w, "", "renew", "invoke", name, token, 0, tn_clock_mono_ns());
        st = http(w, "PATCH", path, json);
        w->ops++;
        uint64_t got = st == 200 ? body_token(w) : 0;
        rec(w, error_tail(w, st, tail, sizeof(tail)), "renew",
            phase_of(st, 200), name, got, 0, tn_clock_mono_ns());
        sleep_ms(chaos_between(&w->rng, 80, 250));
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    int64_t end_ns = tn_clock_mono_ns() + w->o->duration_ms * 1000000;
    while (!run_over(w, end_ns)) {
        if (w->o->reveal > 0)
            reveal_lease(w);
        else
            one_lease(w, end_ns);
    }
    return NULL;
}

int chaos_client_run(const struct chaos_opts *o)
{
    int rc = 1;
    struct worker *ws = calloc(o->threads, sizeof(*ws));
    pthread_t *th = calloc(o->threads, sizeof(*th));
    int hist = chaos_hist_open(o->out);
    if (ws == NULL || th == NULL || hist < 0)
        goto out;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    unsigned started = 0;
    for (unsigned i = 0; i < o->threads; i++) {
        struct worker *w = &ws[i];
        w->o = o;
        w->idx = i;
        w->hist = hist;
        (void)snprintf(w->proc, sizeof(w->proc), "%s.%u", o->proc_prefix, i);
        w->rng = (o->seed ^ (0x9E3779B97F4A7C15ULL * (i + 1))) | 1;
        w->easy = curl_easy_init();
        if (w->easy == NULL || split_urls(w, o->url) < 0)
            goto join;
        if (o->brokers != NULL) {
            w->rk = tn_fence_producer_new(o->brokers, NULL, NULL);
            if (w->rk == NULL)
                goto join;
        } else if (o->sink != NULL && chaos_sink_open(o->sink, &w->sink) < 0) {
            goto join;
        }
        if (pthread_create(&th[i], NULL, worker_main, w) != 0)
            goto join;
        started++;
    }
    rc = 0;
join:
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    uint64_t ops = 0, writes = 0, adm = 0, rej = 0;
    for (unsigned i = 0; i < o->threads; i++) {
        ops += ws[i].ops;
        writes += ws[i].writes;
        adm += ws[i].admitted;
        rej += ws[i].rejected;
        if (ws[i].easy != NULL)
            curl_easy_cleanup(ws[i].easy);
        sqlite3_close(ws[i].sink);
        if (ws[i].rk != NULL) {
            (void)rd_kafka_flush(ws[i].rk, 3000);
            rd_kafka_destroy(ws[i].rk);
        }
    }
    (void)fprintf(stderr,
                  "tn-chaos client %s: ops=%" PRIu64 " sink_writes=%" PRIu64
                  " admitted=%" PRIu64 " rejected=%" PRIu64 "\n",
                  o->proc_prefix, ops, writes, adm, rej);
    curl_global_cleanup();
out:
    free(ws);
    free(th);
    return rc;
}
