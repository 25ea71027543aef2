// SPDX-License-Identifier: MIT
package tenure.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import tenure.Client;
import tenure.Lease;
import tenure.LeaseInfo;
import tenure.share.Worker;

/**
 * The fair-share recipe over a real tenured: workers balance within one
 * shard of each other, a shard force-released under a worker is reported
 * lost and claimed again with a higher token, a worker that leaves has its
 * shards taken by the others, one that joins gets its share from their
 * surplus, and every shard reported gained is the live grant with the
 * token given.
 */
class ShareTest {
    @Test
    void targetSplitsWithinOne() {
        List<String> live = List.of("c", "a", "b");
        assertEquals(334, Worker.target(1000, live, "a"));
        assertEquals(333, Worker.target(1000, live, "b"));
        assertEquals(333, Worker.target(1000, live, "c"));
        assertEquals(10, Worker.target(10, List.of(), "x"));
        assertEquals(0, Worker.target(2, live, "c"));
        assertEquals(1, Worker.target(2, List.of("a", "b"), "a"), "me counted once when listed");
    }

    /** What a worker's callbacks say it holds. */
    static final class Owned {
        final Map<String, Lease> leases = new HashMap<>();
        final Map<String, String> lost = new HashMap<>();

        synchronized void gain(Map<String, Lease> ls) {
            leases.putAll(ls);
        }

        synchronized void loss(List<String> names, String why) {
            for (String n : names) {
                leases.remove(n);
                lost.put(n, why);
            }
        }

        synchronized int count() {
            return leases.size();
        }

        synchronized Map<String, Lease> copy() {
            return new HashMap<>(leases);
        }

        synchronized String why(String n) {
            return lost.get(n);
        }
    }

    final Map<String, Owned> ws = new HashMap<>();
    final Map<String, Worker> running = new HashMap<>();
    final List<String> shards = new ArrayList<>();
    Client c;

    void start(String name) throws Exception {
        Owned o = new Owned();
        ws.put(name, o);
        running.put(name, Worker.start(c, new Worker.Options("g", name, shards).ttlMs(1500)
                .onGain(o::gain).onLoss(o::loss)));
    }

    /** Waits until the live workers hold every shard, within one, each the live grant. */
    void balanced(String... live) throws Exception {
        List<Integer> counts = new ArrayList<>();
        for (long end = System.nanoTime() + 30_000_000_000L; System.nanoTime() - end < 0; Thread.sleep(50)) {
            counts.clear();
            for (String w : live) {
                counts.add(ws.get(w).count());
            }
            int sum = counts.stream().mapToInt(Integer::intValue).sum();
            int lo = counts.stream().mapToInt(Integer::intValue).min().orElse(0);
            int hi = counts.stream().mapToInt(Integer::intValue).max().orElse(0);
            if (sum == shards.size() && hi - lo <= 1) {
                for (String w : live) {
                    for (Map.Entry<String, Lease> e : ws.get(w).copy().entrySet()) {
                        assertTrue(c.check(e.getKey(), e.getValue().token()).current() && e.getValue().held(),
                                w + " holds " + e.getKey() + " token " + e.getValue().token());
                    }
                }
                return;
            }
        }
        fail(List.of(live) + " not balanced: " + counts);
    }

    /** Ends one shard of w on the server: w reports it lost, and it is claimed again with a higher token. */
    void forceRelease(String w) throws Exception {
        Map.Entry<String, Lease> one = ws.get(w).copy().entrySet().iterator().next();
        String name = one.getKey();
        c.forceRelease(name);
        for (long end = System.nanoTime() + 30_000_000_000L; !"lost".equals(ws.get(w).why(name)); Thread.sleep(20)) {
            assertTrue(System.nanoTime() - end < 0, "the loss of " + name + " went unseen: " + ws.get(w).why(name));
        }
        for (long end = System.nanoTime() + 30_000_000_000L;; Thread.sleep(20)) {
            try {
                if (c.get(name).token() > one.getValue().token()) {
                    return;
                }
            } catch (tenure.TenureException e) {
                // free for now
            }
            assertTrue(System.nanoTime() - end < 0, name + " was not claimed again");
        }
    }

    @Test
    void workersShareTheShards() throws Exception {
        try (TestServer srv = TestServer.start()) {
            c = Client.builder().url(srv.url).build();
            for (int k = 0; k < 31; k++) {
                shards.add(String.format("shard:%02d", k));
            }
            for (String w : List.of("w1", "w2", "w3")) {
                start(w);
            }
            balanced("w1", "w2", "w3");
            forceRelease("w1");
            balanced("w1", "w2", "w3");
            Map<String, Lease> had = ws.get("w2").copy();
            running.remove("w2").close(); // leaves: its session ends, its shards are free
            for (String n : had.keySet()) {
                assertEquals("stopped", ws.get("w2").why(n), n);
            }
            balanced("w1", "w3");
            start("w4"); // joins late: the others give their surplus back
            balanced("w1", "w3", "w4");
            for (Worker w : running.values()) {
                w.close();
            }
            List<LeaseInfo> left = c.listAll("shard:");
            assertEquals(List.of(), left, "after every worker stopped");
        }
    }
}
