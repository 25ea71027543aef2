// SPDX-License-Identifier: MIT
package tenure;

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
            if (berr != null && !(berr instanceof InterruptedException) && !interruption(berr)) {
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
