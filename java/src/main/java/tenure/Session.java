// SPDX-License-Identifier: MIT
package tenure;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A session: one heartbeat for many leases (docs/SESSIONS.md).  Each lease
 * taken under it keeps its own token, secret and fence; its liveness is the
 * session's, so one {@link #renew()} keeps them all, and its safe time is
 * the session's: the time left of the last successful open or renew,
 * counted from that request's sending, minus the safety margin.  When the
 * session ends (lost, expired, closed) every lease of it reads 0 safe time
 * for good.  {@link #keepAlive()} starts one thread that renews it at a
 * third of its TTL.  Thread-safe.
 */
public final class Session implements AutoCloseable {
    private final Client c;
    private final String id;
    private final String secret;
    private final String owner;
    private final List<Lease> leases = new ArrayList<>(); // guarded by this
    private long ttlMs;
    private long sentNanos;
    private long deadlineNanos;
    private boolean ended;
    private TenureException endErr;
    private Thread keeper;
    private boolean stop;

    private Session(Client c, String id, String secret, String owner) {
        this.c = c;
        this.id = id;
        this.secret = secret;
        this.owner = owner;
    }

    static Session open(Client c, String owner, long ttlMs) throws TenureException {
        if (ttlMs < 1) {
            throw TenureException.local("invalid", "the TTL must be at least 1 ms");
        }
        Client.Answer a = c.call("POST", "/v1/sessions", Json.obj("owner_id", owner, "ttl_ms", ttlMs), 0, 0);
        if (a.status != 201 && a.status != 200) {
            throw a.error();
        }
        String id = Json.str(a.body, "session_id");
        String sec = Json.str(a.body, "session_secret");
        Object exp = a.body.get("expires_in_ms");
        if (id == null || sec == null || !(exp instanceof Long)) {
            throw TenureException.local("protocol", "session without session_id, session_secret or expires_in_ms");
        }
        Session s = new Session(c, id, sec, owner);
        s.grant(a.sentNanos, Json.lng(a.body, "ttl_ms", ttlMs), (Long) exp);
        return s;
    }

    /** The session's id (public). */
    public String id() {
        return id;
    }

    /** The credential of the session.  Never log it. */
    public String secret() {
        return secret;
    }

    public String ownerId() {
        return owner;
    }

    public synchronized long ttlMs() {
        return ttlMs;
    }

    private synchronized void grant(long sent, long ttl, long expiresInMs) {
        if (ended || (sentNanos != 0 && sent - sentNanos < 0)) {
            return;
        }
        ttlMs = ttl;
        sentNanos = sent;
        deadlineNanos = sent + (expiresInMs - c.marginFor(ttl)) * 1_000_000L;
    }

    synchronized long safeForNanos(long now) {
        if (ended) {
            return 0;
        }
        long left = deadlineNanos - now;
        if (left <= 0) {
            ended = true;
            endErr = TenureException.local("expired", "the safe time of session " + id + " ran out");
            return 0;
        }
        return left;
    }

    synchronized TenureException endError() {
        return endErr;
    }

    /** The session's safe time in ms, as a lease's: 0 once it ended, for good. */
    public long safeForMs() {
        return safeForNanos(System.nanoTime()) / 1_000_000L;
    }

    /** Whether the session (and so each lease of it) is safe to act on. */
    public boolean held() {
        return safeForNanos(System.nanoTime()) > 0;
    }

    private synchronized void lose(TenureException why) {
        if (!ended) {
            ended = true;
            endErr = why;
        }
    }

    /** Renews the session with its TTL as it is. */
    public void renew() throws TenureException {
        renew(0);
    }

    /**
     * One renew for every lease of the session; its safe time then counts
     * from this request's sending.  Lost when the session ended on the
     * server (never revived), Expired when its safe time already ran out.
     */
    public void renew(long newTtlMs) throws TenureException {
        renewBy(newTtlMs, 0);
    }

    private void renewBy(long newTtlMs, long deadline) throws TenureException {
        if (safeForNanos(System.nanoTime()) <= 0) {
            throw endError();
        }
        Client.Answer a = c.call("PATCH", "/v1/sessions/" + Client.escape(id),
                Json.obj("session_secret", secret, "ttl_ms", newTtlMs > 0 ? newTtlMs : null), 0, deadline);
        if (a.status != 200) {
            TenureException e = a.error();
            if (e instanceof TenureException.Lost || e instanceof TenureException.Forbidden) {
                lose(e);
            }
            throw e;
        }
        Object exp = a.body.get("expires_in_ms");
        if (!(exp instanceof Long)) {
            throw TenureException.local("protocol", "session renew answer without expires_in_ms");
        }
        grant(a.sentNanos, Json.lng(a.body, "ttl_ms", newTtlMs > 0 ? newTtlMs : ttlMs()), (Long) exp);
        if (safeForNanos(System.nanoTime()) <= 0) {
            throw endError();
        }
    }

    private void checkLive() throws TenureException {
        if (safeForNanos(System.nanoTime()) <= 0) {
            throw endError();
        }
    }

    /** Takes one name under the session (no TTL of its own); owner null means the session's. */
    public Lease acquire(String name, AcquireOptions o) throws TenureException {
        Client.checkName(name);
        checkLive();
        String ow = o != null && o.owner != null ? o.owner : owner;
        long wait = o != null ? o.waitMs : 0;
        Map<String, Object> body = Json.obj("name", name, "owner_id", ow, "session_id", id,
                "session_secret", secret, "wait_ms", wait > 0 ? wait : null,
                "request_id", o != null && o.requestId != null ? o.requestId : Client.drawId(),
                "lock_delay_ms", o != null && o.lockDelayMs > 0 ? o.lockDelayMs : null);
        Client.Answer a = c.call("POST", "/v1/leases", body, wait, 0);
        Lease l = Lease.granted(c, this, name, ow, 0, a);
        synchronized (this) {
            leases.add(l);
        }
        return l;
    }

    /** Takes one name under the session. */
    public Lease acquire(String name) throws TenureException {
        return acquire(name, null);
    }

    /** The answer of a batch claim: every name decided on its own. */
    public static final class Claim {
        /** The names granted, as leases of this session. */
        public final List<Lease> granted;
        /** The names held by others, with their holder. */
        public final Map<String, LeaseInfo> held;
        /** The names in their lock delay, with the ms it still lasts. */
        public final Map<String, Long> lockDelay;

        Claim(List<Lease> granted, Map<String, LeaseInfo> held, Map<String, Long> lockDelay) {
            this.granted = Collections.unmodifiableList(granted);
            this.held = Collections.unmodifiableMap(held);
            this.lockDelay = Collections.unmodifiableMap(lockDelay);
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> objects(Object v) {
        List<Map<String, Object>> out = new ArrayList<>();
        if (v instanceof List) {
            for (Object o : (List<?>) v) {
                if (o instanceof Map) {
                    out.add((Map<String, Object>) o);
                }
            }
        }
        return out;
    }

    /** Claims many names in one durable batch (POST /v1/sessions/{id}/leases). */
    @SuppressWarnings("unchecked")
    public Claim claim(List<String> names) throws TenureException {
        for (String n : names) {
            Client.checkName(n);
        }
        checkLive();
        Client.Answer a = c.call("POST", "/v1/sessions/" + Client.escape(id) + "/leases",
                Json.obj("session_secret", secret, "names", new ArrayList<Object>(names)), 0, 0);
        if (a.status != 200) {
            throw a.error();
        }
        List<Lease> granted = new ArrayList<>();
        for (Map<String, Object> g : objects(a.body.get("granted"))) {
            Map<String, Object> m = new LinkedHashMap<>(g);
            m.putIfAbsent("owner_id", owner);
            Lease l = Lease.granted(c, this, Json.str(g, "name"), owner, 0,
                    new Client.Answer(200, m, a.sentNanos));
            granted.add(l);
        }
        Map<String, LeaseInfo> held = new LinkedHashMap<>();
        for (Map<String, Object> h : objects(a.body.get("held"))) {
            Object hold = h.get("holder");
            held.put(Json.str(h, "name"), hold instanceof Map ? LeaseInfo.of((Map<String, Object>) hold) : null);
        }
        Map<String, Long> delay = new LinkedHashMap<>();
        for (Map<String, Object> d : objects(a.body.get("lock_delay"))) {
            delay.put(Json.str(d, "name"), Json.lng(d, "retry_after_ms", 0));
        }
        synchronized (this) {
            leases.addAll(granted);
        }
        return new Claim(granted, held, delay);
    }

    /** Releases several leases of this session in one request; returns the names that were no longer live (lost). */
    public List<String> releaseAll(List<Lease> ls) throws TenureException {
        List<Object> items = new ArrayList<>();
        for (Lease l : ls) {
            l.lose(TenureException.local("released", "lease \"" + l.name() + "\" was released"));
            items.add(Json.obj("name", l.name(), "token", l.token()));
        }
        Client.Answer a = c.call("DELETE", "/v1/sessions/" + Client.escape(id) + "/leases",
                Json.obj("session_secret", secret, "leases", items), 0, 0);
        if (a.status != 200) {
            throw a.error();
        }
        List<String> lost = new ArrayList<>();
        for (Map<String, Object> m : objects(a.body.get("lost"))) {
            lost.add(Json.str(m, "name"));
        }
        return lost;
    }

    /**
     * Starts one thread that renews the session when a third of its TTL has
     * passed since the last successful renew was sent, retrying with
     * backoff while safe time is left; it ends when the session ends.
     */
    public synchronized void keepAlive() {
        if (keeper != null) {
            return;
        }
        keeper = new Thread(this::keep, "tenure-session " + id);
        keeper.setDaemon(true);
        keeper.start();
    }

    private void keep() {
        long backoff = 0;
        for (;;) {
            long next;
            long deadline;
            synchronized (this) {
                next = sentNanos + ttlMs * 1_000_000L / 3;
                if (backoff > 0) {
                    next = System.nanoTime() + backoff * 1_000_000L;
                }
                deadline = deadlineNanos;
                while (!stop && !ended && System.nanoTime() - next < 0) {
                    try {
                        wait(Math.max(1, (next - System.nanoTime()) / 1_000_000L));
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (stop || ended) {
                    return;
                }
            }
            try {
                renewBy(0, deadline);
                backoff = 0;
            } catch (TenureException e) {
                if (!held()) {
                    return;
                }
                backoff = Hold.nextBackoff(backoff, ttlMs());
            }
        }
    }

    /** Ends the session on the server: it and every lease of it end now (released). */
    @Override
    public void close() throws TenureException {
        synchronized (this) {
            stop = true;
            ended = true;
            if (endErr == null) {
                endErr = TenureException.local("released", "session " + id + " was closed");
            }
            notifyAll();
        }
        Client.Answer a = c.call("DELETE", "/v1/sessions/" + Client.escape(id),
                Json.obj("session_secret", secret), 0, 0);
        if (!a.ok()) {
            throw a.error();
        }
    }
}
