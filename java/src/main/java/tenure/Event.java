// SPDX-License-Identifier: MIT
package tenure;

import java.util.Map;

/**
 * One event of the stream.  type is "acquired", "released", "expired",
 * "revoked", "reset" (the server no longer has the events missed: read the
 * state again), "session_opened" or "session_ended"; a reset has no name,
 * owner or token.
 */
public final class Event {
    private final long id;
    private final String type;
    private final String name;
    private final String ownerId;
    private final long token;
    private final long floor;
    private final String sessionId;
    private final Map<String, Object> data;

    Event(long id, Map<String, Object> data) {
        this.id = id;
        this.data = data;
        this.type = Json.str(data, "type");
        this.name = Json.str(data, "name");
        this.ownerId = Json.str(data, "owner_id");
        this.token = Json.lng(data, "token", 0);
        this.floor = Json.lng(data, "floor", 0);
        this.sessionId = Json.str(data, "session_id");
    }

    /** The event's id; resume after it with {@link EventStream.Options#lastEventId}. */
    public long id() {
        return id;
    }

    public String type() {
        return type;
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

    /** The name's floor after the event. */
    public long floor() {
        return floor;
    }

    /** The session of a session event, else null. */
    public String sessionId() {
        return sessionId;
    }

    /** The event's JSON data as it came. */
    public Map<String, Object> data() {
        return data;
    }

    @Override
    public String toString() {
        return "Event{id=" + id + ", " + Json.write(data) + "}";
    }
}
