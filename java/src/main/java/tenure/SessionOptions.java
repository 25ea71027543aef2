// SPDX-License-Identifier: MIT
package tenure;

/**
 * The arguments of {@link Client#openSession(SessionOptions)}: {@code
 * SessionOptions.ttlMs(10_000).owner("indexer-04").onLeaseEnd(...)}.
 * Immutable; each setter returns a copy.
 */
public final class SessionOptions {
    final long ttlMs;
    final String owner;
    final boolean noKeepalive;
    final Session.EndListener onEnd;
    final Session.LeaseEndListener onLeaseEnd;

    private SessionOptions(long ttlMs, String owner, boolean noKeepalive, Session.EndListener onEnd,
            Session.LeaseEndListener onLeaseEnd) {
        this.ttlMs = ttlMs;
        this.owner = owner;
        this.noKeepalive = noKeepalive;
        this.onEnd = onEnd;
        this.onLeaseEnd = onLeaseEnd;
    }

    /** Options with the session's time to live (required, in ms). */
    public static SessionOptions ttlMs(long ttlMs) {
        return new SessionOptions(ttlMs, null, false, null, null);
    }

    /** The session's owner_id and the default owner of its leases; null means the client's owner id. */
    public SessionOptions owner(String o) {
        return new SessionOptions(ttlMs, o, noKeepalive, onEnd, onLeaseEnd);
    }

    /** Do not start the keepalive: the caller renews ({@link Session#renew()}) or calls {@link Session#keepAlive()} later. */
    public SessionOptions noKeepalive() {
        return new SessionOptions(ttlMs, owner, true, onEnd, onLeaseEnd);
    }

    /** These options with the keepalive on (holdSession keeps its session). */
    SessionOptions kept() {
        return new SessionOptions(ttlMs, owner, false, onEnd, onLeaseEnd);
    }

    /** Called once when the session ends (see {@link Session.EndListener}). */
    public SessionOptions onEnd(Session.EndListener l) {
        return new SessionOptions(ttlMs, owner, noKeepalive, l, onLeaseEnd);
    }

    /** Called once for each lease of the session when it ends (see {@link Session.LeaseEndListener}). */
    public SessionOptions onLeaseEnd(Session.LeaseEndListener l) {
        return new SessionOptions(ttlMs, owner, noKeepalive, onEnd, l);
    }
}
