/* SPDX-License-Identifier: MIT */
/* The SQL of the PostgreSQL store.  Every decision is one statement on the
 * database clock.  The acquire statement allocates the token only while it
 * holds the row lock: nextval() in the ON CONFLICT DO UPDATE SET list runs
 * after the conflicting row is locked and its compare-and-set (released, or
 * expired past the lock delay) holds, so a slow acquirer can never install a
 * token below the row's current one (see docs/internals/postgresql.md).  Every
 * change of hands also writes its event to the session's outbox in the
 * same statement; NOTIFY_SQL sends it once the transaction committed. */
#include "store/pg/sql.h"

#define OID_BOOL 16u
#define OID_BYTEA 17u
#define OID_INT8 20u
#define OID_TEXT 25u

/* Advisory lock key ("tenure" in ASCII) held while migrating. */
#define LOCK_KEY "127978993709669"

#define EXPIRES_IN(row)                                                        \
    "greatest(0, floor(extract(epoch FROM (" row ".expires_at - now()))"       \
    " * 1000))::bigint"

/* The outbox columns: insertion order, one or more event lines. */
#define OUTBOX_COLUMNS                                                         \
    " (seq bigint GENERATED ALWAYS AS IDENTITY, line text NOT NULL)"

/* The outbox is this session's own and holds nothing durable: its
 * creation commits locally, so that a setup on a primary that has no
 * synchronous standby (just promoted, or left behind by a failover)
 * does not wait for one; the refusing and the move to another host are
 * the synchronous standby check's (src/store/pg/sync.c). */
const char tn_pg_sql_session[] =
    "SET synchronous_commit TO remote_apply; SET application_name TO 'tenured';"
    " SET lock_timeout TO 0; BEGIN; SET LOCAL synchronous_commit TO local;"
    " CREATE TEMPORARY TABLE IF NOT EXISTS tn_outbox" OUTBOX_COLUMNS ";"
    " COMMIT; SELECT pg_advisory_lock(" LOCK_KEY ")";

const char tn_pg_sql_outbox_table[] =
    "CREATE UNLOGGED TABLE IF NOT EXISTS tn_outbox" OUTBOX_COLUMNS;

/* DO runs LISTEN with the channel name computed by the server, the same
 * expression the statements notify on. */
const char tn_pg_sql_listen[] =
    "DO $$ BEGIN EXECUTE format('LISTEN %I', '" TN_PG_CHANNEL_PREFIX "'"
    " || current_schema()); END $$";

const char tn_pg_sql_version[] =
    "CREATE TABLE IF NOT EXISTS tenure_schema_version ("
    " version integer PRIMARY KEY,"
    " applied_at timestamptz NOT NULL DEFAULT now());"
    " SELECT coalesce(max(version), 0) FROM tenure_schema_version";

/* Under table locks that exclude every acquire statement in flight (each
 * holds ROW EXCLUSIVE on leases from its start to its commit), so reading
 * the maximum and moving the sequence cannot race with a nextval(); the
 * sequence only ever moves up.  While the LOCK waits, every writer that
 * comes after it waits behind it, so it waits at most
 * TN_PG_SETUP_LOCK_WAIT: a slow transaction elsewhere then fails the step
 * (55P03) instead of stalling every instance's writes, and the connection
 * tries again (src/store/pg/conn.c). */
/* Then, under the same lock, the sequence goes up to the instance's token
 * floor (src/store/pg/floor.c), which conn.c sets in the session as
 * tenure.token_floor just before: one row, 'floor', the highest token
 * issued before (after the lift above), the floor, and non-NULL when it
 * was raised. */
#define FLOOR_SQL                                                              \
    " SELECT 'floor', t.top, f.floor, CASE WHEN f.floor > t.top"               \
    " THEN setval('lease_token_seq', f.floor) END"                             \
    " FROM (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1"    \
    " END AS top FROM lease_token_seq) t, (SELECT coalesce(nullif("            \
    "current_setting('tenure.token_floor', true), ''), '0')::bigint"           \
    " AS floor) f;"

const char tn_pg_sql_sequence[] =
    "BEGIN; " TN_PG_SETUP_LOCK_TIMEOUT
    " LOCK TABLE leases, lease_grants IN SHARE ROW EXCLUSIVE MODE;"
    " SELECT setval('lease_token_seq', m.top)"
    " FROM (SELECT greatest((SELECT max(fencing_token) FROM leases),"
    " (SELECT max(token) FROM lease_grants),"
    " (SELECT floor FROM tenure_retired)) AS top) m, lease_token_seq s"
    " WHERE m.top IS NOT NULL AND m.top >= CASE WHEN s.is_called"
    " THEN s.last_value + 1 ELSE s.last_value END;" FLOOR_SQL " COMMIT;"
    " SELECT pg_advisory_unlock(" LOCK_KEY ")";

const struct tn_pg_migration tn_pg_migrations[] = {
    /* The seed schema. */
    {1, "CREATE SEQUENCE IF NOT EXISTS lease_token_seq AS bigint"
        " MINVALUE 1 NO CYCLE;"
        " CREATE TABLE IF NOT EXISTS leases ("
        " name text PRIMARY KEY,"
        " owner_id text NOT NULL,"
        " expires_at timestamptz NOT NULL,"
        " fencing_token bigint NOT NULL)"},
    /* Secret, TTL, lock delay, request id, released flag, byte order of
     * names, and the grants ledger.  CACHE 1: a per-session cache would
     * hand out tokens out of real-time order across connections. */
    {2, "ALTER SEQUENCE lease_token_seq CACHE 1 NO CYCLE;"
        " ALTER TABLE leases ALTER COLUMN name TYPE text COLLATE \"C\","
        " ADD COLUMN IF NOT EXISTS secret bytea NOT NULL DEFAULT '\\x'::bytea,"
        " ADD COLUMN IF NOT EXISTS ttl_ms bigint NOT NULL DEFAULT 0,"
        " ADD COLUMN IF NOT EXISTS lock_delay_ms bigint NOT NULL DEFAULT 0,"
        " ADD COLUMN IF NOT EXISTS request_id text,"
        " ADD COLUMN IF NOT EXISTS released boolean NOT NULL DEFAULT false;"
        " CREATE TABLE IF NOT EXISTS lease_grants ("
        " token bigint PRIMARY KEY,"
        " name text COLLATE \"C\" NOT NULL,"
        " owner_id text NOT NULL,"
        " ttl_ms bigint NOT NULL,"
        " granted_at timestamptz NOT NULL)"},
    /* Events, history and auth: the acquiring principal; whether the
     * expiry of the current grant was announced (exactly once, by the
     * sweep or by the acquire that takes the name over); the previous
     * grant as the acquire that replaced it saw it (RETURNING only shows
     * new values); how and when each ledger grant ended; the ledger index
     * for history.  Grants that had already ended count as announced. */
    {3, "ALTER TABLE leases ADD COLUMN IF NOT EXISTS principal text,"
        " ADD COLUMN IF NOT EXISTS expiry_noted boolean NOT NULL DEFAULT false,"
        " ADD COLUMN IF NOT EXISTS prev_token bigint,"
        " ADD COLUMN IF NOT EXISTS prev_owner_id text,"
        " ADD COLUMN IF NOT EXISTS prev_expired_at timestamptz;"
        " UPDATE leases SET expiry_noted = true"
        " WHERE released OR expires_at <= now();"
        " ALTER TABLE lease_grants ADD COLUMN IF NOT EXISTS ended_at"
        " timestamptz, ADD COLUMN IF NOT EXISTS end_reason text;"
        " CREATE INDEX IF NOT EXISTS lease_grants_name_token"
        " ON lease_grants (name, token DESC)"},
    /* Retired names (src/store/pg/retire.c): the retired floor, one row,
     * answered for every name without a row. */
    {4,
     "CREATE TABLE IF NOT EXISTS tenure_retired ("
     " id boolean PRIMARY KEY DEFAULT true CHECK (id),"
     " floor bigint NOT NULL DEFAULT 0);"
     " INSERT INTO tenure_retired (id) VALUES (true) ON CONFLICT DO NOTHING"},
};
const size_t tn_pg_n_migrations =
    sizeof(tn_pg_migrations) / sizeof(tn_pg_migrations[0]);

/* The channel this schema's events go to (see src/store/pg/sql.h). */
#define CHANNEL "'" TN_PG_CHANNEL_PREFIX "' || current_schema()"

/* One event line (src/store/pg/sql.h); every argument is an SQL expression. */
#define EV_LINE(type, token, floor, owner, name)                               \
    "(" type ") || ' ' || (" token ")::text || ' ' || (" floor ")::text"       \
    " || ' ' || octet_length(" owner ")::text || ' ' || " owner " || " name

/* Milliseconds since t on the database clock, never negative. */
#define MS_SINCE(t)                                                            \
    "greatest(0, floor(extract(epoch FROM (now() - " t ")) * 1000))::bigint"

/* $1 name, $2 owner_id, $3 ttl_ms, $4 lock_delay_ms, $5 request_id or NULL,
 * $6 secret, $7 principal or NULL, $8 limits (ACQUIRE_FITS).  g: the grant,
 * made only when the CAS on the locked row holds and it fits the limits,
 * answered 'i' when it inserted a new name, else 'g' (a new name inserts;
 * its nextval() is safe
 * because no token of that name exists, and a retirement, which deletes
 * rows, holds a table lock that excludes this statement from before its
 * nextval() to its commit (src/store/pg/retire.c); on conflict that value
 * is simply skipped).  The SET list also keeps the
 * replaced grant (prev_*): when it ran out and nobody announced it yet,
 * this statement ends it in the ledger and announces "expired" before
 * "acquired" (two lines of one outbox row).  cur: when nothing was granted, the
 * row as locked by g (FOR UPDATE reads the newest version), classified as
 * replay (same owner, request_id and principal, still live), held, or lock
 * delay; its last column is when the name frees up.  No row at all means the
 * row was inserted by a transaction our snapshot cannot see: the caller runs
 * the statement again. */
#define ACQUIRE_SET_TOKEN " fencing_token = nextval('lease_token_seq'),"

/* The event lines of a grant: "expired" for the grant it replaced when
 * nobody announced that yet, then "acquired". */
#define ACQUIRE_EV_EXPIRED                                                     \
    EV_LINE("'e'", "g.prev_token", "g.prev_token", "g.prev_owner_id", "$1")
#define ACQUIRE_EV_ACQUIRED                                                    \
    EV_LINE("'a'", "g.fencing_token", "g.fencing_token", "g.owner_id", "$1")
#define CUR_EXPIRES_IN EXPIRES_IN("c")

/* $8: the capacity limits this instance counts as reached (src/store/pg/
 * limits.c), bit 1 --max-leases (no grant at all), bit 2 --max-names (no
 * grant of a name without a row).  A refused grant changes nothing and
 * draws no token (the SELECT's WHERE runs before its nextval()).  It is
 * answered 'c' (leases) when the locked row was free to take, or by
 * ACQUIRE_REFUSED, 'c' or 'm' (names), when there is no row to read. */
#define ACQUIRE_FITS                                                           \
    "($8 & 1) = 0 AND (($8 & 2) = 0"                                           \
    " OR EXISTS (SELECT 1 FROM leases x WHERE x.name = $1))"
#define ACQUIRE_REFUSED                                                        \
    " UNION ALL SELECT CASE WHEN ($8 & 1) = 1 THEN 'c' ELSE 'm' END,"          \
    " NULL::bigint, NULL::text, NULL::bytea, NULL::bigint, NULL::bigint,"      \
    " NULL::bigint WHERE $8 <> 0 AND NOT EXISTS (SELECT 1 FROM g)"             \
    " AND NOT EXISTS (SELECT 1 FROM cur)"

#define ACQUIRE_SQL                                                            \
    "WITH g AS ("                                                              \
    " INSERT INTO leases AS l (name, owner_id, expires_at, fencing_token,"     \
    " secret, ttl_ms, lock_delay_ms, request_id, released, principal)"         \
    " SELECT $1, $2, now() + $3 * interval '1 millisecond',"                   \
    " nextval('lease_token_seq'), $6, $3, $4, $5, false, $7"                   \
    " WHERE " ACQUIRE_FITS                                                     \
    " ON CONFLICT (name) DO UPDATE SET owner_id = excluded.owner_id,"          \
    " expires_at = excluded.expires_at," ACQUIRE_SET_TOKEN                     \
    " secret = excluded.secret, ttl_ms = excluded.ttl_ms,"                     \
    " lock_delay_ms = excluded.lock_delay_ms,"                                 \
    " request_id = excluded.request_id, released = false,"                     \
    " principal = excluded.principal, expiry_noted = false,"                   \
    " prev_token = l.fencing_token, prev_owner_id = l.owner_id,"               \
    " prev_expired_at = CASE WHEN l.released OR l.expiry_noted THEN NULL"      \
    " ELSE l.expires_at END"                                                   \
    " WHERE l.released OR"                                                     \
    " l.expires_at + l.lock_delay_ms * interval '1 millisecond' <= now()"      \
    " RETURNING l.fencing_token, l.owner_id, l.prev_token, l.prev_owner_id,"   \
    " l.prev_expired_at),"                                                     \
    " led AS (INSERT INTO lease_grants (token, name, owner_id, ttl_ms,"        \
    " granted_at) SELECT g.fencing_token, $1, $2, $3, now() FROM g),"          \
    " ended AS (UPDATE lease_grants e SET ended_at = g.prev_expired_at,"       \
    " end_reason = 'expired' FROM g WHERE g.prev_expired_at IS NOT NULL"       \
    " AND e.token = g.prev_token AND e.ended_at IS NULL),"                     \
    " ev AS (INSERT INTO tn_outbox (line) SELECT"                              \
    " CASE WHEN g.prev_expired_at IS NULL THEN '' ELSE"                        \
    " " ACQUIRE_EV_EXPIRED " || E'\\n' END || " ACQUIRE_EV_ACQUIRED            \
    " FROM g),"                                                                \
    " cur AS (SELECT c.owner_id, c.fencing_token, c.secret, c.ttl_ms,"         \
    " c.request_id, c.expires_at, c.lock_delay_ms, c.released, c.principal"    \
    " FROM leases c WHERE c.name = $1 AND NOT EXISTS (SELECT 1 FROM g)"        \
    " FOR UPDATE)"                                                             \
    " SELECT CASE WHEN g.prev_token IS NULL THEN 'i' ELSE 'g' END,"            \
    " g.fencing_token, g.owner_id, NULL::bytea, $3::bigint,"                   \
    " $3::bigint, 0::bigint FROM g"                                            \
    " UNION ALL"                                                               \
    " SELECT CASE WHEN NOT c.released AND c.expires_at > now() THEN"           \
    " CASE WHEN $5::text IS NOT NULL AND c.request_id = $5"                    \
    " AND c.owner_id = $2 AND c.principal IS NOT DISTINCT FROM $7"             \
    " THEN 'r' ELSE 'h' END WHEN ($8 & 1) = 1 AND (c.released"                 \
    " OR c.expires_at + c.lock_delay_ms * interval '1 millisecond' <= now())"  \
    " THEN 'c' ELSE 'd' END,"                                                  \
    " c.fencing_token, c.owner_id, c.secret, c.ttl_ms, " CUR_EXPIRES_IN ","    \
    " greatest(1, ceil(extract(epoch FROM (c.expires_at"                       \
    " + c.lock_delay_ms * interval '1 millisecond' - now())) * 1000))::bigint" \
    " FROM cur c" ACQUIRE_REFUSED

/* Whether a grant still runs, for the statements that change it: on the
 * instant the row lock is held, not on now(), the start of the
 * transaction, nor on when the row was first read: a renew that began
 * before the expiry and waited for the row lock past it would otherwise
 * revive a grant that another instance already answered as ended
 * (docs/SAFETY.md section 8.3).  k reads the clock once, after a sub-select
 * that takes the row lock itself (a clock read in the locking select is
 * projected before the lock is taken); every comparison reads k.
 * The comparison sits in the SET, not in the WHERE: an UPDATE tests its
 * WHERE on the version of its snapshot and follows a row changed since
 * (by a renew whose commit landed after the expiry) only if that test
 * held; the SET is computed again on the newest version.  So a change of
 * a grant that ran out on the snapshot still updates the row, to the same
 * values, and answers lost.  New expiries still count from now(), never
 * later than the request. */
#define LOCKED_AT                                                              \
    " k AS MATERIALIZED (SELECT clock_timestamp() AS at FROM (SELECT 1"        \
    " FROM leases x WHERE x.name = $1 OFFSET 0 FOR UPDATE) z),"
#define RUNS_AT_LOCK(expires)                                                  \
    " coalesce(" expires " > (SELECT k.at FROM k), false)"
#define STILL_RUNS RUNS_AT_LOCK("l.expires_at")
/* The same for the read that tells lost from forbidden (no lock needed:
 * it runs after the UPDATE found nothing). */
#define STILL_RUNS_NOW " > clock_timestamp()"

/* $1 name, $2 token, $3 secret, $4 ttl_ms (0 keeps the grant's),
 * $5 principal or NULL (auth off, or an admin).  The UPDATE re-checks its
 * WHERE on the newest row version after locking it, so it never touches a
 * newer grant.  On no update, c tells lost from forbidden (wrong secret,
 * or another principal than the one that acquired). */
#define RENEW_TTL "CASE WHEN $4 > 0 THEN $4 ELSE l.ttl_ms END"
#define RENEW_SQL                                                              \
    "WITH" LOCKED_AT " u AS (UPDATE leases l SET"                              \
    " ttl_ms = CASE WHEN" STILL_RUNS " THEN " RENEW_TTL " ELSE l.ttl_ms END,"  \
    " expires_at = CASE WHEN" STILL_RUNS " THEN now() + " RENEW_TTL            \
    " * interval '1 millisecond' ELSE l.expires_at END"                        \
    " WHERE l.name = $1 AND NOT l.released"                                    \
    " AND l.fencing_token = $2 AND l.secret = $3"                              \
    " AND ($5::text IS NULL OR l.principal = $5)"                              \
    " RETURNING" STILL_RUNS                                                    \
    " AS ok, l.owner_id, l.fencing_token, l.ttl_ms)," FORBIDDEN_CTE            \
    " SELECT CASE WHEN u.ok THEN 'ok' ELSE 'lost' END, u.owner_id,"            \
    " u.fencing_token, u.ttl_ms FROM u UNION ALL" FORBIDDEN_ROW " FROM c"

#define FORBIDDEN_CTE                                                          \
    " c AS (SELECT c.fencing_token, c.secret, c.released, c.expires_at,"       \
    " c.principal FROM leases c WHERE c.name = $1"                             \
    " AND NOT EXISTS (SELECT 1 FROM u))"

#define FORBIDDEN_ROW                                                          \
    " SELECT CASE WHEN NOT c.released AND c.expires_at" STILL_RUNS_NOW         \
    " AND c.fencing_token = $2 AND (c.secret <> $3 OR ($5::text IS NOT NULL"   \
    " AND c.principal IS DISTINCT FROM $5)) THEN 'forbidden'"                  \
    " ELSE 'lost' END, NULL, NULL, NULL"

/* $1 name, $2 token, $3 secret, $4 force, $5 principal or NULL.  The row
 * stays (its token is the name's floor); expires_at = now() and released
 * = true free it at once, without lock delay.  The ledger records the end
 * and the event goes to the outbox. */
#define RELEASE_EV                                                             \
    EV_LINE("CASE WHEN $4 THEN 'v' ELSE 'r' END", "u.fencing_token",           \
            "u.fencing_token", "u.owner_id", "$1")

#define RELEASE_SQL                                                            \
    "WITH" LOCKED_AT " u AS (UPDATE leases l SET released =" STILL_RUNS ","    \
    " expires_at = CASE WHEN" STILL_RUNS " THEN now() ELSE l.expires_at END,"  \
    " request_id = CASE WHEN" STILL_RUNS " THEN NULL ELSE l.request_id END"    \
    " WHERE l.name = $1 AND NOT l.released"                                    \
    " AND ($4 OR (l.fencing_token = $2 AND l.secret = $3"                      \
    " AND ($5::text IS NULL OR l.principal = $5)))"                            \
    " RETURNING l.released AS ok, l.owner_id, l.fencing_token, l.ttl_ms),"     \
    " led AS (UPDATE lease_grants e SET ended_at = now(), end_reason ="        \
    " CASE WHEN $4 THEN 'revoked' ELSE 'released' END"                         \
    " FROM u WHERE u.ok AND e.token = u.fencing_token),"                       \
    " ev AS (INSERT INTO tn_outbox (line) SELECT " RELEASE_EV                  \
    " FROM u WHERE u.ok)," FORBIDDEN_CTE                                       \
    " SELECT CASE WHEN u.ok THEN 'ok' ELSE 'lost' END, u.owner_id,"            \
    " u.fencing_token, u.ttl_ms FROM u UNION ALL" FORBIDDEN_ROW " FROM c"

/* The reads that can reveal an end (GET: not found, check: current:false)
 * must not reveal it while a change of the row is in flight: a renew that
 * found the grant running and holds the row may commit after the expiry
 * (a slow synchronous standby), and a reader of the old version would
 * answer the end before that commit revives it (docs/SAFETY.md section
 * 8.3).  So a row that has run out on the snapshot, and whose end nobody
 * announced yet (expiry_noted: once that is committed, no change decided
 * before the end can still be in flight), is read FOR SHARE: the read
 * waits for the writer and then reads the newest version of the row.  The
 * condition is an uncorrelated sub-select, evaluated once on the snapshot,
 * so the re-check on the newest version keeps the row.  A row that runs
 * on the snapshot is read as before, without a lock. */
#define RUN_OUT                                                                \
    " coalesce((SELECT NOT y.released AND NOT y.expiry_noted"                  \
    " AND y.expires_at <= now() FROM leases y WHERE y.name = $1), false)"
#define READ_WAITING(cols)                                                     \
    "WITH w AS (SELECT " cols " FROM leases l WHERE l.name = $1 AND" RUN_OUT   \
    " FOR SHARE OF l) SELECT * FROM w UNION ALL SELECT " cols                  \
    " FROM leases l WHERE l.name = $1 AND NOT" RUN_OUT

#define GET_COLS                                                               \
    "l.owner_id, l.fencing_token, l.ttl_ms, " EXPIRES_IN(                      \
        "l") ", l.lock_delay_ms, NOT l.released AND l.expires_at > now() AS "  \
             "live"
#define GET_SQL "SELECT * FROM (" READ_WAITING(GET_COLS) ") r WHERE r.live"

/* A name without a row (retired, or never granted) answers the retired
 * floor; one statement, one snapshot: the row and the floor that replaced
 * it are never both missed (docs/SAFETY.md section 9.3). */
#define CHECK_RETIRED                                                          \
    " UNION ALL SELECT r.floor, false, NULL::text, NULL::bigint,"              \
    " NULL::bigint FROM tenure_retired r"                                      \
    " WHERE NOT EXISTS (SELECT 1 FROM leases x WHERE x.name = $1)"

#define CHECK_COLS                                                             \
    "l.fencing_token, NOT l.released AND l.expires_at > now(), l.owner_id,"    \
    " l.ttl_ms, " EXPIRES_IN("l")
#define CHECK_SQL READ_WAITING(CHECK_COLS) CHECK_RETIRED

/* $1 prefix, $2 after or NULL, $3 limit.  Names are COLLATE "C": byte
 * order, as the embedded store lists them. */
#define LIST_SQL                                                               \
    "SELECT name, owner_id, fencing_token, ttl_ms, " EXPIRES_IN(               \
        "l") ", l.lock_delay_ms"                                               \
             " FROM leases l WHERE NOT l.released AND l.expires_at > now()"    \
             " AND starts_with(l.name, $1) AND ($2::text IS NULL OR l.name > " \
             "$2)"                                                             \
             " ORDER BY l.name LIMIT $3"

/* $1 name, $2 limit.  Newest first: token, owner_id, granted ms ago, end
 * (NULL while live), ended ms ago (NULL while live).  The current grant's
 * end is read from the lease row when the ledger has none yet (ran out,
 * not yet swept); an older grant without an end (written before the
 * ledger kept ends) was superseded when the next one was granted. */
#define HIST_GRANTED_AGO MS_SINCE("g.granted_at")
#define HIST_ENDED_AGO MS_SINCE("g.ended_at")
#define HIST_EXPIRED_AGO MS_SINCE("l.expires_at")
#define HIST_SUPERSEDED_AGO MS_SINCE("coalesce(g.next_at, now())")

#define HISTORY_SQL                                                            \
    "SELECT g.token, g.owner_id, " HIST_GRANTED_AGO ","                        \
    " CASE WHEN g.ended_at IS NOT NULL THEN g.end_reason"                      \
    " WHEN l.fencing_token = g.token THEN CASE WHEN l.released"                \
    " THEN 'released' WHEN l.expires_at <= now() THEN 'expired' END"           \
    " ELSE 'superseded' END,"                                                  \
    " CASE WHEN g.ended_at IS NOT NULL THEN " HIST_ENDED_AGO                   \
    " WHEN l.fencing_token = g.token THEN CASE WHEN l.released"                \
    " OR l.expires_at <= now() THEN " HIST_EXPIRED_AGO " END"                  \
    " ELSE " HIST_SUPERSEDED_AGO " END"                                        \
    " FROM (SELECT token, owner_id, granted_at, ended_at, end_reason,"         \
    " lag(granted_at) OVER (ORDER BY token DESC) AS next_at"                   \
    " FROM lease_grants WHERE name = $1 ORDER BY token DESC LIMIT $2) g"       \
    " LEFT JOIN leases l ON l.name = $1 ORDER BY g.token DESC"

/* $1 most rows.  Grants that ran out and were not announced yet: mark
 * them, end them in the ledger, announce them.  FOR UPDATE SKIP LOCKED
 * and the re-checked WHERE make sure each expiry is announced exactly
 * once, by one instance, whichever comes first (this sweep, another
 * instance's, or the acquire that takes the name over).  One row per
 * announced expiry. */
#define SWEEP_EV                                                               \
    EV_LINE("'e'", "x.fencing_token", "x.fencing_token", "x.owner_id", "x.name")

#define SWEEP_SQL                                                              \
    "WITH x AS (UPDATE leases l SET expiry_noted = true"                       \
    " WHERE l.name IN (SELECT s.name FROM leases s WHERE NOT s.released"       \
    " AND NOT s.expiry_noted AND s.expires_at <= now() LIMIT $1"               \
    " FOR UPDATE SKIP LOCKED)"                                                 \
    " AND NOT l.released AND NOT l.expiry_noted AND l.expires_at <= now()"     \
    " RETURNING l.name, l.owner_id, l.fencing_token, l.expires_at),"           \
    " led AS (UPDATE lease_grants e SET ended_at = x.expires_at,"              \
    " end_reason = 'expired' FROM x"                                           \
    " WHERE e.token = x.fencing_token AND e.ended_at IS NULL),"                \
    " ev AS (INSERT INTO tn_outbox (line) SELECT " SWEEP_EV                    \
    " FROM x ORDER BY x.fencing_token)"                                        \
    " SELECT x.fencing_token FROM x"

/* $1 grants kept per name.  Deletes at most 10000 older ledger rows per
 * run; the newest grant of every name stays, so the highest token ever
 * issued stays too (the sequence floor rule on start reads it). */
#define PRUNE_SQL                                                              \
    "WITH d AS (DELETE FROM lease_grants e WHERE e.token IN"                   \
    " (SELECT r.token FROM (SELECT token, row_number() OVER"                   \
    " (PARTITION BY name ORDER BY token DESC) AS n FROM lease_grants) r"       \
    " WHERE r.n > $1 LIMIT 10000) RETURNING 1) SELECT count(*) FROM d"

/* Live leases and names (rows) in the database, for --max-leases and
 * --max-names (src/store/pg/limits.c): one scan of leases. */
#define COUNT_SQL                                                              \
    "SELECT count(*) FILTER (WHERE NOT released AND expires_at > now()),"      \
    " count(*) FROM leases"

/* Whether the primary has a synchronous standby (src/store/pg/sync.c):
 * one row, the enum tn_pg_sync_state (src/store/pg/sql.h) and the number
 * of standbys connected.  A role without pg_read_all_stats sees the
 * standbys' rows with their state columns NULL: 'hidden' then, unless
 * there are none at all.  Read-only: its transaction takes no xid, so it
 * never waits for a standby itself. */
#define SYNC_SQL                                                               \
    "SELECT CASE"                                                              \
    " WHEN current_setting('synchronous_commit') <> 'remote_apply' THEN 4"     \
    " WHEN current_setting('synchronous_standby_names') = '' THEN 3"           \
    " WHEN EXISTS (SELECT 1 FROM pg_stat_replication"                          \
    " WHERE sync_state IN ('sync', 'quorum')) THEN 0"                          \
    " WHEN EXISTS (SELECT 1 FROM pg_stat_replication)"                         \
    " AND NOT pg_has_role('pg_read_all_stats', 'USAGE') THEN 2"                \
    " ELSE 1 END, (SELECT count(*) FROM pg_stat_replication)"

/* Pipelined after the Sync of every batch that may have written events:
 * sends the session's outbox, oldest first, in payloads below the 8000
 * byte limit, and empties it.  Its own transaction commits without
 * waiting for the WAL flush: it changes no data (the changes it announces
 * are already durable), and a notifying commit holds a cluster-wide lock
 * until it ends, so a flush inside it would serialize every commit that
 * notifies.  An empty outbox sends nothing and writes nothing. */
#define NOTIFY_CHUNKS                                                          \
    "WITH d AS (DELETE FROM tn_outbox RETURNING seq, line),"                   \
    " c AS (SELECT seq, line, (sum(octet_length(line) + 1)"                    \
    " OVER (ORDER BY seq)) / 7000 AS chunk FROM d)"
#define NOTIFY_SEND                                                            \
    " pg_notify(" CHANNEL ", string_agg(line, E'\\n' ORDER BY seq))::text"     \
    " FROM c GROUP BY chunk ORDER BY chunk"

#define NOTIFY_SQL                                                             \
    NOTIFY_CHUNKS                                                              \
    " SELECT set_config('synchronous_commit', 'off', true)," NOTIFY_SEND

/* The same inside a transaction that changed data (a batch that sweeps):
 * that transaction's own commit rules stay, so the events go out with
 * the commit, in the same commit order as the data. */
const char tn_pg_sql_notify_in_txn[] = NOTIFY_CHUNKS " SELECT" NOTIFY_SEND;

const struct tn_pg_stmt_def tn_pg_stmts[TN_PG_N_STMTS] = {
    [TN_PG_ACQUIRE] = {"tn_acquire",
                       ACQUIRE_SQL,
                       8,
                       {OID_TEXT, OID_TEXT, OID_INT8, OID_INT8, OID_TEXT,
                        OID_BYTEA, OID_TEXT, OID_INT8}},
    [TN_PG_RENEW] = {"tn_renew",
                     RENEW_SQL,
                     5,
                     {OID_TEXT, OID_INT8, OID_BYTEA, OID_INT8, OID_TEXT}},
    [TN_PG_RELEASE] = {"tn_release",
                       RELEASE_SQL,
                       5,
                       {OID_TEXT, OID_INT8, OID_BYTEA, OID_BOOL, OID_TEXT}},
    [TN_PG_GET] = {"tn_get", GET_SQL, 1, {OID_TEXT}},
    [TN_PG_CHECK] = {"tn_check", CHECK_SQL, 1, {OID_TEXT}},
    [TN_PG_LIST] = {"tn_list", LIST_SQL, 3, {OID_TEXT, OID_TEXT, OID_INT8}},
    [TN_PG_HISTORY] = {"tn_history", HISTORY_SQL, 2, {OID_TEXT, OID_INT8}},
    [TN_PG_SWEEP] = {"tn_sweep", SWEEP_SQL, 1, {OID_INT8}},
    [TN_PG_PRUNE] = {"tn_prune", PRUNE_SQL, 1, {OID_INT8}},
    [TN_PG_COUNT] = {"tn_count", COUNT_SQL, 0, {0}},
    [TN_PG_SYNC] = {"tn_sync", SYNC_SQL, 0, {0}},
    [TN_PG_NOTIFY] = {"tn_notify", NOTIFY_SQL, 0, {0}},
};
