/* SPDX-License-Identifier: MIT */
/* What every recording thread of the harness does: send a request to one
 * of the servers, read its answer, write history lines (invoke just before
 * the request is sent, the completion right after the answer: ok for the
 * success status, fail for an answer that says the request was refused
 * (4xx) or a refused connection, info when the outcome is unknown:
 * timeout, connection lost, 5xx), and write to the fenced sink. */
#include <curl/curl.h>
#include <inttypes.h>
#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tenure/fence_kafka.h>

#include "chaos.h"
#include "common/clock.h"

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

void chaos_sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    struct chaos_worker *w = ud;
    size_t len = size * n;
    size_t room = CHAOS_BODY_CAP - 1 - w->body_len;
    size_t take = len < room ? len : room;
    memcpy(w->body + w->body_len, p, take);
    w->body_len += take;
    w->body[w->body_len] = '\0';
    return len;
}

int chaos_split_urls(struct chaos_worker *w, const char *list)
{
    w->n_urls = 0;
    for (const char *p = list; w->n_urls < CHAOS_MAX_URLS;) {
        size_t n = strcspn(p, ",");
        if (n == 0 || n >= CHAOS_URL_CAP)
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

static long http_one(struct chaos_worker *w, const char *method,
                     const char *path, const char *json)
{
    char url[512];
    (void)snprintf(url, sizeof(url), "%s%s", w->urls[w->cur], path);
    struct curl_slist *h =
        curl_slist_append(NULL, "Content-Type: application/json");
    w->body_len = 0;
    w->body[0] = '\0';
    CURL *easy = w->easy;
    curl_easy_setopt(easy, CURLOPT_URL, url);
    if (json != NULL) {
        curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, json);
    } else { /* a plain GET, no body */
        curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, NULL);
        curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
    }
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)w->o->timeout_ms);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, (long)w->o->timeout_ms);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    CURLcode cc = curl_easy_perform(easy);
    curl_slist_free_all(h);
    if (cc == CURLE_COULDNT_CONNECT)
        return -1;
    if (cc != CURLE_OK)
        return 0;
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

/* A refused connection moves on to the next server at once, since nothing
 * was sent; after no answer or a 503 the request is not sent again (its
 * outcome is what the history records), but the next one goes to the next
 * server. */
long chaos_http(struct chaos_worker *w, const char *method, const char *path,
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

uint64_t chaos_body_token(struct chaos_worker *w)
{
    json_t *root = json_loads(w->body, 0, NULL);
    uint64_t t = 0;
    json_t *v = root != NULL ? json_object_get(root, "token") : NULL;
    if (json_is_integer(v) && json_integer_value(v) > 0)
        t = (uint64_t)json_integer_value(v);
    json_decref(root);
    return t;
}

int chaos_body_str(struct chaos_worker *w, const char *key, char *out,
                   size_t cap)
{
    json_t *root = json_loads(w->body, 0, NULL);
    json_t *v = root != NULL ? json_object_get(root, key) : NULL;
    int rc = -1;
    if (json_is_string(v) && strlen(json_string_value(v)) < cap &&
        strpbrk(json_string_value(v), "\"\\") == NULL) {
        (void)snprintf(out, cap, "%s", json_string_value(v));
        rc = 0;
    }
    json_decref(root);
    return rc;
}

const char *chaos_error_tail(struct chaos_worker *w, long status, char *tail,
                             size_t cap)
{
    tail[0] = '\0';
    if (status < 400 || status >= 500)
        return tail;
    char code[32];
    if (chaos_body_str(w, "error", code, sizeof(code)) == 0)
        (void)snprintf(tail, cap, ",\"error\":\"%s\"", code);
    return tail;
}

const char *chaos_fail_tail(struct chaos_worker *w, long status, char *tail,
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
        return chaos_error_tail(w, status, tail, cap);
    (void)snprintf(tail, cap, ",\"error\":\"%s\"", what);
    return tail;
}

const char *chaos_phase_of(long status, long ok_status)
{
    if (status == ok_status)
        return "ok";
    if (status == -1 || (status >= 400 && status < 500))
        return "fail";
    return "info";
}

void chaos_rec(struct chaos_worker *w, const char *proc, const char *tail,
               const char *op, const char *phase, const char *name,
               const char *session, uint64_t token, int64_t ttl_ms, int64_t t)
{
    char line[1024];
    size_t cap = sizeof(line);
    int n = snprintf(line, cap,
                     "{\"t\":%" PRId64 ",\"proc\":\"%s\",\"op\":\"%s\","
                     "\"phase\":\"%s\"",
                     t, proc != NULL ? proc : w->proc, op, phase);
    if (name != NULL)
        n += snprintf(line + n, cap - (size_t)n, ",\"name\":\"%s\"", name);
    if (session != NULL)
        n +=
            snprintf(line + n, cap - (size_t)n, ",\"session\":\"%s\"", session);
    if (token > 0)
        n += snprintf(line + n, cap - (size_t)n, ",\"token\":%" PRIu64, token);
    if (ttl_ms > 0)
        n +=
            snprintf(line + n, cap - (size_t)n, ",\"ttl_ms\":%" PRId64, ttl_ms);
    n += snprintf(line + n, cap - (size_t)n, "%s}\n", tail);
    if (n > 0 && (size_t)n < cap)
        chaos_hist_line(w->hist, line, (size_t)n);
}

/* Kafka mode: produce a record stamped with the token; the materializer
 * decides, and its sink tables give the history's sink lines. */
static void kafka_write(struct chaos_worker *w, const char *name,
                        uint64_t token)
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

void chaos_write(struct chaos_worker *w, const char *name, uint64_t token)
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

bool chaos_run_over(const struct chaos_worker *w, int64_t end_ns)
{
    return tn_clock_mono_ns() >= end_ns ||
           (w->o->stop_file != NULL && access(w->o->stop_file, F_OK) == 0);
}
