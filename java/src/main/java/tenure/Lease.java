// SPDX-License-Identifier: MIT
package tenure;

/**
 * One grant held by this process.  Its safe time is the time left of the
 * last successful acquire or renew, counted on the monotonic clock
 * (System.nanoTime) from the instant that request was sent, minus the
 * safety margin: the server starts the TTL when it receives the request,
 * which is later, so the lease cannot end on the server before the
 * client's count does.  A lease that was lost, released or ran out is never
 * revived.  A lease taken under a {@link Session} lives as long as its
 * session: its safe time is the session's, and it ends when the session
 * ends (lost or expired with it, released by {@link Session#end()}); it is
 * renewed only through its session.  Thread-safe.
 */
public final class Lease {
    private enum State { HELD, LOST, EXPIRED, RELEASED }

    private final Client client;
    private final Session session;
    private final String name;
    private final String owner;
    private final long token;
    private final String secret;
    private final String proof;

    private State state = State.HELD;
    private long ttlMs;
    private long sentNanos;      // when the last successful acquire or renew was sent
    private long deadlineNanos;  // end of the safe time, valid when hasDeadline
    private boolean hasDeadline; // false: never granted here (adopted) or renewing a spent wait
    private TenureException endErr;
    private TenureException releaseErr; // what its release answered, when it did not go through

    Lease(Client client, Session session, String name, String owner, long token, String secret,
            String proof) {
        this.client = client;
        this.session = session;
        this.name = name;
        this.owner = owner;
        this.token = token;
        this.secret = secret;
        this.proof = proof;
    }

    /** The lease of a grant answer a (201, or 200 for a replay), sent as body with owner and ttlMs. */
    static Lease granted(Client c, Session s, String name, String owner, long ttlMs, Client.Answer a)
            throws TenureException {
        if (a.status != 200 && a.status != 201) {
            throw a.error();
        }
        Object tok = a.body.get("token");
        String sec = Json.str(a.body, "lease_secret");
        Object exp = a.body.get("expires_in_ms");
        if (!(tok instanceof Long) || (Long) tok < 0 || (Long) tok > Client.TOKEN_MAX || sec == null
                || sec.isEmpty() || (s == null && !(exp instanceof Long))) {
            throw TenureException.local("protocol", "grant without token, lease_secret or expires_in_ms");
        }
        String ow = Json.str(a.body, "owner_id");
        Lease l = new Lease(c, s, name, ow != null ? ow : owner, (Long) tok, sec, Json.str(a.body, "proof"));
        long ttl = Json.lng(a.body, "ttl_ms", ttlMs);
        if (s == null) {
            l.grant(a.sentNanos, ttl > 0 ? ttl : ttlMs, (Long) exp);
        }
        return l;
    }

    /** The lease's name. */
    public String name() {
        return name;
    }

    /** The holder's owner id (null for an adopted handle). */
    public String ownerId() {
        return owner;
    }

    /** The fencing token: strictly increasing per grant, never reused; public, never a credential. */
    public long token() {
        return token;
    }

    /** The server's signature of (name, token), or null unless the server signs grants. */
    public String proof() {
        return proof;
    }

    /** The credential for renew and release (hex).  Never log it. */
    public String secret() {
        return secret;
    }

    /** The session this lease lives by, or null. */
    public Session session() {
        return session;
    }

    /** The TTL as last granted (the session's under a session). */
    public synchronized long ttlMs() {
        return session != null ? session.ttlMs() : ttlMs;
    }

    synchronized long sentNanos() {
        return sentNanos;
    }

    synchronized long deadlineNanos() {
        return hasDeadline ? deadlineNanos : System.nanoTime();
    }

    /** Folds a successful acquire or renew, sent at sent, into the lease. */
    synchronized void grant(long sent, long ttl, long expiresInMs) {
        if (state != State.HELD) {
            return; // lost, expired or released: never revived
        }
        if (hasDeadline && sent - sentNanos < 0) {
            return; // an older request answered late
        }
        ttlMs = ttl;
        sentNanos = sent;
        deadlineNanos = sent + (expiresInMs - client.marginFor(ttl)) * 1_000_000L;
        hasDeadline = true;
    }

    private long safeLocked(long now) {
        if (state != State.HELD) {
            return 0;
        }
        if (session != null) {
            return Math.max(session.safeForNanos(now), 0); // its end is the session's (terminal there)
        }
        if (!hasDeadline) {
            return 0;
        }
        long left = deadlineNanos - now;
        if (left <= 0) {
            state = State.EXPIRED;
            return 0;
        }
        return left;
    }

    /**
     * How long no other holder can exist, in ms: 0 once the lease was lost,
     * released or ran out, and once 0 it never grows back, even if a late
     * renew answer arrives.  A JVM resumed from a pause (SIGSTOP, a long GC)
     * past its safe time reads 0 at its very next call.
     */
    public synchronized long safeForMs() {
        return safeLocked(System.nanoTime()) / 1_000_000L;
    }

    /** Whether it is safe to act as the holder: call it right before each write. */
    public synchronized boolean held() {
        return safeLocked(System.nanoTime()) > 0;
    }

    /** Null while held, else why not: Expired, Lost (with the server's answer) or Released. */
    public synchronized TenureException error() {
        safeLocked(System.nanoTime());
        if (state == State.HELD && session != null) {
            return session.leaseError();
        }
        switch (state) {
        case EXPIRED:
            return endErr != null ? endErr : TenureException.local("expired", "the safe time of lease \"" + name + "\" ran out");
        case LOST:
            return endErr != null ? endErr : TenureException.local("lost", "lease \"" + name + "\" was lost");
        case RELEASED:
            return TenureException.local("released", "lease \"" + name + "\" was released");
        default:
            return null;
        }
    }

    /** Marks the lease lost with why (from the server or the session). */
    synchronized void lose(TenureException why) {
        if (state == State.HELD) {
            state = State.LOST;
            endErr = why;
        }
    }

    /** Marks the lease released (a batch release); why, when not null, is what the release answered. */
    synchronized void markReleased(TenureException why) {
        if (state == State.HELD) {
            state = State.RELEASED;
        }
        if (state == State.RELEASED && why != null) {
            releaseErr = why;
        }
    }

    /** Null while the lease itself was not released, lost or run out (its session's end aside). */
    synchronized TenureException ownError() {
        return state == State.HELD ? null : error();
    }

    /** How it ended: "released", "lost", "expired", or its session's end; "stopped" while it has not. */
    synchronized String endReason() {
        safeLocked(System.nanoTime());
        switch (state) {
        case RELEASED:
            return "released";
        case LOST:
            return "lost";
        case EXPIRED:
            return "expired";
        default:
            String r = session != null ? session.endReason() : null;
            return r != null ? r : "stopped";
        }
    }

    /** What its end is reported with: a release's error (null when it went through), else {@link #error()}. */
    synchronized TenureException endError() {
        return state == State.RELEASED ? releaseErr : error();
    }

    /** Renews with the TTL as it is. */
    public void renew() throws TenureException {
        renew(0);
    }

    /**
     * Extends the lease; its safe time then counts from this request's
     * sending.  ttlMs 0 keeps the TTL.  Lost when the server says the grant
     * is gone (for good), Expired without sending anything when the safe
     * time already ran out, Forbidden on a wrong secret (the handle is then
     * lost too), Released after release; transport errors leave the lease as
     * it was.  A lease under a session is renewed only through its session:
     * its renew is sent, and the server refuses it (bad_request, "renew the
     * session").
     */
    public void renew(long ttlMs) throws TenureException {
        renewBy(ttlMs, 0);
    }

    /** A renew whose request ends by deadlineNanos (0: the request timeout). */
    void renewBy(long ttl, long deadline) throws TenureException {
        synchronized (this) {
            TenureException e = (state == State.HELD && !hasDeadline && session == null) ? null : error();
            if (e != null) {
                throw e;
            }
        }
        Client.Answer a = client.call("PATCH", Client.leasePath(name),
                Json.obj("token", token, "lease_secret", secret, "ttl_ms", ttl > 0 ? ttl : null), 0, deadline);
        if (a.status != 200) {
            TenureException e = a.error();
            if (e instanceof TenureException.Lost || e instanceof TenureException.Forbidden) {
                lose(e);
            }
            throw e;
        }
        Object exp = a.body.get("expires_in_ms");
        if (!(exp instanceof Long)) {
            throw TenureException.local("protocol", "renew answer without expires_in_ms");
        }
        if (session != null) {
            return; // its session's time is its time
        }
        long granted = Json.lng(a.body, "ttl_ms", 0);
        grant(a.sentNanos, granted > 0 ? granted : ttl > 0 ? ttl : ttlMs(), (Long) exp);
        synchronized (this) {
            if (safeLocked(System.nanoTime()) <= 0) {
                TenureException e = error();
                throw e != null && state == State.RELEASED ? e
                        : TenureException.local("expired", "the renew of lease \"" + name + "\" answered after its safe time ran out");
            }
        }
    }

    /**
     * Gives a waiting acquire's grant its safe time back.  That time counts
     * from the acquire's sending, so the wait used it up; when more than
     * half of it went, one renew restarts the count from its own sending.
     * If it fails the lease stays as the grant left it.
     */
    void refreshWaited() {
        long d;
        synchronized (this) {
            long now = System.nanoTime();
            d = deadlineNanos;
            boolean spent = state == State.HELD && hasDeadline && 2 * (d - now) < d - sentNanos;
            if (!spent) {
                return;
            }
            hasDeadline = false; // renewable, never writable meanwhile
        }
        try {
            renew(0);
        } catch (TenureException e) {
            // the lease stays as the grant left it (run out, or lost when the server said so)
        }
        synchronized (this) {
            if (!hasDeadline) {
                deadlineNanos = d;
                hasDeadline = true;
            }
        }
    }

    /**
     * Gives the lease back.  From this call on it is neither held nor
     * renewed, whatever the outcome.  Lost when it was no longer live.  A
     * lease under a session leaves it (reported ended, "released"); the
     * session goes on.
     */
    public void release() throws TenureException {
        synchronized (this) {
            state = State.RELEASED;
        }
        TenureException err = null;
        try {
            Client.Answer a = client.call("DELETE", Client.leasePath(name),
                    Json.obj("token", token, "lease_secret", secret), 0, 0);
            if (!a.ok()) {
                err = a.error();
            }
        } catch (TenureException e) {
            err = e;
        }
        if (session != null) {
            markReleased(err);
            session.leaseEnded(this);
        }
        if (err != null) {
            throw err;
        }
    }

    /** Describes the lease without its secret. */
    @Override
    public String toString() {
        return "Lease{name=\"" + name + "\", token=" + token + ", owner=\"" + owner + "\"}";
    }
}
