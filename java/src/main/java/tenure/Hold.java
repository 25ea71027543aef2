// SPDX-License-Identifier: MIT
package tenure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * Hold and its keepalive: run a body with a lease while a thread renews it
 * when a third of the TTL has passed since the last successful renew was
 * sent, retries with backoff (TTL/30 doubling up to TTL/6) while safe time
 * is left, and bounds every renew by the lease's safe deadline, as
 * libtenure's keepalive does.  When the lease ends the body's thread is
 * interrupted.
 */
public final class Hold {
    private Hold() {
    }

    /** The work done while the lease is held. */
    @FunctionalInterface
    public interface Body<T> {
        T run(Lease lease) throws Exception;
    }

    /** The work done while a session is held, with what its claim answered. */
    @FunctionalInterface
    public interface SessionBody<T> {
        T run(Session session, Session.Claim claim) throws Exception;
    }

    /** Interrupts the body's thread once, unless the body finished first. */
    static final class Interrupter {
        private final Thread body;
        private boolean stop;        // guarded by this
        private boolean interrupted; // guarded by this

        Interrupter(Thread body) {
            this.body = body;
        }

        synchronized void end() {
            if (!stop && !interrupted) {
                interrupted = true;
                body.interrupt();
            }
        }

        /** From now on nothing is interrupted; says whether the body was. */
        synchronized boolean finish() {
            stop = true;
            return interrupted;
        }
    }

    /** The keepalive of one lease, and the body thread it interrupts when the lease ends. */
    static final class Keeper implements Runnable {
        private final Lease lease;
        private final Thread body;
        private boolean stop;        // guarded by this
        private boolean interrupted; // the body was interrupted by us; guarded by this

        Keeper(Lease lease, Thread body) {
            this.lease = lease;
            this.body = body;
        }

        synchronized void stop() {
            stop = true;
            notifyAll();
        }

        /** Stops the keepalive and says whether it interrupted the body. */
        synchronized boolean finish() {
            stop();
            return interrupted;
        }

        private synchronized boolean stopped() {
            return stop;
        }

        private synchronized void end() {
            if (!stop && !interrupted) {
                interrupted = true;
                body.interrupt();
            }
        }

        /** Waits until the monotonic instant at or stop; false when stopped. */
        private synchronized boolean sleepUntil(long at) {
            for (long left = at - System.nanoTime(); !stop && left > 0; left = at - System.nanoTime()) {
                try {
                    wait(Math.max(1, left / 1_000_000L), 0);
                } catch (InterruptedException e) {
                    stop = true;
                }
            }
            return !stop;
        }

        @Override
        public void run() {
            long backoff = 0;
            long next = lease.sentNanos() + lease.ttlMs() * 1_000_000L / 3;
            for (;;) {
                if (lease.error() != null) {
                    end();
                    return;
                }
                long deadline = lease.deadlineNanos();
                if (!sleepUntil(deadline - next < 0 ? deadline : next)) {
                    return;
                }
                if (System.nanoTime() - next < 0) {
                    continue; // woke for the deadline: error() decides
                }
                try {
                    lease.renewBy(0, deadline);
                    backoff = 0;
                    next = lease.sentNanos() + lease.ttlMs() * 1_000_000L / 3;
                } catch (TenureException e) {
                    if (stopped()) {
                        return;
                    }
                    backoff = nextBackoff(backoff, lease.ttlMs());
                    next = System.nanoTime() + backoff * 1_000_000L;
                }
            }
        }
    }

    /** From TTL/30 (at least 10 ms), doubling, at most TTL/6; in ms. */
    static long nextBackoff(long prev, long ttlMs) {
        long first = Math.max(10, ttlMs / 30);
        long limit = Math.max(first, ttlMs / 6);
        if (prev == 0) {
            return first;
        }
        return Math.min(limit, 2 * prev);
    }

    static <T> T run(Client c, Lease l, Body<T> body) throws Exception {
        Keeper k = new Keeper(l, Thread.currentThread());
        Thread t = new Thread(k, "tenure-keepalive " + l.name());
        t.setDaemon(true);
        t.start();
        T value = null;
        Exception berr = null;
        try {
            value = body.run(l);
        } catch (Exception e) {
            berr = e;
        } finally {
            if (k.finish()) {
                Thread.interrupted(); // ours: the caller's thread goes on uninterrupted
            }
            t.join();
        }
        TenureException end = l.error(); // one reading: the safe time may run out between two
        if (end instanceof TenureException.Released) {
            return rethrow(berr, value); // body released it itself
        }
        if (end != null) {
            if (berr != null && !interruption(berr)) {
                throw berr;
            }
            throw end;
        }
        TenureException rerr = null;
        try {
            l.release();
        } catch (TenureException e) {
            rerr = e;
        }
        if (berr != null) {
            throw berr;
        }
        if (rerr instanceof TenureException.Lost) {
            throw rerr;
        }
        return value;
    }

    static <T> T runSession(Client c, SessionOptions o, List<String> names, SessionBody<T> body) throws Exception {
        Interrupter stopper = new Interrupter(Thread.currentThread());
        Session.EndListener user = o.onEnd;
        Session s = c.openSession(o.kept().onEnd((x, reason, err) -> {
            stopper.end();
            if (user != null) {
                user.ended(x, reason, err);
            }
        }));
        Session.Claim claim;
        try {
            claim = names.isEmpty() ? new Session.Claim(new ArrayList<>(), new LinkedHashMap<>(), new LinkedHashMap<>())
                    : s.claim(names);
        } catch (TenureException e) {
            try {
                s.close();
            } catch (TenureException x) {
                // the claim's error is the one to tell
            }
            if (stopper.finish()) {
                Thread.interrupted();
            }
            throw e;
        }
        T value = null;
        Exception berr = null;
        try {
            value = body.run(s, claim);
        } catch (Exception e) {
            berr = e;
        } finally {
            if (stopper.finish()) {
                Thread.interrupted(); // ours: the caller's thread goes on uninterrupted
            }
        }
        TenureException end = s.error(); // one reading: the safe time may run out between two
        if (end instanceof TenureException.Ended) {
            return rethrow(berr, value); // body ended it itself
        }
        if (end != null) {
            if (berr != null && !interruption(berr)) {
                throw berr;
            }
            throw end;
        }
        TenureException eerr = null;
        try {
            s.end();
        } catch (TenureException e) {
            eerr = e;
        }
        if (berr != null) {
            throw berr;
        }
        if (eerr instanceof TenureException.Lost) {
            throw eerr;
        }
        return value;
    }

    private static boolean interruption(Exception e) {
        for (Throwable x = e; x != null; x = x.getCause()) {
            if (x instanceof InterruptedException || x instanceof java.io.InterruptedIOException
                    || x instanceof java.nio.channels.ClosedByInterruptException
                    || "interrupted".equals(x instanceof TenureException ? ((TenureException) x).code() : null)) {
                return true;
            }
        }
        return false;
    }

    private static <T> T rethrow(Exception e, T value) throws Exception {
        if (e != null) {
            throw e;
        }
        return value;
    }
}
