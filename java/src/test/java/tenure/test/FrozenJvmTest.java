// SPDX-License-Identifier: MIT
package tenure.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import tenure.AcquireOptions;
import tenure.Client;
import tenure.Json;
import tenure.Lease;

/**
 * The incident with a JVM: a worker (Worker, a JVM of its own) holds a
 * lease through hold(), is frozen whole (SIGSTOP, as a stop-the-world GC
 * pause would) between its held() check and its write, stays frozen past
 * its TTL while the lease goes to a successor that writes through the
 * fence, and is resumed (SIGCONT).  Its stale write is refused by the JDBC
 * fence, in SQLite and in PostgreSQL, as the C kit refuses it; it learns
 * the loss, and hold() throws Lost/Expired without releasing the
 * successor's grant.  The control runs the same worker without the fence
 * and sees the zombie's write land: the scenario really makes one.
 */
class FrozenJvmTest {
    /** TTL of the worker's lease; it stays frozen past the whole of it. */
    static final long TTL_MS = 4000;
    static final long FROZEN_MS = TTL_MS + 500;

    static TestServer srv;
    static Client c;

    @BeforeAll
    static void start() throws Exception {
        srv = TestServer.start();
        c = Client.builder().url(srv.url).build();
    }

    @AfterAll
    static void stop() {
        srv.close();
    }

    /** A running Worker JVM and the JSON lines it printed. */
    static final class W {
        final Process p;
        final BlockingQueue<Map<String, Object>> lines = new LinkedBlockingQueue<>();
        final List<Map<String, Object>> got = new ArrayList<>();

        W(String... args) throws Exception {
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), Worker.class.getName()));
            cmd.addAll(List.of(args));
            p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            Thread t = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String ln; (ln = r.readLine()) != null;) {
                        try {
                            lines.add(Json.parseObject(ln));
                        } catch (IllegalArgumentException e) {
                            System.err.println("worker: " + ln);
                        }
                    }
                } catch (Exception e) {
                    // the worker ended
                }
                lines.add(Map.of("eof", true));
            });
            t.setDaemon(true);
            t.start();
        }

        Map<String, Object> until(String key) throws Exception {
            for (;;) {
                Map<String, Object> ev = lines.poll(60, TimeUnit.SECONDS);
                if (ev == null || ev.containsKey("eof")) {
                    fail("worker ended before \"" + key + "\": " + got);
                }
                got.add(ev);
                if (ev.containsKey(key)) {
                    return ev;
                }
            }
        }

        int rest() throws Exception {
            for (;;) {
                Map<String, Object> ev = lines.poll(60, TimeUnit.SECONDS);
                if (ev == null || ev.containsKey("eof")) {
                    break;
                }
                got.add(ev);
            }
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the worker did not exit");
            return p.exitValue();
        }

        Map<String, Object> after(String key) {
            for (int k = 0; k + 1 < got.size(); k++) {
                if (got.get(k).containsKey(key)) {
                    return got.get(k + 1);
                }
            }
            return null;
        }

        void kill() {
            if (p.isAlive()) {
                signal("CONT");
                p.destroyForcibly();
            }
        }

        void signal(String sig) {
            try {
                new ProcessBuilder("kill", "-" + sig, Long.toString(p.pid())).inheritIO().start().waitFor();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }

        boolean stopped() throws Exception {
            String s = Files.readString(Path.of("/proc/" + p.pid() + "/stat"));
            String state = s.substring(s.lastIndexOf(')') + 2).split(" ")[0];
            return state.equals("T") || state.equals("t");
        }
    }

    /**
     * The incident up to the resumption: the worker wrote once, froze in the
     * gap, and the successor holds the lease and wrote (through the fence)
     * while it was frozen.  Returns the worker's token and the successor.
     */
    static long[] freezeAndTakeOver(W w, String spec, String name) throws Exception {
        long t1 = (Long) w.until("token").get("token");
        w.until("stopping");
        long end = System.nanoTime() + 10_000_000_000L;
        while (!w.stopped()) {
            if (System.nanoTime() - end > 0) {
                fail("the worker did not stop");
            }
            Thread.sleep(10);
        }
        long frozenAt = System.nanoTime();
        c.forceRelease(name);
        Lease succ = c.acquire(name, AcquireOptions.ttlMs(10_000).owner("successor"));
        assertTrue(succ.token() > t1, "successor's token " + succ.token() + " <= " + t1);
        assertTrue(Sink.write(spec, name, succ.token(), 100, true), "the successor's fenced write");
        long left = FROZEN_MS - (System.nanoTime() - frozenAt) / 1_000_000L;
        if (left > 0) {
            Thread.sleep(left);
        }
        w.signal("CONT");
        return new long[] {t1, succ.token()};
    }

    @ParameterizedTest
    @ValueSource(strings = {"sqlite", "postgres"})
    void frozenJvmIsFenced(String kind) throws Exception {
        String spec = Support.newSink(kind);
        String name = "java-frozen/" + kind;
        W w = new W(Long.toString(TTL_MS), srv.url, name, spec);
        try {
            long[] t = freezeAndTakeOver(w, spec, name);
            int code = w.rest();
            Map<String, Object> ev = w.after("stopping");
            System.out.println("frozen JVM (" + kind + "): the write after the pause: " + ev);
            assertTrue(ev != null && Long.valueOf(1).equals(ev.get("step")) && Boolean.FALSE.equals(ev.get("admitted")),
                    "the zombie's write after the gap was not refused: " + w.got);
            Map<String, Object> learned = null;
            for (Map<String, Object> e : w.got) {
                if (e.containsKey("learned") && learned == null) {
                    learned = e;
                }
            }
            assertTrue(learned != null && Long.valueOf(0).equals(learned.get("safe"))
                    && List.of("Lost", "Expired").contains(learned.get("learned")),
                    "the worker did not learn the loss with safe time 0: " + w.got);
            Object raised = w.got.get(w.got.size() - 1).get("hold_raised");
            assertTrue(code == 4 && List.of("Lost", "Expired").contains(raised), "hold did not end in a loss (exit "
                    + code + "): " + w.got);
            assertEquals(List.of(name + "/" + t[0] + "/0", name + "/" + t[1] + "/100"), Sink.rows(spec),
                    "the sink holds the worker's first write and the successor's only");
            assertEquals(t[1], Sink.mark(spec, name));
            assertTrue(c.check(name, t[1]).current(), "hold released the successor's grant");
            assertEquals("stale", Support.cKit(spec, name, t[0]), "the C kit disagrees");
            assertEquals("admitted", Support.cKit(spec, name, t[1]), "the C kit disagrees");
        } finally {
            w.kill();
        }
    }

    /** The control: without the fence the zombie's write lands after the successor's. */
    @Test
    void frozenJvmWithoutFenceWrites() throws Exception {
        String spec = Support.newSink("sqlite");
        String name = "java-frozen/control";
        W w = new W("--no-fence", Long.toString(TTL_MS), srv.url, name, spec);
        try {
            long[] t = freezeAndTakeOver(w, spec, name);
            assertEquals(4, w.rest(), "exit: " + w.got);
            Map<String, Object> ev = w.after("stopping");
            System.out.println("frozen JVM without the fence: the write after the pause: " + ev);
            assertTrue(ev != null && Boolean.TRUE.equals(ev.get("admitted")), "without the fence it should land: " + w.got);
            assertEquals(List.of(name + "/" + t[0] + "/0", name + "/" + t[1] + "/100", name + "/" + t[0] + "/1"),
                    Sink.rows(spec));
        } finally {
            w.kill();
        }
    }
}
