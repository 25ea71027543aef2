// SPDX-License-Identifier: MIT
package tenure.fence;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The fence for JDBC sinks: admit a write only if its fencing token is at
 * least the highest token the sink has seen for the resource (the mark),
 * and raise the mark in the same transaction as the write.  Equal tokens
 * are admitted (the same holder's writes), lower ones are refused, and the
 * mark never moves down.
 *
 * <p>It uses the C fence kit's table and SQL (src/fence/sqlite.c,
 * src/fence/pg.c; docs/FENCING.md), so Java, C, Python and Go writers can
 * share one sink, in any order:
 * <ul>
 * <li>SQLite: tenure_fence(resource TEXT PRIMARY KEY NOT NULL, hwm INTEGER
 * NOT NULL CHECK (hwm &gt;= 0)), created if missing, and one conditional
 * upsert;</li>
 * <li>PostgreSQL: tenure_fence(resource text PRIMARY KEY, hwm bigint NOT
 * NULL CHECK (hwm &gt;= 0)) and the SQL function tenure_fence_advance(resource
 * text, token bigint) returns boolean, created if missing under the kit's
 * advisory lock.</li>
 * </ul>
 * Every call needs a connection inside a transaction (auto-commit off): a
 * check that commits apart from its write fences nothing.  Commit the
 * write together with the decision, or roll both back.  The database is
 * told by the connection's metadata (PostgreSQL or SQLite).
 */
public final class Fence {
    /** Tokens travel as JSON integers below 2^53. */
    public static final long TOKEN_MAX = 1L << 53;
    /** Bytes of a resource (lease) name, at most. */
    public static final int NAME_MAX = 256;
    /** The advisory lock under which the PostgreSQL schema is created. */
    public static final long PG_LOCK_KEY = 7300406L;

    /** The statements of the C kit (src/fence/sqlite.c), byte for byte. */
    public static final String SQLITE_CREATE = "CREATE TABLE IF NOT EXISTS tenure_fence ("
            + " resource TEXT PRIMARY KEY NOT NULL,"
            + " hwm INTEGER NOT NULL CHECK (hwm >= 0))";
    public static final String SQLITE_UPSERT = "INSERT INTO tenure_fence(resource, hwm) VALUES (?1, ?2)"
            + " ON CONFLICT(resource) DO UPDATE SET hwm = excluded.hwm"
            + " WHERE tenure_fence.hwm <= excluded.hwm";
    public static final String SQLITE_GET = "SELECT hwm FROM tenure_fence WHERE resource=?1";

    /** The schema of the C kit (src/fence/pg.c), byte for byte. */
    public static final String PG_CREATE_TABLE = "CREATE TABLE IF NOT EXISTS tenure_fence ("
            + " resource text PRIMARY KEY,"
            + " hwm bigint NOT NULL CHECK (hwm >= 0));";
    public static final String PG_CREATE_FUNCTION = "CREATE OR REPLACE FUNCTION tenure_fence_advance(resource text,"
            + " token bigint) RETURNS boolean LANGUAGE sql VOLATILE AS $f$"
            + " WITH up AS ("
            + "  INSERT INTO tenure_fence AS f (resource, hwm) VALUES ($1, $2)"
            + "  ON CONFLICT (resource) DO UPDATE SET hwm = EXCLUDED.hwm"
            + "  WHERE f.hwm <= EXCLUDED.hwm RETURNING 1)"
            + " SELECT EXISTS (SELECT 1 FROM up) $f$;";
    /** The C kit's "SELECT tenure_fence_advance($1, $2::bigint)" with JDBC's placeholders. */
    public static final String PG_ADVANCE = "SELECT tenure_fence_advance(?, ?::bigint)";
    /** The C kit's "SELECT hwm FROM tenure_fence WHERE resource=$1" with JDBC's placeholder. */
    public static final String PG_GET = "SELECT hwm FROM tenure_fence WHERE resource=?";
    static final String PG_PRESENT = "SELECT to_regclass('tenure_fence') IS NOT NULL"
            + " AND to_regprocedure('tenure_fence_advance(text,bigint)') IS NOT NULL";

    private Fence() {
    }

    /** Thrown by {@link #require} when the token is below the resource's mark. */
    public static final class StaleTokenException extends SQLException {
        private static final long serialVersionUID = 1L;

        StaleTokenException(String resource, long token) {
            super("fence: token " + token + " of \"" + resource + "\" is below the mark (stale)");
        }
    }

    private enum Kind { SQLITE, POSTGRES }

    private static Kind kind(Connection conn) throws SQLException {
        String p = conn.getMetaData().getDatabaseProductName();
        if ("PostgreSQL".equalsIgnoreCase(p)) {
            return Kind.POSTGRES;
        }
        if ("SQLite".equalsIgnoreCase(p)) {
            return Kind.SQLITE;
        }
        throw new SQLException("fence: unsupported database " + p + " (PostgreSQL or SQLite)");
    }

    private static void checkArgs(Connection conn, String resource, long token) throws SQLException {
        if (resource == null || resource.isEmpty() || resource.indexOf('\0') >= 0
                || resource.getBytes(StandardCharsets.UTF_8).length > NAME_MAX) {
            throw new IllegalArgumentException("fence: resource must be 1 to " + NAME_MAX + " bytes without NUL");
        }
        if (token < 0 || token > TOKEN_MAX) {
            throw new IllegalArgumentException("fence: token " + token + " is not in [0, 2^53]");
        }
        if (conn.getAutoCommit()) {
            throw new SQLException("fence: check outside a transaction (turn auto-commit off)");
        }
    }

    /**
     * Decides one write inside conn's transaction: true when token is
     * admitted (it is at least the mark; the mark is now token), false when
     * it is stale (the mark is unchanged).  Creates the schema if missing.
     * In PostgreSQL the row lock of the upsert orders concurrent writers of
     * one resource until the transaction ends; SQLite has no row locks, so
     * open the transaction as a write transaction where several processes
     * write (xerial's sqlite-jdbc: "?transaction_mode=IMMEDIATE").
     *
     * @throws IllegalArgumentException an empty or too long resource, one
     *     with a NUL, or a token above 2^53; nothing is sent
     * @throws SQLException auto-commit is on, or the database failed
     */
    public static boolean admit(Connection conn, String resource, long token) throws SQLException {
        checkArgs(conn, resource, token);
        if (kind(conn) == Kind.SQLITE) {
            migrateSQLite(conn);
            try (PreparedStatement st = conn.prepareStatement(SQLITE_UPSERT)) {
                st.setString(1, resource);
                st.setLong(2, token);
                return st.executeUpdate() == 1;
            }
        }
        migratePostgres(conn);
        try (PreparedStatement st = conn.prepareStatement(PG_ADVANCE)) {
            st.setString(1, resource);
            st.setLong(2, token);
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("fence: tenure_fence_advance returned no row");
                }
                return rs.getBoolean(1);
            }
        }
    }

    /** {@link #admit} throwing {@link StaleTokenException} instead of returning false. */
    public static void require(Connection conn, String resource, long token) throws SQLException {
        if (!admit(conn, resource, token)) {
            throw new StaleTokenException(resource, token);
        }
    }

    /** The mark of resource (0 when none, or no table yet). */
    public static long mark(Connection conn, String resource) throws SQLException {
        boolean sqlite = kind(conn) == Kind.SQLITE;
        String present = sqlite
                ? "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='tenure_fence'"
                : "SELECT CASE WHEN to_regclass('tenure_fence') IS NULL THEN 0 ELSE 1 END";
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(present)) {
            if (!rs.next() || rs.getLong(1) == 0) {
                return 0;
            }
        }
        try (PreparedStatement st = conn.prepareStatement(sqlite ? SQLITE_GET : PG_GET)) {
            st.setString(1, resource);
            try (ResultSet rs = st.executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }
    }

    /** Creates the SQLite mark table if missing (tn_fence_sqlite_migrate). */
    public static void migrateSQLite(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.executeUpdate(SQLITE_CREATE);
        }
    }

    /**
     * Creates the PostgreSQL mark table and tenure_fence_advance if missing,
     * inside conn's transaction, under the kit's advisory lock (as
     * tn_fence_pg_migrate does), so any number of processes may run it at
     * once.
     */
    public static void migratePostgres(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement()) {
            try (ResultSet rs = st.executeQuery(PG_PRESENT)) {
                if (rs.next() && rs.getBoolean(1)) {
                    return;
                }
            }
            st.execute("SET LOCAL client_min_messages = warning");
            st.execute("SELECT pg_advisory_xact_lock(" + PG_LOCK_KEY + ")");
            st.execute(PG_CREATE_TABLE);
            st.execute(PG_CREATE_FUNCTION);
        }
    }
}
