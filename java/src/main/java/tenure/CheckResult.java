// SPDX-License-Identifier: MIT
package tenure;

/**
 * The answer of {@link Client#check}: whether the token asked about is the
 * live grant, the live token if any, and the floor (the highest token ever
 * granted for the name, 0 if none: a sink may admit a token only if it is
 * at least the floor it knows).
 */
public final class CheckResult {
    private final boolean current;
    private final Long token;
    private final long floor;

    CheckResult(boolean current, Long token, long floor) {
        this.current = current;
        this.token = token;
        this.floor = floor;
    }

    public boolean current() {
        return current;
    }

    /** Whether some grant of the name is live. */
    public boolean live() {
        return token != null;
    }

    /** The live grant's token, or null when the name is free. */
    public Long token() {
        return token;
    }

    public long floor() {
        return floor;
    }

    @Override
    public String toString() {
        return "CheckResult{current=" + current + ", token=" + token + ", floor=" + floor + "}";
    }
}
