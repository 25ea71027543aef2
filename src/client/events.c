/* SPDX-License-Identifier: MIT */
/* The event follower: with opts.watch_events, one thread per client reads
 * GET /v1/events and marks a kept lease lost when the server announces
 * that its grant ended (expired, revoked, released elsewhere) or that a
 * newer token took the name, or that a kept session ended.  The renewer
 * then reports the loss through the usual callback, once.  This only shortens
 * how long a holder keeps going after a loss: the safe-time rule still bounds
 * it if the stream is slow, cut or lying, and nothing here can make a lease
 * look held. */
#include <curl/curl.h>
#include <jansson.h>
#include <string.h>
#include <time.h>

#include <tenure/err.h>

#include "client_internal.h"
#include "common/sse.h"

#define EV_LINE_MAX (64 * 1024)

struct follower {
    const struct tn_client_sse *f; /* what to follow, and how to stop */
    struct tn_sse sse;             /* the stream's lines, last id */
};

static void apply(void *arg, const char *data)
{
    struct tn_client *c = arg;
    json_error_t err;
    json_t *v = json_loads(data, 0, &err);
    const char *type = json_string_value(json_object_get(v, "type"));
    if (type != NULL && strcmp(type, "reset") == 0) {
        tn_client_events_renew_all(c);
        json_decref(v);
        return;
    }
    const char *sid = json_string_value(json_object_get(v, "session_id"));
    if (type != NULL && sid != NULL && strncmp(type, "session_", 8) == 0) {
        tn_client_events_apply_session(c, type, sid);
        json_decref(v);
        return;
    }
    const char *name = json_string_value(json_object_get(v, "name"));
    json_t *tok = json_object_get(v, "token");
    if (type == NULL || name == NULL || !json_is_integer(tok)) {
        json_decref(v);
        return;
    }
    tn_client_events_apply(c, type, name, (uint64_t)json_integer_value(tok));
    json_decref(v);
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    struct follower *fo = arg;
    size_t len = size * n;
    tn_sse_feed(&fo->sse, p, len, fo->f->on_data, fo->f->ud);
    return atomic_load(fo->f->stop) ? 0 : len;
}

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t x,
                       curl_off_t y)
{
    struct follower *fo = arg;
    (void)a, (void)b, (void)x, (void)y;
    return atomic_load(fo->f->stop) ? 1 : 0;
}

static void set_tls(CURL *h, const struct tn_client_options *o)
{
    if (o->ca_file != NULL)
        (void)curl_easy_setopt(h, CURLOPT_CAINFO, o->ca_file);
    if (o->cert_file != NULL)
        (void)curl_easy_setopt(h, CURLOPT_SSLCERT, o->cert_file);
    if (o->key_file != NULL)
        (void)curl_easy_setopt(h, CURLOPT_SSLKEY, o->key_file);
}

/* One stream from one URL, until it ends or the follower stops. */
static void stream_once(struct follower *fo, CURL *h, const char *base)
{
    struct tn_client *c = fo->f->c;
    char url[4096];
    char hdr[128];
    (void)snprintf(url, sizeof(url), "%s/v1/events%s", base, fo->f->query);
    struct curl_slist *hdrs = NULL;
    if (fo->sse.last_id[0] != '\0') {
        (void)snprintf(hdr, sizeof(hdr), "Last-Event-ID: %s", fo->sse.last_id);
        hdrs = curl_slist_append(hdrs, hdr);
    }
    if (c->auth_header != NULL)
        hdrs = curl_slist_append(hdrs, c->auth_header);
    curl_easy_reset(h);
    (void)curl_easy_setopt(h, CURLOPT_URL, url);
    (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    (void)curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, fo);
    (void)curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    (void)curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    (void)curl_easy_setopt(h, CURLOPT_XFERINFODATA, fo);
    (void)curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                           (long)c->opts.connect_timeout_ms);
    (void)curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    (void)curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
    set_tls(h, &c->opts);
    (void)curl_easy_perform(h);
    curl_slist_free_all(hdrs);
}

void tn_client_sse_run(const struct tn_client_sse *f)
{
    struct tn_client *c = f->c;
    struct follower fo = {.f = f};
    tn_sse_init(&fo.sse, EV_LINE_MAX);
    CURL *h = curl_easy_init();
    for (size_t i = 0; h != NULL && !atomic_load(f->stop); i++) {
        stream_once(&fo, h, c->opts.urls[i % c->opts.n_urls]);
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 100 * 1000000L};
        (void)nanosleep(&ts, NULL); /* a pause between reconnects */
    }
    if (h != NULL)
        curl_easy_cleanup(h);
    tn_sse_release(&fo.sse);
}

static void *follower_main(void *arg)
{
    struct tn_client *c = arg;
    struct tn_client_sse f = {c, "", apply, c, &c->abort_io};
    tn_client_sse_run(&f);
    return NULL;
}

int tn_client_events_start_locked(struct tn_client *c)
{
    if (c->ev_started)
        return TN_OK;
    void *(*main_fn)(void *) =
        c->events_url != NULL ? tn_client_events_redis_main : follower_main;
    if (pthread_create(&c->ev_thread, NULL, main_fn, c) != 0)
        return TN_EIO;
    c->ev_started = true;
    return TN_OK;
}

void tn_client_events_join(struct tn_client *c)
{
    if (c->ev_started)
        (void)pthread_join(c->ev_thread, NULL);
    c->ev_started = false;
}
