// SPDX-License-Identifier: MIT
package tenure;

import java.util.Map;

/** A live lease as the server reports it (get, list, the holder of a held name). */
public final class LeaseInfo {
    private final String name;
    private final String ownerId;
    private final long token;
    private final long expiresInMs;

    LeaseInfo(String name, String ownerId, long token, long expiresInMs) {
        this.name = name;
        this.ownerId = ownerId;
        this.token = token;
        this.expiresInMs = expiresInMs;
    }

    static LeaseInfo of(Map<String, Object> m) {
        return new LeaseInfo(Json.str(m, "name"), Json.str(m, "owner_id"), Json.lng(m, "token", 0),
                Json.lng(m, "expires_in_ms", 0));
    }

    public String name() {
        return name;
    }

    public String ownerId() {
        return ownerId;
    }

    public long token() {
        return token;
    }

    /** The time it had left when the server answered (0 when not reported). */
    public long expiresInMs() {
        return expiresInMs;
    }

    @Override
    public String toString() {
        return "LeaseInfo{name=" + name + ", owner=" + ownerId + ", token=" + token + "}";
    }
}
