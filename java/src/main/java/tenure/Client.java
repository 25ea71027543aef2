// SPDX-License-Identifier: MIT
package tenure;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * A client of one or more tenured servers (java.net.http only).  A request
 * goes to the URL that last answered and moves on to the next when nothing
 * was sent (no connection could be made) or the server answered 503; since
 * a 503 does not prove that nothing was done, every acquire carries a
 * request id.  A request that was sent and timed out is never retried
 * elsewhere: its outcome is unknown ({@link TenureException.Timeout}).
 * Thread-safe; create one per process.
 */
public final class Client {
    /** Base URLs of one client, at most. */
    public static final int MAX_URLS = 8;
    /** Bytes of a lease name, at most. */
    public static final int NAME_MAX = 256;
    /** Bytes of an owner id, at most. */
    public static final int OWNER_MAX = 128;
    /** Tokens are JSON integers below 2^53. */
    public static final long TOKEN_MAX = 1L << 53;
    static final int MAX_BODY = 1 << 20;
    private static final SecureRandom RANDOM = new SecureRandom();

    final List<URI> urls;
    final HttpClient http;
    final String owner;
    final String bearer;
    final long timeoutMs;
    final long marginMs;
    private int current; // index of the URL that last answered; guarded by this

    private Client(Builder b) throws TenureException {
        if (b.urls.isEmpty() || b.urls.size() > MAX_URLS) {
            throw TenureException.local("invalid", "between 1 and " + MAX_URLS + " server URLs are needed");
        }
        List<URI> us = new ArrayList<>();
        for (String s : b.urls) {
            us.add(parseBase(s));
        }
        urls = Collections.unmodifiableList(us);
        if (b.bearer != null && (b.bearer.indexOf('\r') >= 0 || b.bearer.indexOf('\n') >= 0)) {
            throw TenureException.local("invalid", "the bearer token contains a line break");
        }
        bearer = b.bearer;
        owner = b.ownerId != null ? b.ownerId : defaultOwner();
        if (owner.isEmpty() || utf8Len(owner) > OWNER_MAX) {
            throw TenureException.local("invalid", "owner id must be 1 to " + OWNER_MAX + " bytes");
        }
        timeoutMs = b.requestTimeoutMs > 0 ? b.requestTimeoutMs : 5000;
        marginMs = b.safetyMarginMs;
        HttpClient.Builder hb = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofMillis(b.connectTimeoutMs > 0 ? b.connectTimeoutMs : 1000))
                .followRedirects(HttpClient.Redirect.NEVER);
        if (b.sslContext != null) {
            hb.sslContext(b.sslContext);
        }
        http = hb.build();
    }

    /** A builder: {@code Client.builder().url("http://127.0.0.1:7300").build()}. */
    public static Builder builder() {
        return new Builder();
    }

    /** Options of a client.  Only one URL is required. */
    public static final class Builder {
        private final List<String> urls = new ArrayList<>();
        private String ownerId;
        private String bearer;
        private long requestTimeoutMs;
        private long connectTimeoutMs;
        private long safetyMarginMs;
        private javax.net.ssl.SSLContext sslContext;

        /** A server's base URL ("http://127.0.0.1:7300"; "host:port" means http://); 1 to 8 of them. */
        public Builder url(String u) {
            urls.add(u);
            return this;
        }

        /** The owner of acquires that name none; default "host:pid". */
        public Builder ownerId(String o) {
            ownerId = o;
            return this;
        }

        /** Sent as "Authorization: Bearer"; never logged. */
        public Builder bearer(String token) {
            bearer = token;
            return this;
        }

        /** Bounds each request beyond an acquire's wait; default 5 s. */
        public Builder requestTimeoutMs(long ms) {
            requestTimeoutMs = ms;
            return this;
        }

        /** Bounds each connection attempt; default 1 s. */
        public Builder connectTimeoutMs(long ms) {
            connectTimeoutMs = ms;
            return this;
        }

        /** Subtracted from the time a grant has left; 0 means a tenth of the TTL. */
        public Builder safetyMarginMs(long ms) {
            safetyMarginMs = ms;
            return this;
        }

        /** TLS settings for https:// servers (client certificates in its key managers). */
        public Builder sslContext(javax.net.ssl.SSLContext ctx) {
            sslContext = ctx;
            return this;
        }

        public Client build() throws TenureException {
            return new Client(this);
        }
    }

    private static URI parseBase(String s) throws TenureException {
        String t = s.contains("://") ? s : "http://" + s;
        while (t.endsWith("/")) {
            t = t.substring(0, t.length() - 1);
        }
        try {
            URI u = new URI(t);
            if ((!"http".equals(u.getScheme()) && !"https".equals(u.getScheme())) || u.getHost() == null) {
                throw new IllegalArgumentException();
            }
            return u;
        } catch (Exception e) {
            throw TenureException.local("invalid", "server URL \"" + s + "\" must be http:// or https://");
        }
    }

    private static String defaultOwner() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "localhost";
        }
        return host + ":" + ProcessHandle.current().pid();
    }

    static int utf8Len(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    /** The owner of acquires that name none. */
    public String ownerId() {
        return owner;
    }

    long marginFor(long ttlMs) {
        return marginMs > 0 ? marginMs : ttlMs / 10;
    }

    static String drawId() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /** One answer: status, parsed body (empty when none) and the instant just before its request was sent. */
    static final class Answer {
        final int status;
        final Map<String, Object> body;
        final long sentNanos;

        Answer(int status, Map<String, Object> body, long sentNanos) {
            this.status = status;
            this.body = body;
            this.sentNanos = sentNanos;
        }

        boolean ok() {
            return status >= 200 && status < 300;
        }

        TenureException error() {
            return TenureException.fromAnswer(status, body);
        }
    }

    HttpRequest.Builder request(URI base, String path) {
        HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(base + path))
                .header("Accept", "application/json");
        if (bearer != null) {
            rb.header("Authorization", "Bearer " + bearer);
        }
        return rb;
    }

    /**
     * Sends method path with body (JSON, or none when null) and returns the
     * answer.  The whole request ends by deadlineNanos (System.nanoTime), or
     * the request timeout plus extraMs from now when deadlineNanos is 0.
     */
    Answer call(String method, String path, Map<String, Object> body, long extraMs, long deadlineNanos)
            throws TenureException {
        long end = System.nanoTime() + (timeoutMs + extraMs) * 1_000_000L;
        if (deadlineNanos != 0 && deadlineNanos - end < 0) {
            end = deadlineNanos;
        }
        String data = body == null ? null : Json.write(body);
        int start;
        synchronized (this) {
            start = current;
        }
        Answer last = null;
        TenureException err = null;
        for (int k = 0; k < urls.size(); k++) {
            int idx = (start + k) % urls.size();
            URI base = urls.get(idx);
            long left = (end - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                err = new TenureException.Timeout(base + ": no answer in time", null);
                break;
            }
            Answer a;
            try {
                a = once(base, method, path, data, left);
            } catch (TenureException.Connect e) {
                err = e; // nothing was sent: the next URL may take it
                continue;
            }
            synchronized (this) {
                current = idx;
            }
            if (a.status == 503 && k + 1 < urls.size()) {
                last = a; // unchanged state: another instance may take it
                continue;
            }
            return a;
        }
        if (last != null) {
            return last;
        }
        throw err;
    }

    private Answer once(URI base, String method, String path, String data, long timeout)
            throws TenureException {
        HttpRequest.Builder rb = request(base, path).timeout(Duration.ofMillis(timeout));
        if (data != null) {
            rb.header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofString(data));
        } else {
            rb.method(method, HttpRequest.BodyPublishers.noBody());
        }
        long sent = System.nanoTime(); // before any byte of it can be written
        HttpResponse<InputStream> resp;
        try {
            resp = http.send(rb.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (ConnectException | HttpConnectTimeoutException e) {
            throw new TenureException.Connect(base + ": " + e, e);
        } catch (HttpTimeoutException e) {
            throw new TenureException.Timeout(base + ": no answer in " + timeout + " ms", e);
        } catch (IOException e) {
            if (e.getCause() instanceof ConnectException) {
                throw new TenureException.Connect(base + ": " + e.getCause(), e);
            }
            throw new TenureException.Transport("transport", base + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TenureException.Transport("interrupted", base + ": interrupted", e);
        }
        return new Answer(resp.statusCode(), readBody(base, resp.body()), sent);
    }

    private static Map<String, Object> readBody(URI base, InputStream in) throws TenureException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        try (in) {
            for (int n; (n = in.read(buf)) > 0;) {
                out.write(buf, 0, n);
                if (out.size() > MAX_BODY) {
                    throw TenureException.local("protocol", "answer larger than " + MAX_BODY + " bytes");
                }
            }
        } catch (IOException e) {
            throw new TenureException.Transport("transport", base + ": " + e, e);
        }
        String text = out.toString(StandardCharsets.UTF_8);
        if (text.isBlank()) {
            return Collections.emptyMap();
        }
        try {
            return Json.parseObject(text);
        } catch (IllegalArgumentException e) {
            return Collections.emptyMap(); // not JSON: the status still says what happened
        }
    }

    static String escape(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    static String leasePath(String name) {
        return "/v1/leases/" + escape(name);
    }

    static void checkName(String name) throws TenureException {
        if (name == null || name.isEmpty() || utf8Len(name) > NAME_MAX) {
            throw TenureException.local("invalid", "a lease name must be 1 to " + NAME_MAX + " bytes");
        }
    }

    // ---- the lease calls -------------------------------------------------

    /** Takes the lease with a TTL: {@code acquire(name, AcquireOptions.ttlMs(10000))}. */
    public Lease acquire(String name, long ttlMs) throws TenureException {
        return acquire(name, AcquireOptions.ttlMs(ttlMs));
    }

    /**
     * Takes the lease name.  Throws {@link TenureException.Held} (whose
     * holder says who holds it), {@link TenureException.LockDelay},
     * {@link TenureException.Timeout} (the outcome is unknown: retry with the
     * same request id), {@link TenureException.Connect}, or another
     * TenureException.  The lease's safe time counts from the instant just
     * before the request was sent.  A waiting acquire whose wait used up
     * more than half the grant's safe time renews once before returning.
     */
    public Lease acquire(String name, AcquireOptions o) throws TenureException {
        checkName(name);
        if (o.ttlMs < 1 || o.waitMs < 0 || o.lockDelayMs < 0) {
            throw TenureException.local("invalid", "the TTL must be at least 1 ms; wait and lock delay not negative");
        }
        Map<String, Object> body = Json.obj("name", name, "owner_id", ownerOf(o), "ttl_ms", o.ttlMs,
                "wait_ms", o.waitMs > 0 ? o.waitMs : null,
                "request_id", o.requestId != null ? o.requestId : drawId(),
                "lock_delay_ms", o.lockDelayMs > 0 ? o.lockDelayMs : null);
        Answer a = call("POST", "/v1/leases", body, o.waitMs, 0);
        Lease l = Lease.granted(this, null, name, (String) body.get("owner_id"), o.ttlMs, a);
        if (o.waitMs > 0) {
            l.refreshWaited();
        }
        return l;
    }

    String ownerOf(AcquireOptions o) throws TenureException {
        String ow = o.owner != null ? o.owner : owner;
        if (ow.isEmpty() || utf8Len(ow) > OWNER_MAX) {
            throw TenureException.local("invalid", "owner id must be 1 to " + OWNER_MAX + " bytes");
        }
        return ow;
    }

    /**
     * A handle for a grant made elsewhere (e.g. by "tenure acquire"), to
     * renew or release it.  Its safe time is 0 until a renew succeeds.
     */
    public Lease adopt(String name, long token, String secret) throws TenureException {
        checkName(name);
        if (secret == null || secret.isEmpty() || token < 0 || token > TOKEN_MAX) {
            throw TenureException.local("invalid", "a token up to 2^53 and a secret are needed");
        }
        return new Lease(this, null, name, null, token, secret, null);
    }

    /** The live lease of name; {@code not_found} when it is free. */
    public LeaseInfo get(String name) throws TenureException {
        checkName(name);
        Answer a = call("GET", leasePath(name), null, 0, 0);
        if (a.status != 200) {
            throw a.error();
        }
        if (!(a.body.get("token") instanceof Long)) {
            throw TenureException.local("protocol", "lease without a token");
        }
        return LeaseInfo.of(a.body);
    }

    /** One page of live leases whose names start with prefix, in name order, after the name after (null: from the start). */
    public List<LeaseInfo> list(String prefix, String after, int limit) throws TenureException {
        StringBuilder q = new StringBuilder("/v1/leases?prefix=").append(escape(prefix == null ? "" : prefix));
        if (after != null) {
            q.append("&after=").append(escape(after));
        }
        if (limit > 0) {
            q.append("&limit=").append(limit);
        }
        Answer a = call("GET", q.toString(), null, 0, 0);
        if (a.status != 200) {
            throw a.error();
        }
        List<LeaseInfo> out = new ArrayList<>();
        if (a.body.get("leases") instanceof List) {
            for (Object o : (List<?>) a.body.get("leases")) {
                if (o instanceof Map) {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> m = (Map<String, Object>) o;
                    out.add(LeaseInfo.of(m));
                }
            }
        }
        return out;
    }

    /** Whether token is the live grant of name, and the name's floor (Chubby's CheckSequencer). */
    public CheckResult check(String name, long token) throws TenureException {
        checkName(name);
        if (token < 0 || token > TOKEN_MAX) {
            throw TenureException.local("invalid", "a token is 0 to 2^53");
        }
        Answer a = call("GET", leasePath(name) + "/check?token=" + token, null, 0, 0);
        if (a.status != 200) {
            throw a.error();
        }
        Object cur = a.body.get("current");
        Object fl = a.body.get("floor");
        if (!(cur instanceof Boolean) || !(fl instanceof Long)) {
            throw TenureException.local("protocol", "check answer without current or floor");
        }
        Object t = a.body.get("token");
        return new CheckResult((Boolean) cur, t instanceof Long ? (Long) t : null, (Long) fl);
    }

    /** Ends whatever grant of name is live (an admin's operation once authentication is on); {@code lost} when none was. */
    public void forceRelease(String name) throws TenureException {
        checkName(name);
        Answer a = call("DELETE", leasePath(name) + "?force=true", null, 0, 0);
        if (!a.ok()) {
            throw a.error();
        }
    }

    /**
     * Acquires name, runs body with the lease on this thread while a
     * keepalive renews it, and releases it when body returns.  When the
     * lease is lost (the server said so) or its safe time runs out, this
     * thread is interrupted, so a body blocked in I/O or a sleep stops; the
     * interruption tells an honest body to stop, it is not the safety:
     * check {@link Lease#held()} right before each write and stamp the
     * write with {@link Lease#token()} for the sink's fence.
     *
     * @return body's value
     * @throws TenureException the acquire's error; else, when the lease was
     *     lost while body ran, {@link TenureException.Lost} or
     *     {@link TenureException.Expired} (nothing is released), unless body
     *     threw an exception of its own other than an interruption; else
     *     body's exception; else a release that answered lost
     */
    public <T> T hold(String name, AcquireOptions o, Hold.Body<T> body) throws Exception {
        return Hold.run(this, acquire(name, o), body);
    }

    /** Follows the lease events of names starting with prefix (GET /v1/events); see {@link EventStream}. */
    public EventStream events(String prefix, EventStream.Options o) {
        return new EventStream(this, prefix, o);
    }

    /** Opens a session: one keepalive for many leases (docs/SESSIONS.md). */
    public Session openSession(long ttlMs) throws TenureException {
        return Session.open(this, owner, ttlMs);
    }

    /** Opens a session with its own owner id. */
    public Session openSession(String ownerId, long ttlMs) throws TenureException {
        return Session.open(this, ownerId, ttlMs);
    }
}
