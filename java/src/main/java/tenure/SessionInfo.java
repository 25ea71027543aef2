// SPDX-License-Identifier: MIT
package tenure;

import java.util.Map;

/** A live session as the server reports it (get, list); never its secret. */
public final class SessionInfo {
    private final String id;
    private final String ownerId;
    private final long ttlMs;
    private final long expiresInMs;
    private final long leases;

    private SessionInfo(String id, String ownerId, long ttlMs, long expiresInMs, long leases) {
        this.id = id;
        this.ownerId = ownerId;
        this.ttlMs = ttlMs;
        this.expiresInMs = expiresInMs;
        this.leases = leases;
    }

    static SessionInfo of(Map<String, Object> m) {
        return new SessionInfo(Json.str(m, "session_id"), Json.str(m, "owner_id"), Json.lng(m, "ttl_ms", 0),
                Json.lng(m, "expires_in_ms", 0), Json.lng(m, "leases", 0));
    }

    /** The session's id (public). */
    public String id() {
        return id;
    }

    public String ownerId() {
        return ownerId;
    }

    /** Its TTL (0 in a list: the list does not say). */
    public long ttlMs() {
        return ttlMs;
    }

    /** The time it had left when the server answered. */
    public long expiresInMs() {
        return expiresInMs;
    }

    /** How many leases it holds. */
    public long leases() {
        return leases;
    }

    @Override
    public String toString() {
        return "SessionInfo{id=" + id + ", owner=" + ownerId + ", leases=" + leases + "}";
    }
}
