// SPDX-License-Identifier: MIT
package tenure.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import com.sun.net.httpserver.HttpServer;

import tenure.AcquireOptions;
import tenure.Client;
import tenure.Lease;
import tenure.Session;
import tenure.SessionOptions;
import tenure.TenureException;

/**
 * What tenured refuses besides leases (issue #36's checks, a server
 * without sessions) reaches the caller as a clear error, and the client
 * sends nothing that trips the checks against web pages.
 */
class RefusalsTest {
    /** No request of the client carries an Origin (tenured answers 403 to a foreign one on POST, PATCH, DELETE). */
    @Test
    void noRequestCarriesAnOrigin() throws Exception {
        try (TestServer srv = TestServer.start(); Proxy p = new Proxy(srv.url)) {
            Client c = Client.builder().url(p.url()).build();
            Lease l = c.acquire("java-o/a", 5000);
            l.renew();
            l.release();
            Session s = c.openSession(SessionOptions.ttlMs(5000));
            s.release(s.claim(List.of("java-o/b", "java-o/c")).granted);
            s.renew();
            s.end();
            List<Proxy.Seen> seen = p.seen();
            assertTrue(seen.stream().anyMatch(x -> x.method.equals("PATCH")));
            assertTrue(seen.stream().filter(x -> x.method.equals("DELETE")).count() >= 3);
            for (Proxy.Seen x : seen) {
                for (String h : x.headers.keySet()) {
                    assertTrue(!h.equalsIgnoreCase("Origin"), x.method + " " + x.path + " sent Origin");
                }
            }
        }
    }

    /** 429 from the per-address waiter limit: TooManyRequests, with the server's Retry-After. */
    @Test
    void tooManyWaitersIsTooManyRequests() throws Exception {
        try (TestServer srv = TestServer.start("--max-waiters-per-address", "1")) {
            Client c = Client.builder().url(srv.url).build();
            Lease held = c.acquire("java-w/x", 10_000);
            CompletableFuture<Lease> first = CompletableFuture.supplyAsync(() -> {
                try {
                    return c.acquire("java-w/x", AcquireOptions.ttlMs(5000).waitMs(8000));
                } catch (TenureException e) {
                    throw new IllegalStateException(e);
                }
            });
            TenureException e = null;
            for (int k = 0; k < 100 && e == null; k++) { // until the first waiter is parked
                Thread.sleep(50);
                try {
                    c.acquire("java-w/x", AcquireOptions.ttlMs(5000).waitMs(50));
                } catch (TenureException.TooManyRequests x) {
                    e = x;
                } catch (TenureException.Held x) {
                    // the first one was not parked yet: this one waited its 50 ms instead
                }
            }
            assertTrue(e instanceof TenureException.TooManyRequests, String.valueOf(e));
            assertEquals(429, e.status());
            assertEquals("too_many_requests", e.code());
            assertTrue(e.retryAfterMs() > 0, "Retry-After: " + e.retryAfterMs());
            held.release();
            first.get().release();
        }
    }

    /**
     * 421 for a host name tenured does not answer to (auth off, against
     * DNS rebinding): Misdirected, whose message names the host.  Needs a
     * name of this machine that resolves to 127.0.0.1 (/etc/hosts).
     */
    @Test
    void aNameTheServerDoesNotKnowIsMisdirected() throws Exception {
        String name = InetAddress.getLocalHost().getHostName();
        Assumptions.assumeTrue(!name.equals("localhost")
                && InetAddress.getByName(name).getHostAddress().equals("127.0.0.1"),
                "no name of this machine other than localhost resolves to 127.0.0.1");
        try (TestServer srv = TestServer.start()) {
            Client c = Client.builder().url("http://" + name + ":" + srv.port).build();
            TenureException e = assertThrows(TenureException.Misdirected.class, () -> c.acquire("java-h/x", 5000));
            assertEquals(421, e.status());
            assertEquals("misdirected_request", e.code());
            assertTrue(e.getMessage().contains("\"" + name + "\"") && e.getMessage().contains("--allow-host"),
                    e.getMessage());
            assertEquals("not_found", assertThrows(TenureException.class,
                    () -> Client.builder().url(srv.url).build().get("java-h/x")).code(), "the acquire was done");
        }
    }

    /** A server without session routes (404 for POST /v1/sessions) is not_implemented, as a store without sessions (501). */
    @Test
    void aServerWithoutSessionsIsNotImplemented() throws Exception {
        for (int status : new int[] {404, 501}) {
            HttpServer old = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            old.createContext("/", ex -> {
                ex.getRequestBody().readAllBytes();
                byte[] b = (status == 501 ? "{\"error\":\"not_implemented\",\"message\":\"this store has no sessions yet\"}"
                        : "{\"error\":\"not_found\",\"message\":\"no such route\"}").getBytes(StandardCharsets.UTF_8);
                ex.sendResponseHeaders(status, b.length);
                ex.getResponseBody().write(b);
                ex.close();
            });
            old.start();
            try {
                Client c = Client.builder().url("127.0.0.1:" + old.getAddress().getPort()).build();
                TenureException e = assertThrows(TenureException.class, () -> c.openSession(5000));
                assertEquals("not_implemented", e.code(), e.toString());
                assertEquals(status, e.status());
                assertNull(e.getCause());
            } finally {
                old.stop(0);
            }
        }
    }
}
