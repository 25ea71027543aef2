// SPDX-License-Identifier: MIT
package tenure.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import tenure.Client;
import tenure.Lease;
import tenure.Session;
import tenure.SessionOptions;
import tenure.TenureException;

/** Sessions of the Java client against a real tenured (and a proxy of the test's own in front of it). */
class SessionTest {
    static TestServer srv;
    static Client c;

    @BeforeAll
    static void start() throws Exception {
        srv = TestServer.start();
        c = Client.builder().url(srv.url).ownerId("java-session-test").build();
    }

    @AfterAll
    static void stop() {
        srv.close();
    }

    /** Every end a session's listeners heard, in order: "lease NAME reason" and "session reason". */
    static final class Heard {
        final List<String> log = new ArrayList<>();
        final CountDownLatch ended = new CountDownLatch(1);

        SessionOptions on(SessionOptions o) {
            return o.onLeaseEnd((l, why, err) -> add("lease " + l.name() + " " + why))
                    .onEnd((s, why, err) -> {
                        add("session " + why);
                        ended.countDown();
                    });
        }

        synchronized void add(String s) {
            log.add(s);
        }

        synchronized List<String> log() {
            return new ArrayList<>(log);
        }

        /** How many times each lease was reported, and with what. */
        synchronized Map<String, List<String>> leases() {
            Map<String, List<String>> m = new HashMap<>();
            for (String s : log) {
                String[] p = s.split(" ");
                if (p[0].equals("lease")) {
                    m.computeIfAbsent(p[1], k -> new ArrayList<>()).add(p[2]);
                }
            }
            return m;
        }
    }

    static List<String> names(String prefix, int n) {
        List<String> out = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            out.add(String.format("%s/%04d", prefix, k));
        }
        return out;
    }

    @Test
    void keepaliveKeepsEveryLeaseAndEndReleasesEachOnce() throws Exception {
        Heard h = new Heard();
        Session s = c.openSession(h.on(SessionOptions.ttlMs(900)));
        List<String> names = names("java-s/keep", 300); // two batches of the client
        Session.Claim claim = s.claim(names);
        assertEquals(300, claim.granted.size());
        assertTrue(claim.held.isEmpty() && claim.lockDelay.isEmpty());
        Thread.sleep(2500); // past two TTLs: only the keepalive keeps them
        for (Lease l : claim.granted) {
            assertTrue(l.held(), l.toString());
        }
        assertTrue(c.check(names.get(299), claim.lease(names.get(299)).token()).current());
        // claiming again what the session holds answers the same grants, the same handles
        Session.Claim again = s.claim(names.subList(0, 3));
        for (int k = 0; k < 3; k++) {
            assertSame(claim.granted.get(k), again.granted.get(k));
        }
        Session.Released r = s.release(claim.granted.subList(0, 10));
        assertEquals(10, r.released.size());
        assertEquals(0, r.lost.size());
        assertFalse(claim.granted.get(0).held());
        assertEquals(290, s.leases().size());
        assertEquals(10, h.leases().size());
        s.end();
        assertEquals(0, claim.granted.get(100).safeForMs());
        assertEquals("released", claim.granted.get(100).error().code());
        assertFalse(c.check(names.get(100), claim.granted.get(100).token()).current());
        List<String> log = h.log();
        assertEquals(301, log.size(), "every lease once, then the session: " + log.size());
        assertEquals("session released", log.get(300));
        for (List<String> why : h.leases().values()) {
            assertEquals(List.of("released"), why);
        }
        assertThrows(TenureException.Ended.class, s::renew);
        assertThrows(TenureException.Ended.class, s::end);
    }

    @Test
    void aLostSessionReportsEveryLeaseLostOnceThenItself() throws Exception {
        Heard h = new Heard();
        Session s = c.openSession(h.on(SessionOptions.ttlMs(1500)));
        Session.Claim claim = s.claim(names("java-s/lost", 5));
        Lease one = s.acquire("java-s/lost/one");
        c.forceEndSession(s.id());
        assertTrue(h.ended.await(5, TimeUnit.SECONDS), "the keepalive did not report the loss");
        Thread.sleep(700); // past another renew: a second report would show
        List<String> log = h.log();
        assertEquals(7, log.size(), log.toString());
        assertEquals("session lost", log.get(6));
        assertEquals(6, h.leases().size());
        for (List<String> why : h.leases().values()) {
            assertEquals(List.of("lost"), why);
        }
        assertFalse(one.held());
        assertFalse(claim.granted.get(4).held());
        assertTrue(one.error() instanceof TenureException.Lost);
        assertTrue(s.error() instanceof TenureException.Lost);
        assertThrows(TenureException.Lost.class, s::end);
        assertEquals(7, h.log().size(), "end() of a lost session reported again: " + h.log());
    }

    /**
     * The safe time counts from the sending of the open or renew, not from
     * its answer: with every answer held back 1.5 s, a 6 s session minus
     * its margin (600 ms) has at most 3.9 s left when the answer comes.
     */
    @Test
    void safeTimeCountsFromTheSendingOfTheLastAcknowledgedRenew() throws Exception {
        try (Proxy p = new Proxy(srv.url)) {
            Client slow = Client.builder().url(p.url()).requestTimeoutMs(10_000).build();
            p.delay(1500);
            Session s = slow.openSession(SessionOptions.ttlMs(6000).noKeepalive());
            long left = s.safeForMs();
            assertTrue(left > 0 && left <= 3900, "safe time after a slow open: " + left);
            Lease l = s.acquire("java-s/slow");
            assertTrue(l.safeForMs() <= 3900 - 1500, "the lease's is the session's: " + l.safeForMs());
            s.renew();
            left = s.safeForMs();
            assertTrue(left > 0 && left <= 3900, "safe time after a slow renew: " + left);
            p.delay(0);
            s.end();
        }
    }

    /**
     * A claim whose success was hidden behind a 503 (the client moved on to
     * the next URL and sent it again) answers the same grants: nothing is
     * "held" by the session itself.
     */
    @Test
    void aClaimSentAgainAfterA503AnswersTheSameGrants() throws Exception {
        try (Proxy p = new Proxy(srv.url)) {
            Client two = Client.builder().url(p.url()).url(srv.url).build();
            Session s = two.openSession(SessionOptions.ttlMs(5000));
            p.hideOnce(x -> x.method.equals("POST") && x.path.endsWith("/leases"));
            List<String> names = names("java-s/failover", 4);
            Session.Claim claim = s.claim(names);
            assertEquals(4, claim.granted.size(), "held: " + claim.held);
            assertTrue(claim.held.isEmpty());
            long claims = p.seen().stream().filter(x -> x.path.endsWith("/leases")).count();
            assertEquals(1, claims, "the first claim did not go through the proxy");
            for (Lease l : claim.granted) {
                assertTrue(c.check(l.name(), l.token()).current(), l.toString());
            }
            s.end();
        }
    }

    @Test
    void holdSessionInterruptsItsBodyWhenTheSessionIsLost() throws Exception {
        long start = System.nanoTime();
        AtomicInteger interrupted = new AtomicInteger();
        assertThrows(TenureException.Lost.class, () -> c.holdSession(SessionOptions.ttlMs(1500),
                names("java-s/hold-lost", 3), (s, claim) -> {
                    assertEquals(3, claim.granted.size());
                    c.forceEndSession(s.id());
                    try {
                        Thread.sleep(30_000);
                    } catch (InterruptedException e) {
                        interrupted.incrementAndGet();
                        throw e;
                    }
                    return null;
                }));
        assertEquals(1, interrupted.get());
        assertTrue((System.nanoTime() - start) / 1_000_000L < 10_000, "the body ran on after the loss");
        assertFalse(Thread.currentThread().isInterrupted(), "holdSession left the caller's thread interrupted");
    }

    @Test
    void holdSessionKeepsItsLeasesAndEndsTheSession() throws Exception {
        List<String> names = names("java-s/hold-kept", 3);
        Map<String, Long> tokens = new HashMap<>();
        String id = c.holdSession(SessionOptions.ttlMs(600), names, (s, claim) -> {
            Thread.sleep(1500); // past two TTLs
            for (Lease l : claim.granted) {
                assertTrue(l.held());
                tokens.put(l.name(), l.token());
            }
            return s.id();
        });
        assertEquals(3, tokens.size());
        for (Map.Entry<String, Long> t : tokens.entrySet()) {
            assertFalse(c.check(t.getKey(), t.getValue()).current());
        }
        assertEquals("not_found", assertThrows(TenureException.class, () -> c.getSession(id)).code());
    }

    @Test
    void anAdoptedSessionHasNoSafeTimeUntilRenewed() throws Exception {
        Session s = c.openSession(SessionOptions.ttlMs(5000).noKeepalive().owner("java-s-adopt"));
        Session a = c.adoptSession(s.id(), s.secret());
        assertEquals(0, a.safeForMs());
        assertNull(a.error());
        a.renew();
        assertTrue(a.safeForMs() > 0);
        Lease l = a.claim(List.of("java-s/adopted")).granted.get(0);
        assertTrue(l.held());
        assertEquals(1, c.getSession(s.id()).leases());
        s.end();
        assertFalse(c.check("java-s/adopted", l.token()).current());
        assertTrue(c.sessionsAll("java-s-adopt").isEmpty());
    }
}
