// SPDX-License-Identifier: MIT
package tenure.test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Assumptions;

/** Sinks and the C kit for the tests. */
final class Support {
    private static final AtomicInteger DBS = new AtomicInteger();

    private Support() {
    }

    /**
     * A fresh sink of kind "sqlite" or "postgres" with its rows table; its
     * spec.  PostgreSQL runs where TENURE_TEST_PG_URL is set
     * (scripts/with-pg.sh); without it the case is skipped, and it fails
     * when the URL is set but the server cannot be reached.
     */
    static String newSink(String kind) throws Exception {
        String spec;
        if (kind.equals("sqlite")) {
            spec = "sqlite:" + Files.createTempDirectory("tenure-java-sink").resolve("sink.db");
        } else {
            String base = System.getenv("TENURE_TEST_PG_URL");
            Assumptions.assumeTrue(base != null && !base.isEmpty(),
                    "TENURE_TEST_PG_URL is not set (run under scripts/with-pg.sh)");
            String db = "tn_java_" + ProcessHandle.current().pid() + "_" + DBS.incrementAndGet();
            try (Connection c = DriverManager.getConnection(Sink.jdbc(base)); Statement st = c.createStatement()) {
                st.executeUpdate("CREATE DATABASE " + db);
            }
            spec = base.replaceAll("/[^/]*$", "/" + db);
        }
        Sink.createData(spec);
        return spec;
    }

    /** One check-and-advance of the C fence kit on spec in its own transaction: "admitted" or "stale". */
    static String cKit(String spec, String resource, long token) throws Exception {
        Path exe = Path.of(TestServer.bin(), "tn-conformance");
        Process p = new ProcessBuilder(exe.toString(), "--fence", spec, resource, Long.toString(token))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            out = r.readLine();
        }
        int code = p.waitFor();
        if (!(code == 0 && "admitted".equals(out)) && !(code == 3 && "stale".equals(out))) {
            throw new AssertionError(exe + " --fence " + resource + " " + token + ": exit " + code + ", " + out);
        }
        return out;
    }
}
