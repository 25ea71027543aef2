/* SPDX-License-Identifier: MIT */
/* The acquire statement of the PostgreSQL store: one statement on the
 * database clock that grants or says why not.  It draws the token only
 * while it holds the row lock (ACQUIRE_SET_TOKEN, sql_text.h).  A lease may
 * be held under a session (docs/SESSIONS.md): its end is then its
 * session's (LEASE_END), and an acquire may itself ask for a grant under a
 * session, which it checks and counts in the same statement. */
#include "store/pg/sql.h"
#include "store/pg/sql_text.h"

/* The statements are SQL text, laid out one clause a line by hand. */
/* clang-format off */

/* $1 name, $2 owner_id, $3 ttl_ms (0 under a session), $4 lock_delay_ms,
 * $5 request_id or NULL, $6 secret, $7 principal or NULL, $8 limits and
 * flags (ACQUIRE_FITS), $9 session id or NULL, $10 its secret or NULL.
 *
 * me: the requester's session, locked (FOR NO KEY UPDATE: this statement
 * adds to its count), its newest version, live on the clock read once the
 * lock is held (a renew or DELETE in flight is waited for; as LOCKED_AT in
 * sql.c), and whether the secret and principal are its opener's.
 *
 * se: the session the name's lease is held under, when it ran out and its
 * end is not recorded: this statement is the first to reveal that end
 * (it may take the name over), so it records it first, under the row lock
 * (a renew in flight is waited for and re-checked on the newest version),
 * and announces session_ended before the lease's own expired event.  It
 * runs before the grant (g's WHERE reads it), after me: sessions are
 * locked before leases, as every statement does (a DELETE locks its
 * session, then its leases).
 *
 * g: the grant, made only when the CAS on the locked row holds, it fits
 * the limits, and the session (if any) is live and the requester's;
 * answered 'i' when it inserted a new name, else 'g' (a new name inserts;
 * its nextval() is safe because no token of that name exists, and a
 * retirement, which deletes rows, holds a table lock that excludes this
 * statement from before its nextval() to its commit (src/store/pg/
 * retire.c); on conflict that value is simply skipped).  The SET list
 * also keeps the replaced grant (prev_*): when it ran out and nobody
 * announced it yet, this statement ends it in the ledger and announces
 * "expired" before "acquired".  A grant under a session has expires_at
 * 'infinity' and its session's TTL, and adds one to the session's count.
 *
 * cur: when nothing was granted, the row as locked by g (FOR UPDATE reads
 * the newest version), classified as replay (same owner, request_id and
 * principal, still live; or held under the same session by the same
 * owner: the session secret proves the caller), held, or lock delay; its
 * last column is when the name frees up.  A session that is not live
 * answers 'l', a wrong session secret or principal 'f', before all that.
 * No row at all means the row was inserted by a transaction our snapshot
 * cannot see: the caller runs the statement again. */

#define ACQUIRE_ME                                                             \
    " me AS MATERIALIZED (SELECT z.id, z.ttl_ms, z.expires_at,"                \
    " z.ended_at IS NULL AND z.expires_at > clock_timestamp() AS live,"        \
    " z.secret = $10 AND ($7::text IS NULL OR z.principal = $7) AS mine"       \
    " FROM (SELECT s.id, s.ttl_ms, s.expires_at, s.ended_at, s.secret,"        \
    " s.principal FROM tenure_sessions s WHERE s.id = $9"                      \
    " OFFSET 0 FOR NO KEY UPDATE) z),"
/* The requester's session may be granted under (or there is none). */
#define ME_OK                                                                  \
    " ($9::text IS NULL OR coalesce((SELECT m.live AND m.mine FROM me m),"     \
    " false))"

#define ACQUIRE_SE                                                             \
    " se AS (UPDATE tenure_sessions s SET ended_at = s.expires_at,"            \
    " end_reason = 'expired' FROM leases x WHERE x.name = $1"                  \
    " AND s.id = x.session_id AND s.ended_at IS NULL"                          \
    " AND s.expires_at <= now() AND (SELECT count(*) FROM me) >= 0"            \
    " RETURNING s.id, s.owner_id, s.expires_at),"

/* When a lease row a ends, knowing what se recorded. */
#define END_SE(a)                                                              \
    LEASE_END_OR(                                                              \
        "(SELECT se.expires_at FROM se WHERE se.id = " a ".session_id)", a)

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
#define ACQUIRE_REFUSED                                                        \
    " UNION ALL SELECT CASE WHEN ($8 & 4) <> 0 THEN 'q'"                       \
    " WHEN ($8 & 1) = 1 THEN 'c' ELSE 'm' END,"                                \
    " NULL::bigint, NULL::text, NULL::bytea, NULL::bigint, NULL::bigint,"      \
    " NULL::bigint, NULL::text WHERE $8 <> 0 AND NOT EXISTS (SELECT 1 FROM g)" \
    " AND NOT EXISTS (SELECT 1 FROM cur) AND" ME_OK

/* The session answer: not live ('l') or not the requester's ('f'). */
#define ACQUIRE_NO_SESSION                                                     \
    " UNION ALL SELECT CASE WHEN coalesce(m.live, false) THEN 'f' ELSE 'l'"    \
    " END, NULL::bigint, NULL::text, NULL::bytea, NULL::bigint,"               \
    " NULL::bigint, NULL::bigint, NULL::text FROM (SELECT 1) o"                \
    " LEFT JOIN me m ON true WHERE NOT" ME_OK

/* The event lines of a grant: "session_ended" for the session se
 * recorded, the end of the grant it replaced when nobody announced that
 * yet ("expired", or "released"/"revoked" when its session was deleted),
 * then "acquired". */
#define ACQUIRE_EV_ENDED EV_ENDED("'e'", "se.owner_id", "se.id")
#define ACQUIRE_EV_PREV                                                        \
    EV_LINE(EV_TYPE_OF_END("g.prev_end_reason"), "g.prev_token",               \
            "g.prev_token", "g.prev_owner_id", "$1")
#define ACQUIRE_EV_ACQUIRED                                                    \
    EV_LINE("'a'", "g.fencing_token", "g.fencing_token", "g.owner_id", "$1")
#define ACQUIRE_EV                                                             \
    " ev AS (INSERT INTO tn_outbox (line) SELECT q.line FROM"                  \
    " (SELECT 0 AS o, " ACQUIRE_EV_ENDED " AS line FROM se UNION ALL"          \
    " SELECT 1, CASE WHEN g.prev_expired_at IS NULL THEN '' ELSE"              \
    " " ACQUIRE_EV_PREV " || E'\\n' END || " ACQUIRE_EV_ACQUIRED               \
    " FROM g) q ORDER BY q.o),"

/* The TTL and time left of a grant: its own, or its session's. */
#define GRANT_TTL "coalesce((SELECT m.ttl_ms FROM me m), $3)"
#define GRANT_LEFT "coalesce((SELECT " EXPIRES_IN("m") " FROM me m), $3)"

/* The CAS on the newest version of the locked row: released, or ended
 * (its own expiry or its session's) past its lock delay. */
#define L_FREE                                                                 \
    "l.released OR " END_SE("l") " + " MS(LEASE_DELAY_MS("l")) " <= now()"
/* The grant replaced, when it ended and nobody announced it yet: when and
 * how it ended. */
#define L_PREV                                                                 \
    " prev_token = l.fencing_token, prev_owner_id = l.owner_id,"               \
    " prev_expired_at = CASE WHEN l.released OR l.expiry_noted THEN NULL"      \
    " ELSE " END_SE("l") " END, prev_end_reason = " LEASE_END_REASON("l")

#define ACQUIRE_INSERT                                                         \
    " g AS (INSERT INTO leases AS l (name, owner_id, expires_at,"              \
    " fencing_token, secret, ttl_ms, lock_delay_ms, request_id, released,"     \
    " principal, session_id)"                                                  \
    " SELECT $1, $2, CASE WHEN $9::text IS NULL"                               \
    " THEN now() + $3 * interval '1 millisecond' ELSE 'infinity' END,"         \
    " nextval('lease_token_seq'), $6, " GRANT_TTL ", $4, $5, false, $7, $9"    \
    " WHERE " ACQUIRE_FITS " AND" ME_OK " AND (SELECT count(*) FROM se) >= 0"  \
    " ON CONFLICT (name) DO UPDATE SET owner_id = excluded.owner_id,"          \
    " expires_at = excluded.expires_at," ACQUIRE_SET_TOKEN                     \
    " secret = excluded.secret, ttl_ms = excluded.ttl_ms,"                     \
    " lock_delay_ms = excluded.lock_delay_ms,"                                 \
    " request_id = excluded.request_id, released = false,"                     \
    " principal = excluded.principal, session_id = excluded.session_id,"       \
    " expiry_noted = false," L_PREV " WHERE " L_FREE                           \
    " RETURNING l.fencing_token, l.owner_id, l.prev_token, l.prev_owner_id,"   \
    " l.prev_expired_at, l.prev_end_reason),"

/* What else a grant writes: the session's count, the ledger (a new row,
 * and the end of the grant it replaced), the events. */
#define ACQUIRE_WRITES                                                         \
    " n AS (UPDATE tenure_sessions s SET n_leases = s.n_leases + 1"            \
    " FROM g WHERE s.id = $9),"                                                \
    " led AS (INSERT INTO lease_grants (token, name, owner_id, ttl_ms,"        \
    " granted_at) SELECT g.fencing_token, $1, $2, " GRANT_TTL ", now()"        \
    " FROM g),"                                                                \
    " ended AS (UPDATE lease_grants e SET ended_at = g.prev_expired_at,"       \
    " end_reason = g.prev_end_reason FROM g"                                   \
    " WHERE g.prev_expired_at IS NOT NULL AND e.token = g.prev_token"          \
    " AND e.ended_at IS NULL)," ACQUIRE_EV

#define C_ENDS END_SE("c")
#define ACQUIRE_CUR                                                            \
    " cur AS (SELECT c.owner_id, c.fencing_token, c.secret,"                   \
    " " LEASE_TTL("c") " AS ttl_ms, c.request_id, " C_ENDS " AS ends,"         \
    " " LEASE_DELAY_MS("c") " AS delay_ms, c.released, c.principal,"           \
    " c.session_id FROM leases c WHERE c.name = $1"                            \
    " AND NOT EXISTS (SELECT 1 FROM g) FOR UPDATE)"

#define C_FREES "c.ends + " MS("c.delay_ms")
#define CUR_FREE "(c.released OR " C_FREES " <= now())"
#define CUR_REPLAY                                                             \
    "($5::text IS NOT NULL AND c.request_id = $5 AND c.owner_id = $2"          \
    " AND c.principal IS NOT DISTINCT FROM $7) OR ($9::text IS NOT NULL"       \
    " AND c.session_id = $9 AND c.owner_id = $2)"
#define CUR_KIND                                                               \
    "CASE WHEN NOT c.released AND c.ends > now() THEN CASE WHEN " CUR_REPLAY   \
    " THEN 'r' ELSE 'h' END WHEN ($8 & 4) <> 0 AND " CUR_FREE " THEN 'q'"      \
    " WHEN ($8 & 1) = 1 AND " CUR_FREE " THEN 'c' ELSE 'd' END"
#define CUR_LEFT EXPIRES_IN_AT("c.ends")
#define CUR_RETRY                                                              \
    "greatest(1, ceil(extract(epoch FROM (" C_FREES " - now())) * 1000))"      \
    "::bigint"

/* Columns: kind, token, owner_id, secret (replay), ttl_ms, expires_in_ms,
 * when the name frees up (ms), session id. */
#define ACQUIRE_ANSWER                                                         \
    " SELECT CASE WHEN g.prev_token IS NULL THEN 'i' ELSE 'g' END,"            \
    " g.fencing_token, g.owner_id, NULL::bytea, " GRANT_TTL ","                \
    " " GRANT_LEFT ", 0::bigint, $9 FROM g"                                    \
    " UNION ALL SELECT " CUR_KIND ", c.fencing_token, c.owner_id, c.secret,"   \
    " c.ttl_ms, " CUR_LEFT ", " CUR_RETRY ", c.session_id FROM cur c"          \
    " WHERE" ME_OK ACQUIRE_NO_SESSION ACQUIRE_REFUSED

const char tn_pg_sql_acquire[] =
    "WITH" ACQUIRE_ME ACQUIRE_SE ACQUIRE_INSERT ACQUIRE_WRITES ACQUIRE_CUR
    ACQUIRE_ANSWER;

/* clang-format on */
