/* SPDX-License-Identifier: MIT */
/* GET /v1/events: the event hub (a ring of formatted events and a list of
 * subscribers) and the route that subscribes to it. */
#include "events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <tenure/err.h>

#include "api_int.h"
#include "common/alloc.h"
#include "common/clock.h"
#include "common/loop.h"
#include "common/rand.h"
#include "reply.h"
#include "store/names.h"

/* A slot of the backlog.  Events are kept as data and formatted only when
 * a subscriber wants them, once per slot use; the slot's buffers are
 * reused when the ring wraps, so a server nobody watches neither formats
 * nor allocates per event once the ring is full. */
struct entry {
    uint64_t id;                            /* event id, increasing */
    enum tn_event_type type;                /* what happened */
    uint64_t token;                         /* the grant's token */
    uint64_t floor;                         /* the name's floor after it */
    struct tn_buf strs;                     /* name, NUL, owner_id, NUL */
    size_t name_len;                        /* bytes of the name in strs */
    struct tn_buf text;                     /* the SSE frame, once formatted */
    bool formatted;                         /* text is this use's frame */
    char session_id[TN_SESSION_ID_HEX + 1]; /* session events: its id */
    enum tn_grant_end end;                  /* session ended: how */
};

struct sub {
    struct tn_events *hub;    /* owner */
    struct tn_http_stream *s; /* its stream, NULL once closed */
    char *prefix;             /* owned */
    size_t prefix_len;        /* bytes */
    LIST_ENTRY(sub) link;     /* hub->subs */
};

struct tn_events {
    struct tn_events_config cfg; /* copy */
    struct tn_loop *loop;        /* for the heartbeat */
    struct entry *ring;          /* cfg.backlog entries */
    uint64_t first_id;           /* id of this process's first event */
    uint64_t next_id;            /* id of the next event */
    uint64_t gap_id;             /* id of the last reset, 0 if none */
    LIST_HEAD(, sub) subs;       /* live subscribers */
    size_t n_subs;               /* count */
    uint64_t published;          /* events published */
    uint64_t cut;                /* subscribers cut for being slow */
    struct tn_loop_timer hb;     /* heartbeat */
};

static bool is_session(enum tn_event_type t)
{
    return t == TN_EVENT_SESSION_OPENED || t == TN_EVENT_SESSION_ENDED;
}

static void cut(struct sub *s);

static void heartbeat(void *arg)
{
    struct tn_events *hub = arg;
    static const char hb[] = ": heartbeat\n\n";
    struct sub *s;
    LIST_FOREACH(s, &hub->subs, link)
    {
        if (s->s != NULL && tn_http_stream_write(s->s, hb, sizeof(hb) - 1) < 0)
            cut(s);
    }
    tn_loop_timer_arm(hub->loop, &hub->hb,
                      tn_clock_now_ms() + hub->cfg.heartbeat_ms, heartbeat,
                      hub);
}

struct tn_events *tn_events_new(struct tn_loop *loop,
                                const struct tn_events_config *cfg)
{
    struct tn_events *hub = tn_calloc(1, sizeof(*hub));
    if (hub == NULL)
        return NULL;
    hub->cfg = *cfg;
    hub->loop = loop;
    /* Ids start at a random point below 2^52, so that an id another
     * instance or an earlier run of this one handed out is (but for a
     * chance of about 2^-32) outside this hub's range, and answered with
     * a reset rather than replayed from the wrong place. */
    uint32_t r = 0;
    (void)tn_rand_bytes(&r, sizeof(r));
    hub->first_id = ((uint64_t)r << 20) + 1;
    hub->next_id = hub->first_id;
    hub->ring = tn_calloc(cfg->backlog, sizeof(*hub->ring));
    if (hub->ring == NULL) {
        tn_free(hub);
        return NULL;
    }

    tn_loop_timer_arm(loop, &hub->hb, tn_clock_now_ms() + cfg->heartbeat_ms,
                      heartbeat, hub);
    return hub;
}

void tn_events_free(struct tn_events *hub)
{
    if (hub == NULL)
        return;
    tn_loop_timer_disarm(hub->loop, &hub->hb);
    for (size_t i = 0; i < hub->cfg.backlog; i++) {
        tn_buf_release(&hub->ring[i].strs);
        tn_buf_release(&hub->ring[i].text);
    }
    /* Streams still open close with the HTTP daemon; detach them. */
    struct sub *s;
    LIST_FOREACH(s, &hub->subs, link)
    s->hub = NULL;
    tn_free(hub->ring);
    tn_free(hub);
}

/* Whether s wants e: lease events by their name's prefix; session
 * events go to every stream (a worker following its shards' prefix sees
 * workers join and leave, docs/SESSIONS.md). */
static bool matches(const struct sub *s, const struct entry *e)
{
    return is_session(e->type) ||
           strncmp(e->strs.data, s->prefix, s->prefix_len) == 0;
}

/* The slot's SSE frame; false if memory ran out (the event is then lost
 * to that subscriber, which events may be). */
static bool format(struct entry *e)
{
    if (e->formatted)
        return true;
    struct tn_buf *b = &e->text;
    const char *name = e->strs.data;
    tn_buf_reset(b);
    (void)tn_buf_printf(b, "id: %llu\ndata: {", (unsigned long long)e->id);
    tn_reply_kv_str(b, "type", tn_event_type_name(e->type), true);
    if (is_session(e->type)) {
        tn_reply_kv_str(b, "session_id", e->session_id, false);
        tn_reply_kv_str(b, "owner_id", name + e->name_len + 1, false);
        if (e->type == TN_EVENT_SESSION_ENDED)
            tn_reply_kv_str(b, "reason", tn_grant_end_name(e->end), false);
    } else {
        tn_reply_kv_str(b, "name", name, false);
        tn_reply_kv_str(b, "owner_id", name + e->name_len + 1, false);
        tn_reply_kv_uint(b, "token", e->token, false);
        tn_reply_kv_uint(b, "floor", e->floor, false);
    }
    e->formatted = tn_buf_append(b, "}\n\n", 3) == 0;
    return e->formatted;
}

/* The subscriber is too far behind (its output budget, or the one of all
 * streams, is spent): a last reset event tells it to re-read state and
 * resume with Last-Event-ID, and the stream is closed. */
static void cut(struct sub *s)
{
    struct tn_events *hub = s->hub;
    char msg[200];
    uint64_t id = hub != NULL ? hub->next_id - 1 : 0;
    int n = snprintf(msg, sizeof(msg),
                     "id: %llu\ndata: {\"type\":\"reset\",\"message\":"
                     "\"subscriber fell behind; re-read state\"}\n\n",
                     (unsigned long long)id);
    tn_http_stream_cut(s->s, msg, (size_t)n);
    if (hub != NULL)
        hub->cut++;
    s->s = NULL; /* being cut; on_close unlinks it */
}

static void send_to(struct sub *s, struct entry *e)
{
    if (s->s == NULL || e->strs.len == 0 || !matches(s, e) || !format(e))
        return;
    if (tn_http_stream_write(s->s, e->text.data, e->text.len) < 0)
        cut(s);
}

/* Tell s that events before id may be gone, so it must re-read state. */
static void send_reset(struct sub *s, uint64_t id, const char *why)
{
    char msg[200];
    int n = snprintf(msg, sizeof(msg),
                     "id: %llu\ndata: {\"type\":\"reset\",\"message\":"
                     "\"%s; re-read state\"}\n\n",
                     (unsigned long long)id, why);
    if (s->s != NULL && tn_http_stream_write(s->s, msg, (size_t)n) < 0)
        cut(s);
}

/* The store's feed of events was cut and is back: what happened meanwhile
 * is unknown.  The reset takes an id of its own, so that a Last-Event-ID
 * from before it is answered with a reset too, never with a replay that
 * skips the gap; its slot stays empty, so replays pass over it. */
static void publish_reset(struct tn_events *hub)
{
    uint64_t id = hub->next_id++;
    struct entry *e = &hub->ring[id % hub->cfg.backlog];
    e->id = id;
    e->formatted = false;
    tn_buf_reset(&e->strs);
    hub->gap_id = id;
    hub->published++;
    struct sub *s;
    LIST_FOREACH(s, &hub->subs, link)
    send_reset(s, id, "events may have been missed");
}

void tn_events_publish(void *arg, const struct tn_event *ev)
{
    struct tn_events *hub = arg;
    if (ev->type == TN_EVENT_RESET) {
        publish_reset(hub);
        return;
    }
    uint64_t id = hub->next_id++;
    struct entry *e = &hub->ring[id % hub->cfg.backlog];
    e->id = id;
    e->type = ev->type;
    e->token = ev->token;
    e->floor = ev->floor;
    e->formatted = false;
    e->name_len = strlen(ev->name);
    e->end = ev->end;
    memcpy(e->session_id, ev->session_id, sizeof(e->session_id));
    e->session_id[TN_SESSION_ID_HEX] = '\0';
    if (e->strs.max_bytes == 0) { /* the slot's first use */
        tn_buf_init(&e->strs, TN_NAME_MAX_BYTES + TN_OWNER_MAX_BYTES + 2);
        tn_buf_init(&e->text, 4096);
    }
    tn_buf_reset(&e->strs);
    if (tn_buf_append(&e->strs, ev->name, e->name_len + 1) < 0 ||
        tn_buf_append(&e->strs, ev->owner_id, strlen(ev->owner_id) + 1) < 0)
        tn_buf_reset(&e->strs); /* out of memory: lost to everyone */
    hub->published++;
    struct sub *s;
    LIST_FOREACH(s, &hub->subs, link)
    send_to(s, e);
}

bool tn_events_watched(void *arg)
{
    const struct tn_events *hub = arg;
    return hub != NULL && hub->n_subs > 0;
}

static void on_close(void *ctx)
{
    struct sub *s = ctx;
    struct tn_events *hub = s->hub;
    if (hub != NULL) {
        LIST_REMOVE(s, link);
        hub->n_subs--;
    }
    tn_free(s->prefix);
    tn_free(s);
}

/* Replay the backlog after last_id, or say it is gone. */
static void replay(struct tn_events *hub, struct sub *s, const char *last_id)
{
    char *end = NULL;
    unsigned long long after = strtoull(last_id, &end, 10);
    uint64_t oldest = hub->next_id - hub->first_id > hub->cfg.backlog
                          ? hub->next_id - hub->cfg.backlog
                          : hub->first_id;
    if (end == last_id || *end != '\0' || after + 1 < oldest ||
        after >= hub->next_id || after < hub->gap_id) {
        send_reset(s, hub->next_id - 1, "events after that id are gone");
        return;
    }
    for (uint64_t id = after + 1; id < hub->next_id; id++)
        send_to(s, &hub->ring[id % hub->cfg.backlog]);
}

int tn_events_subscribe(struct tn_events *hub, struct tn_http_req *req,
                        const char *prefix, size_t prefix_len,
                        const char *last_id)
{
    if (hub->n_subs >= hub->cfg.max_subscribers)
        return TN_ECAPACITY;
    struct sub *s = tn_calloc(1, sizeof(*s));
    if (s == NULL || (s->prefix = tn_strndup(prefix, prefix_len)) == NULL) {
        tn_free(s);
        return TN_ENOMEM;
    }
    s->hub = hub;
    s->prefix_len = prefix_len;
    s->s = tn_http_reply_stream(req, "text/event-stream", hub->cfg.max_buffered,
                                on_close, s);
    if (s->s == NULL) {
        tn_free(s->prefix);
        tn_free(s);
        return TN_OK; /* answered 500 by the adapter */
    }
    LIST_INSERT_HEAD(&hub->subs, s, link);
    hub->n_subs++;
    if (last_id != NULL) {
        static const char hello[] = ": subscribed\n\n";
        if (tn_http_stream_write(s->s, hello, sizeof(hello) - 1) < 0)
            cut(s);
        else
            replay(hub, s, last_id);
        return TN_OK;
    }
    /* An id without data: no event, but the point this stream starts
     * from, so that a consumer that reconnects before any event came can
     * still resume with Last-Event-ID, and learn of a gap by a reset. */
    char hello[64];
    int n = snprintf(hello, sizeof(hello), ": subscribed\nid: %llu\n\n",
                     (unsigned long long)(hub->next_id - 1));
    if (tn_http_stream_write(s->s, hello, (size_t)n) < 0)
        cut(s);
    return TN_OK;
}

size_t tn_events_subscribers(const struct tn_events *hub)
{
    return hub->n_subs;
}

void tn_events_end_all(struct tn_events *hub)
{
    struct sub *s;
    LIST_FOREACH(s, &hub->subs, link)
    {
        if (s->s != NULL)
            tn_http_stream_end(s->s);
    }
}

void tn_events_metrics(const struct tn_events *hub, struct tn_buf *out)
{
    (void)tn_buf_printf(out,
                        "# TYPE tenure_event_subscribers gauge\n"
                        "tenure_event_subscribers %zu\n"
                        "# TYPE tenure_events_total counter\n"
                        "tenure_events_total %llu\n"
                        "# TYPE tenure_event_subscribers_cut_total counter\n"
                        "tenure_event_subscribers_cut_total %llu\n",
                        hub->n_subs, (unsigned long long)hub->published,
                        (unsigned long long)hub->cut);
}

bool tn_api_events_is_on(const struct tn_api *api)
{
    return api->cfg.events != NULL && api->cfg.store->backend->caps.events;
}

/* GET /v1/events?prefix=: a server-sent-events stream. */
void tn_api_events(struct tn_api_call *c, struct tn_route_match *m)
{
    const char *last = tn_http_req_header(c->req, "Last-Event-ID");
    struct tn_events *hub = c->api->cfg.events;
    if (c->api->parked + hub->n_subs >= tn_api_parked_room(&c->api->cfg)) {
        tn_api_refuse_reserved(c); /* the connections left are others' */
        return;
    }
    tn_api_account(c, 200);
    int rc = tn_events_subscribe(c->api->cfg.events, c->req, m->prefix,
                                 m->prefix_len, last);
    if (rc < 0) {
        c->api->requests[c->slot][2]--; /* counted as 2xx above */
        if (rc == TN_ECAPACITY)
            tn_api_fail_capacity(c, "subscribers");
        else
            tn_api_fail(c, rc, "cannot subscribe");
        return;
    }
    tn_api_call_free(c);
}
