/* SPDX-License-Identifier: MIT */
/* The session statements of the PostgreSQL store (docs/SESSIONS.md): each
 * decision is one statement on the database clock, as for leases.  A
 * session is a row of tenure_sessions; a lease held under it names it in
 * leases.session_id and lives exactly as long as that row says
 * (LEASE_END, sql_text.h).  So a renew is one UPDATE of the session row,
 * whatever the number of its leases; an expiry writes nothing for safety
 * (the sweep announces it and settles the leases later, in chunks); a
 * DELETE ends the row and, up to TN_PG_END_INLINE leases, releases them
 * in the same transaction.  Every statement locks the session row before
 * any lease row. */
#include "store/pg/sql.h"
#include "store/pg/sql_text.h"

/* The statements are SQL text, laid out one clause a line by hand. */
/* clang-format off */

/* The session $1, locked FOR UPDATE, its newest version, with the clock
 * read once the lock is held (not now(), the start of the transaction: a
 * change that waited for the lock past the expiry must not revive it,
 * docs/safety/revealed-end.md), whether it is live then and whether the
 * request is its opener's (secret, principal; or force). */
#define S_LOCKED(force)                                                        \
    " k AS MATERIALIZED (SELECT z.*, clock_timestamp() AS at FROM (SELECT"     \
    " s.ended_at, s.expires_at, s.secret, s.principal, s.n_leases"             \
    " FROM tenure_sessions s WHERE s.id = $1 OFFSET 0 FOR UPDATE) z),"         \
    " d AS MATERIALIZED (SELECT k.ended_at IS NULL AND k.expires_at > k.at"    \
    " AS live, " force " OR (k.secret = $2 AND ($4::text IS NULL"              \
    " OR k.principal = $4)) AS mine, k.n_leases FROM k),"
#define S_REFUSED                                                              \
    " SELECT CASE WHEN d.live THEN 'forbidden' ELSE 'lost' END, NULL::text,"   \
    " NULL::bigint, NULL::bigint, NULL::bigint FROM d"                         \
    " WHERE NOT (d.live AND d.mine)"

/* $1 id, $2 owner_id, $3 principal or NULL, $4 secret, $5 ttl_ms, $6 1
 * when --max-sessions is reached as this instance counts (src/store/pg/
 * limits.c): nothing is opened.  An id already taken (128 random bits:
 * never) opens nothing either. */
const char tn_pg_sql_session_open[] =
    "WITH i AS (INSERT INTO tenure_sessions (id, owner_id, principal, secret,"
    " ttl_ms, expires_at) SELECT $1, $2, $3, $4, $5,"
    " now() + $5 * interval '1 millisecond' WHERE $6 = 0"
    " ON CONFLICT (id) DO NOTHING RETURNING id, owner_id),"
    " ev AS (INSERT INTO tn_outbox (line)"
    " SELECT " EV_OPENED("i.owner_id", "i.id") " FROM i)"
    " SELECT CASE WHEN EXISTS (SELECT 1 FROM i) THEN 'ok'"
    " WHEN $6 <> 0 THEN 'capacity' ELSE 'taken' END";

/* $1 id, $2 secret, $3 ttl_ms (0 keeps it), $4 principal or NULL.  One
 * UPDATE of the session row, whatever the number of its leases.  Columns:
 * outcome, owner_id, ttl_ms, expires_in_ms, leases. */
#define S_TTL "CASE WHEN $3 > 0 THEN $3 ELSE s.ttl_ms END"
const char tn_pg_sql_session_renew[] =
    "WITH" S_LOCKED("false")
    " u AS (UPDATE tenure_sessions s SET ttl_ms = " S_TTL ","
    " expires_at = now() + " S_TTL " * interval '1 millisecond'"
    " WHERE s.id = $1 AND (SELECT live AND mine FROM d)"
    " RETURNING s.owner_id, s.ttl_ms, s.expires_at, s.n_leases)"
    " SELECT 'ok', u.owner_id, u.ttl_ms, " EXPIRES_IN("u") ", u.n_leases"
    " FROM u UNION ALL" S_REFUSED;

/* $1 id, $2 secret, $3 force, $4 principal or NULL.  Ends the session row
 * (ended_at and expires_at now): from that commit no lease of it is live
 * (LEASE_END), and none has lock delay (LEASE_DELAY_MS).  A session of at
 * most TN_PG_END_INLINE leases also has every lease released in the same
 * transaction, ledger and events included; a larger one leaves that to
 * the sweep, in bounded steps (one statement over 100,000 leases held its
 * connection past the batch watchdog on a loaded machine).  A lease
 * granted under it by a transaction that committed while this one waited
 * for the session's lock is not in this statement's snapshot: it is over
 * all the same and the sweep settles it.  Events: session_ended, then
 * each lease's released (revoked when forced).  Columns: outcome, ...,
 * leases released here. */
#define END_REASON "CASE WHEN $3 THEN 'revoked' ELSE 'released' END"
#define END_TYPE "CASE WHEN $3 THEN 'v' ELSE 'r' END"
#define STR_(x) #x
#define STR(x) STR_(x)
#define END_RELEASE                                                            \
    " r AS (UPDATE leases l SET released = true, expires_at = now(),"          \
    " request_id = NULL FROM u WHERE l.session_id = u.id AND NOT l.released"   \
    " AND (SELECT d.n_leases FROM d) <= " STR(TN_PG_END_INLINE)                \
    " RETURNING l.name, l.owner_id, l.fencing_token),"                         \
    " led AS (UPDATE lease_grants e SET ended_at = now(),"                     \
    " end_reason = " END_REASON " FROM r WHERE e.token = r.fencing_token),"
#define END_EV                                                                 \
    " ev AS (INSERT INTO tn_outbox (line) SELECT q.line FROM (SELECT 0 AS o,"  \
    " 0::bigint AS t, " EV_ENDED(END_TYPE, "u.owner_id", "u.id") " AS line"    \
    " FROM u UNION ALL SELECT 1, r.fencing_token, "                            \
    EV_LINE(END_TYPE, "r.fencing_token", "r.fencing_token", "r.owner_id",      \
            "r.name")                                                          \
    " FROM r) q ORDER BY q.o, q.t)"
const char tn_pg_sql_session_end[] =
    "WITH" S_LOCKED("$3")
    " u AS (UPDATE tenure_sessions s SET ended_at = now(),"
    " end_reason = " END_REASON ", expires_at = least(s.expires_at, now()),"
    " n_leases = 0 WHERE s.id = $1 AND (SELECT live AND mine FROM d)"
    " RETURNING s.id, s.owner_id)," END_RELEASE END_EV
    " SELECT 'ok', NULL::text, NULL::bigint, NULL::bigint,"
    " (SELECT count(*) FROM r) FROM u UNION ALL" S_REFUSED;

/* $1 id.  A session that ran out on the snapshot with its end not
 * recorded is read FOR SHARE (its newest version, after any renew in
 * flight), as READ_WAITING in sql.c reads a lease: a 404 reveals the end.
 * The condition is an uncorrelated sub-select, evaluated once on the
 * snapshot.  Columns: owner_id, ttl_ms, expires_in_ms, leases. */
#define S_RUN_OUT                                                              \
    " coalesce((SELECT y.ended_at IS NULL AND y.expires_at <= now()"           \
    " FROM tenure_sessions y WHERE y.id = $1), false)"
#define S_COLS "s.owner_id, s.ttl_ms, s.expires_at, s.ended_at, s.n_leases"
const char tn_pg_sql_session_get[] =
    "WITH w AS (SELECT " S_COLS " FROM tenure_sessions s WHERE s.id = $1"
    " AND" S_RUN_OUT " FOR SHARE OF s)"
    " SELECT r.owner_id, r.ttl_ms, " EXPIRES_IN("r") ", r.n_leases"
    " FROM (SELECT * FROM w UNION ALL SELECT " S_COLS
    " FROM tenure_sessions s WHERE s.id = $1 AND NOT" S_RUN_OUT ") r"
    " WHERE r.ended_at IS NULL AND r.expires_at > now()";

/* $1 owner_id prefix, $2 after (an id) or NULL, $3 limit.  Live sessions
 * in id order (COLLATE "C": byte order).  Columns: id, owner_id, ttl_ms,
 * expires_in_ms, leases. */
const char tn_pg_sql_session_list[] =
    "SELECT s.id, s.owner_id, s.ttl_ms, " EXPIRES_IN("s") ", s.n_leases"
    " FROM tenure_sessions s WHERE s.ended_at IS NULL"
    " AND s.expires_at > now() AND starts_with(s.owner_id, $1)"
    " AND ($2::text IS NULL OR s.id > $2) ORDER BY s.id LIMIT $3";

/* The requester's session of a claim or batch release: $1 id, $2 secret,
 * $3 principal.  Locked FOR NO KEY UPDATE (the statement changes its
 * count), newest version, live on the clock read after the lock. */
#define ME                                                                     \
    " me AS MATERIALIZED (SELECT z.id, z.owner_id, z.ttl_ms, z.expires_at,"    \
    " z.ended_at IS NULL AND z.expires_at > clock_timestamp() AS live,"        \
    " z.secret = $2 AND ($3::text IS NULL OR z.principal = $3) AS mine"        \
    " FROM (SELECT s.id, s.owner_id, s.ttl_ms, s.expires_at, s.ended_at,"      \
    " s.secret, s.principal FROM tenure_sessions s WHERE s.id = $1"            \
    " OFFSET 0 FOR NO KEY UPDATE) z),"
#define ME_REFUSED(nulls)                                                      \
    " SELECT CASE WHEN coalesce(m.live, false) THEN 'F' ELSE 'L' END," nulls   \
    " FROM (SELECT 1) o LEFT JOIN me m ON true"                                \
    " WHERE NOT coalesce(m.live AND m.mine, false)"
#define CLAIM_NULLS                                                            \
    " NULL::bigint, NULL::bigint, NULL::bytea, NULL::text, NULL::bigint,"      \
    " NULL::bigint, NULL::bigint"

/* The claim: $1-$3 the session (ME), $4 owner_id or NULL (the session's),
 * $5 lock_delay_ms, $6 names, $7 their fresh secrets, $8 whether each has
 * waiters on this instance (then it is held: a claim never jumps a queue),
 * $9 grants that fit --max-leases, $10 new names that fit --max-names (-1:
 * no limit; src/store/pg/limits.c).  Every name is decided as a
 * non-waiting acquire would be (ACQUIRE_SQL in sql_acquire.c): se records
 * the ends of the holders' sessions that ran out first, cur locks the
 * existing rows in name order (two claims of overlapping names lock in the
 * same order), d decides each name on the newest versions (a free name
 * with waiters here is held, one in lock delay is that), g grants the
 * free ones in one INSERT ... ON CONFLICT whose CAS re-checks each row and
 * draws each token under its row lock.  A name held under this session by
 * the same owner is answered as granted again, with its token and secret.
 * When the free names would pass a limit, nothing is granted ('C', 'M').
 * A free name that g did not grant was inserted by a transaction this
 * statement's snapshot cannot see, and a row under a session it cannot
 * see (END_SE) is that session's: 'A', and the caller runs the claim
 * again (what it granted is then this session's and answered so). */
#define CLAIM_SE                                                               \
    " se AS (UPDATE tenure_sessions s SET ended_at = s.expires_at,"            \
    " end_reason = 'expired' WHERE s.id IN (SELECT x.session_id FROM leases x" \
    " WHERE x.name = ANY ($6::text[]) AND x.session_id IS NOT NULL"            \
    " AND NOT x.released) AND s.ended_at IS NULL AND s.expires_at <= now()"    \
    " AND EXISTS (SELECT 1 FROM ok)"                                           \
    " RETURNING s.id, s.owner_id, s.expires_at),"
/* An unreleased row under a session the snapshot does not hold: the
 * sweep deletes a session only once every lease of it is released, so
 * that session is newer than the snapshot, and the row is its newest
 * version, read after waiting for a row lock (a claim locks its names in
 * order; while it waits on one, another session is opened and claims the
 * next).  It runs: 'infinity', not free (as the acquire's H_END), never
 * 1970, which took that session's name (t618); and the claim runs again
 * (CLAIM_AGAIN), on a snapshot that holds that session. */
#define END_SE(a)                                                              \
    LEASE_END_ELSE("(SELECT se.expires_at FROM se WHERE se.id = " a            \
                   ".session_id)",                                             \
                   a, "'infinity'::timestamptz")
#define CLAIM_CUR                                                              \
    " cur AS MATERIALIZED (SELECT c.name, c.owner_id, c.fencing_token,"        \
    " c.secret, c.released, c.session_id, " END_SE("c") " AS ends,"            \
    " " LEASE_DELAY_MS("c") " AS delay_ms"                                     \
    " FROM leases c WHERE c.name = ANY ($6::text[])"                           \
    " AND EXISTS (SELECT 1 FROM ok) AND (SELECT count(*) FROM se) >= 0"        \
    " ORDER BY c.name FOR UPDATE),"
#define CLAIM_KIND                                                             \
    " CASE WHEN c.name IS NULL THEN CASE WHEN n.q THEN 'h' ELSE 'f' END"       \
    " WHEN NOT c.released AND c.ends > now() THEN"                             \
    " CASE WHEN c.session_id = $1 AND c.owner_id = (SELECT owner FROM ok)"     \
    " THEN 'r' ELSE 'h' END"                                                   \
    " WHEN NOT c.released AND c.ends + " MS("c.delay_ms") " > now()"           \
    " THEN 'd' WHEN n.q THEN 'h' ELSE 'f' END AS k"
#define CLAIM_DECIDE                                                           \
    " ok AS MATERIALIZED (SELECT m.id, coalesce($4, m.owner_id) AS owner,"     \
    " m.ttl_ms, m.expires_at FROM me m WHERE m.live AND m.mine),"              \
    " n AS MATERIALIZED (SELECT u.name, u.sec, u.q, u.ord FROM unnest("        \
    "$6::text[], $7::bytea[], $8::boolean[]) WITH ORDINALITY"                  \
    " AS u(name, sec, q, ord))," CLAIM_SE CLAIM_CUR                            \
    " d AS MATERIALIZED (SELECT n.name, n.sec, n.ord, c.name IS NULL AS new,"  \
    " c.owner_id, c.fencing_token, c.secret, c.ends, c.delay_ms," CLAIM_KIND   \
    " FROM n LEFT JOIN cur c ON c.name = n.name"                               \
    " WHERE EXISTS (SELECT 1 FROM ok)),"                                       \
    " fits AS MATERIALIZED (SELECT"                                            \
    " ($9 < 0 OR count(*) FILTER (WHERE d.k = 'f') <= $9) AS leases,"          \
    " ($10 < 0 OR count(*) FILTER (WHERE d.k = 'f' AND d.new) <= $10)"         \
    " AS names FROM d),"
#define CLAIM_FITS "(SELECT f.leases AND f.names FROM fits f)"
/* As the acquire's (sql_acquire.c): the CAS and the grant replaced. */
#define L_FREE                                                                 \
    "l.released OR " END_SE("l") " + " MS(LEASE_DELAY_MS("l")) " <= now()"
#define L_PREV                                                                 \
    " prev_token = l.fencing_token, prev_owner_id = l.owner_id,"               \
    " prev_expired_at = CASE WHEN l.released OR l.expiry_noted THEN NULL"      \
    " ELSE " END_SE("l") " END, prev_end_reason = " LEASE_END_REASON("l")
#define CLAIM_INSERT                                                           \
    " g AS (INSERT INTO leases AS l (name, owner_id, expires_at,"              \
    " fencing_token, secret, ttl_ms, lock_delay_ms, request_id, released,"     \
    " principal, session_id) SELECT d.name, o.owner, 'infinity',"              \
    " nextval('lease_token_seq'), d.sec, o.ttl_ms, $5, NULL, false, $3, $1"    \
    " FROM d, ok o WHERE d.k = 'f' AND " CLAIM_FITS " ORDER BY d.name"         \
    " ON CONFLICT (name) DO UPDATE SET owner_id = excluded.owner_id,"          \
    " expires_at = excluded.expires_at," ACQUIRE_SET_TOKEN                     \
    " secret = excluded.secret, ttl_ms = excluded.ttl_ms,"                     \
    " lock_delay_ms = excluded.lock_delay_ms, request_id = NULL,"              \
    " released = false, principal = excluded.principal,"                       \
    " session_id = excluded.session_id, expiry_noted = false," L_PREV          \
    " WHERE " L_FREE                                                           \
    " RETURNING l.name, l.fencing_token, l.owner_id, l.prev_token,"            \
    " l.prev_owner_id, l.prev_expired_at, l.prev_end_reason),"
#define CLAIM_EV_PREV                                                          \
    EV_LINE(EV_TYPE_OF_END("g.prev_end_reason"), "g.prev_token",               \
            "g.prev_token", "g.prev_owner_id", "g.name")
#define CLAIM_EV_ACQUIRED                                                      \
    EV_LINE("'a'", "g.fencing_token", "g.fencing_token", "g.owner_id", "g.name")
#define CLAIM_EV                                                               \
    " ev AS (INSERT INTO tn_outbox (line) SELECT q.line FROM (SELECT 0 AS o,"  \
    " 0::bigint AS t, 0 AS p, " EV_ENDED("'e'", "se.owner_id", "se.id")        \
    " AS line FROM se"                                                         \
    " UNION ALL SELECT 1, g.fencing_token, 0, " CLAIM_EV_PREV                  \
    " FROM g WHERE g.prev_expired_at IS NOT NULL"                              \
    " UNION ALL SELECT 1, g.fencing_token, 1, " CLAIM_EV_ACQUIRED " FROM g)"   \
    " q ORDER BY q.o, q.t, q.p)"
#define CLAIM_WRITES                                                           \
    " cnt AS (UPDATE tenure_sessions s SET n_leases = s.n_leases"              \
    " + (SELECT count(*) FROM g) WHERE s.id = $1"                              \
    " AND EXISTS (SELECT 1 FROM g)),"                                          \
    " led AS (INSERT INTO lease_grants (token, name, owner_id, ttl_ms,"        \
    " granted_at) SELECT g.fencing_token, g.name, g.owner_id,"                 \
    " (SELECT ttl_ms FROM ok), now() FROM g),"                                 \
    " ended AS (UPDATE lease_grants e SET ended_at = g.prev_expired_at,"       \
    " end_reason = g.prev_end_reason FROM g"                                   \
    " WHERE g.prev_expired_at IS NOT NULL AND e.token = g.prev_token"          \
    " AND e.ended_at IS NULL)," CLAIM_EV

/* A free name was not granted: g has one row per free name it granted,
 * so counting is enough (a NOT EXISTS per name ran as a nested loop over
 * g, quadratic in the names). */
#define CLAIM_AGAIN                                                            \
    " ((SELECT count(*) FROM d WHERE d.k = 'f') > (SELECT count(*) FROM g)"    \
    " OR EXISTS (SELECT 1 FROM d WHERE d.ends = 'infinity'))"
/* Columns: kind, index (1-based), token, secret, holder's owner_id, its
 * expires_in_ms, retry_after_ms, the session's expires_in_ms. */
#define D_RETRY                                                                \
    "greatest(1, ceil(extract(epoch FROM (d.ends + " MS("d.delay_ms")          \
    " - now())) * 1000))::bigint"
#define CLAIM_ANSWER                                                           \
    ME_REFUSED(CLAIM_NULLS)                                                    \
    " UNION ALL SELECT CASE WHEN NOT f.leases THEN 'C' ELSE 'M' END,"          \
    CLAIM_NULLS " FROM fits f WHERE NOT (f.leases AND f.names)"                \
    " UNION ALL SELECT 'A'," CLAIM_NULLS                                       \
    " WHERE " CLAIM_FITS " AND" CLAIM_AGAIN                                    \
    " UNION ALL SELECT CASE WHEN g.name IS NULL THEN d.k"                      \
    " WHEN g.prev_token IS NULL THEN 'i' ELSE 'g' END, d.ord,"                 \
    " coalesce(g.fencing_token, d.fencing_token),"                             \
    " CASE WHEN g.name IS NOT NULL THEN d.sec WHEN d.k = 'r' THEN d.secret"    \
    " END, d.owner_id, " EXPIRES_IN_AT("d.ends") ", " D_RETRY ","              \
    " (SELECT " EXPIRES_IN("o") " FROM ok o)"                                  \
    " FROM d LEFT JOIN g ON g.name = d.name"                                   \
    " WHERE " CLAIM_FITS " AND NOT" CLAIM_AGAIN

const char tn_pg_sql_claim[] =
    "WITH" ME CLAIM_DECIDE CLAIM_INSERT CLAIM_WRITES
    " SELECT * FROM (" CLAIM_ANSWER ") a";

/* The batch release: $1-$3 the session (ME), $4 names, $5 tokens.  Each
 * lease of this session with that token, not released, is released (the
 * session is live, so each is live); the others are lost.  The rows are
 * locked in name order first (lk), as a claim locks them.  Columns: kind
 * ('r' released, 'l' lost; 'L', 'F' for the whole request), index, token,
 * then as the claim's. */
#define UNCLAIM_WRITES                                                         \
    " ok AS MATERIALIZED (SELECT m.id, m.expires_at FROM me m"                 \
    " WHERE m.live AND m.mine),"                                               \
    " n AS MATERIALIZED (SELECT u.name, u.token, u.ord FROM unnest("           \
    "$4::text[], $5::bigint[]) WITH ORDINALITY AS u(name, token, ord)),"       \
    " lk AS MATERIALIZED (SELECT x.name FROM leases x"                         \
    " WHERE x.name = ANY ($4::text[]) AND EXISTS (SELECT 1 FROM ok)"           \
    " ORDER BY x.name FOR UPDATE),"                                            \
    " r AS (UPDATE leases l SET released = true, expires_at = now(),"          \
    " request_id = NULL FROM n WHERE l.name = n.name AND l.session_id = $1"    \
    " AND l.fencing_token = n.token AND NOT l.released"                        \
    " AND EXISTS (SELECT 1 FROM ok) AND (SELECT count(*) FROM lk) >= 0"        \
    " RETURNING l.name, l.owner_id, l.fencing_token),"                         \
    " cnt AS (UPDATE tenure_sessions s SET n_leases = s.n_leases"              \
    " - (SELECT count(*) FROM r) WHERE s.id = $1"                              \
    " AND EXISTS (SELECT 1 FROM r)),"                                          \
    " led AS (UPDATE lease_grants e SET ended_at = now(),"                     \
    " end_reason = 'released' FROM r WHERE e.token = r.fencing_token),"        \
    " ev AS (INSERT INTO tn_outbox (line) SELECT "                             \
    EV_LINE("'r'", "r.fencing_token", "r.fencing_token", "r.owner_id",         \
            "r.name")                                                          \
    " FROM r ORDER BY r.fencing_token)"
#define UNCLAIM_ANSWER                                                         \
    ME_REFUSED(CLAIM_NULLS)                                                    \
    " UNION ALL SELECT CASE WHEN r.name IS NULL THEN 'l' ELSE 'r' END,"        \
    " n.ord, n.token, NULL::bytea, NULL::text, NULL::bigint, NULL::bigint,"    \
    " (SELECT " EXPIRES_IN("o") " FROM ok o)"                                  \
    " FROM n LEFT JOIN r ON r.name = n.name AND r.fencing_token = n.token"     \
    " WHERE EXISTS (SELECT 1 FROM ok)"
const char tn_pg_sql_unclaim[] =
    "WITH" ME UNCLAIM_WRITES " SELECT * FROM (" UNCLAIM_ANSWER ") a";

/* $1 most sessions, $2 most leases per run.  rec: sessions that ran out
 * and whose end nobody recorded yet: record it (FOR UPDATE SKIP LOCKED and
 * the re-checked WHERE: a session whose renew is in flight is skipped, and
 * each end is recorded once, by one instance) and announce session_ended.
 * st: settle leases still held under sessions whose end an earlier
 * transaction recorded (so their session_ended went out first): each
 * becomes an ordinary ended lease (its own expires_at the session's end,
 * so its lock delay counts from there; released when the session was
 * deleted), its ledger row ended, its event announced.  del: sessions
 * ended with every lease settled are deleted (an unknown id is lost).
 * Columns: sessions recorded, leases settled, sessions deleted. */
#define SWEEP_REC                                                              \
    " rec AS (UPDATE tenure_sessions s SET ended_at = s.expires_at,"           \
    " end_reason = 'expired' WHERE s.id IN (SELECT t.id FROM"                  \
    " tenure_sessions t WHERE t.ended_at IS NULL AND t.expires_at <= now()"    \
    " ORDER BY t.expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)"                  \
    " AND s.ended_at IS NULL AND s.expires_at <= now()"                        \
    " RETURNING s.id, s.owner_id),"
#define SWEEP_SETTLE                                                           \
    " st AS (UPDATE leases l SET expires_at = t.expires_at,"                   \
    " expiry_noted = true, session_id = NULL,"                                 \
    " released = t.end_reason <> 'expired' FROM tenure_sessions t"             \
    " WHERE l.name IN (SELECT x.name FROM tenure_sessions y JOIN leases x"     \
    " ON x.session_id = y.id WHERE y.ended_at IS NOT NULL AND NOT x.released"  \
    " LIMIT $2 FOR UPDATE OF x SKIP LOCKED) AND t.id = l.session_id"           \
    " AND t.ended_at IS NOT NULL AND NOT l.released"                           \
    " RETURNING l.name, l.owner_id, l.fencing_token, t.expires_at AS e,"       \
    " t.end_reason AS why),"                                                   \
    " led AS (UPDATE lease_grants g SET ended_at = st.e, end_reason = st.why"  \
    " FROM st WHERE g.token = st.fencing_token AND g.ended_at IS NULL),"
#define SWEEP_DELETE                                                           \
    " del AS (DELETE FROM tenure_sessions s WHERE s.id IN (SELECT y.id FROM"   \
    " tenure_sessions y WHERE y.ended_at IS NOT NULL AND NOT EXISTS (SELECT 1" \
    " FROM leases x WHERE x.session_id = y.id AND NOT x.released) LIMIT $1"    \
    " FOR UPDATE SKIP LOCKED) RETURNING 1),"
#define SWEEP_EV                                                               \
    " ev AS (INSERT INTO tn_outbox (line) SELECT q.line FROM (SELECT 0 AS o,"  \
    " 0::bigint AS t, " EV_ENDED("'e'", "rec.owner_id", "rec.id")              \
    " AS line FROM rec UNION ALL SELECT 1, st.fencing_token, "                 \
    EV_LINE(EV_TYPE_OF_END("st.why"), "st.fencing_token", "st.fencing_token",  \
            "st.owner_id", "st.name")                                          \
    " FROM st) q ORDER BY q.o, q.t)"
const char tn_pg_sql_session_sweep[] =
    "WITH" SWEEP_REC SWEEP_SETTLE SWEEP_DELETE SWEEP_EV
    " SELECT (SELECT count(*) FROM rec), (SELECT count(*) FROM st),"
    " (SELECT count(*) FROM del)";

/* clang-format on */
