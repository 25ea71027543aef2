/* SPDX-License-Identifier: MIT */
/* Pieces of SQL text the statements of the PostgreSQL store share (sql.c:
 * leases, sql_session.c: sessions).  Macros only, included by those two
 * files and nothing else.  Each piece that decides (when a lease ends, how
 * a token is drawn) is written once here, so that every statement reading
 * it reads the same rule. */
#ifndef TN_STORE_PG_SQL_TEXT_H
#define TN_STORE_PG_SQL_TEXT_H

#include "store/pg/sql.h"

/* A statement is one string literal, built from these pieces at compile
 * time; some pass the 4095 bytes C99 requires compilers to support (GCC
 * and clang take any length).  One literal keeps each statement readable
 * in one place and costs nothing at run time. */
#pragma GCC diagnostic ignored "-Woverlength-strings"

#define OID_BOOL 16u
#define OID_BYTEA 17u
#define OID_INT8 20u
#define OID_TEXT 25u
#define OID_BOOL_ARRAY 1000u
#define OID_BYTEA_ARRAY 1001u
#define OID_TEXT_ARRAY 1009u
#define OID_INT8_ARRAY 1016u

/* Milliseconds from now to instant t on the database clock, never
 * negative. */
#define EXPIRES_IN_AT(t)                                                       \
    "greatest(0, floor(extract(epoch FROM (" t " - now())) * 1000))::bigint"
#define EXPIRES_IN(row) EXPIRES_IN_AT(row ".expires_at")

/* Milliseconds since t on the database clock, never negative. */
#define MS_SINCE(t)                                                            \
    "greatest(0, floor(extract(epoch FROM (now() - " t ")) * 1000))::bigint"

/* The channel this schema's events go to (see src/store/pg/sql.h). */
#define CHANNEL "'" TN_PG_CHANNEL_PREFIX "' || current_schema()"

/* One event line of a lease (src/store/pg/sql.h); every argument is an SQL
 * expression. */
#define EV_LINE(type, token, floor, owner, name)                               \
    "(" type ") || ' ' || (" token ")::text || ' ' || (" floor ")::text"       \
    " || ' ' || octet_length(" owner ")::text || ' ' || " owner " || " name

/* The event lines of a session (src/store/pg/sql.h): opened, and ended
 * with reason (an SQL expression: 'e', 'r' or 'v'). */
#define EV_OPENED(owner, id)                                                   \
    "'o ' || octet_length(" owner ")::text || ' ' || " owner " || " id
#define EV_ENDED(reason, owner, id)                                            \
    "'x ' || (" reason ") || ' ' || octet_length(" owner                       \
    ")::text || ' ' || " owner " || " id
/* The line type of a lease ended with its session, by the session's
 * end_reason (an SQL expression). */
#define EV_TYPE_OF_END(reason)                                                 \
    "CASE " reason " WHEN 'released' THEN 'r' WHEN 'revoked' THEN 'v'"         \
    " ELSE 'e' END"

/* How every grant draws its token: in the ON CONFLICT DO UPDATE SET list,
 * evaluated only once PostgreSQL holds the conflicting row's lock and the
 * compare-and-set held on its newest version, so a slow acquirer can never
 * install a token below the row's current one (sql_acquire.c; the
 * claim of sql_session.c uses the same). */
#define ACQUIRE_SET_TOKEN " fencing_token = nextval('lease_token_seq'),"

/* When the session whose id is the SQL expression sid ends, or ended: its
 * expires_at (a DELETE sets it to the instant of the end).  While the
 * session runs on the snapshot, or once its end is recorded (ended_at: set
 * by the DELETE, the sweep or the first grant that takes one of its names
 * over, each under the row lock and re-checked on the newest version, so
 * no renew decided before the end can still be in flight then), the
 * snapshot says it.  A session that ran out on the snapshot with its end
 * not recorded may have a renew in flight that decided before the expiry
 * and commits later: then its newest version, read FOR SHARE, which waits
 * for that writer (docs/safety/revealed-end.md, as READ_WAITING in sql.c
 * does for leases).  first is an SQL expression tried before all that (a
 * statement that recorded the end itself knows it: its own change is not
 * visible to its other parts), or NULL.  A missing row (deleted once ended
 * and its leases settled) ended long ago: in 1970, an instant that stays
 * finite in arithmetic ('-infinity' minus now() is an error); missing
 * replaces that where a statement knows better (the claim's, in
 * sql_session.c). */
#define SESSION_END_ELSE(first, sid, missing)                                  \
    "coalesce(" first ", (SELECT s.expires_at FROM tenure_sessions s"          \
    " WHERE s.id = " sid                                                       \
    " AND (s.ended_at IS NOT NULL OR s.expires_at > now())),"                  \
    " (SELECT s.expires_at FROM tenure_sessions s WHERE s.id = " sid           \
    " FOR SHARE), " missing ")"
#define SESSION_END_OR(first, sid)                                             \
    SESSION_END_ELSE(first, sid, "'epoch'::timestamptz")
#define SESSION_END(sid) SESSION_END_OR("NULL", sid)

/* When the lease row a (an alias) ends: its own expires_at, or its
 * session's end while it is held under one (its own expires_at is then
 * 'infinity', so a statement that forgot the session would keep it, never
 * free it early).  A released row keeps the session it had (which may
 * be gone) but ended on its own: its expires_at is the release's
 * instant. */
#define LEASE_END_ELSE(first, a, missing)                                      \
    "(CASE WHEN " a ".session_id IS NULL OR " a ".released THEN " a            \
    ".expires_at ELSE " SESSION_END_ELSE(first, a ".session_id",               \
                                         missing) " END)"
#define LEASE_END_OR(first, a) LEASE_END_ELSE(first, a, "'epoch'::timestamptz")
#define LEASE_END(a) LEASE_END_OR("NULL", a)

/* How the lease row a ended, once it has: with its session ended by a
 * DELETE ('released', or 'revoked' by force: recorded with the session's
 * end, and never changed), else 'expired' (its own expiry or its
 * session's). */
#define LEASE_END_REASON(a)                                                    \
    "(CASE WHEN " a ".session_id IS NOT NULL AND NOT " a ".released THEN"      \
    " coalesce((SELECT s.end_reason FROM tenure_sessions s"                    \
    " WHERE s.id = " a ".session_id), 'expired') ELSE 'expired' END)"
/* Its lock delay in ms: none when it ended with a DELETE of its session,
 * which releases it (docs/SESSIONS.md, invariant 2). */
#define LEASE_DELAY_MS(a)                                                      \
    "(CASE WHEN " LEASE_END_REASON(a) " = 'expired' THEN " a                   \
                                      ".lock_delay_ms ELSE 0 END)"
#define MS(x) "(" x ") * interval '1 millisecond'"

/* The TTL a lease row a shows: its own, or its session's. */
#define LEASE_TTL(a)                                                           \
    "(CASE WHEN " a ".session_id IS NULL THEN " a ".ttl_ms ELSE"               \
    " coalesce((SELECT s.ttl_ms FROM tenure_sessions s"                        \
    " WHERE s.id = " a ".session_id), " a ".ttl_ms) END)"

#endif
