// SPDX-License-Identifier: MIT
package tenure;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The event stream (GET /v1/events, text/event-stream) as a blocking
 * iterator: {@code for (Event e; (e = s.next()) != null;)}.  When the
 * connection is cut (or silent for the idle timeout, heartbeats included)
 * it reconnects through the client's URLs with Last-Event-ID and resumes
 * after the last id it saw, so nothing is lost or repeated; when the server
 * no longer has the missed events the next event is a "reset".  A line and
 * an event's data are capped at 64 KiB: a server cannot make the client
 * hold more.  next() belongs to one thread; close(), lastId() and
 * awaitSubscribed() may be called from any.  Events never carry safety.
 */
public final class EventStream implements AutoCloseable {
    static final int MAX_LINE = 64 * 1024;

    /** Options of a stream. */
    public static final class Options {
        Long lastEventId;
        long idleTimeoutMs = 60_000;
        boolean noReconnect;

        /** Resume after this id (the server sends what came after it, or a reset). */
        public Options lastEventId(long id) {
            lastEventId = id;
            return this;
        }

        /** A stream silent this long counts as cut; default 60 s. */
        public Options idleTimeoutMs(long ms) {
            idleTimeoutMs = ms;
            return this;
        }

        /** End at the first cut (next() throws) instead of resuming. */
        public Options noReconnect() {
            noReconnect = true;
            return this;
        }
    }

    private final Client c;
    private final String prefix;
    private final Options o;
    private final CountDownLatch subscribed = new CountDownLatch(1);
    private final Object lock = new Object();
    private boolean closed;         // guarded by lock
    private InputStream in;         // guarded by lock
    private long lastRead;          // nanoTime of the last byte; guarded by lock
    private Long lastId;            // guarded by lock
    private int attempt;
    private int urlIndex = -1;
    private Thread watchdog;

    EventStream(Client c, String prefix, Options o) {
        this.c = c;
        this.prefix = prefix == null ? "" : prefix;
        this.o = o == null ? new Options() : o;
        this.lastId = this.o.lastEventId;
    }

    /** The id to resume from, or null when none was seen yet. */
    public Long lastId() {
        synchronized (lock) {
            return lastId;
        }
    }

    /** Waits until a server confirmed the subscription; false on timeout. */
    public boolean awaitSubscribed(long timeoutMs) throws InterruptedException {
        return subscribed.await(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /** Ends the stream (from any thread): next() returns null. */
    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
            closeIn();
            lock.notifyAll();
        }
    }

    private void closeIn() {
        if (in != null) {
            try {
                in.close();
            } catch (IOException e) {
                // closing a cut stream: nothing to do
            }
            in = null;
        }
    }

    private boolean isClosed() {
        synchronized (lock) {
            return closed;
        }
    }

    /**
     * The next event, waiting for it; null once the stream was closed.
     * Throws the server's refusal (e.g. unauthorized) or, with
     * noReconnect, the cut.
     */
    public Event next() throws TenureException {
        while (!isClosed()) {
            InputStream s;
            synchronized (lock) {
                s = in;
            }
            if (s == null) {
                try {
                    s = open();
                } catch (TenureException e) {
                    if (isClosed()) {
                        return null;
                    }
                    if (o.noReconnect || !retryable(e)) {
                        throw e;
                    }
                    pause(true);
                    continue;
                }
            }
            try {
                Event ev = read(s);
                if (ev != null) {
                    return ev;
                }
            } catch (TenureException e) {
                if (isClosed()) {
                    return null;
                }
                drop();
                if (o.noReconnect) {
                    throw e;
                }
                pause(false);
            }
        }
        return null;
    }

    private static boolean retryable(TenureException e) {
        return e instanceof TenureException.Transport || e.status() == 503 || e.status() == 429
                || "protocol".equals(e.code());
    }

    /** Waits before a reconnection: 100 ms after a cut, doubling to 5 s while no server answers. */
    private void pause(boolean failed) {
        long d = 100;
        if (failed) {
            attempt++;
            for (int k = 1; k < attempt && d < 5000; k++) {
                d *= 2;
            }
            d = Math.min(d, 5000);
        }
        long end = System.nanoTime() + d * 1_000_000L;
        synchronized (lock) {
            for (long left = d; !closed && left > 0; left = (end - System.nanoTime()) / 1_000_000L) {
                try {
                    lock.wait(left);
                } catch (InterruptedException e) {
                    closed = true;
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private void drop() {
        synchronized (lock) {
            closeIn();
        }
    }

    private InputStream open() throws TenureException {
        URI base;
        synchronized (c) {
            urlIndex = (urlIndex + 1) % c.urls.size();
            base = c.urls.get(urlIndex);
        }
        String path = "/v1/events" + (prefix.isEmpty() ? "" : "?prefix=" + Client.escape(prefix));
        HttpRequest.Builder rb = c.request(base, path).header("Accept", "text/event-stream").GET();
        Long id = lastId();
        if (id != null) {
            rb.header("Last-Event-ID", Long.toString(id));
        }
        HttpResponse<InputStream> resp;
        try {
            // no answer within the request timeout: a cut
            resp = c.http.sendAsync(rb.build(), HttpResponse.BodyHandlers.ofInputStream())
                    .get(c.timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            throw new TenureException.Transport("interrupted", "interrupted", e);
        } catch (Exception e) {
            throw new TenureException.Transport("transport", base + ": " + e, e);
        }
        if (resp.statusCode() != 200) {
            Map<String, Object> body = Collections.emptyMap();
            try (InputStream b = resp.body()) {
                body = Json.parseObject(new String(b.readNBytes(Client.MAX_BODY), StandardCharsets.UTF_8));
            } catch (IOException | IllegalArgumentException e) {
                // not JSON: the status still says what happened
            }
            throw TenureException.fromAnswer(resp.statusCode(), body,
                    Client.retryAfterMs(resp.headers().firstValue("Retry-After").orElse(null)), base.getHost());
        }
        attempt = 0;
        synchronized (lock) {
            if (closed) {
                try {
                    resp.body().close();
                } catch (IOException e) {
                    // closing: nothing to do
                }
                throw new TenureException.Transport("transport", "closed", null);
            }
            in = resp.body();
            lastRead = System.nanoTime();
            startWatchdog();
            return in;
        }
    }

    /** One thread per stream closes a connection that stayed silent for the idle timeout. */
    private void startWatchdog() {
        if (watchdog != null) {
            return;
        }
        watchdog = new Thread(() -> {
            synchronized (lock) {
                while (!closed) {
                    long idle = (System.nanoTime() - lastRead) / 1_000_000L;
                    if (in != null && idle >= o.idleTimeoutMs) {
                        closeIn();
                    }
                    try {
                        lock.wait(Math.max(10, Math.min(o.idleTimeoutMs - idle, o.idleTimeoutMs)));
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }, "tenure-events-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }

    /** Reads one line without its end; null at the end of the stream. */
    private String line(InputStream s, ByteArrayOutputStream buf) throws TenureException {
        buf.reset();
        try {
            for (;;) {
                int b = s.read();
                synchronized (lock) {
                    lastRead = System.nanoTime();
                }
                if (b < 0) {
                    throw new TenureException.Transport("transport", "event stream cut", null);
                }
                if (b == '\n') {
                    String ln = buf.toString(StandardCharsets.UTF_8);
                    return ln.endsWith("\r") ? ln.substring(0, ln.length() - 1) : ln;
                }
                buf.write(b);
                if (buf.size() > MAX_LINE) {
                    throw TenureException.local("protocol", "event line longer than " + MAX_LINE + " bytes");
                }
            }
        } catch (IOException e) {
            throw new TenureException.Transport("transport", "event stream cut: " + e, e);
        }
    }

    /** Parses lines until an event with data is complete. */
    private Event read(InputStream s) throws TenureException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        Long id = null;
        StringBuilder data = null;
        for (;;) {
            String ln = line(s, buf);
            if (ln.isEmpty()) {
                Event ev = dispatch(id, data);
                if (ev != null) {
                    return ev;
                }
                id = null;
                data = null;
                continue;
            }
            if (ln.charAt(0) == ':') {
                if (ln.startsWith(": subscribed")) {
                    subscribed.countDown();
                }
                continue;
            }
            int colon = ln.indexOf(':');
            String field = colon < 0 ? ln : ln.substring(0, colon);
            String value = colon < 0 ? "" : ln.substring(colon + 1);
            if (value.startsWith(" ")) {
                value = value.substring(1);
            }
            if (field.equals("id")) {
                try {
                    id = Long.parseLong(value);
                } catch (NumberFormatException e) {
                    // an id that is not a number is ignored, as the SSE rules say
                }
            } else if (field.equals("data")) {
                if (data == null) {
                    data = new StringBuilder();
                } else {
                    data.append('\n');
                }
                data.append(value);
                if (data.length() > MAX_LINE) {
                    throw TenureException.local("protocol", "event data longer than " + MAX_LINE + " bytes");
                }
            }
        }
    }

    private Event dispatch(Long id, StringBuilder data) {
        if (id != null) {
            synchronized (lock) {
                lastId = id;
            }
        }
        if (data == null) {
            return null;
        }
        Map<String, Object> m;
        try {
            m = Json.parseObject(data.toString());
        } catch (IllegalArgumentException e) {
            return null;
        }
        if (Json.str(m, "type") == null) {
            return null;
        }
        return new Event(id != null ? id : 0, m);
    }
}
