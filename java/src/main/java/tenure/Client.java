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

    /**
     * One answer: status, parsed body (empty when none), the instant just
     * before its request was sent, its Retry-After in ms (0 when none) and
     * the host name the request named.
     */
    static final class Answer {
        final int status;
        final Map<String, Object> body;
        final long sentNanos;
        final long retryAfterMs;
        final String host;

        Answer(int status, Map<String, Object> body, long sentNanos) {
            this(status, body, sentNanos, 0, "");
        }

        Answer(int status, Map<String, Object> body, long sentNanos, long retryAfterMs, String host) {
            this.status = status;
            this.body = body;
            this.sentNanos = sentNanos;
            this.retryAfterMs = retryAfterMs;
            this.host = host;
        }

        boolean ok() {
            return status >= 200 && status < 300;
        }

        TenureException error() {
            return TenureException.fromAnswer(status, body, retryAfterMs, host);
        }
    }

    /** Retry-After in ms: delay-seconds only (tenured sends no dates); 0 when absent or not a number. */
    static long retryAfterMs(String v) {
        if (v == null) {
            return 0;
        }
        try {
            long s = Long.parseLong(v.trim());
            return s > 0 && s < 86_400 ? s * 1000 : 0;
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * A request with the client's headers.  It never carries an Origin:
     * tenured refuses a state change that names a foreign one (403), a
     * check against web pages that only browsers' requests trip.
     */
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
        return new Answer(resp.statusCode(), readBody(base, resp.body()), sent,
                retryAfterMs(resp.headers().firstValue("Retry-After").orElse(null)), base.getHost());
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
        Answer a = page("/v1/leases", prefix, after, limit);
        List<LeaseInfo> out = new ArrayList<>();
        for (Map<String, Object> m : Json.objects(a.body.get("leases"))) {
            out.add(LeaseInfo.of(m));
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

    // ---- sessions (docs/SESSIONS.md) ------------------------------------

    /** Opens a session of the client's owner id, kept alive from now on. */
    public Session openSession(long ttlMs) throws TenureException {
        return openSession(SessionOptions.ttlMs(ttlMs));
    }

    /** Opens a session with its own owner id, kept alive from now on. */
    public Session openSession(String ownerId, long ttlMs) throws TenureException {
        return openSession(SessionOptions.ttlMs(ttlMs).owner(ownerId));
    }

    /**
     * Opens a session (POST /v1/sessions): one heartbeat for many leases.
     * Its keepalive starts at once unless {@link SessionOptions#noKeepalive()}.
     * Throws {@code not_implemented} when the server has no sessions,
     * {@link TenureException.Unavailable} ({@code capacity}) at
     * --max-sessions.  An open is not idempotent: one sent again after a
     * 503 that hid a success leaves the first session to expire, holding
     * nothing.
     */
    public Session openSession(SessionOptions o) throws TenureException {
        return Session.open(this, o);
    }

    /**
     * A handle for a session opened elsewhere (e.g. "tenure session
     * open"), to renew, claim under or end it; its owner is the client's
     * owner id.  Its safe time is 0 until a renew succeeds; it is not kept
     * until {@link Session#keepAlive()}.
     */
    public Session adoptSession(String id, String secret) throws TenureException {
        return adoptSession(id, secret, SessionOptions.ttlMs(0));
    }

    /** As {@link #adoptSession(String, String)}, with o's owner and listeners (its TTL and keepalive are not used). */
    public Session adoptSession(String id, String secret, SessionOptions o) throws TenureException {
        if (id == null || id.isEmpty() || secret == null || secret.isEmpty()) {
            throw TenureException.local("invalid", "a session id and its secret are needed");
        }
        return Session.adopt(this, id, secret, o.owner, o);
    }

    private static String sessionPath(String id) throws TenureException {
        if (id == null || id.isEmpty()) {
            throw TenureException.local("invalid", "a session id is needed");
        }
        return "/v1/sessions/" + escape(id);
    }

    /** The live session id (owner, TTL, time left, number of leases; never its secret); {@code not_found} when it is not live. */
    public SessionInfo getSession(String id) throws TenureException {
        Answer a = call("GET", sessionPath(id), null, 0, 0);
        if (a.status != 200) {
            throw a.error();
        }
        return SessionInfo.of(a.body);
    }

    /** Ends the session id and every lease of it (each revoked): an admin's operation with auth on; Lost when it is not live. */
    public void forceEndSession(String id) throws TenureException {
        Answer a = call("DELETE", sessionPath(id) + "?force=true", null, 0, 0);
        if (!a.ok()) {
            throw a.error();
        }
    }

    /** One page of live sessions whose owner_id starts with prefix, in session_id order, after the id after (null: from the start). */
    public Page<SessionInfo> sessions(String prefix, String after, int limit) throws TenureException {
        Answer a = page("/v1/sessions", prefix, after, limit);
        List<SessionInfo> out = new ArrayList<>();
        for (Map<String, Object> m : Json.objects(a.body.get("sessions"))) {
            out.add(SessionInfo.of(m));
        }
        return new Page<>(out, Json.str(a.body, "next"));
    }

    /** Every live session whose owner_id starts with prefix (all pages). */
    public List<SessionInfo> sessionsAll(String prefix) throws TenureException {
        List<SessionInfo> out = new ArrayList<>();
        String after = null;
        do {
            Page<SessionInfo> p = sessions(prefix, after, 1000);
            out.addAll(p.items());
            after = p.next();
        } while (after != null);
        return out;
    }

    /** Every live lease whose name starts with prefix (all pages), in name order. */
    public List<LeaseInfo> listAll(String prefix) throws TenureException {
        List<LeaseInfo> out = new ArrayList<>();
        String after = null;
        do {
            Answer a = page("/v1/leases", prefix, after, 1000);
            for (Map<String, Object> m : Json.objects(a.body.get("leases"))) {
                out.add(LeaseInfo.of(m));
            }
            after = Json.str(a.body, "next");
        } while (after != null);
        return out;
    }

    private Answer page(String path, String prefix, String after, int limit) throws TenureException {
        StringBuilder q = new StringBuilder(path).append("?prefix=").append(escape(prefix == null ? "" : prefix));
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
        return a;
    }

    /**
     * Opens a session, claims names (the claim says what became of each),
     * runs body with them on this thread while the session's keepalive
     * keeps it, and ends the session (every lease of it released) when
     * body returns.  When the session is lost (the server said so) or its
     * safe time runs out, this thread is interrupted, so a body blocked in
     * I/O or a sleep stops; the interruption tells an honest body to stop,
     * it is not the safety: check {@link Session#held()} (or a lease's
     * {@link Lease#held()}) right before each write and stamp the write
     * with the lease's token.
     *
     * @return body's value
     * @throws TenureException the open's or the claim's error (the session
     *     is then ended); else, when the session was lost while body ran,
     *     {@link TenureException.Lost} or {@link TenureException.Expired}
     *     (nothing is ended), unless body threw an exception of its own
     *     other than an interruption; else body's exception; else an end
     *     that answered lost
     */
    public <T> T holdSession(SessionOptions o, List<String> names, Hold.SessionBody<T> body) throws Exception {
        return Hold.runSession(this, o, names, body);
    }
}
