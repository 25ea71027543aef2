/* SPDX-License-Identifier: MIT */
/* The embedded store's announcements: an event about a lease or a session
 * rides on the commit of its change (a waiter of the open batch) and goes
 * to the listener only once that commit is durable, so no event reveals
 * state that is not yet durable.  The events announced are kept for
 * reuse. */
#include "store/embedded/announce.h"

#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "store/embedded/commit.h"

/* About 1.2 KiB, past what malloc keeps per thread for quick reuse: the
 * ones announced wait on e->spare_events for the next change. */
struct pending_event {
    struct embedded *e;            /* owner */
    struct pending_event *next;    /* in e->spare_events */
    struct tn_event ev;            /* what to announce */
    struct tn_store_result result; /* rc set if the batch fails */
};

#define SPARE_EVENTS 256

/* The strings are NUL-terminated; the bytes after them are not read. */
static void fill(struct tn_event *ev, enum tn_event_type type,
                 const struct tn_lease_entry *l)
{
    ev->type = type;
    ev->session_id[0] = '\0';
    ev->end = TN_GRANT_LIVE;
    memcpy(ev->name, l->name, l->name_len);
    ev->name[l->name_len] = '\0';
    size_t n = 0;
    if (l->owner_id != NULL) {
        n = strlen(l->owner_id);
        if (n > TN_OWNER_MAX_BYTES)
            n = TN_OWNER_MAX_BYTES;
        memcpy(ev->owner_id, l->owner_id, n);
    }
    ev->owner_id[n] = '\0';
    ev->token = l->token;
    ev->floor = l->token;
}

static void publish(void *arg)
{
    struct pending_event *pe = arg;
    struct embedded *e = pe->e;
    if (pe->result.rc == TN_OK && e->on_event != NULL)
        e->on_event(e->event_ctx, &pe->ev);
    if (e->n_spare_events >= SPARE_EVENTS) {
        tn_free(pe);
        return;
    }
    pe->next = e->spare_events;
    e->spare_events = pe;
    e->n_spare_events++;
}

void tn_embedded_free_events(struct embedded *e)
{
    while (e->spare_events != NULL) {
        struct pending_event *pe = e->spare_events;
        e->spare_events = pe->next;
        tn_free(pe);
    }
    e->n_spare_events = 0;
}

/* A pending event to fill, or NULL (no listener, or out of memory:
 * events carry no safety, dropping one is allowed). */
static struct pending_event *event_new(struct embedded *e)
{
    if (e->on_event == NULL)
        return NULL;
    struct pending_event *pe = e->spare_events;
    if (pe != NULL) {
        e->spare_events = pe->next;
        e->n_spare_events--;
        memset(&pe->result, 0, sizeof(pe->result));
    } else if ((pe = tn_calloc(1, sizeof(*pe))) == NULL) {
        return NULL;
    }
    pe->e = e;
    return pe;
}

void tn_embedded_emit(struct embedded *e, enum tn_event_type type,
                      const struct tn_lease_entry *l)
{
    struct pending_event *pe = event_new(e);
    if (pe == NULL)
        return;
    fill(&pe->ev, type, l);
    tn_commit_add_waiter(e->commit, publish, pe, &pe->result);
}

enum tn_grant_end tn_embedded_grant_end(enum tn_session_end how)
{
    return how == TN_SESSION_RELEASED  ? TN_GRANT_RELEASED
           : how == TN_SESSION_REVOKED ? TN_GRANT_REVOKED
                                       : TN_GRANT_EXPIRED;
}

void tn_embedded_emit_session(struct embedded *e, enum tn_event_type type,
                              const struct tn_session *s)
{
    struct pending_event *pe = event_new(e);
    if (pe == NULL)
        return;
    struct tn_event *ev = &pe->ev;
    ev->type = type;
    ev->name[0] = '\0';
    size_t n = strnlen(s->owner_id, TN_OWNER_MAX_BYTES);
    memcpy(ev->owner_id, s->owner_id, n);
    ev->owner_id[n] = '\0';
    ev->token = ev->floor = 0;
    memcpy(ev->session_id, s->id, TN_SESSION_ID_LEN + 1);
    ev->end = s->end != TN_SESSION_LIVE ? tn_embedded_grant_end(s->end)
                                        : TN_GRANT_LIVE;
    tn_commit_add_waiter(e->commit, publish, pe, &pe->result);
}
