// SPDX-License-Identifier: MIT
package tenure.test;

import java.util.Map;

import tenure.AcquireOptions;
import tenure.Client;
import tenure.Json;
import tenure.Lease;
import tenure.TenureException;

/**
 * A worker in a JVM of its own: it holds a lease through Client.hold and
 * writes fenced rows into a sink, one JSON line per event on stdout.
 * After its first write it stops its whole JVM (SIGSTOP, as a long GC
 * pause would) between its held() check and its next write: the gap no
 * lease can close.  Run by FrozenJvmTest, which takes the lease over
 * meanwhile and resumes it.
 *
 * <p>Usage: Worker [--no-fence] TTL_MS URL NAME SINK (sqlite:PATH or a
 * postgresql:// URL).  --no-fence writes without the fence: the test's
 * control, which shows the zombie's write landing.  Exit 4 when the lease
 * was lost, 1 on errors.
 */
public final class Worker {
    private Worker() {
    }

    static void say(Object... kv) {
        System.out.println(Json.write(Json.obj(kv)));
        System.out.flush();
    }

    static String kind(Throwable e) {
        if (e instanceof TenureException.Expired) {
            return "Expired";
        }
        if (e instanceof TenureException.Lost) {
            return "Lost";
        }
        return String.valueOf(e);
    }

    /**
     * Stops this whole JVM (every thread) until someone sends SIGCONT.  The
     * wait for kill is not interruptible: on resumption the keepalive may
     * interrupt this thread at once (the lease ran out while it was
     * stopped), and a thread caught in the gap between its check and its
     * write, as in a GC pause, goes on to the write; the interruption is
     * kept for the next blocking call.
     */
    static void freeze() throws Exception {
        long last = System.nanoTime();
        Process p = new ProcessBuilder("kill", "-STOP", Long.toString(ProcessHandle.current().pid()))
                .inheritIO().start();
        boolean interrupted = false;
        for (;;) {
            try {
                p.waitFor();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        // kill(1) returns once the signal is queued, and the stop takes hold
        // a moment later (later still in a gVisor sandbox): a thread that
        // ran on meanwhile was caught inside its write, holding the SQLite
        // sink's lock, and the successor's write timed out (SQLITE_BUSY).
        // Go on only once the monotonic clock jumped (the test keeps it
        // stopped for seconds): the JVM was stopped, most often already
        // while it waited for kill.
        long give = last + 60_000_000_000L;
        for (long now = System.nanoTime(); now - last <= 2_000_000_000L; now = System.nanoTime()) {
            if (now - give > 0) {
                throw new IllegalStateException("SIGSTOP never took hold");
            }
            last = now;
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    static Void work(Lease l, String spec, boolean fenced) throws Exception {
        say("token", l.token());
        for (int step = 0;; step++) {
            if (!l.held()) { // right before each write
                say("learned", kind(l.error()), "safe", l.safeForMs());
                return null;
            }
            if (step == 1) {
                say("stopping", true);
                freeze();
            }
            boolean admitted = Sink.write(spec, l.name(), l.token(), step, fenced);
            say("step", step, "admitted", admitted, "safe", l.safeForMs());
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                // the keepalive says the lease ended: the next check tells how
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int k = 0;
        boolean fenced = true;
        if (args.length > 0 && args[0].equals("--no-fence")) {
            fenced = false;
            k++;
        }
        if (args.length - k != 4) {
            System.err.println("usage: Worker [--no-fence] TTL_MS URL NAME SINK");
            System.exit(2);
        }
        long ttl = Long.parseLong(args[k]);
        String url = args[k + 1];
        String name = args[k + 2];
        String spec = args[k + 3];
        Client c = Client.builder().url(url).build();
        boolean f = fenced;
        try {
            c.hold(name, AcquireOptions.ttlMs(ttl).owner("zombie"), l -> work(l, spec, f));
        } catch (TenureException.Lost e) {
            say("hold_raised", kind(e));
            System.exit(4);
        } catch (Exception e) {
            System.err.println("worker: " + e);
            System.exit(1);
        }
        say("hold_returned", true);
        System.exit(0);
    }

    static Map<String, Object> parse(String line) {
        return Json.parseObject(line);
    }
}
