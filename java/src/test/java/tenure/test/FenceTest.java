// SPDX-License-Identifier: MIT
package tenure.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import tenure.fence.Fence;

/**
 * The JDBC fence on real SQLite files and a real PostgreSQL: the rule
 * (equal admitted, lower refused, the mark never moves down), the
 * decision rolled back with its transaction, the checks before anything is
 * sent, and the C kit's statements and table shared with it.
 */
class FenceTest {
    /** Each run of adjacent C string literals of src/fence/FILE, joined. */
    static List<String> cStrings(String file) throws Exception {
        String src = Files.readString(Path.of(TestServer.src(), "src", "fence", file));
        Matcher m = Pattern.compile("\"((?:[^\"\\\\\\n]|\\\\.)*)\"").matcher(src);
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        int end = -1;
        while (m.find()) {
            if (end >= 0 && !src.substring(end, m.start()).isBlank()) {
                out.add(cur.toString());
                cur.setLength(0);
            }
            cur.append(m.group(1));
            end = m.end();
        }
        out.add(cur.toString());
        return out;
    }

    static void assertIn(List<String> lits, String stmt, String file) {
        assertTrue(lits.stream().anyMatch(l -> l.contains(stmt)), file + " does not contain " + stmt);
    }

    @Test
    void statementsAreTheCKits() throws Exception {
        List<String> sq = cStrings("sqlite.c");
        for (String s : List.of(Fence.SQLITE_CREATE, Fence.SQLITE_UPSERT, Fence.SQLITE_GET)) {
            assertIn(sq, s, "sqlite.c");
        }
        List<String> pg = cStrings("pg.c");
        for (String s : List.of(Fence.PG_CREATE_TABLE, Fence.PG_CREATE_FUNCTION)) {
            assertIn(pg, s, "pg.c");
        }
        // JDBC's "?" placeholders stand where the C kit has $1, $2
        assertIn(pg, Fence.PG_ADVANCE.replaceFirst("\\?", "\\$1").replaceFirst("\\?", "\\$2"), "pg.c");
        assertIn(pg, Fence.PG_GET.replace("?", "$1"), "pg.c");
        assertTrue(String.join("", pg).contains("\"" + Fence.PG_LOCK_KEY + "\"")
                || Files.readString(Path.of(TestServer.src(), "src/fence/pg.c")).contains("\"" + Fence.PG_LOCK_KEY + "\""));
    }

    @ParameterizedTest
    @ValueSource(strings = {"sqlite", "postgres"})
    void ruleAndSharedMarks(String kind) throws Exception {
        String spec = Support.newSink(kind);
        try (Connection c = Sink.open(spec)) {
            assertEquals(0, Fence.mark(c, "r"));
            assertTrue(Fence.admit(c, "r", 5));
            assertTrue(Fence.admit(c, "r", 5), "an equal token is the same holder's");
            assertFalse(Fence.admit(c, "r", 4), "a lower token is stale");
            assertTrue(Fence.admit(c, "r", 7));
            assertThrows(Fence.StaleTokenException.class, () -> Fence.require(c, "r", 6));
            assertEquals(7, Fence.mark(c, "r"));
            c.commit();
            assertTrue(Fence.admit(c, "r", 9));
            c.rollback(); // the decision goes with its transaction
            assertEquals(7, Fence.mark(c, "r"));
            c.commit();
        }
        // the C kit on the same table: it refuses what is below the Java mark and raises it
        assertEquals("stale", Support.cKit(spec, "r", 6));
        assertEquals("admitted", Support.cKit(spec, "r", 8));
        try (Connection c = Sink.open(spec)) {
            assertFalse(Fence.admit(c, "r", 7), "the mark the C kit raised");
            assertTrue(Fence.admit(c, "other", 1), "marks are per resource");
            c.commit();
        }
    }

    @Test
    void argumentsAndAutoCommitAreCheckedFirst() throws Exception {
        String spec = Support.newSink("sqlite");
        try (Connection c = Sink.open(spec)) {
            for (String r : new String[] {"", "x".repeat(Fence.NAME_MAX + 1), "a\0b"}) {
                assertThrows(IllegalArgumentException.class, () -> Fence.admit(c, r, 1));
            }
            assertThrows(IllegalArgumentException.class, () -> Fence.admit(c, "a", Fence.TOKEN_MAX + 1));
            assertThrows(IllegalArgumentException.class, () -> Fence.admit(c, "a", -1));
            assertTrue(Fence.admit(c, "x".repeat(Fence.NAME_MAX), Fence.TOKEN_MAX));
            c.setAutoCommit(true);
            SQLException e = assertThrows(SQLException.class, () -> Fence.admit(c, "a", 1));
            assertTrue(e.getMessage().contains("outside a transaction"), e.getMessage());
        }
    }
}
