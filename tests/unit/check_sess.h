/* SPDX-License-Identifier: MIT */
/* Test helpers for the checker's session operations
 * (docs/safety/sessions.md), on top of check_hist.h: times in milliseconds. */
#ifndef TN_TEST_CHECK_SESS_H
#define TN_TEST_CHECK_SESS_H

#include "check_hist.h"

/* A session operation's invoke: op is "session_open" (id may be NULL: the
 * server names it), "session_renew" or "session_end"; ttl_ms may be NONE. */
static inline void sinv(struct hb *b, long long t_ms, const char *proc,
                        const char *op, const char *id, long long ttl_ms)
{
    hb_add(b, "{\"t\":%lld,\"proc\":\"%s\",\"op\":\"%s\",\"phase\":\"invoke\"",
           t_ms * MS, proc, op);
    if (id != NULL)
        hb_add(b, ",\"session\":\"%s\"", id);
    if (ttl_ms != NONE)
        hb_add(b, ",\"ttl_ms\":%lld", ttl_ms);
    hb_add(b, "}\n");
}

/* A completion with an optional session id and error code. */
static inline void sdone(struct hb *b, long long t_ms, const char *proc,
                         const char *op, const char *phase, const char *id,
                         const char *error)
{
    hb_add(b, "{\"t\":%lld,\"proc\":\"%s\",\"op\":\"%s\",\"phase\":\"%s\"",
           t_ms * MS, proc, op, phase);
    if (id != NULL)
        hb_add(b, ",\"session\":\"%s\"", id);
    if (error != NULL)
        hb_add(b, ",\"error\":\"%s\"", error);
    hb_add(b, "}\n");
}

/* An ok session_open: invoke at i_ms, ok at c_ms naming id. */
static inline void sopen(struct hb *b, long long i_ms, long long c_ms,
                         const char *proc, const char *id, long long ttl_ms)
{
    sinv(b, i_ms, proc, "session_open", NULL, ttl_ms);
    sdone(b, c_ms, proc, "session_open", "ok", id, NULL);
}

/* A session renew or end, invoke and completion (error may be NULL). */
static inline void sop(struct hb *b, long long i_ms, long long c_ms,
                       const char *proc, const char *op, const char *id,
                       long long ttl_ms, const char *phase, const char *error)
{
    sinv(b, i_ms, proc, op, id, ttl_ms);
    sdone(b, c_ms, proc, op, phase, NULL, error);
}

/* An acquire of name under session id (a claim): invoke at i_ms, then at
 * c_ms ok with token, or fail/info (token NONE) with error. */
static inline void sacq(struct hb *b, long long i_ms, long long c_ms,
                        const char *proc, const char *name, const char *id,
                        const char *phase, long long token, const char *error)
{
    hb_add(b,
           "{\"t\":%lld,\"proc\":\"%s\",\"op\":\"acquire\",\"phase\":"
           "\"invoke\",\"name\":\"%s\",\"session\":\"%s\"}\n",
           i_ms * MS, proc, name, id);
    hb_add(b, "{\"t\":%lld,\"proc\":\"%s\",\"op\":\"acquire\",\"phase\":\"%s\"",
           c_ms * MS, proc, phase);
    if (token != NONE)
        hb_add(b, ",\"token\":%lld", token);
    if (error != NULL)
        hb_add(b, ",\"error\":\"%s\"", error);
    hb_add(b, "}\n");
}

/* A check of (name, token): ok with current, or phase with error. */
static inline void chk(struct hb *b, long long i_ms, long long c_ms,
                       const char *proc, const char *name, long long token,
                       bool current)
{
    inv(b, i_ms, proc, "check", name, token, NONE);
    hb_add(b,
           "{\"t\":%lld,\"proc\":\"%s\",\"op\":\"check\",\"phase\":\"ok\","
           "\"current\":%s}\n",
           c_ms * MS, proc, current ? "true" : "false");
}

#endif
