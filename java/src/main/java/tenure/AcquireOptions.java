// SPDX-License-Identifier: MIT
package tenure;

/**
 * The arguments of an acquire besides the name: {@code
 * AcquireOptions.ttlMs(10000).waitMs(5000)}.  Immutable; each setter
 * returns a copy.
 */
public final class AcquireOptions {
    final long ttlMs;
    final String owner;
    final long waitMs;
    final String requestId;
    final long lockDelayMs;

    private AcquireOptions(long ttlMs, String owner, long waitMs, String requestId, long lockDelayMs) {
        this.ttlMs = ttlMs;
        this.owner = owner;
        this.waitMs = waitMs;
        this.requestId = requestId;
        this.lockDelayMs = lockDelayMs;
    }

    /** Options with the lease's time to live (required, in ms; unused under a session). */
    public static AcquireOptions ttlMs(long ttlMs) {
        return new AcquireOptions(ttlMs, null, 0, null, 0);
    }

    /** Options of an acquire under a session ({@link Session#acquire}): no TTL, the session's applies. */
    public static AcquireOptions ofSession() {
        return new AcquireOptions(0, null, 0, null, 0);
    }

    /** The holder's name; null means the client's owner id (the session's owner under a session). */
    public AcquireOptions owner(String o) {
        return new AcquireOptions(ttlMs, o, waitMs, requestId, lockDelayMs);
    }

    /** Queue on the server (first come, first served per name) for up to this long while the name is held. */
    public AcquireOptions waitMs(long ms) {
        return new AcquireOptions(ttlMs, owner, ms, requestId, lockDelayMs);
    }

    /**
     * Makes a retry idempotent: the same name, owner and request id while the
     * grant is live return that grant again.  Null means one drawn for this
     * call: every acquire carries one, since the client sends a request again
     * to the next server after a 503, and a 503 does not prove that nothing
     * was done.
     */
    public AcquireOptions requestId(String id) {
        return new AcquireOptions(ttlMs, owner, waitMs, id, lockDelayMs);
    }

    /** After this lease expires (not after a release), nobody gets the name for this long. */
    public AcquireOptions lockDelayMs(long ms) {
        return new AcquireOptions(ttlMs, owner, waitMs, requestId, ms);
    }
}
