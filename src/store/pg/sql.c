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

#include "store/pg/sql_text.h"

/* The statements are SQL text, laid out one clause a line by hand. */
/* clang-format off */

/* Whether a grant still runs, for the statements that change it: on the
 * instant the row lock is held, not on now(), the start of the
 * transaction, nor on when the row was first read: a renew that began
 * before the expiry and waited for the row lock past it would otherwise
 * revive a grant that another instance already answered as ended
 * (docs/safety/revealed-end.md).  k reads the clock once, after a sub-select
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
 * or another principal than the one that acquired), and a lease held
 * under a session, which only its session's renew keeps ('session':
 * nothing changed). */
#define RENEW_TTL "CASE WHEN $4 > 0 THEN $4 ELSE l.ttl_ms END"
#define RENEW_SQL                                                              \
    "WITH" LOCKED_AT " u AS (UPDATE leases l SET"                              \
    " ttl_ms = CASE WHEN" STILL_RUNS " THEN " RENEW_TTL " ELSE l.ttl_ms END,"  \
    " expires_at = CASE WHEN" STILL_RUNS " THEN now() + " RENEW_TTL            \
    " * interval '1 millisecond' ELSE l.expires_at END"                        \
    " WHERE l.name = $1 AND NOT l.released AND l.session_id IS NULL"           \
    " AND l.fencing_token = $2 AND l.secret = $3"                              \
    " AND ($5::text IS NULL OR l.principal = $5)"                              \
    " RETURNING" STILL_RUNS                                                    \
    " AS ok, l.owner_id, l.fencing_token, l.ttl_ms)," FORBIDDEN_CTE            \
    " SELECT CASE WHEN u.ok THEN 'ok' ELSE 'lost' END, u.owner_id,"            \
    " u.fencing_token, u.ttl_ms FROM u"                                        \
    " UNION ALL" FORBIDDEN_ROW(RENEW_SESSION) " FROM c"

#define FORBIDDEN_CTE                                                          \
    " c AS (SELECT c.fencing_token, c.secret, c.released,"                     \
    " " LEASE_END("c") " AS ends, c.principal, c.session_id"                   \
    " FROM leases c WHERE c.name = $1 AND NOT EXISTS (SELECT 1 FROM u))"

/* The request names the grant (token, secret and principal match). */
#define NAMES_IT                                                               \
    " c.fencing_token = $2 AND c.secret = $3 AND ($5::text IS NULL"            \
    " OR c.principal = $5)"
#define RENEW_SESSION                                                          \
    " WHEN c.session_id IS NOT NULL AND NOT c.released AND" NAMES_IT           \
    " THEN 'session'"
#define FORBIDDEN_ROW(first)                                                   \
    " SELECT CASE" first " WHEN NOT c.released AND c.ends" STILL_RUNS_NOW      \
    " AND c.fencing_token = $2 AND (c.secret <> $3 OR ($5::text IS NOT NULL"   \
    " AND c.principal IS DISTINCT FROM $5)) THEN 'forbidden'"                  \
    " ELSE 'lost' END, NULL, NULL, NULL"

/* $1 name, $2 token, $3 secret, $4 force, $5 principal or NULL.  The row
 * stays (its token is the name's floor); expires_at = now() and released
 * = true free it at once, without lock delay.  The ledger records the end
 * and the event goes to the outbox.  A lease held under a session runs as
 * long as its session (LEASE_END): its session is locked first (ks, as
 * every statement locks a session before its leases), and its count goes
 * down by one.  The released row keeps its session_id (never read again
 * while released). */
#define RELEASE_EV                                                             \
    EV_LINE("CASE WHEN $4 THEN 'v' ELSE 'r' END", "u.fencing_token",           \
            "u.fencing_token", "u.owner_id", "$1")
#define RELEASE_RUNS RUNS_AT_LOCK(LEASE_END("l"))
#define RELEASE_LOCKS                                                          \
    " ks AS MATERIALIZED (SELECT 1 FROM tenure_sessions s WHERE s.id ="        \
    " (SELECT x.session_id FROM leases x WHERE x.name = $1"                    \
    " AND NOT x.released) FOR NO KEY UPDATE),"                                                     \
    " k AS MATERIALIZED (SELECT clock_timestamp() AS at FROM (SELECT 1"        \
    " FROM leases x WHERE x.name = $1 AND (SELECT count(*) FROM ks) >= 0"      \
    " OFFSET 0 FOR UPDATE) z),"

#define RELEASE_SQL                                                            \
    "WITH" RELEASE_LOCKS " u AS (UPDATE leases l SET released =" RELEASE_RUNS  \
    ", expires_at = CASE WHEN" RELEASE_RUNS " THEN now() ELSE l.expires_at"    \
    " END, request_id = CASE WHEN" RELEASE_RUNS " THEN NULL"                   \
    " ELSE l.request_id END"                                                   \
    " WHERE l.name = $1 AND NOT l.released"                                    \
    " AND ($4 OR (l.fencing_token = $2 AND l.secret = $3"                      \
    " AND ($5::text IS NULL OR l.principal = $5)))"                            \
    " RETURNING l.released AS ok, l.owner_id, l.fencing_token, l.ttl_ms,"      \
    " l.session_id),"                                                          \
    " n AS (UPDATE tenure_sessions s SET n_leases = s.n_leases - 1"            \
    " FROM u WHERE u.ok AND s.id = u.session_id),"                             \
    " led AS (UPDATE lease_grants e SET ended_at = now(), end_reason ="        \
    " CASE WHEN $4 THEN 'revoked' ELSE 'released' END"                         \
    " FROM u WHERE u.ok AND e.token = u.fencing_token),"                       \
    " ev AS (INSERT INTO tn_outbox (line) SELECT " RELEASE_EV                  \
    " FROM u WHERE u.ok)," FORBIDDEN_CTE                                       \
    " SELECT CASE WHEN u.ok THEN 'ok' ELSE 'lost' END, u.owner_id,"            \
    " u.fencing_token, u.ttl_ms FROM u UNION ALL" FORBIDDEN_ROW("") " FROM c"

/* The reads that can reveal an end (GET: not found, check: current:false)
 * must not reveal it while a change of the row is in flight: a renew that
 * found the grant running and holds the row may commit after the expiry
 * (a slow synchronous standby), and a reader of the old version would
 * answer the end before that commit revives it (docs/safety/revealed-end.md).  So a row that has run out on the snapshot, and whose end nobody
 * announced yet (expiry_noted: once that is committed, no change decided
 * before the end can still be in flight), is read FOR SHARE: the read
 * waits for the writer and then reads the newest version of the row.  The
 * condition is an uncorrelated sub-select, evaluated once on the snapshot,
 * so the re-check on the newest version keeps the row.  A row that runs
 * on the snapshot is read as before, without a lock.  A lease held under a
 * session is revived only by its session's renew: LEASE_END reads the
 * session row the same way (its own expires_at, 'infinity', never runs
 * out here). */
#define RUN_OUT                                                                \
    " coalesce((SELECT NOT y.released AND NOT y.expiry_noted"                  \
    " AND y.expires_at <= now() FROM leases y WHERE y.name = $1), false)"
#define READ_WAITING(cols)                                                     \
    "WITH w AS (SELECT " cols " FROM leases l WHERE l.name = $1 AND" RUN_OUT   \
    " FOR SHARE OF l) SELECT * FROM w UNION ALL SELECT " cols                  \
    " FROM leases l WHERE l.name = $1 AND NOT" RUN_OUT

/* Each read projects when the row ends once (e), then compares it. */
#define READ_COLS                                                              \
    "l.owner_id, l.fencing_token, " LEASE_TTL("l") " AS ttl_ms,"               \
    " " LEASE_END("l") " AS e, l.lock_delay_ms, l.released, l.session_id"
#define READ_ENDING(cols)                                                      \
    "SELECT " cols " FROM (" READ_WAITING(READ_COLS) ") r"

#define GET_SQL                                                                \
    READ_ENDING("r.owner_id, r.fencing_token, r.ttl_ms,"                       \
                " " EXPIRES_IN_AT("r.e") ", r.lock_delay_ms, r.session_id")    \
    " WHERE NOT r.released AND r.e > now()"

/* A name without a row (retired, or never granted) answers the retired
 * floor; one statement, one snapshot: the row and the floor that replaced
 * it are never both missed (docs/safety/retired-names.md). */
#define CHECK_RETIRED                                                          \
    " UNION ALL SELECT r.floor, false, NULL::text, NULL::bigint,"              \
    " NULL::bigint, NULL::text FROM tenure_retired r"                          \
    " WHERE NOT EXISTS (SELECT 1 FROM leases x WHERE x.name = $1)"

#define CHECK_SQL                                                              \
    READ_ENDING("r.fencing_token, NOT r.released AND r.e > now(),"             \
                " r.owner_id, r.ttl_ms, " EXPIRES_IN_AT("r.e") ","             \
                " CASE WHEN NOT r.released THEN r.session_id END")             \
    CHECK_RETIRED

/* $1 prefix, $2 after or NULL, $3 limit.  Names are COLLATE "C": byte
 * order, as the embedded store lists them.  A list reveals no end by
 * what it leaves out, but LEASE_END reads a session as every read does. */
#define LIST_SQL                                                               \
    "SELECT r.name, r.owner_id, r.fencing_token, r.ttl_ms,"                    \
    " " EXPIRES_IN_AT("r.e") ", r.lock_delay_ms, r.session_id"                 \
    " FROM (SELECT l.name, " READ_COLS " FROM leases l"                        \
    " WHERE NOT l.released AND starts_with(l.name, $1)"                        \
    " AND ($2::text IS NULL OR l.name > $2)) r"                                \
    " WHERE r.e > now() ORDER BY r.name LIMIT $3"

/* $1 name, $2 limit.  Newest first: token, owner_id, granted ms ago, end
 * (NULL while live), ended ms ago (NULL while live).  The current grant's
 * end is read from the lease row when the ledger has none yet (ran out,
 * not yet swept); an older grant without an end (written before the
 * ledger kept ends) was superseded when the next one was granted.  A
 * grant held under a session ends with it (LEASE_END, and
 * LEASE_END_REASON: released or revoked when it was deleted). */
#define HIST_GRANTED_AGO MS_SINCE("g.granted_at")
#define HIST_ENDED_AGO MS_SINCE("g.ended_at")
#define HIST_EXPIRED_AGO MS_SINCE(LEASE_END("l"))
#define HIST_SUPERSEDED_AGO MS_SINCE("coalesce(g.next_at, now())")
#define HIST_CURRENT "l.fencing_token = g.token"
#define HIST_OVER "(l.released OR " LEASE_END("l") " <= now())"

#define HISTORY_SQL                                                            \
    "SELECT g.token, g.owner_id, " HIST_GRANTED_AGO ","                        \
    " CASE WHEN g.ended_at IS NOT NULL THEN g.end_reason"                      \
    " WHEN " HIST_CURRENT " THEN CASE WHEN l.released THEN 'released'"         \
    " WHEN " HIST_OVER " THEN " LEASE_END_REASON("l") " END"                   \
    " ELSE 'superseded' END,"                                                  \
    " CASE WHEN g.ended_at IS NOT NULL THEN " HIST_ENDED_AGO                   \
    " WHEN " HIST_CURRENT " THEN CASE WHEN " HIST_OVER                         \
    " THEN " HIST_EXPIRED_AGO " END ELSE " HIST_SUPERSEDED_AGO " END"          \
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

/* Live leases, names (rows) and live sessions in the database, for
 * --max-leases, --max-names and --max-sessions (src/store/pg/limits.c):
 * one scan of leases, joined to the sessions their leases are held under.
 * A snapshot count: nothing here reveals an end. */
#define COUNT_SQL                                                              \
    "SELECT count(*) FILTER (WHERE NOT l.released AND CASE WHEN"               \
    " l.session_id IS NULL THEN l.expires_at > now() ELSE s.ended_at IS NULL"  \
    " AND s.expires_at > now() END), count(*), (SELECT count(*)"               \
    " FROM tenure_sessions t WHERE t.ended_at IS NULL"                         \
    " AND t.expires_at > now()) FROM leases l LEFT JOIN tenure_sessions s"     \
    " ON s.id = l.session_id"

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

/* clang-format on */

const struct tn_pg_stmt_def tn_pg_stmts[TN_PG_N_STMTS] = {
    [TN_PG_ACQUIRE] = {"tn_acquire",
                       tn_pg_sql_acquire,
                       8,
                       {OID_TEXT, OID_TEXT, OID_INT8, OID_INT8, OID_TEXT,
                        OID_BYTEA, OID_TEXT, OID_INT8}},
    [TN_PG_ACQUIRE_SESSION] = {"tn_acquire_session",
                               tn_pg_sql_acquire_session,
                               10,
                               {OID_TEXT, OID_TEXT, OID_INT8, OID_INT8,
                                OID_TEXT, OID_BYTEA, OID_TEXT, OID_INT8,
                                OID_TEXT, OID_BYTEA}},
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
    [TN_PG_SESSION_OPEN] = {"tn_session_open",
                            tn_pg_sql_session_open,
                            6,
                            {OID_TEXT, OID_TEXT, OID_TEXT, OID_BYTEA, OID_INT8,
                             OID_INT8}},
    [TN_PG_SESSION_RENEW] = {"tn_session_renew",
                             tn_pg_sql_session_renew,
                             4,
                             {OID_TEXT, OID_BYTEA, OID_INT8, OID_TEXT}},
    [TN_PG_SESSION_END] = {"tn_session_end",
                           tn_pg_sql_session_end,
                           4,
                           {OID_TEXT, OID_BYTEA, OID_BOOL, OID_TEXT}},
    [TN_PG_SESSION_GET] = {"tn_session_get",
                           tn_pg_sql_session_get,
                           1,
                           {OID_TEXT}},
    [TN_PG_SESSION_LIST] = {"tn_session_list",
                            tn_pg_sql_session_list,
                            3,
                            {OID_TEXT, OID_TEXT, OID_INT8}},
    [TN_PG_CLAIM] = {"tn_claim",
                     tn_pg_sql_claim,
                     10,
                     {OID_TEXT, OID_BYTEA, OID_TEXT, OID_TEXT, OID_INT8,
                      OID_TEXT_ARRAY, OID_BYTEA_ARRAY, OID_BOOL_ARRAY, OID_INT8,
                      OID_INT8}},
    [TN_PG_UNCLAIM] = {"tn_unclaim",
                       tn_pg_sql_unclaim,
                       5,
                       {OID_TEXT, OID_BYTEA, OID_TEXT, OID_TEXT_ARRAY,
                        OID_INT8_ARRAY}},
    [TN_PG_SESSION_SWEEP] = {"tn_session_sweep",
                             tn_pg_sql_session_sweep,
                             2,
                             {OID_INT8, OID_INT8}},
};
