/* SPDX-License-Identifier: MIT */
/* The payloads the LISTEN connection hears (src/store/pg/events.c): one
 * line per event, as the statements write them to their outbox
 * (src/store/pg/sql.h), parsed into struct tn_event and delivered in order
 * to on_event; a release, expiry or revocation also wakes the name's
 * waiters, and every token heard raises the floor (src/store/pg/floor.c).
 * Loop thread only. */
#include "store/pg/events_payload.h"

#include <stdlib.h>
#include <string.h>

#include "store/pg/floor.h"
#include "store/pg/wait.h"

static bool type_of(char c, enum tn_event_type *out)
{
    switch (c) {
    case 'a':
        *out = TN_EVENT_ACQUIRED;
        return true;
    case 'r':
        *out = TN_EVENT_RELEASED;
        return true;
    case 'e':
        *out = TN_EVENT_EXPIRED;
        return true;
    case 'v':
        *out = TN_EVENT_REVOKED;
        return true;
    default:
        return false;
    }
}

/* A decimal number followed by one space; advances *s.  False if not. */
static bool number(const char **s, const char *end, uint64_t *out)
{
    char *stop = NULL;
    if (*s >= end || **s < '0' || **s > '9')
        return false;
    unsigned long long v = strtoull(*s, &stop, 10);
    if (stop >= end || *stop != ' ')
        return false;
    *out = (uint64_t)v;
    *s = stop + 1;
    return true;
}

/* The rest of a line, "<owner bytes> <owner_id><tail>": owner_id into
 * ev, tail (at most tail_max bytes, at least one) into tail_out. */
static bool owner_and(const char *s, const char *end, struct tn_event *ev,
                      char *tail_out, size_t tail_max)
{
    uint64_t owner_len = 0;
    if (!number(&s, end, &owner_len))
        return false;
    size_t left = (size_t)(end - s);
    if (owner_len > TN_OWNER_MAX_BYTES || owner_len >= left ||
        left - owner_len > tail_max)
        return false;
    memcpy(ev->owner_id, s, (size_t)owner_len);
    memcpy(tail_out, s + owner_len, left - (size_t)owner_len);
    return true;
}

/* A session's line (src/store/pg/sql.h): "o <owner bytes> <owner_id><id>"
 * or "x <e|r|v> <owner bytes> <owner_id><id>"; s is past "o " or "x ". */
static bool parse_session(char t, const char *s, const char *end,
                          struct tn_event *ev)
{
    ev->type = t == 'o' ? TN_EVENT_SESSION_OPENED : TN_EVENT_SESSION_ENDED;
    if (t == 'x') {
        if (end - s < 2 || s[1] != ' ')
            return false;
        switch (s[0]) {
        case 'e':
            ev->end = TN_GRANT_EXPIRED;
            break;
        case 'r':
            ev->end = TN_GRANT_RELEASED;
            break;
        case 'v':
            ev->end = TN_GRANT_REVOKED;
            break;
        default:
            return false;
        }
        s += 2;
    }
    return owner_and(s, end, ev, ev->session_id, TN_SESSION_ID_HEX);
}

/* One line "<t> <token> <floor> <owner bytes> <owner_id><name>", or a
 * session's. */
static bool parse_line(const char *s, const char *end, struct tn_event *ev)
{
    memset(ev, 0, sizeof(*ev));
    if (end - s < 2 || s[1] != ' ')
        return false;
    if (s[0] == 'o' || s[0] == 'x')
        return parse_session(s[0], s + 2, end, ev);
    if (!type_of(s[0], &ev->type))
        return false;
    s += 2;
    if (!number(&s, end, &ev->token) || !number(&s, end, &ev->floor))
        return false;
    return owner_and(s, end, ev, ev->name, TN_NAME_MAX_BYTES);
}

void tn_pg_events_deliver(struct tn_pg *p, const char *payload)
{
    const char *s = payload;
    while (*s != '\0') {
        const char *nl = strchr(s, '\n');
        const char *end = nl != NULL ? nl : s + strlen(s);
        struct tn_event ev;
        if (parse_line(s, end, &ev)) {
            p->n_events++;
            /* Another instance acknowledged it, or soon will: the floor
             * covers what this instance heard too (src/store/pg/floor.c);
             * a failed write is logged there and changes nothing here. */
            (void)tn_pg_floor_cover(&p->floor, ev.token);
            if (p->on_event != NULL)
                p->on_event(p->event_ctx, &ev);
            if (ev.type != TN_EVENT_ACQUIRED && ev.name[0] != '\0')
                tn_pg_wait_wake(p, ev.name);
        }
        s = nl != NULL ? nl + 1 : end;
    }
}
