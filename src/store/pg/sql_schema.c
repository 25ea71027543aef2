/* SPDX-License-Identifier: MIT */
/* The schema of the PostgreSQL store: the session settings every
 * connection starts with, the versioned migrations (each runs once, in
 * its own transaction with its version row, src/store/pg/conn.c), and the
 * step that lifts the token sequence above every stored token.  Text
 * only; the statements that decide are in sql.c and sql_session.c. */
#include "store/pg/sql.h"

/* Advisory lock key ("tenure" in ASCII) held while migrating. */
#define LOCK_KEY "127978993709669"

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
    /* Sessions (docs/SESSIONS.md): a lease under a session lives as long
     * as its session row (sql_text.h, LEASE_END); its own expires_at is
     * 'infinity' meanwhile.  prev_end_reason: how the grant an acquire
     * replaced ended (its session may have been deleted).  n_leases counts its
     * live leases (kept by every statement that grants or releases under it).
     * The indexes: a session's leases (DELETE, the sweep, the count), sessions
     * by owner (the list's prefix), the running ones by expiry and the ended
     * ones (the sweep). */
    {5, "CREATE TABLE IF NOT EXISTS tenure_sessions ("
        " id text COLLATE \"C\" PRIMARY KEY,"
        " owner_id text COLLATE \"C\" NOT NULL,"
        " principal text,"
        " secret bytea NOT NULL,"
        " ttl_ms bigint NOT NULL,"
        " expires_at timestamptz NOT NULL,"
        " ended_at timestamptz,"
        " end_reason text,"
        " n_leases bigint NOT NULL DEFAULT 0);"
        " CREATE INDEX IF NOT EXISTS tenure_sessions_owner"
        " ON tenure_sessions (owner_id);"
        " CREATE INDEX IF NOT EXISTS tenure_sessions_running"
        " ON tenure_sessions (expires_at) WHERE ended_at IS NULL;"
        " CREATE INDEX IF NOT EXISTS tenure_sessions_ended"
        " ON tenure_sessions (id) WHERE ended_at IS NOT NULL;"
        " ALTER TABLE leases ADD COLUMN IF NOT EXISTS session_id"
        " text COLLATE \"C\","
        " ADD COLUMN IF NOT EXISTS prev_end_reason text;"
        " CREATE INDEX IF NOT EXISTS leases_session ON leases (session_id)"
        " WHERE session_id IS NOT NULL AND NOT released"},
};
const size_t tn_pg_n_migrations =
    sizeof(tn_pg_migrations) / sizeof(tn_pg_migrations[0]);
