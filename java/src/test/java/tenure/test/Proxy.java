// SPDX-License-Identifier: MIT
package tenure.test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.function.Predicate;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * An HTTP proxy in front of a real tenured, for the tests: it forwards every
 * request and records what the client sent (method, path, headers); it can
 * hold each answer back for a while (a slow network) or, once, forward a
 * request and answer 503 instead of the server's answer (a success the
 * client never hears of, as a PostgreSQL store's broken commit).
 */
final class Proxy implements AutoCloseable {
    /** One request as the client sent it. */
    static final class Seen {
        final String method;
        final String path;
        final Map<String, List<String>> headers;

        Seen(String method, String path, Map<String, List<String>> headers) {
            this.method = method;
            this.path = path;
            this.headers = headers;
        }
    }

    private final HttpServer srv;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final String target;
    final List<Seen> seen = new ArrayList<>();
    private volatile long delayMs;
    private Predicate<Seen> hide; // guarded by this: the next request it matches is answered 503

    Proxy(String target) throws IOException {
        this.target = target;
        srv = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        srv.setExecutor(Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "test-proxy");
            t.setDaemon(true);
            return t;
        }));
        srv.createContext("/", this::forward);
        srv.start();
    }

    String url() {
        return "http://127.0.0.1:" + srv.getAddress().getPort();
    }

    /** Every answer from now on is held back this long after the server gave it. */
    void delay(long ms) {
        delayMs = ms;
    }

    /** The next request matching p is forwarded, but answered 503. */
    synchronized void hideOnce(Predicate<Seen> p) {
        hide = p;
    }

    private synchronized boolean hidden(Seen s) {
        if (hide != null && hide.test(s)) {
            hide = null;
            return true;
        }
        return false;
    }

    private void forward(HttpExchange ex) throws IOException {
        try (ex) {
            byte[] body = ex.getRequestBody().readAllBytes();
            Seen s = new Seen(ex.getRequestMethod(), ex.getRequestURI().toString(), Map.copyOf(ex.getRequestHeaders()));
            synchronized (seen) {
                seen.add(s);
            }
            HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(target + s.path))
                    .method(s.method, body.length > 0 ? HttpRequest.BodyPublishers.ofByteArray(body)
                            : HttpRequest.BodyPublishers.noBody());
            String ct = ex.getRequestHeaders().getFirst("Content-Type");
            if (ct != null) {
                rb.header("Content-Type", ct);
            }
            HttpResponse<byte[]> r = http.send(rb.build(), HttpResponse.BodyHandlers.ofByteArray());
            int status = r.statusCode();
            byte[] out = r.body();
            if (hidden(s)) {
                status = 503;
                out = "{\"error\":\"unavailable\",\"message\":\"the commit's outcome is unknown\"}"
                        .getBytes(StandardCharsets.UTF_8);
            }
            if (delayMs > 0) {
                Thread.sleep(delayMs);
            }
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(status, out.length == 0 ? -1 : out.length);
            if (out.length > 0) {
                ex.getResponseBody().write(out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The requests seen so far. */
    List<Seen> seen() {
        synchronized (seen) {
            return new ArrayList<>(seen);
        }
    }

    @Override
    public void close() {
        srv.stop(0);
    }
}
