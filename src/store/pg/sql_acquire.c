/* SPDX-License-Identifier: MIT */
/* The acquire statements of the PostgreSQL store: one statement on the
 * database clock that grants or says why not.  It draws the token only
 * while it holds the row lock (ACQUIRE_SET_TOKEN, sql_text.h).  A lease may
 * be held under a session (docs/SESSIONS.md): its end is then its
 * session's.  Two statements: the acquire of a lease of its own TTL (the
 * hot path: nothing more than it needs), and the acquire under a session,
 * which also checks and counts that session. */
#include "store/pg/sql.h"
#include "store/pg/sql_text.h"

/* The statements are SQL text, laid out one clause a line by hand. */
/* clang-format off */

/* $1 name, $2 owner_id, $3 ttl_ms, $4 lock_delay_ms, $5 request_id or
 * NULL, $6 secret, $7 principal or NULL, $8 limits and flags
 * (ACQUIRE_FITS); under a session ($3 unused): $9 session id, $10 its
 * secret.
 *
 * hs: the session the name's current lease is held under, read once: its
 * end, reason and TTL.  While it runs on the snapshot, or once its end is
 * recorded, the snapshot says when it ends; when it ran out on the
 * snapshot with its end not recorded, a renew of it may be in flight:
 * then its newest version, read FOR SHARE, which waits for that writer
 * (as LEASE_END in sql_text.h, which reads the session in every
 * expression that needs it: here one read serves all, which keeps this
 * statement's plan small).  It runs before the grant (g's WHERE reads
 * it): sessions are locked before leases, as every statement does (a
 * DELETE locks its session, then its leases).  The end it reads is not
 * recorded here: the sweep announces session_ended, possibly after the
 * expired event this statement writes for the lease it takes over.
 *
 * me (under a session): the requester's session, locked FOR NO KEY
 * UPDATE (this statement adds to its count), its newest version, live on
 * the clock read once the lock is held (a renew or DELETE in flight is
 * waited for; as LOCKED_AT in sql.c), and whether the secret and
 * principal are its opener's.
 *
 * g: the grant, made only when the CAS on the locked row holds, it fits
 * the limits, and the session (if any) is live and the requester's;
 * answered 'i' when it inserted a new name, else 'g' (a new name inserts;
 * its nextval() is safe because no token of that name exists, and a
 * retirement, which deletes rows, holds a table lock that excludes this
 * statement from before its nextval() to its commit (src/store/pg/
 * retire.c); on conflict that value is simply skipped).  The SET list
 * also keeps the replaced grant (prev_*): when it ended and nobody
 * announced it yet, this statement ends it in the ledger and announces
 * it ("expired", or "released"/"revoked" when its session was deleted)
 * before "acquired".  A grant under a session has expires_at 'infinity'
 * and its session's TTL, and adds one to the session's count.
 *
 * cur: when nothing was granted, the row as locked by g (FOR UPDATE reads
 * the newest version), classified as replay (same owner, request_id and
 * principal, still live; or held under the same session by the same
 * owner: the session secret proves the caller), held, or lock delay; its
 * last column is when the name frees up.  A session that is not live
 * answers 'l', a wrong session secret or principal 'f', before all that.
 * No row at all means the row was inserted by a transaction our snapshot
 * cannot see: the caller runs the statement again. */

#define ACQUIRE_HS                                                             \
    " hs AS MATERIALIZED (SELECT s.id, s.ttl_ms, s.end_reason,"                \
    " CASE WHEN s.ended_at IS NOT NULL OR s.expires_at > now()"                \
    " THEN s.expires_at ELSE coalesce((SELECT t.expires_at"                    \
    " FROM tenure_sessions t WHERE t.id = s.id FOR SHARE), 'epoch') END"       \
    " AS ends FROM leases x JOIN tenure_sessions s ON s.id = x.session_id"     \
    " WHERE x.name = $1 AND NOT x.released),"

/* Of the lease row a, as hs says: when it ends, how, its lock delay and
 * TTL.  A row under another session than hs read (granted since the
 * snapshot) runs: 'infinity' (not free; FIN bounds what is shown). */
#define H_OF(a, col)                                                           \
    "(SELECT h." col " FROM hs h WHERE h.id = " a ".session_id)"
#define H_END(a)                                                               \
    "(CASE WHEN " a ".session_id IS NULL OR " a ".released THEN " a            \
    ".expires_at ELSE coalesce(" H_OF(a, "ends") ", 'infinity') END)"
#define H_REASON(a)                                                            \
    "(CASE WHEN " a ".session_id IS NULL OR " a ".released THEN 'expired'"     \
    " ELSE coalesce(" H_OF(a, "end_reason") ", 'expired') END)"
#define H_DELAY_MS(a)                                                          \
    "(CASE WHEN " H_REASON(a) " = 'expired' THEN " a ".lock_delay_ms"          \
    " ELSE 0 END)"
#define H_TTL(a)                                                               \
    "(CASE WHEN " a ".session_id IS NULL THEN " a ".ttl_ms"                    \
    " ELSE coalesce(" H_OF(a, "ttl_ms") ", " a ".ttl_ms) END)"
#define FIN(t) "least(" t ", now() + interval '1 day')"

#define ACQUIRE_ME                                                             \
    " me AS MATERIALIZED (SELECT z.id, z.ttl_ms, z.expires_at,"                \
    " z.ended_at IS NULL AND z.expires_at > clock_timestamp() AS live,"        \
    " z.secret = $10 AND ($7::text IS NULL OR z.principal = $7) AS mine"       \
    " FROM (SELECT s.id, s.ttl_ms, s.expires_at, s.ended_at, s.secret,"        \
    " s.principal FROM tenure_sessions s WHERE s.id = $9"                      \
    " OFFSET 0 FOR NO KEY UPDATE) z),"
/* The requester's session is live and its own. */
#define ME_OK " coalesce((SELECT m.live AND m.mine FROM me m), false)"

/* $8: the capacity limits this instance counts as reached (src/store/pg/
 * limits.c), bit 1 --max-leases (no grant at all), bit 2 --max-names (no
 * grant of a name without a row); bit 4: grant nothing, the name is
 * promised to a waiter of this instance (src/store/pg/wait.c): only a
 * replay is answered as such, else held ('h') or promised ('q').  A
 * refused grant changes nothing and draws no token (the SELECT's WHERE
 * runs before its nextval()).  It is answered 'c' (leases) when the
 * locked row was free to take, or by ACQUIRE_REFUSED, 'q', 'c' or 'm'
 * (names), when there is no row to read. */
#define ACQUIRE_FITS                                                           \
    "($8 & 5) = 0 AND (($8 & 2) = 0"                                           \
    " OR EXISTS (SELECT 1 FROM leases x WHERE x.name = $1))"
#define ACQUIRE_REFUSED(cond)                                                  \
    " UNION ALL SELECT CASE WHEN ($8 & 4) <> 0 THEN 'q'"                       \
    " WHEN ($8 & 1) = 1 THEN 'c' ELSE 'm' END,"                                \
    " NULL::bigint, NULL::text, NULL::bytea, NULL::bigint, NULL::bigint,"      \
    " NULL::bigint, NULL::text WHERE $8 <> 0 AND NOT EXISTS (SELECT 1 FROM g)" \
    " AND NOT EXISTS (SELECT 1 FROM cur) AND" cond

/* The session answer: not live ('l') or not the requester's ('f'). */
#define ACQUIRE_NO_SESSION                                                     \
    " UNION ALL SELECT CASE WHEN coalesce(m.live, false) THEN 'f' ELSE 'l'"    \
    " END, NULL::bigint, NULL::text, NULL::bytea, NULL::bigint,"               \
    " NULL::bigint, NULL::bigint, NULL::text FROM (SELECT 1) o"                \
    " LEFT JOIN me m ON true WHERE NOT" ME_OK

/* The event lines of a grant: the end of the grant it replaced when
 * nobody announced that yet ("expired", or "released"/"revoked" when its
 * session was deleted), then "acquired". */
#define ACQUIRE_EV_PREV                                                        \
    EV_LINE(EV_TYPE_OF_END("g.prev_end_reason"), "g.prev_token",               \
            "g.prev_token", "g.prev_owner_id", "$1")
#define ACQUIRE_EV_ACQUIRED                                                    \
    EV_LINE("'a'", "g.fencing_token", "g.fencing_token", "g.owner_id", "$1")
#define ACQUIRE_EV                                                             \
    " ev AS (INSERT INTO tn_outbox (line) SELECT"                              \
    " CASE WHEN g.prev_expired_at IS NULL THEN '' ELSE"                        \
    " " ACQUIRE_EV_PREV " || E'\\n' END || " ACQUIRE_EV_ACQUIRED " FROM g),"

/* The CAS on the newest version of the locked row: released, or ended
 * (its own expiry or its session's) past its lock delay. */
#define L_FREE                                                                 \
    "l.released OR " H_END("l") " + " MS(H_DELAY_MS("l")) " <= now()"
/* The grant replaced, when it ended and nobody announced it yet: when and
 * how it ended. */
#define L_PREV                                                                 \
    " prev_token = l.fencing_token, prev_owner_id = l.owner_id,"               \
    " prev_expired_at = CASE WHEN l.released OR l.expiry_noted THEN NULL"      \
    " ELSE " H_END("l") " END, prev_end_reason = " H_REASON("l")

/* The grant: what it inserts (expires_at, ttl_ms, session_id), and when. */
#define ACQUIRE_INSERT(expires, ttl, session, cond)                            \
    " g AS (INSERT INTO leases AS l (name, owner_id, expires_at,"              \
    " fencing_token, secret, ttl_ms, lock_delay_ms, request_id, released,"     \
    " principal, session_id)"                                                  \
    " SELECT $1, $2, " expires ", nextval('lease_token_seq'), $6, " ttl ","    \
    " $4, $5, false, $7, " session                                             \
    " WHERE " ACQUIRE_FITS " AND" cond " AND (SELECT count(*) FROM hs) >= 0"   \
    " ON CONFLICT (name) DO UPDATE SET owner_id = excluded.owner_id,"          \
    " expires_at = excluded.expires_at," ACQUIRE_SET_TOKEN                     \
    " secret = excluded.secret, ttl_ms = excluded.ttl_ms,"                     \
    " lock_delay_ms = excluded.lock_delay_ms,"                                 \
    " request_id = excluded.request_id, released = false,"                     \
    " principal = excluded.principal, session_id = excluded.session_id,"       \
    " expiry_noted = false," L_PREV " WHERE " L_FREE                           \
    " RETURNING l.fencing_token, l.owner_id, l.prev_token, l.prev_owner_id,"   \
    " l.prev_expired_at, l.prev_end_reason),"

/* What else a grant writes: the ledger (a new row, and the end of the
 * grant it replaced), the events. */
#define ACQUIRE_WRITES(ttl)                                                    \
    " led AS (INSERT INTO lease_grants (token, name, owner_id, ttl_ms,"        \
    " granted_at) SELECT g.fencing_token, $1, $2, " ttl ", now() FROM g),"     \
    " ended AS (UPDATE lease_grants e SET ended_at = g.prev_expired_at,"       \
    " end_reason = g.prev_end_reason FROM g"                                   \
    " WHERE g.prev_expired_at IS NOT NULL AND e.token = g.prev_token"          \
    " AND e.ended_at IS NULL)," ACQUIRE_EV

#define ACQUIRE_CUR                                                            \
    " cur AS (SELECT c.owner_id, c.fencing_token, c.secret,"                   \
    " " H_TTL("c") " AS ttl_ms, c.request_id, " H_END("c") " AS ends,"         \
    " " H_DELAY_MS("c") " AS delay_ms, c.released, c.principal,"               \
    " c.session_id FROM leases c WHERE c.name = $1"                            \
    " AND NOT EXISTS (SELECT 1 FROM g) FOR UPDATE)"

#define C_FREES "c.ends + " MS("c.delay_ms")
#define CUR_FREE "(c.released OR " C_FREES " <= now())"
#define CUR_REPLAY(session)                                                    \
    "($5::text IS NOT NULL AND c.request_id = $5 AND c.owner_id = $2"          \
    " AND c.principal IS NOT DISTINCT FROM $7)" session
#define CUR_KIND(session)                                                      \
    "CASE WHEN NOT c.released AND c.ends > now() THEN CASE WHEN "              \
    CUR_REPLAY(session) " THEN 'r' ELSE 'h' END"                               \
    " WHEN ($8 & 4) <> 0 AND " CUR_FREE " THEN 'q'"                            \
    " WHEN ($8 & 1) = 1 AND " CUR_FREE " THEN 'c' ELSE 'd' END"
#define CUR_LEFT EXPIRES_IN_AT(FIN("c.ends"))
#define CUR_RETRY                                                              \
    "greatest(1, ceil(extract(epoch FROM (" FIN(C_FREES) " - now()))"          \
    " * 1000))::bigint"

/* Columns: kind, token, owner_id, secret (replay), ttl_ms, expires_in_ms,
 * when the name frees up (ms), session id. */
#define ACQUIRE_ANSWER(ttl, left, session, replay, cond)                       \
    " SELECT CASE WHEN g.prev_token IS NULL THEN 'i' ELSE 'g' END,"            \
    " g.fencing_token, g.owner_id, NULL::bytea, " ttl ", " left ","            \
    " 0::bigint, " session " FROM g"                                           \
    " UNION ALL SELECT " CUR_KIND(replay) ", c.fencing_token, c.owner_id,"     \
    " c.secret, c.ttl_ms, " CUR_LEFT ", " CUR_RETRY ", c.session_id"           \
    " FROM cur c WHERE" cond

const char tn_pg_sql_acquire[] =
    "WITH" ACQUIRE_HS
    ACQUIRE_INSERT("now() + $3 * interval '1 millisecond'", "$3",
                   "NULL::text", " true")
    ACQUIRE_WRITES("$3") ACQUIRE_CUR
    ACQUIRE_ANSWER("$3", "$3", "NULL::text", "", " true")
    ACQUIRE_REFUSED(" true");

/* Under a session: its TTL and time left, its count. */
#define ME_TTL "(SELECT m.ttl_ms FROM me m)"
#define ME_LEFT "(SELECT " EXPIRES_IN("m") " FROM me m)"
#define ME_COUNT                                                               \
    " n AS (UPDATE tenure_sessions s SET n_leases = s.n_leases + 1"            \
    " FROM g WHERE s.id = $9),"
#define ME_REPLAY " OR (c.session_id = $9 AND c.owner_id = $2)"

const char tn_pg_sql_acquire_session[] =
    "WITH" ACQUIRE_ME ACQUIRE_HS
    ACQUIRE_INSERT("'infinity'::timestamptz", ME_TTL, "$9", ME_OK)
    ME_COUNT ACQUIRE_WRITES(ME_TTL) ACQUIRE_CUR
    ACQUIRE_ANSWER(ME_TTL, ME_LEFT, "$9", ME_REPLAY, ME_OK)
    ACQUIRE_NO_SESSION ACQUIRE_REFUSED(ME_OK);

/* clang-format on */
