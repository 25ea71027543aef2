/* SPDX-License-Identifier: MIT */
/* The recording clients.  Each thread is one process of the history
 * ("proc"): it acquires a random name with a random TTL, writes to the
 * fenced sink while it believes it holds the lease, renews a few times, and
 * releases it or lets it expire (with --sessions, it holds many leases
 * under one session instead: chaos_session.c).  Every operation is
 * recorded with an invoke line taken just before the request is sent and
 * an ok/fail/info line right after the answer (chaos_worker.c): ok for the
 * success status, fail for an answer that says the request was refused
 * (4xx), info when the outcome is unknown (timeout, connection lost, 5xx:
 * a failed commit may still have reached the disk).  The workers deliberately
 * do not look at the clock before writing to the sink: a paused worker writes
 * as a zombie when it wakes, and the fence must reject it. */
#include <curl/curl.h>
#include <inttypes.h>
#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/fence_kafka.h>

#include "chaos.h"
#include "common/clock.h"

static void one_lease(struct chaos_worker *w, int64_t end_ns)
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
    chaos_rec(w, NULL, "", "acquire", "invoke", name, NULL, 0, ttl, t0);
    long st = chaos_http(w, "POST", "/v1/leases", json);
    int64_t t1 = tn_clock_mono_ns();
    w->ops++;
    uint64_t token = st == 201 ? chaos_body_token(w) : 0;
    if (st == 201 && (token == 0 || chaos_body_str(w, "lease_secret", secret,
                                                   sizeof(secret))))
        st = 0; /* an answer we cannot read: outcome unknown */
    char atail[64];
    chaos_rec(w, NULL,
              st == 201 ? "" : chaos_fail_tail(w, st, atail, sizeof(atail)),
              "acquire", chaos_phase_of(st, 201), name, NULL, token, 0, t1);
    if (st != 201) {
        chaos_sleep_ms(chaos_between(&w->rng, 10, 60));
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
        chaos_write(w, name, token);
        chaos_sleep_ms(chaos_between(&w->rng, ttl / 5, ttl / 3));
        chaos_write(w, name, token);
        if (chaos_run_over(w, end_ns))
            break;
        t0 = tn_clock_mono_ns();
        chaos_rec(w, NULL, "", "renew", "invoke", name, NULL, token, ttl, t0);
        st = chaos_http(w, "PATCH", path, json);
        t1 = tn_clock_mono_ns();
        w->ops++;
        uint64_t got = st == 200 ? chaos_body_token(w) : 0;
        char tail[64];
        chaos_rec(w, NULL, chaos_error_tail(w, st, tail, sizeof(tail)), "renew",
                  chaos_phase_of(st, 200), name, NULL, got, 0, t1);
        live = st == 200;
    }
    if (live)
        chaos_write(w, name, token);
    if (chaos_rand(&w->rng) % 5 == 0)
        return; /* abandon it: let it expire */
    (void)snprintf(json, sizeof(json),
                   "{\"token\":%" PRIu64 ",\"lease_secret\":\"%s\"}", token,
                   secret);
    t0 = tn_clock_mono_ns();
    chaos_rec(w, NULL, "", "release", "invoke", name, NULL, token, 0, t0);
    st = chaos_http(w, "DELETE", path, json);
    t1 = tn_clock_mono_ns();
    w->ops++;
    char tail[64];
    chaos_rec(w, NULL, chaos_error_tail(w, st, tail, sizeof(tail)), "release",
              chaos_phase_of(st, 204), name, NULL, 0, 0, t1);
}

/* The crash-after-reveal probe (docs/safety/revealed-end.md): acquire a name
 * of this thread's own, let the lease run out, then ask about it
 * until o->reveal checks were answered, a check and a renew each time,
 * some 80-250 ms apart, so that the first answers reveal the end and the
 * later ones come after whatever kill and restart the nemesis put in
 * between.  A server that
 * undoes a revealed expiry answers one of them current:true or 200. */
static void reveal_lease(struct chaos_worker *w)
{
    const struct chaos_opts *o = w->o;
    char name[128], path[256], json[512], secret[256], tail[64];
    (void)snprintf(name, sizeof(name), "%s%s", o->name_prefix, w->proc);
    int64_t ttl = chaos_between(&w->rng, o->ttl_min_ms, o->ttl_max_ms);
    (void)snprintf(json, sizeof(json),
                   "{\"name\":\"%s\",\"owner_id\":\"%s\",\"ttl_ms\":%" PRId64
                   "}",
                   name, w->proc, ttl);
    chaos_rec(w, NULL, "", "acquire", "invoke", name, NULL, 0, ttl,
              tn_clock_mono_ns());
    long st = chaos_http(w, "POST", "/v1/leases", json);
    w->ops++;
    uint64_t token = st == 201 ? chaos_body_token(w) : 0;
    if (st == 201 && (token == 0 || chaos_body_str(w, "lease_secret", secret,
                                                   sizeof(secret))))
        st = 0;
    chaos_rec(w, NULL, "", "acquire", chaos_phase_of(st, 201), name, NULL,
              token, 0, tn_clock_mono_ns());
    if (st != 201) {
        chaos_sleep_ms(chaos_between(&w->rng, 20, 100));
        return;
    }
    chaos_sleep_ms(ttl + chaos_between(&w->rng, 20, 80));
    (void)snprintf(path, sizeof(path), "/v1/leases/%s", name);
    /* Questions that got no answer (the server is down) do not count:
     * the later ones must reach the restarted server. */
    unsigned answered = 0;
    for (unsigned i = 0; answered < o->reveal && i < 10 * o->reveal; i++) {
        char cpath[300];
        (void)snprintf(cpath, sizeof(cpath), "%s/check?token=%" PRIu64, path,
                       token);
        chaos_rec(w, NULL, "", "check", "invoke", name, NULL, token, 0,
                  tn_clock_mono_ns());
        st = chaos_http(w, "GET", cpath, NULL);
        w->ops++;
        const char *ph = chaos_phase_of(st, 200);
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
            (void)chaos_error_tail(w, st, tail, sizeof(tail));
        }
        chaos_rec(w, NULL, tail, "check", ph, name, NULL, 0, 0,
                  tn_clock_mono_ns());
        answered += st == 200;
        (void)snprintf(json, sizeof(json),
                       "{\"token\":%" PRIu64 ",\"lease_secret\":\"%s\"}", token,
                       secret);
        chaos_rec(w, NULL, "", "renew", "invoke", name, NULL, token, 0,
                  tn_clock_mono_ns());
        st = chaos_http(w, "PATCH", path, json);
        w->ops++;
        uint64_t got = st == 200 ? chaos_body_token(w) : 0;
        chaos_rec(w, NULL, chaos_error_tail(w, st, tail, sizeof(tail)), "renew",
                  chaos_phase_of(st, 200), name, NULL, got, 0,
                  tn_clock_mono_ns());
        chaos_sleep_ms(chaos_between(&w->rng, 80, 250));
    }
}

static void *worker_main(void *arg)
{
    struct chaos_worker *w = arg;
    int64_t end_ns = tn_clock_mono_ns() + w->o->duration_ms * 1000000;
    while (!chaos_run_over(w, end_ns)) {
        if (w->o->reveal > 0)
            reveal_lease(w);
        else if (w->o->sessions > 0)
            chaos_session_life(w, end_ns);
        else
            one_lease(w, end_ns);
    }
    return NULL;
}

int chaos_client_run(const struct chaos_opts *o)
{
    int rc = 1;
    struct chaos_worker *ws = calloc(o->threads, sizeof(*ws));
    pthread_t *th = calloc(o->threads, sizeof(*th));
    int hist = chaos_hist_open(o->out);
    if (ws == NULL || th == NULL || hist < 0)
        goto out;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    unsigned started = 0;
    for (unsigned i = 0; i < o->threads; i++) {
        struct chaos_worker *w = &ws[i];
        w->o = o;
        w->idx = i;
        w->hist = hist;
        (void)snprintf(w->proc, sizeof(w->proc), "%s.%u", o->proc_prefix, i);
        w->rng = (o->seed ^ (0x9E3779B97F4A7C15ULL * (i + 1))) | 1;
        w->easy = curl_easy_init();
        if (w->easy == NULL || chaos_split_urls(w, o->url) < 0)
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
