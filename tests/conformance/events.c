/* SPDX-License-Identifier: MIT */
/* tn-conformance's event steps: libtenure has no public event-stream API
 * (its follower is internal to the keepalive), so events_open and
 * events_expect read GET /v1/events with libcurl on a thread of their
 * own.  Session events of other runs are dropped (README.md). */
#include <curl/curl.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tenure/client.h>

#include "runner.h"

/* Session events are not filtered by the stream's prefix: keep this
 * scenario's own (owner_id in its namespace, then made relative to it),
 * drop those of every other run.  Other events pass as they are. */
static bool own_session_event(const struct events *e, json_t *v)
{
    const char *type = json_string_value(json_object_get(v, "type"));
    if (type == NULL || strncmp(type, "session_", 8) != 0)
        return true;
    const char *owner = json_string_value(json_object_get(v, "owner_id"));
    size_t n = strlen(e->ns);
    if (owner == NULL || strncmp(owner, e->ns, n) != 0)
        return false;
    (void)json_object_set_new(v, "owner_id", json_string(owner + n));
    return true;
}

static void ev_line(struct events *e)
{
    e->line[e->line_len] = '\0';
    if (strncmp(e->line, ": subscribed", 12) == 0) {
        (void)pthread_mutex_lock(&e->mu);
        e->subscribed = true;
        (void)pthread_cond_broadcast(&e->cond);
        (void)pthread_mutex_unlock(&e->mu);
        return;
    }
    if (strncmp(e->line, "data: ", 6) != 0)
        return;
    json_error_t jerr;
    json_t *v = json_loads(e->line + 6, 0, &jerr);
    if (!json_is_object(v) || !own_session_event(e, v)) {
        json_decref(v);
        return;
    }
    (void)pthread_mutex_lock(&e->mu);
    (void)json_array_append_new(e->got, v);
    (void)pthread_cond_broadcast(&e->cond);
    (void)pthread_mutex_unlock(&e->mu);
}

static size_t ev_data(char *p, size_t size, size_t n, void *arg)
{
    struct events *e = arg;
    size_t len = size * n;
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '\n') {
            ev_line(e);
            e->line_len = 0;
        } else if (e->line_len + 1 < sizeof(e->line)) {
            e->line[e->line_len++] = p[i];
        }
    }
    return len;
}

static int ev_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c,
                       curl_off_t d)
{
    struct events *e = arg;
    (void)a, (void)b, (void)c, (void)d;
    (void)pthread_mutex_lock(&e->mu);
    bool stop = e->stop;
    (void)pthread_mutex_unlock(&e->mu);
    return stop ? 1 : 0;
}

static void *ev_main(void *arg)
{
    struct events *e = arg;
    CURL *h = curl_easy_init();
    if (h == NULL)
        return NULL;
    (void)curl_easy_setopt(h, CURLOPT_URL, e->url);
    (void)curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, ev_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, e);
    (void)curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    (void)curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, ev_progress);
    (void)curl_easy_setopt(h, CURLOPT_XFERINFODATA, e);
    (void)curl_easy_perform(h);
    curl_easy_cleanup(h);
    return NULL;
}

void conf_events_stop(struct events *e)
{
    if (!e->started)
        return;
    (void)pthread_mutex_lock(&e->mu);
    e->stop = true;
    (void)pthread_mutex_unlock(&e->mu);
    (void)pthread_join(e->thread, NULL);
    e->started = false;
    json_decref(e->got);
    e->got = NULL;
}

static bool ev_wait(struct events *e, bool (*ready)(struct events *, size_t),
                    size_t n, int64_t timeout_ms)
{
    int64_t end = conf_now_ms() + timeout_ms;
    (void)pthread_mutex_lock(&e->mu);
    while (!ready(e, n) && conf_now_ms() < end) {
        (void)pthread_mutex_unlock(&e->mu);
        conf_sleep_ms(10);
        (void)pthread_mutex_lock(&e->mu);
    }
    bool ok = ready(e, n);
    (void)pthread_mutex_unlock(&e->mu);
    return ok;
}

static bool is_subscribed(struct events *e, size_t n)
{
    (void)n;
    return e->subscribed;
}

static bool has_n(struct events *e, size_t n)
{
    return json_array_size(e->got) >= n;
}

json_t *conf_events_open(struct runner *r)
{
    struct events *e = &r->ev;
    conf_events_stop(e);
    e->subscribed = false;
    e->stop = false;
    e->line_len = 0;
    e->got = json_array();
    char pfx[NAME_BUF];
    (void)snprintf(pfx, sizeof(pfx), "%s%s/", r->prefix, r->scenario);
    (void)snprintf(e->ns, sizeof(e->ns), "%s", pfx);
    char *esc = curl_easy_escape(NULL, pfx, 0);
    (void)snprintf(e->url, sizeof(e->url), "%s/v1/events?prefix=%s", r->url,
                   esc != NULL ? esc : "");
    curl_free(esc);
    if (pthread_create(&e->thread, NULL, ev_main, e) != 0)
        return json_pack("{s:s}", "error", "thread");
    e->started = true;
    if (!ev_wait(e, is_subscribed, 0, 10000))
        return json_pack("{s:s}", "error", "not subscribed");
    return json_pack("{s:b}", "ok", 1);
}

bool conf_events_expect(struct runner *r, const json_t *step)
{
    struct events *e = &r->ev;
    json_t *want = json_object_get(step, "events");
    if (!e->started) {
        (void)snprintf(r->why, sizeof(r->why), "events_expect: no stream");
        return false;
    }
    size_t n = json_array_size(want);
    (void)ev_wait(e, has_n, n, conf_int_arg(r, step, "timeout_ms", 5000));
    (void)pthread_mutex_lock(&e->mu);
    json_t *got = json_deep_copy(e->got);
    (void)pthread_mutex_unlock(&e->mu);
    bool ok = json_array_size(got) >= n;
    if (!ok) {
        char *g = json_dumps(got, 0);
        (void)snprintf(r->why, sizeof(r->why), "events: %zu of %zu came: %s",
                       json_array_size(got), n, g != NULL ? g : "");
        free(g);
    }
    for (size_t i = 0; ok && i < n; i++) {
        char path[64];
        (void)snprintf(path, sizeof(path), "events[%zu]", i);
        ok = conf_match(r, json_array_get(want, i), json_array_get(got, i),
                        path);
    }
    json_decref(got);
    return ok;
}
