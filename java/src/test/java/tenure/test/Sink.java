// SPDX-License-Identifier: MIT
package tenure.test;

import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import tenure.fence.Fence;

/**
 * A sink for the tests: a rows(resource, token, step) table in SQLite
 * (spec "sqlite:PATH", Debian's xerial sqlite-jdbc) or PostgreSQL (a
 * postgresql:// URL, Debian's pgjdbc), written with or without the fence.
 */
public final class Sink {
    private Sink() {
    }

    /** The JDBC URL of a spec. */
    public static String jdbc(String spec) {
        if (spec.startsWith("sqlite:")) {
            // IMMEDIATE: the fence's write transaction holds the database from its BEGIN
            return "jdbc:sqlite:" + spec.substring(7) + "?transaction_mode=IMMEDIATE&busy_timeout=10000";
        }
        URI u = URI.create(spec);
        String user = u.getUserInfo() == null ? "postgres" : u.getUserInfo().split(":")[0];
        return "jdbc:postgresql://" + u.getHost() + ":" + u.getPort() + u.getPath() + "?user=" + user;
    }

    public static Connection open(String spec) throws SQLException {
        Connection c = DriverManager.getConnection(jdbc(spec));
        c.setAutoCommit(false);
        return c;
    }

    public static void createData(String spec) throws SQLException {
        try (Connection c = open(spec); Statement st = c.createStatement()) {
            st.executeUpdate("CREATE TABLE IF NOT EXISTS rows (resource TEXT, token BIGINT, step INTEGER)");
            c.commit();
        }
    }

    /** One write: the fence's decision and the row in one transaction (or the row alone, unfenced). */
    public static boolean write(String spec, String resource, long token, int step, boolean fenced)
            throws SQLException {
        try (Connection c = open(spec)) {
            if (fenced && !Fence.admit(c, resource, token)) {
                c.rollback();
                return false;
            }
            try (PreparedStatement st = c.prepareStatement("INSERT INTO rows VALUES (?, ?, ?)")) {
                st.setString(1, resource);
                st.setLong(2, token);
                st.setInt(3, step);
                st.executeUpdate();
            }
            c.commit();
            return true;
        }
    }

    /** The rows in insertion order, as "resource/token/step". */
    public static List<String> rows(String spec) throws SQLException {
        List<String> out = new ArrayList<>();
        String order = spec.startsWith("sqlite:") ? "rowid" : "ctid";
        try (Connection c = open(spec); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT resource, token, step FROM rows ORDER BY " + order)) {
            while (rs.next()) {
                out.add(rs.getString(1) + "/" + rs.getLong(2) + "/" + rs.getInt(3));
            }
        }
        return out;
    }

    public static long mark(String spec, String resource) throws SQLException {
        try (Connection c = open(spec)) {
            return Fence.mark(c, resource);
        }
    }
}
