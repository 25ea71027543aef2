/* SPDX-License-Identifier: MIT */
/* The event hub behind GET /v1/events: numbered events from the store, a
 * bounded backlog for Last-Event-ID resumption, a server-sent-events
 * stream per subscriber with a byte cap (a slow consumer is cut, never
 * buffered without bound), and heartbeat comments.  Events only shorten
 * how long a zombie keeps trying; nothing relies on them for safety.
 * Loop thread only. */
#ifndef TN_API_EVENTS_H
#define TN_API_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "http/http.h"
#include "store/store.h"

struct tn_loop;
struct tn_events;

struct tn_events_config {
    size_t backlog;         /* events kept for resumption */
    size_t max_buffered;    /* unsent bytes per subscriber before cutting */
    size_t max_subscribers; /* beyond: 503 capacity */
    int64_t heartbeat_ms;   /* comment line interval */
};

struct tn_events *tn_events_new(struct tn_loop *loop,
                                const struct tn_events_config *cfg);
void tn_events_free(struct tn_events *ev);

/* The store's tn_store_event_fn. */
void tn_events_publish(void *hub, const struct tn_event *ev);
/* True while the hub has subscribers (tn_store_watched_fn). */
bool tn_events_watched(void *hub);

/* Answer req with a stream of the events whose names start with prefix.
 * last_id (or NULL): the Last-Event-ID header; events after it are
 * replayed from the backlog, or a reset event says they are gone.
 * Returns 0, or TN_ECAPACITY (req not answered). */
int tn_events_subscribe(struct tn_events *ev, struct tn_http_req *req,
                        const char *prefix, size_t prefix_len,
                        const char *last_id);

/* Streams open now. */
size_t tn_events_subscribers(const struct tn_events *ev);

/* End every stream (shutdown). */
void tn_events_end_all(struct tn_events *ev);

/* Prometheus lines. */
void tn_events_metrics(const struct tn_events *ev, struct tn_buf *out);

#endif
