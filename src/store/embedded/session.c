/* SPDX-License-Identifier: MIT */
/* Sessions of the embedded store (docs/SESSIONS.md): open, renew, end,
 * get and list.  A session is one row of the file; opening, renewing and
 * ending it write that row alone, whatever the number of its leases, and
 * answer after its commit.  An answer that reveals a session's end (lost,
 * not found, left out of a list) waits until that end is durable: the
 * end of a session that ran out is recorded first (events.c), like a
 * lease's (docs/safety/revealed-end.md).  Ending a session ends its leases
 * at that instant; events.c settles them a slice per loop turn. */
#include "store/embedded/session.h"

#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "store/embedded/announce.h"
#include "store/embedded/change.h"
#include "store/embedded/commit.h"
#include "store/embedded/events.h"

void tn_embedded_view_session(struct tn_session_view *v,
                              const struct tn_session *s, int64_t now,
                              bool with_secret)
{
    memset(v, 0, sizeof(*v));
    memcpy(v->id, s->id, TN_SESSION_ID_LEN);
    memcpy(v->owner_id, s->owner_id,
           strnlen(s->owner_id, sizeof(v->owner_id) - 1));
    if (with_secret)
        memcpy(v->secret, s->secret, TN_SECRET_BYTES);
    v->ttl_ms = s->ttl_ms;
    /* The expiry is rounded up by a millisecond (session.c): never report
     * more than the TTL, so a holder's count stays on the safe side. */
    int64_t left = tn_session_is_live(s, now) ? s->expires_at_ms - now : 0;
    v->expires_in_ms = left < s->ttl_ms ? left : s->ttl_ms;
    v->n_leases = s->n_leases;
}

/* The change an answer about session s (NULL: gone or never there)
 * reveals: its last one, or the deletion of the last session row. */
static uint64_t session_seq(const struct embedded *e,
                            const struct tn_session *s)
{
    return s != NULL ? s->seq : e->sessions_gone_seq;
}

/* Answer a refusal rc about s once what it reveals is durable. */
static void refuse(struct embedded *e, const struct tn_session *s, int rc,
                   struct tn_store_result *out, tn_store_done_fn done,
                   void *arg)
{
    out->rc = rc;
    if (rc == TN_ELOST)
        out->reason = TN_EMBEDDED_SESSION_LOST;
    tn_embedded_finish(e, session_seq(e, s), out, done, arg);
}

bool tn_embedded_session_refuse(struct embedded *e,
                                const struct tn_session_req *r, int64_t now,
                                struct tn_store_result *out,
                                tn_store_done_fn done, void *arg,
                                struct tn_session **s_out)
{
    struct tn_session *s = tn_session_find(&e->table, r->id);
    tn_embedded_note_session(e, s, now);
    int rc = tn_session_auth(s, r->secret, r->principal, now);
    *s_out = s;
    if (rc == TN_OK)
        return false;
    refuse(e, s, rc, out, done, arg);
    return true;
}

/* --max-sessions: an open that would pass it is refused (answered now;
 * nothing changed).  Sessions that ran out are recorded first, so they
 * do not count. */
static bool refuse_if_full(struct embedded *e, int64_t now,
                           struct tn_store_result *out, tn_store_done_fn done,
                           void *arg)
{
    tn_embedded_expire_sessions(e, now);
    if (e->max_sessions == 0 || e->n_sessions_live < e->max_sessions)
        return false;
    out->rc = TN_ECAPACITY;
    out->capacity = "sessions";
    out->retry_after_ms = RETRY_AFTER_MS;
    done(arg);
    return true;
}

/* Write s's row and answer after its commit. */
static void commit_session(struct embedded *e, struct tn_session *s,
                           struct tn_store_result *out, tn_store_done_fn done,
                           void *arg)
{
    tn_commit_add_session(e->commit, s, false, e->table.last_token);
    tn_commit_add_waiter(e->commit, done, arg, out);
}

void tn_embedded_session_open(struct tn_store *st,
                              const struct tn_session_open_req *r,
                              struct tn_store_result *out,
                              tn_store_done_fn done, void *arg)
{
    int64_t now;
    struct embedded *e = tn_embedded_op_begin(st, out, done, arg, &now);
    if (e == NULL || refuse_if_full(e, now, out, done, arg))
        return;
    struct tn_session_spec spec = {.id = r->id,
                                   .owner_id = r->owner_id,
                                   .principal = r->principal,
                                   .ttl_ms = r->ttl_ms,
                                   .secret = r->secret};
    struct tn_session *s = NULL;
    out->rc = tn_session_open(&e->table, &spec, now, &s);
    if (out->rc < 0) {
        done(arg); /* nothing changed */
        return;
    }
    s->row_id = ++e->table.last_session_row;
    s->counted = true;
    e->n_sessions_live++;
    e->sessions_opened++;
    tn_embedded_view_session(&out->session, s, now, true);
    commit_session(e, s, out, done, arg);
    tn_embedded_emit_session(e, TN_EVENT_SESSION_OPENED, s);
    tn_embedded_track_session(e, s);
}

void tn_embedded_session_renew(struct tn_store *st,
                               const struct tn_session_req *r,
                               struct tn_store_result *out,
                               tn_store_done_fn done, void *arg)
{
    int64_t now;
    struct embedded *e = tn_embedded_op_begin(st, out, done, arg, &now);
    if (e == NULL)
        return;
    struct tn_session *s = tn_session_find(&e->table, r->id);
    tn_embedded_note_session(e, s, now);
    int rc =
        tn_session_renew(&e->table, s, r->secret, r->principal, r->ttl_ms, now);
    if (rc < 0) {
        refuse(e, s, rc, out, done, arg);
        return;
    }
    out->rc = TN_OK;
    tn_embedded_view_session(&out->session, s, now, false);
    commit_session(e, s, out, done, arg); /* one row, whatever its leases */
    tn_embedded_track_session(e, s);
}

void tn_embedded_session_end(struct tn_store *st,
                             const struct tn_session_req *r,
                             struct tn_store_result *out, tn_store_done_fn done,
                             void *arg)
{
    int64_t now;
    struct embedded *e = tn_embedded_op_begin(st, out, done, arg, &now);
    if (e == NULL)
        return;
    struct tn_session *s = tn_session_find(&e->table, r->id);
    tn_embedded_note_session(e, s, now);
    int rc = r->force ? (tn_session_is_live(s, now) ? TN_OK : TN_ELOST)
                      : tn_session_auth(s, r->secret, r->principal, now);
    if (rc < 0) {
        refuse(e, s, rc, out, done, arg);
        return;
    }
    out->rc = TN_OK;
    tn_embedded_view_session(&out->session, s, now, false);
    tn_session_end(&e->table, s,
                   r->force ? TN_SESSION_REVOKED : TN_SESSION_RELEASED, now);
    tn_embedded_session_ended(e, s); /* its row, then its leases settle */
    tn_commit_add_waiter(e->commit, done, arg, out);
}

void tn_embedded_session_get(struct tn_store *st, const char *id,
                             struct tn_store_result *out, tn_store_done_fn done,
                             void *arg)
{
    int64_t now;
    struct embedded *e = tn_embedded_op_begin(st, out, done, arg, &now);
    if (e == NULL)
        return;
    struct tn_session *s = tn_session_find(&e->table, id);
    tn_embedded_note_session(e, s, now);
    out->rc = tn_session_is_live(s, now) ? TN_OK : TN_ENOTFOUND;
    if (out->rc == TN_OK)
        tn_embedded_view_session(&out->session, s, now, false);
    tn_embedded_finish(e, session_seq(e, s), out, done, arg);
}

void tn_embedded_session_list(struct tn_store *st, const struct tn_list_req *r,
                              struct tn_store_result *out,
                              tn_store_done_fn done, void *arg)
{
    int64_t now;
    struct embedded *e = tn_embedded_op_begin(st, out, done, arg, &now);
    if (e == NULL)
        return;
    tn_embedded_expire_sessions(e, now); /* it reveals what it leaves out */
    struct tn_session **found = tn_calloc(r->limit, sizeof(*found));
    struct tn_session_query q = {.prefix = r->prefix,
                                 .prefix_len = r->prefix_len,
                                 .after = r->after,
                                 .after_len = r->after_len};
    size_t n = found == NULL ? 0
                             : tn_session_list(&e->table, &q, now, found,
                                               r->limit, &out->more);
    out->sessions =
        found == NULL ? NULL : tn_calloc(n + 1, sizeof(*out->sessions));
    if (out->sessions == NULL) {
        tn_free(found);
        out->rc = TN_ENOMEM;
        done(arg);
        return;
    }
    out->n_sessions = n;
    for (size_t i = 0; i < n; i++)
        tn_embedded_view_session(&out->sessions[i], found[i], now, false);
    tn_free(found);
    out->rc = TN_OK;
    tn_embedded_finish(e, e->table.seq, out, done, arg);
}
