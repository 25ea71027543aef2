// SPDX-License-Identifier: MIT
package tenure;

import java.util.Map;

/**
 * Every failure of the client.  {@link #code()} is the server's error code
 * ("held", "lost", "forbidden", ...) or a local one ("expired", "released",
 * "connect", "timeout", "transport", "protocol", "invalid"); the nested
 * subclasses let callers catch the kinds that matter: {@link Held} (who
 * holds the name), {@link LockDelay}, {@link Lost} and its {@link Expired}
 * (the safe time ran out), {@link Released}, {@link Ended} (a session
 * handle after its end), {@link Forbidden}, {@link Transport} with
 * {@link Connect} (nothing was sent) and {@link Timeout} (sent, outcome
 * unknown), {@link Unavailable}, {@link TooManyRequests} and
 * {@link Misdirected}.  The codes
 * are the C, Python and Go clients' (docs/CLIENT.md).
 */
public class TenureException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String code;
    private final int status;
    private long retryAfterMs;

    public TenureException(String code, int status, String message, Throwable cause) {
        super(message == null || message.isEmpty() ? code : message, cause);
        this.code = code;
        this.status = status;
    }

    /**
     * How long the server asked to wait before trying again (its
     * Retry-After on a 429 or 503, the lock delay's retry_after_ms), 0 when
     * it said nothing.
     */
    public long retryAfterMs() {
        return retryAfterMs;
    }

    /** The server's error code, or a local one. */
    public String code() {
        return code;
    }

    /** The HTTP status when the server answered, else 0. */
    public int status() {
        return status;
    }

    @Override
    public String toString() {
        return "tenure: " + code + (status != 0 ? " (HTTP " + status + ")" : "") + ": "
                + getMessage();
    }

    /** The name is held by another grant: {@link #holder()} says whose. */
    public static class Held extends TenureException {
        private static final long serialVersionUID = 1L;
        private final LeaseInfo holder;

        Held(int status, String message, LeaseInfo holder) {
            super("held", status, message, null);
            this.holder = holder;
        }

        /** The live grant of the name, or null when the server did not say. */
        public LeaseInfo holder() {
            return holder;
        }
    }

    /** The name is in its lock delay for {@link #retryAfterMs()} more. */
    public static class LockDelay extends TenureException {
        private static final long serialVersionUID = 1L;

        LockDelay(int status, String message, long retryAfterMs) {
            super("lock_delay", status, message, null);
            setRetryAfter(retryAfterMs);
        }
    }

    /**
     * 429: this client's address (or principal) already has as many
     * blocking acquires waiting as the server allows
     * (--max-waiters-per-address, --max-waiters-per-principal); nothing was
     * done.  {@link #retryAfterMs()} is the server's Retry-After.
     */
    public static class TooManyRequests extends TenureException {
        private static final long serialVersionUID = 1L;

        TooManyRequests(int status, String message) {
            super("too_many_requests", status, message, null);
        }
    }

    /**
     * 421: the server does not answer to the host name this client used
     * (with authentication off it serves only localhost, IP addresses, its
     * --listen host and its --allow-host names, against DNS rebinding);
     * nothing was done.  Use an address, or start tenured with --allow-host.
     */
    public static class Misdirected extends TenureException {
        private static final long serialVersionUID = 1L;

        Misdirected(int status, String message) {
            super("misdirected_request", status, message, null);
        }
    }

    /** A session handle used after {@link Session#end()}: code "ended". */
    public static class Ended extends TenureException {
        private static final long serialVersionUID = 1L;

        Ended(String message) {
            super("ended", 0, message, null);
        }
    }

    /** The grant is gone for good (released, expired, superseded): acquire again for a new token. */
    public static class Lost extends TenureException {
        private static final long serialVersionUID = 1L;

        Lost(String code, int status, String message) {
            super(code, status, message, null);
        }
    }

    /** The lease's safe time ran out before a renew succeeded; nothing was sent.  Also a {@link Lost}. */
    public static class Expired extends Lost {
        private static final long serialVersionUID = 1L;

        Expired(String message) {
            super("expired", 0, message);
        }
    }

    /** The lease was released through this handle. */
    public static class Released extends TenureException {
        private static final long serialVersionUID = 1L;

        Released(String message) {
            super("released", 0, message, null);
        }
    }

    /** A wrong secret, or a principal not allowed to do this. */
    public static class Forbidden extends TenureException {
        private static final long serialVersionUID = 1L;

        Forbidden(int status, String message) {
            super("forbidden", status, message, null);
        }
    }

    /** The server is not writable or full (503): another instance may take the request. */
    public static class Unavailable extends TenureException {
        private static final long serialVersionUID = 1L;

        Unavailable(String code, int status, String message) {
            super(code, status, message, null);
        }
    }

    /** No answer from a server. */
    public static class Transport extends TenureException {
        private static final long serialVersionUID = 1L;

        Transport(String code, String message, Throwable cause) {
            super(code, 0, message, cause);
        }
    }

    /** No server URL accepted a connection: nothing was sent. */
    public static class Connect extends Transport {
        private static final long serialVersionUID = 1L;

        Connect(String message, Throwable cause) {
            super("connect", message, cause);
        }
    }

    /** The request was sent but no answer came in time: its outcome is unknown (retry an acquire with the same request id). */
    public static class Timeout extends Transport {
        private static final long serialVersionUID = 1L;

        Timeout(String message, Throwable cause) {
            super("timeout", message, cause);
        }
    }

    static TenureException local(String code, String message) {
        switch (code) {
        case "expired":
            return new Expired(message);
        case "released":
            return new Released(message);
        case "ended":
            return new Ended(message);
        case "lost":
            return new Lost("lost", 0, message);
        default:
            return new TenureException(code, 0, message, null);
        }
    }

    final void setRetryAfter(long ms) {
        retryAfterMs = Math.max(0, ms);
    }

    /**
     * The exception of an error answer: its status, parsed body (may be
     * empty), the Retry-After it carried (ms, 0 when none) and the host
     * name the request named.
     */
    static TenureException fromAnswer(int status, Map<String, Object> body, long retryAfterMs, String host) {
        TenureException e = fromBody(status, body, host);
        if (e.retryAfterMs == 0) {
            e.setRetryAfter(retryAfterMs);
        }
        return e;
    }

    private static TenureException fromBody(int status, Map<String, Object> body, String host) {
        String code = Json.str(body, "error");
        String msg = Json.str(body, "message");
        if (code == null) {
            code = byStatus(status);
        }
        if (msg == null) {
            msg = "HTTP " + status;
        }
        switch (code) {
        case "held": {
            Object h = body.get("holder");
            LeaseInfo li = null;
            if (h instanceof Map) {
                @SuppressWarnings("unchecked")
                Map<String, Object> hm = (Map<String, Object>) h;
                li = LeaseInfo.of(hm);
            }
            return new Held(status, msg, li);
        }
        case "lock_delay":
            return new LockDelay(status, msg, Json.lng(body, "retry_after_ms", 0));
        case "lost":
            return new Lost("lost", status, msg);
        case "forbidden":
            return new Forbidden(status, msg);
        case "too_many_requests":
            return new TooManyRequests(status, msg);
        case "misdirected_request":
            return new Misdirected(status, msg + " (this client named it \"" + host
                    + "\": use an IP address or a name tenured allows)");
        default:
            if (status == 503) {
                return new Unavailable(code, status, msg);
            }
            if (status == 403) {
                return new Forbidden(status, msg);
            }
            return new TenureException(code, status, msg, null);
        }
    }

    private static String byStatus(int status) {
        switch (status) {
        case 400: return "bad_request";
        case 401: return "unauthorized";
        case 403: return "forbidden";
        case 404: return "not_found";
        case 405: return "method_not_allowed";
        case 413: return "payload_too_large";
        case 415: return "unsupported_media_type";
        case 421: return "misdirected_request";
        case 429: return "too_many_requests";
        case 431: return "request_header_fields_too_large";
        case 500: return "internal";
        case 501: return "not_implemented";
        case 503: return "unavailable";
        default: return "http_" + status;
        }
    }
}
