/* SPDX-License-Identifier: MIT */
/* The SQL of the PostgreSQL store.  Every decision is one statement on the
 * database clock.  The acquire statement allocates the token only while it
 * holds the row lock: nextval() in the ON CONFLICT DO UPDATE SET list runs
 * after the conflicting row is locked and its compare-and-set (released, or
 * expired past the lock delay) holds, so a slow acquirer can never install a
 * token below the row's current one (see docs/OPERATIONS.md). */
#include "pg_sql.h"

#define OID_BOOL 16u
#define OID_BYTEA 17u
#define OID_INT8 20u
#define OID_TEXT 25u

/* Advisory lock key ("tenure" in ASCII) held while migrating. */
#define LOCK_KEY "127978993709669"

#define EXPIRES_IN(row)                                                        \
    "greatest(0, floor(extract(epoch FROM (" row ".expires_at - now()))"       \
    " * 1000))::bigint"

const char tn_pg_sql_session[] =
    "SET synchronous_commit TO on; SET application_name TO 'tenured';"
    " SET lock_timeout TO 0; SELECT pg_advisory_lock(" LOCK_KEY ")";

const char tn_pg_sql_version[] =
    "CREATE TABLE IF NOT EXISTS tenure_schema_version ("
    " version integer PRIMARY KEY,"
    " applied_at timestamptz NOT NULL DEFAULT now());"
    " SELECT coalesce(max(version), 0) FROM tenure_schema_version";

/* Under table locks that exclude every acquire statement in flight (each
 * holds ROW EXCLUSIVE on leases from its start to its commit), so reading
 * the maximum and moving the sequence cannot race with a nextval(); the
 * sequence only ever moves up. */
const char tn_pg_sql_sequence[] =
    "BEGIN;"
    " LOCK TABLE leases, lease_grants IN SHARE ROW EXCLUSIVE MODE;"
    " SELECT setval('lease_token_seq', m.top)"
    " FROM (SELECT greatest((SELECT max(fencing_token) FROM leases),"
    " (SELECT max(token) FROM lease_grants)) AS top) m, lease_token_seq s"
    " WHERE m.top IS NOT NULL AND m.top >= CASE WHEN s.is_called"
    " THEN s.last_value + 1 ELSE s.last_value END;"
    " COMMIT;"
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
};
const size_t tn_pg_n_migrations =
    sizeof(tn_pg_migrations) / sizeof(tn_pg_migrations[0]);

/* $1 name, $2 owner_id, $3 ttl_ms, $4 lock_delay_ms, $5 request_id or NULL,
 * $6 secret.  g: the grant, made only when the CAS on the locked row holds
 * (a new name inserts; its VALUES nextval() is safe because no token of that
 * name exists and rows are never deleted; on conflict that value is simply
 * skipped).  cur: when nothing was granted, the row as locked by g (FOR
 * UPDATE reads the newest version), classified as replay (same owner and
 * request_id, still live), held, or lock delay.  No row at all means the
 * row was inserted by a transaction our snapshot cannot see: the caller
 * runs the statement again. */
#ifndef TN_PLANT_BUG_TOKEN_BEFORE_LOCK
#    define ACQUIRE_SET_TOKEN " fencing_token = nextval('lease_token_seq'),"
#else
/* Negative control (docs/SAFETY.md): keep the token that VALUES drew
 * before the row lock, the mistake the issue warns about. */
#    define ACQUIRE_SET_TOKEN " fencing_token = excluded.fencing_token,"
#endif

#define ACQUIRE_SQL                                                            \
    "WITH g AS ("                                                              \
    " INSERT INTO leases AS l (name, owner_id, expires_at, fencing_token,"     \
    " secret, ttl_ms, lock_delay_ms, request_id, released)"                    \
    " VALUES ($1, $2, now() + $3 * interval '1 millisecond',"                  \
    " nextval('lease_token_seq'), $6, $3, $4, $5, false)"                      \
    " ON CONFLICT (name) DO UPDATE SET owner_id = excluded.owner_id,"          \
    " expires_at = excluded.expires_at," ACQUIRE_SET_TOKEN                     \
    " secret = excluded.secret, ttl_ms = excluded.ttl_ms,"                     \
    " lock_delay_ms = excluded.lock_delay_ms,"                                 \
    " request_id = excluded.request_id, released = false"                      \
    " WHERE l.released OR"                                                     \
    " l.expires_at + l.lock_delay_ms * interval '1 millisecond' <= now()"      \
    " RETURNING l.fencing_token, l.owner_id),"                                 \
    " led AS (INSERT INTO lease_grants (token, name, owner_id, ttl_ms,"        \
    " granted_at) SELECT g.fencing_token, $1, $2, $3, now() FROM g),"          \
    " cur AS (SELECT c.owner_id, c.fencing_token, c.secret, c.ttl_ms,"         \
    " c.request_id, c.expires_at, c.lock_delay_ms, c.released"                 \
    " FROM leases c WHERE c.name = $1 AND NOT EXISTS (SELECT 1 FROM g)"        \
    " FOR UPDATE)"                                                             \
    " SELECT 'g'::text, g.fencing_token, g.owner_id, NULL::bytea, $3::bigint," \
    " $3::bigint, 0::bigint FROM g"                                            \
    " UNION ALL"                                                               \
    " SELECT CASE WHEN NOT c.released AND c.expires_at > now() THEN"           \
    " CASE WHEN $5::text IS NOT NULL AND c.request_id = $5"                    \
    " AND c.owner_id = $2 THEN 'r' ELSE 'h' END ELSE 'd' END,"                 \
    " c.fencing_token, c.owner_id, c.secret, c.ttl_ms, " EXPIRES_IN(           \
        "c") ","                                                               \
             " greatest(1, ceil(extract(epoch FROM (c.expires_at"              \
             " + c.lock_delay_ms * interval '1 millisecond' - now())) * "      \
             "1000))::bigint"                                                  \
             " FROM cur c"

/* $1 name, $2 token, $3 secret, $4 ttl_ms (0 keeps the grant's).  The
 * UPDATE re-checks its WHERE on the newest row version after locking it,
 * so it never touches a newer grant.  On no update, c tells lost from
 * forbidden. */
#define RENEW_SQL                                                              \
    "WITH u AS (UPDATE leases l SET"                                           \
    " ttl_ms = CASE WHEN $4 > 0 THEN $4 ELSE l.ttl_ms END,"                    \
    " expires_at = now() + (CASE WHEN $4 > 0 THEN $4 ELSE l.ttl_ms END)"       \
    " * interval '1 millisecond'"                                              \
    " WHERE l.name = $1 AND NOT l.released AND l.expires_at > now()"           \
    " AND l.fencing_token = $2 AND l.secret = $3"                              \
    " RETURNING l.owner_id, l.fencing_token, l.ttl_ms),"                       \
    " c AS (SELECT c.fencing_token, c.secret, c.released, c.expires_at"        \
    " FROM leases c WHERE c.name = $1 AND NOT EXISTS (SELECT 1 FROM u))"       \
    " SELECT 'ok'::text, u.owner_id, u.fencing_token, u.ttl_ms FROM u"         \
    " UNION ALL"                                                               \
    " SELECT CASE WHEN NOT c.released AND c.expires_at > now()"                \
    " AND c.fencing_token = $2 AND c.secret <> $3 THEN 'forbidden'"            \
    " ELSE 'lost' END, NULL, NULL, NULL FROM c"

/* $1 name, $2 token, $3 secret, $4 force.  The row stays (its token is the
 * name's floor); expires_at = now() and released = true free it at once,
 * without lock delay. */
#define RELEASE_SQL                                                            \
    "WITH u AS (UPDATE leases l SET released = true, expires_at = now(),"      \
    " request_id = NULL"                                                       \
    " WHERE l.name = $1 AND NOT l.released AND l.expires_at > now()"           \
    " AND ($4 OR (l.fencing_token = $2 AND l.secret = $3))"                    \
    " RETURNING l.owner_id, l.fencing_token, l.ttl_ms),"                       \
    " c AS (SELECT c.fencing_token, c.secret, c.released, c.expires_at"        \
    " FROM leases c WHERE c.name = $1 AND NOT EXISTS (SELECT 1 FROM u))"       \
    " SELECT 'ok'::text, u.owner_id, u.fencing_token, u.ttl_ms FROM u"         \
    " UNION ALL"                                                               \
    " SELECT CASE WHEN NOT c.released AND c.expires_at > now()"                \
    " AND c.fencing_token = $2 AND c.secret <> $3 THEN 'forbidden'"            \
    " ELSE 'lost' END, NULL, NULL, NULL FROM c"

#define GET_SQL                                                                \
    "SELECT owner_id, fencing_token, ttl_ms, " EXPIRES_IN(                     \
        "l") " FROM leases l WHERE l.name = $1 AND NOT l.released"             \
             " AND l.expires_at > now()"

#define CHECK_SQL                                                              \
    "SELECT fencing_token, NOT released AND expires_at > now(), owner_id,"     \
    " ttl_ms, " EXPIRES_IN("l") " FROM leases l WHERE l.name = $1"

/* $1 prefix, $2 after or NULL, $3 limit.  Names are COLLATE "C": byte
 * order, as the embedded store lists them. */
#define LIST_SQL                                                               \
    "SELECT name, owner_id, fencing_token, ttl_ms, " EXPIRES_IN(               \
        "l") " FROM leases l WHERE NOT l.released AND l.expires_at > now()"    \
             " AND starts_with(l.name, $1) AND ($2::text IS NULL OR l.name > " \
             "$2)"                                                             \
             " ORDER BY l.name LIMIT $3"

const struct tn_pg_stmt_def tn_pg_stmts[TN_PG_N_STMTS] = {
    [TN_PG_ACQUIRE] = {"tn_acquire",
                       ACQUIRE_SQL,
                       6,
                       {OID_TEXT, OID_TEXT, OID_INT8, OID_INT8, OID_TEXT,
                        OID_BYTEA}},
    [TN_PG_RENEW] = {"tn_renew",
                     RENEW_SQL,
                     4,
                     {OID_TEXT, OID_INT8, OID_BYTEA, OID_INT8}},
    [TN_PG_RELEASE] = {"tn_release",
                       RELEASE_SQL,
                       4,
                       {OID_TEXT, OID_INT8, OID_BYTEA, OID_BOOL}},
    [TN_PG_GET] = {"tn_get", GET_SQL, 1, {OID_TEXT}},
    [TN_PG_CHECK] = {"tn_check", CHECK_SQL, 1, {OID_TEXT}},
    [TN_PG_LIST] = {"tn_list", LIST_SQL, 3, {OID_TEXT, OID_TEXT, OID_INT8}},
};
