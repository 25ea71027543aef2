// SPDX-License-Identifier: MIT
package tenure.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.sun.net.httpserver.HttpServer;

import tenure.AcquireOptions;
import tenure.Client;
import tenure.Event;
import tenure.EventStream;
import tenure.Lease;
import tenure.Session;
import tenure.TenureException;

/** The Java client against a real tenured (and, for transport faults, sockets of the test's own). */
class ClientTest {
    static TestServer srv;
    static Client c;

    @BeforeAll
    static void start() throws Exception {
        srv = TestServer.start();
        c = Client.builder().url(srv.url).ownerId("java-test").build();
    }

    @AfterAll
    static void stop() {
        srv.close();
    }

    @Test
    void movesOnAfterARefusedConnection() throws Exception {
        int dead = TestServer.freePort();
        Client two = Client.builder().url("127.0.0.1:" + dead).url(srv.url).build();
        Lease l = two.acquire("java/failover", 5000);
        assertTrue(l.held());
        assertEquals(l.token(), c.get("java/failover").token());
        l.release();
        Client none = Client.builder().url("127.0.0.1:" + dead).build();
        assertThrows(TenureException.Connect.class, () -> none.acquire("java/none", 5000));
    }

    /** A 503 moves on, and the acquire carries a request id drawn by the client. */
    @Test
    void movesOnAfterA503WithTheSameRequestId() throws Exception {
        HttpServer busy = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        List<String> bodies = new ArrayList<>();
        busy.createContext("/", ex -> {
            synchronized (bodies) {
                bodies.add(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            }
            byte[] b = "{\"error\":\"unavailable\",\"message\":\"store not writable\"}".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(503, b.length);
            ex.getResponseBody().write(b);
            ex.close();
        });
        busy.start();
        try {
            Client two = Client.builder().url("127.0.0.1:" + busy.getAddress().getPort()).url(srv.url).build();
            Lease l = two.acquire("java/503", 5000);
            assertEquals(1, bodies.size());
            assertTrue(bodies.get(0).matches(".*\"request_id\":\"[0-9a-f]{32}\".*"), bodies.get(0));
            l.release();
        } finally {
            busy.stop(0);
        }
    }

    /** A request that was sent and got no answer is not sent again elsewhere: its outcome is unknown. */
    @Test
    void aTimedOutRequestIsNotRetriedElsewhere() throws Exception {
        try (ServerSocket mute = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            List<Socket> held = new ArrayList<>();
            Thread t = new Thread(() -> {
                try {
                    for (;;) {
                        held.add(mute.accept()); // reads nothing, answers nothing
                    }
                } catch (Exception e) {
                    // closed
                }
            });
            t.setDaemon(true);
            t.start();
            Client two = Client.builder().url("127.0.0.1:" + mute.getLocalPort()).url(srv.url)
                    .requestTimeoutMs(500).build();
            assertThrows(TenureException.Timeout.class, () -> two.acquire("java/mute", 5000));
            TenureException e = assertThrows(TenureException.class, () -> c.get("java/mute"));
            assertEquals("not_found", e.code(), "the acquire went to the second server too");
        }
        // A server that reads the request and drops the connection: the
        // request may have been done there, so it is not sent elsewhere.
        try (ServerSocket drop = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread t = new Thread(() -> {
                try {
                    for (;;) {
                        try (Socket s = drop.accept()) {
                            s.getInputStream().read(new byte[4096]);
                        }
                    }
                } catch (Exception e) {
                    // closed
                }
            });
            t.setDaemon(true);
            t.start();
            Client two = Client.builder().url("127.0.0.1:" + drop.getLocalPort()).url(srv.url).build();
            TenureException x = assertThrows(TenureException.Transport.class, () -> two.acquire("java/drop", 5000));
            assertEquals("transport", x.code());
            TenureException e = assertThrows(TenureException.class, () -> c.get("java/drop"));
            assertEquals("not_found", e.code(), "the acquire went to the second server too");
        }
    }

    @Test
    void holdInterruptsItsBodyWhenTheLeaseIsLost() throws Exception {
        long start = System.nanoTime();
        AtomicInteger interrupted = new AtomicInteger();
        TenureException.Lost e = assertThrows(TenureException.Lost.class,
                () -> c.hold("java/hold-lost", AcquireOptions.ttlMs(1500), l -> {
                    c.forceRelease("java/hold-lost");
                    try {
                        Thread.sleep(30_000);
                    } catch (InterruptedException ie) {
                        interrupted.incrementAndGet();
                        throw ie;
                    }
                    return null;
                }));
        assertEquals(1, interrupted.get());
        assertTrue((System.nanoTime() - start) / 1_000_000L < 10_000, "the body ran on after the loss");
        assertFalse(Thread.currentThread().isInterrupted(), "hold left the caller's thread interrupted");
        assertNotNull(e.code());
    }

    @Test
    void holdKeepsTheLeaseAndReleasesIt() throws Exception {
        long token = c.hold("java/hold-kept", AcquireOptions.ttlMs(600), l -> {
            Thread.sleep(1500); // past two TTLs: only the keepalive keeps it
            assertTrue(l.held());
            return l.token();
        });
        assertFalse(c.check("java/hold-kept", token).current());
        assertEquals(token, c.check("java/hold-kept", token).floor());
    }

    @Test
    void eventsResumeAfterTheLastId() throws Exception {
        Event first;
        try (EventStream s = c.events("java/ev/", new EventStream.Options())) {
            java.util.concurrent.CompletableFuture<Event> got = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return s.next(); // reading is what sees the server's ": subscribed"
                } catch (TenureException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertTrue(s.awaitSubscribed(10_000));
            c.acquire("java/ev/a", 5000).release();
            first = got.get();
            assertEquals("acquired", first.type());
            assertEquals("java/ev/a", first.name());
        }
        try (EventStream s = c.events("java/ev/", new EventStream.Options().lastEventId(first.id()))) {
            Event next = s.next();
            assertEquals("released", next.type(), "resumed after the last id: " + next);
            assertTrue(next.id() > first.id());
        }
    }

    /** A server sending an endless line (or endless data lines) ends the stream instead of growing memory. */
    @Test
    void eventLinesAndDataAreCapped() throws Exception {
        for (String shape : new String[] {"line", "data"}) {
            try (ServerSocket evil = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
                Thread t = new Thread(() -> {
                    try (Socket s = evil.accept()) {
                        s.getInputStream().read(new byte[4096]);
                        OutputStream o = s.getOutputStream();
                        o.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n: subscribed\n\n"
                                .getBytes(StandardCharsets.UTF_8));
                        String chunk = shape.equals("line") ? "x".repeat(1024) : "data: " + "y".repeat(1000) + "\n";
                        for (int k = 0; k < 70; k++) {
                            o.write((k == 0 && shape.equals("line") ? "data: " : "").getBytes(StandardCharsets.UTF_8));
                            o.write(chunk.getBytes(StandardCharsets.UTF_8));
                        }
                        o.flush();
                        Thread.sleep(5000);
                    } catch (Exception e) {
                        // the client hung up
                    }
                });
                t.setDaemon(true);
                t.start();
                Client e = Client.builder().url("127.0.0.1:" + evil.getLocalPort()).build();
                try (EventStream s = e.events("", new EventStream.Options().noReconnect())) {
                    TenureException x = assertThrows(TenureException.class, s::next);
                    assertEquals("protocol", x.code(), shape + ": " + x);
                }
            }
        }
    }

    @Test
    void sessionsKeepTheirLeases() throws Exception {
        Session s;
        try {
            s = c.openSession("java-session", 1500);
        } catch (TenureException e) {
            Assumptions.assumeFalse(e.status() == 404 || e.status() == 405,
                    "this tenured has no sessions yet (" + e + ")");
            throw e;
        }
        Lease one = s.acquire("java/s/1");
        Session.Claim claim = s.claim(List.of("java/s/2", "java/s/3"));
        assertEquals(2, claim.granted.size());
        assertTrue(claim.granted.get(1).token() > one.token());
        s.keepAlive();
        Thread.sleep(3000); // two TTLs: the session's keepalive keeps all three
        assertTrue(one.held() && claim.granted.get(0).held());
        assertTrue(c.check("java/s/3", claim.granted.get(1).token()).current());
        assertEquals(List.of(), s.release(List.of(claim.granted.get(0))).lost);
        s.close();
        assertEquals(0, one.safeForMs());
        assertFalse(c.check("java/s/1", one.token()).current());
    }
}
