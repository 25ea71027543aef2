// SPDX-License-Identifier: MIT
package tenure;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A session: one heartbeat for many leases (docs/SESSIONS.md).  Each lease
 * taken under it ({@link #acquire}, {@link #claim}) keeps its own token,
 * secret and fence; its liveness is the session's, so one renew keeps them
 * all, and its safe time is the session's: the time left of the last
 * acknowledged open or renew, counted on System.nanoTime from the instant
 * that request was sent, minus the safety margin.  When the session ends
 * (lost, run out, or ended by {@link #end()}) every lease of it ends with
 * it, for good.
 *
 * <p>The keepalive ({@link #keepAlive()}, started by
 * {@link Client#openSession} unless {@link SessionOptions#noKeepalive()})
 * is one daemon thread that renews the session when a third of its TTL has
 * passed since the last acknowledged renew was sent, retries with backoff
 * while safe time is left, and bounds every renew by the safe deadline.
 * When the session ends it reports, from that thread and exactly once
 * each, every lease still in the session ({@link LeaseEndListener}), then
 * the session ({@link EndListener}).  A lease that ends alone (its
 * {@link Lease#release()}, {@link #release}) is reported when it ends.
 * Thread-safe.
 */
public final class Session implements AutoCloseable {
    /** Called once when the session ends; reason is "lost", "expired" or "released" (after {@link #end()}). */
    @FunctionalInterface
    public interface EndListener {
        void ended(Session s, String reason, TenureException err);
    }

    /**
     * Called once for each lease of the session when it ends: with the
     * session (its reason), or alone ("released", err the release's error
     * or null; "lost" when a newer grant of the name replaced it).  Inside,
     * {@link Lease#held()} already reads false.  It must not block for
     * long; what it throws is dropped.
     */
    @FunctionalInterface
    public interface LeaseEndListener {
        void ended(Lease l, String reason, TenureException err);
    }

    /** The API takes at least 256 names and 64 KiB of body per batch: longer claims go as several. */
    public static final int BATCH_NAMES = 256;
    static final int BATCH_BODY_BYTES = 48 * 1024;

    private enum State { HELD, LOST, EXPIRED, ENDED }

    private final Client c;
    private final String id;
    private final String secret;
    private final String owner;
    private final EndListener onEnd;
    private final LeaseEndListener onLeaseEnd;
    private final Map<String, Lease> leases = new LinkedHashMap<>(); // live or not yet reported; guarded by this
    private State state = State.HELD;
    private long ttlMs;
    private long sentNanos;
    private long deadlineNanos;
    private boolean hasDeadline; // false: adopted and not yet renewed
    private TenureException endErr;
    private Thread keeper;
    private boolean reported; // the session's own end was reported

    private Session(Client c, String id, String secret, String owner, long ttlMs, EndListener onEnd,
            LeaseEndListener onLeaseEnd) {
        this.c = c;
        this.id = id;
        this.secret = secret;
        this.owner = owner;
        this.ttlMs = ttlMs;
        this.onEnd = onEnd;
        this.onLeaseEnd = onLeaseEnd;
    }

    static Session open(Client c, SessionOptions o) throws TenureException {
        String ow = o.owner != null ? o.owner : c.owner;
        if (o.ttlMs < 1) {
            throw TenureException.local("invalid", "the TTL must be at least 1 ms");
        }
        if (ow.isEmpty() || Client.utf8Len(ow) > Client.OWNER_MAX) {
            throw TenureException.local("invalid", "owner id must be 1 to " + Client.OWNER_MAX + " bytes");
        }
        Client.Answer a = c.call("POST", "/v1/sessions", Json.obj("owner_id", ow, "ttl_ms", o.ttlMs), 0, 0);
        if (a.status == 404 || a.status == 405) {
            throw new TenureException("not_implemented", a.status, "this server has no sessions (HTTP "
                    + a.status + " for POST /v1/sessions)", null);
        }
        if (a.status != 201 && a.status != 200) {
            throw a.error();
        }
        String id = Json.str(a.body, "session_id");
        String sec = Json.str(a.body, "session_secret");
        Object exp = a.body.get("expires_in_ms");
        if (id == null || id.isEmpty() || sec == null || sec.isEmpty() || !(exp instanceof Long)) {
            throw TenureException.local("protocol", "session without session_id, session_secret or expires_in_ms");
        }
        String got = Json.str(a.body, "owner_id");
        long ttl = Json.lng(a.body, "ttl_ms", o.ttlMs);
        Session s = new Session(c, id, sec, got != null ? got : ow, ttl > 0 ? ttl : o.ttlMs, o.onEnd, o.onLeaseEnd);
        s.grant(a.sentNanos, s.ttlMs, (Long) exp);
        if (!o.noKeepalive) {
            s.keepAlive();
        }
        return s;
    }

    static Session adopt(Client c, String id, String secret, String owner, SessionOptions o) {
        return new Session(c, id, secret, owner != null ? owner : c.owner, o.ttlMs, o.onEnd, o.onLeaseEnd);
    }

    /** The session's id (public). */
    public String id() {
        return id;
    }

    /** The credential of the session.  Never log it. */
    public String secret() {
        return secret;
    }

    /** The session's owner_id, and the default owner of its leases. */
    public String ownerId() {
        return owner;
    }

    /** The TTL as last granted (0 for an adopted session not yet renewed). */
    public synchronized long ttlMs() {
        return ttlMs;
    }

    Client client() {
        return c;
    }

    synchronized long sentNanos() {
        return sentNanos;
    }

    private synchronized void grant(long sent, long ttl, long expiresInMs) {
        if (state != State.HELD || (hasDeadline && sent - sentNanos < 0)) {
            return; // ended (never revived), or an older request answered late
        }
        ttlMs = ttl;
        sentNanos = sent;
        deadlineNanos = sent + (expiresInMs - c.marginFor(ttl)) * 1_000_000L;
        hasDeadline = true;
    }

    /** The safe time left at now (ns), 0 once ended; marks the expiry when it ran out. */
    synchronized long safeForNanos(long now) {
        if (state == State.HELD && hasDeadline && now - deadlineNanos >= 0) {
            state = State.EXPIRED;
            notifyAll();
        }
        return state == State.HELD && hasDeadline ? deadlineNanos - now : 0;
    }

    /** The session's safe time in ms, as a lease's: 0 once it ended, for good (and 0 until an adopted session is renewed). */
    public long safeForMs() {
        return safeForNanos(System.nanoTime()) / 1_000_000L;
    }

    /** Whether the session (and so each lease of it) is safe to act on: check it right before each write. */
    public boolean held() {
        return safeForNanos(System.nanoTime()) > 0;
    }

    /** Null while the session may be used, else why not: Expired, Lost (the server's answer) or Ended. */
    public synchronized TenureException error() {
        safeForNanos(System.nanoTime());
        switch (state) {
        case EXPIRED:
            return TenureException.local("expired", "the safe time of session " + id + " ran out");
        case LOST:
            return endErr != null ? endErr : TenureException.local("lost", "session " + id + " was lost");
        case ENDED:
            return TenureException.local("ended", "session " + id + " was ended");
        default:
            return null;
        }
    }

    /** The error a lease of this session reads once the session ended, null while it has not. */
    synchronized TenureException leaseError() {
        safeForNanos(System.nanoTime());
        if (state == State.ENDED) {
            return TenureException.local("released", "released with the end of session " + id);
        }
        return state == State.HELD ? null : error();
    }

    /** The reason of the session's end ("lost", "expired", "released"), null while it has not ended. */
    synchronized String endReason() {
        safeForNanos(System.nanoTime());
        switch (state) {
        case LOST:
            return "lost";
        case EXPIRED:
            return "expired";
        case ENDED:
            return "released";
        default:
            return null;
        }
    }

    private void usable() throws TenureException {
        TenureException e = error();
        if (e != null) {
            throw e;
        }
    }

    /** Marks the session lost with why (the server said so). */
    synchronized void lose(TenureException why) {
        if (state == State.HELD) {
            state = State.LOST;
            endErr = why;
            notifyAll();
        }
    }

    /** The error of an answer; a 409 lost says the session ended (a 403 may be a name this principal may not take). */
    private TenureException refused(Client.Answer a) {
        TenureException e = a.error();
        if (e instanceof TenureException.Lost) {
            lose(e);
        }
        return e;
    }

    String path(String suffix) {
        return "/v1/sessions/" + Client.escape(id) + suffix;
    }

    /** Renews the session with its TTL as it is. */
    public void renew() throws TenureException {
        renew(0);
    }

    /**
     * One renew for every lease of the session (the keepalive does it by
     * itself); its safe time then counts from this request's sending.
     * newTtlMs 0 keeps the TTL.  Lost when the session ended on the server
     * (never revived), Forbidden on a wrong secret (the handle is then lost
     * too), Expired without sending anything once its safe time ran out,
     * Ended after {@link #end()}.
     */
    public void renew(long newTtlMs) throws TenureException {
        renewBy(newTtlMs, 0);
    }

    private void renewBy(long newTtlMs, long deadline) throws TenureException {
        usable();
        Client.Answer a = c.call("PATCH", path(""),
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
        long ttl = Json.lng(a.body, "ttl_ms", 0);
        grant(a.sentNanos, ttl > 0 ? ttl : newTtlMs > 0 ? newTtlMs : ttlMs(), (Long) exp);
        if (safeForNanos(System.nanoTime()) <= 0) {
            TenureException e = error();
            throw e != null ? e : TenureException.local("expired",
                    "the renew of session " + id + " answered after its safe time ran out");
        }
    }

    /** Takes one name under the session, owned by the session's owner. */
    public Lease acquire(String name) throws TenureException {
        return acquire(name, AcquireOptions.ofSession());
    }

    /**
     * Takes one name under the session (no TTL of its own: the session's;
     * o's owner, waitMs, requestId and lockDelayMs as for an acquire, owner
     * null meaning the session's).  A name this session already holds
     * answers that grant again: the same Lease.  Throws as
     * {@link Client#acquire}, and Lost when the session is not live (it is
     * then lost).
     */
    public Lease acquire(String name, AcquireOptions o) throws TenureException {
        Client.checkName(name);
        if (o.waitMs < 0 || o.lockDelayMs < 0) {
            throw TenureException.local("invalid", "wait and lock delay must not be negative");
        }
        String ow = o.owner != null ? o.owner : owner;
        if (ow.isEmpty() || Client.utf8Len(ow) > Client.OWNER_MAX) {
            throw TenureException.local("invalid", "owner id must be 1 to " + Client.OWNER_MAX + " bytes");
        }
        usable();
        Map<String, Object> body = Json.obj("name", name, "owner_id", ow, "session_id", id,
                "session_secret", secret, "wait_ms", o.waitMs > 0 ? o.waitMs : null,
                "request_id", o.requestId != null ? o.requestId : Client.drawId(),
                "lock_delay_ms", o.lockDelayMs > 0 ? o.lockDelayMs : null);
        Client.Answer a = c.call("POST", "/v1/leases", body, o.waitMs, 0);
        if (a.status != 200 && a.status != 201) {
            throw refused(a);
        }
        return add(Lease.granted(c, this, name, ow, 0, a));
    }

    /**
     * Puts a granted lease in the session.  The same grant answered again
     * (a replayed claim or acquire) gives back the handle it has; a newer
     * grant of a name replaces an older handle, which is reported lost.
     */
    private Lease add(Lease l) {
        Lease old;
        boolean late;
        for (;;) {
            synchronized (this) {
                old = leases.get(l.name());
            }
            // a lease's lock is never taken under the session's (Lease.error() takes them the other way)
            boolean same = old != null && old.token() == l.token() && old.ownError() == null;
            synchronized (this) {
                if (leases.get(l.name()) != old) {
                    continue; // changed meanwhile: look again
                }
                if (same) {
                    return old;
                }
                leases.put(l.name(), l);
                late = reported; // ended and reported already: report this one now
                break;
            }
        }
        if (old != null) {
            old.lose(TenureException.local("lost", "lease \"" + old.name() + "\" token " + old.token()
                    + " was replaced by token " + l.token()));
            leaseEnded(old);
        }
        if (late) {
            leaseEnded(l);
        }
        return l;
    }

    /** Takes l out of the session and reports its end, once. */
    void leaseEnded(Lease l) {
        synchronized (this) {
            if (leases.get(l.name()) != l) {
                return;
            }
            leases.remove(l.name());
        }
        tell(l);
    }

    private void tell(Lease l) {
        if (onLeaseEnd != null) {
            try {
                onLeaseEnd.ended(l, l.endReason(), l.endError());
            } catch (RuntimeException e) {
                // a listener's failure is its own
            }
        }
    }

    /** The leases of this session still held, by name. */
    public Map<String, Lease> leases() {
        List<Lease> all;
        synchronized (this) {
            all = new ArrayList<>(leases.values());
        }
        Map<String, Lease> out = new LinkedHashMap<>();
        for (Lease l : all) {
            if (l.held()) {
                out.put(l.name(), l);
            }
        }
        return out;
    }

    /** The answer of a claim: every name decided on its own. */
    public static final class Claim {
        /** The names granted, as leases of this session, in the server's order. */
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

        /** The granted lease of name, or null. */
        public Lease lease(String name) {
            for (Lease l : granted) {
                if (l.name().equals(name)) {
                    return l;
                }
            }
            return null;
        }
    }

    /** Claims names for the session's owner. */
    public Claim claim(List<String> names) throws TenureException {
        return claim(names, null, 0);
    }

    /**
     * Claims many names at once (POST /v1/sessions/{id}/leases): each is
     * decided on its own, as a non-waiting acquire, and the result says
     * which were granted (a lease each), held (with the holder) or in their
     * lock delay.  ownerId null means the session's; lockDelayMs 0 none.
     * More than {@link #BATCH_NAMES} names (or 48 KiB of them) go as
     * several batches.  A name the session already holds answers that
     * grant again (the same Lease), so a claim whose answer was lost can
     * simply be sent again.  Lost when the session is not live (it is then
     * lost), Forbidden on a wrong secret or a name not permitted.
     */
    public Claim claim(List<String> names, String ownerId, long lockDelayMs) throws TenureException {
        Set<String> seen = new HashSet<>();
        for (String n : names) {
            Client.checkName(n);
            if (!seen.add(n)) {
                throw TenureException.local("invalid", "name \"" + n + "\" is given twice");
            }
        }
        if (ownerId != null && (ownerId.isEmpty() || Client.utf8Len(ownerId) > Client.OWNER_MAX)) {
            throw TenureException.local("invalid", "owner id must be 1 to " + Client.OWNER_MAX + " bytes");
        }
        List<Lease> granted = new ArrayList<>();
        Map<String, LeaseInfo> held = new LinkedHashMap<>();
        Map<String, Long> delay = new LinkedHashMap<>();
        for (int k = 0; k < names.size();) {
            int n = 0;
            int size = 0;
            while (k + n < names.size() && n < BATCH_NAMES
                    && (n == 0 || size + Client.utf8Len(names.get(k + n)) + 8 <= BATCH_BODY_BYTES)) {
                size += Client.utf8Len(names.get(k + n)) + 8;
                n++;
            }
            claimBatch(names.subList(k, k + n), ownerId, lockDelayMs, granted, held, delay);
            k += n;
        }
        return new Claim(granted, held, delay);
    }

    private void claimBatch(List<String> names, String ownerId, long lockDelayMs, List<Lease> granted,
            Map<String, LeaseInfo> held, Map<String, Long> delay) throws TenureException {
        usable();
        Client.Answer a = c.call("POST", path("/leases"), Json.obj("session_secret", secret,
                "names", new ArrayList<Object>(names), "owner_id", ownerId,
                "lock_delay_ms", lockDelayMs > 0 ? lockDelayMs : null), 0, 0);
        if (a.status != 200) {
            throw refused(a);
        }
        Set<String> asked = new HashSet<>(names);
        String ow = ownerId != null ? ownerId : owner;
        List<Lease> got = new ArrayList<>();
        for (Map<String, Object> g : Json.objects(a.body.get("granted"))) {
            String name = Json.str(g, "name");
            if (name == null || !asked.remove(name)) {
                throw TenureException.local("protocol", "claim answer grants a name not asked for: " + name);
            }
            got.add(Lease.granted(c, this, name, ow, 0, new Client.Answer(200, g, a.sentNanos)));
        }
        for (Map<String, Object> h : Json.objects(a.body.get("held"))) {
            String name = Json.str(h, "name");
            if (name == null || !asked.remove(name)) {
                throw TenureException.local("protocol", "claim answer holds a name not asked for: " + name);
            }
            Object hold = h.get("holder");
            @SuppressWarnings("unchecked")
            LeaseInfo li = hold instanceof Map ? LeaseInfo.of((Map<String, Object>) hold) : null;
            held.put(name, li);
        }
        for (Map<String, Object> d : Json.objects(a.body.get("lock_delay"))) {
            String name = Json.str(d, "name");
            if (name == null || !asked.remove(name)) {
                throw TenureException.local("protocol", "claim answer delays a name not asked for: " + name);
            }
            delay.put(name, Json.lng(d, "retry_after_ms", 0));
        }
        for (Lease l : got) {
            granted.add(add(l));
        }
        if (!asked.isEmpty()) {
            throw TenureException.local("protocol", "claim answer leaves out " + asked.size() + " names");
        }
    }

    /** The answer of a batch release. */
    public static final class Released {
        /** The leases given back. */
        public final List<Lease> released;
        /** The leases that were no longer live (ended before, or never of this session on the server). */
        public final List<Lease> lost;

        Released(List<Lease> released, List<Lease> lost) {
            this.released = Collections.unmodifiableList(released);
            this.lost = Collections.unmodifiableList(lost);
        }
    }

    /**
     * Gives back several leases of this session (DELETE
     * /v1/sessions/{id}/leases, in batches of {@link #BATCH_NAMES}); the
     * session goes on.  From this call on none of them is held, whatever
     * the outcome; each is reported ended ("released").  The result says
     * which were released and which were no longer live (lost).
     */
    public Released release(Collection<Lease> ls) throws TenureException {
        List<Lease> todo = new ArrayList<>(ls);
        for (Lease l : todo) {
            if (l.session() != this) {
                throw TenureException.local("invalid", l + " is not of session " + id);
            }
        }
        for (Lease l : todo) {
            l.markReleased(null);
        }
        List<Lease> released = new ArrayList<>();
        List<Lease> lost = new ArrayList<>();
        Set<Lease> done = Collections.newSetFromMap(new IdentityHashMap<>());
        Set<Lease> gone = Collections.newSetFromMap(new IdentityHashMap<>());
        TenureException err = null;
        try {
            for (int k = 0; k < todo.size(); k += BATCH_NAMES) {
                releaseBatch(todo.subList(k, Math.min(todo.size(), k + BATCH_NAMES)), released, lost);
            }
        } catch (TenureException e) {
            err = e;
        }
        done.addAll(released);
        gone.addAll(lost);
        for (Lease l : todo) {
            if (gone.contains(l)) {
                l.markReleased(TenureException.local("lost", "lease \"" + l.name() + "\" was not live when released"));
            } else if (!done.contains(l)) {
                l.markReleased(err);
            }
            leaseEnded(l);
        }
        if (err != null) {
            throw err;
        }
        return new Released(released, lost);
    }

    private void releaseBatch(List<Lease> chunk, List<Lease> released, List<Lease> lost) throws TenureException {
        List<Object> items = new ArrayList<>();
        for (Lease l : chunk) {
            items.add(Json.obj("name", l.name(), "token", l.token()));
        }
        Client.Answer a = c.call("DELETE", path("/leases"), Json.obj("session_secret", secret, "leases", items), 0, 0);
        if (a.status != 200) {
            throw refused(a);
        }
        Set<String> gone = new HashSet<>();
        for (Map<String, Object> m : Json.objects(a.body.get("lost"))) {
            gone.add(Json.str(m, "name") + "\u0000" + Json.lng(m, "token", -1));
        }
        for (Lease l : chunk) {
            (gone.contains(l.name() + "\u0000" + l.token()) ? lost : released).add(l);
        }
    }

    /**
     * Starts the keepalive (see the class), once; {@link Client#openSession}
     * does unless told not to.  A session that already ended is reported at
     * once.
     */
    public synchronized void keepAlive() {
        if (keeper != null || reported) {
            return;
        }
        keeper = new Thread(this::keep, "tenure-session " + id);
        keeper.setDaemon(true);
        keeper.start();
    }

    /** Whether the keepalive was started. */
    synchronized boolean kept() {
        return keeper != null;
    }

    private void keep() {
        long backoff = 0;
        long retryAt = 0;
        for (;;) {
            long deadline;
            synchronized (this) {
                if (!due(backoff, retryAt)) {
                    break;
                }
                deadline = hasDeadline ? deadlineNanos : 0;
            }
            try {
                renewBy(0, deadline);
                backoff = 0;
            } catch (TenureException e) {
                if (endReason() != null) {
                    continue; // the next look reports it
                }
                long ttl = ttlMs(); // 0 for an adopted session never renewed: back off as a 3 s one would
                backoff = Hold.nextBackoff(backoff, ttl > 0 ? ttl : 3000);
                retryAt = System.nanoTime() + backoff * 1_000_000L;
            }
        }
        reportEnds();
    }

    /** Waits (holding the lock) until a renew is due: true, or the session ended: false. */
    private boolean due(long backoff, long retryAt) {
        for (;;) {
            long now = System.nanoTime();
            safeForNanos(now);
            if (state != State.HELD) {
                return false;
            }
            long next = backoff > 0 ? retryAt : hasDeadline ? sentNanos + ttlMs * 1_000_000L / 3 : now;
            if (now - next >= 0) {
                return true;
            }
            long wake = hasDeadline && deadlineNanos - next < 0 ? deadlineNanos : next;
            try {
                wait(Math.max(1, (wake - now) / 1_000_000L));
            } catch (InterruptedException e) {
                // end() woke us: look at the state again
            }
        }
    }

    /** Reports every lease still in the session, then the session, once. */
    private void reportEnds() {
        List<Lease> all;
        synchronized (this) {
            if (reported) {
                return;
            }
            all = new ArrayList<>(leases.values());
            leases.clear();
            reported = true; // from now on a lease added is reported as it comes, and end() interrupts no more
        }
        if (Thread.currentThread() == keeper) {
            Thread.interrupted(); // an end() that woke us: the reports run uninterrupted
        }
        for (Lease l : all) {
            tell(l);
        }
        if (onEnd != null) {
            try {
                onEnd.ended(this, endReason(), error());
            } catch (RuntimeException e) {
                // a listener's failure is its own
            }
        }
    }

    /**
     * Ends the session on the server (DELETE /v1/sessions/{id}): it and
     * every lease of it end now (released).  From this call on nothing of
     * it is held, whatever the outcome, and its leases are reported ended
     * before it returns.  Lost when it had already ended (lost or run
     * out), Ended when end() was called before, else the server's error.
     */
    public void end() throws TenureException {
        State was;
        TenureException why;
        synchronized (this) {
            safeForNanos(System.nanoTime());
            was = state;
            why = endErr;
            if (was == State.ENDED) {
                throw TenureException.local("ended", "session " + id + " was ended");
            }
        }
        if (was != State.HELD) {
            awaitReports(); // lost or run out: its leases are told so, not "released"
        }
        synchronized (this) {
            state = State.ENDED;
            notifyAll();
        }
        TenureException err = null;
        try {
            // sent even after a loss: a session that ran out here may still be live there for a moment
            Client.Answer a = c.call("DELETE", path(""), Json.obj("session_secret", secret), 0, 0);
            if (!a.ok()) {
                err = a.error();
            }
        } catch (TenureException e) {
            err = e;
        }
        awaitReports();
        if (was == State.LOST) {
            throw why != null ? why : TenureException.local("lost", "session " + id + " had ended before end()");
        }
        if (was == State.EXPIRED) {
            throw TenureException.local("lost", "session " + id + " ran out before end()");
        }
        if (err != null) {
            throw err;
        }
    }

    /** Returns once the end was reported: by the keepalive when kept (woken), else here. */
    private void awaitReports() {
        Thread k;
        synchronized (this) {
            k = keeper;
            if (k != null && !reported && k != Thread.currentThread()) {
                k.interrupt(); // a renew in flight need not run to its deadline
            }
        }
        if (k == null) {
            reportEnds();
        } else if (k != Thread.currentThread()) {
            try {
                k.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@link #end()}, but nothing when it was ended already (try-with-resources). */
    @Override
    public void close() throws TenureException {
        synchronized (this) {
            if (state == State.ENDED) {
                return;
            }
        }
        end();
    }

    /** Describes the session without its secret. */
    @Override
    public String toString() {
        return "Session{id=" + id + ", owner=\"" + owner + "\"}";
    }
}
