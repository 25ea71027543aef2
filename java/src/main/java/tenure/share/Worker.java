// SPDX-License-Identifier: MIT
package tenure.share;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import tenure.Client;
import tenure.Event;
import tenure.EventStream;
import tenure.Lease;
import tenure.LeaseInfo;
import tenure.Session;
import tenure.SessionInfo;
import tenure.SessionOptions;
import tenure.TenureException;

/**
 * The fair-share recipe (docs/SESSIONS.md): the workers of a group spread
 * a list of shards evenly over the workers that are alive, and a shard
 * moves from one to another only through the lease server, with a higher
 * token at each move.
 *
 * <p>Each worker opens a session with owner_id "group/worker", reads the
 * live sessions of the group (GET /v1/sessions?prefix=group/) and follows
 * the event stream (session_opened, session_ended, and the shards' own
 * events).  Its target is its share: with S shards and n live sessions,
 * ceil(S/n) for the first S mod n sessions in session_id order and
 * floor(S/n) for the others, so every worker computes the same split and
 * the counts differ by at most one.  Below target it claims free shards
 * (picked at random) in one batch; above it, it calls onLoss (which must
 * return only once nothing writes those shards any more) and releases the
 * surplus in one batch.  When its session is lost (a frozen or cut-off
 * worker), every shard is reported lost and it joins again with a new
 * session.  Each round also checks the shards it holds against the list
 * of held shards: one whose live token is another (a force release, an
 * end no event told of) is reported lost.
 *
 * <p>{@code Worker w = Worker.start(client, new Worker.Options("indexers",
 * "w1", shards).onGain(...).onLoss(...)); ... w.close();}  onGain and
 * onLoss run on the worker's thread, one at a time.
 */
public final class Worker implements AutoCloseable {
    /** What a worker does; group, worker and shards are required. */
    public static final class Options {
        final String group;
        final String worker;
        final List<String> shards;
        long ttlMs = 3000;
        long intervalMs = 2000;
        String prefix;
        Consumer<Map<String, Lease>> onGain = m -> { };
        BiConsumer<List<String>, String> onLoss = (n, w) -> { };

        /** The group (no '/'), this worker's name in it, and every shard of the group (the same list in each worker). */
        public Options(String group, String worker, List<String> shards) {
            this.group = group;
            this.worker = worker;
            this.shards = List.copyOf(shards);
        }

        /** The TTL of the worker's session; default 3 s. */
        public Options ttlMs(long ms) {
            ttlMs = ms;
            return this;
        }

        /** The balance is looked at least this often, besides the events; default 2 s. */
        public Options intervalMs(long ms) {
            intervalMs = ms;
            return this;
        }

        /** The prefix of the shards' names, for the list of held shards and the events; default their longest common prefix. */
        public Options prefix(String p) {
            prefix = p;
            return this;
        }

        /** Gets the shards just claimed (name to lease: stamp every write with its token). */
        public Options onGain(Consumer<Map<String, Lease>> f) {
            onGain = f;
            return this;
        }

        /**
         * Gets the shards given up, and why: "released" (surplus, released
         * once onLoss returns), "lost" or "expired" (the session or the
         * shard was lost: stop writing at once; the fence refuses stale
         * writes anyway), "stopped" (the worker is closing).
         */
        public Options onLoss(BiConsumer<List<String>, String> f) {
            onLoss = f;
            return this;
        }
    }

    private final Client c;
    private final Options o;
    private final String owner;
    private final String prefix;
    private final Set<String> set;
    private final Object lock = new Object();
    private final Map<String, Lease> owned = new HashMap<>(); // guarded by lock
    private final List<Lease> lost = new ArrayList<>();       // reported by the session; guarded by lock
    private boolean kick = true;                               // guarded by lock
    private boolean stopping;                                  // guarded by lock
    private Session session;                                   // the worker thread's
    private volatile int target;
    private volatile Exception lastError;
    private final EventStream events;
    private final Thread main;
    private final Thread follower;

    private Worker(Client c, Options o) throws TenureException {
        if (o.group == null || o.group.isEmpty() || o.group.contains("/") || o.worker == null || o.worker.isEmpty()) {
            throw new TenureException("invalid", 0, "share: a group without '/' and a worker name are needed", null);
        }
        set = new HashSet<>(o.shards);
        if (set.size() != o.shards.size()) {
            throw new TenureException("invalid", 0, "share: a shard is given twice", null);
        }
        this.c = c;
        this.o = o;
        this.owner = o.group + "/" + o.worker;
        this.prefix = o.prefix != null ? o.prefix : commonPrefix(o.shards);
        events = c.events(prefix, new EventStream.Options());
        main = new Thread(this::run, "tenure-share " + owner);
        follower = new Thread(this::follow, "tenure-share-events " + owner);
        main.setDaemon(true);
        follower.setDaemon(true);
    }

    /** Starts a worker of the group: its threads open its session, claim its share and follow the group. */
    public static Worker start(Client c, Options o) throws TenureException {
        Worker w = new Worker(c, o);
        w.follower.start();
        w.main.start();
        return w;
    }

    /** The share of session me among the live session ids (me counted once, whether listed or not). */
    public static int target(int shards, Collection<String> live, String me) {
        TreeSet<String> ids = new TreeSet<>(live);
        ids.add(me);
        int rank = ids.headSet(me).size();
        int n = ids.size();
        return shards / n + (rank < shards % n ? 1 : 0);
    }

    static String commonPrefix(List<String> names) {
        if (names.isEmpty()) {
            return "";
        }
        String lo = Collections.min(names);
        String hi = Collections.max(names);
        int i = 0;
        while (i < lo.length() && i < hi.length() && lo.charAt(i) == hi.charAt(i)) {
            i++;
        }
        return lo.substring(0, i);
    }

    /** The shards this worker holds now (name to lease). */
    public Map<String, Lease> owned() {
        synchronized (lock) {
            return new HashMap<>(owned);
        }
    }

    /** Its share at the last look. */
    public int target() {
        return target;
    }

    /** The error of the last round that failed (it is retried: a server's error, or what onGain or onLoss threw), or null. */
    public Exception lastError() {
        return lastError;
    }

    /** Looks at the balance now rather than at the next event. */
    public void kick() {
        synchronized (lock) {
            kick = true;
            lock.notifyAll();
        }
    }

    /** Gives every shard back (onLoss "stopped", then the session ends) and waits for the worker's threads. */
    @Override
    public void close() {
        synchronized (lock) {
            stopping = true;
            lock.notifyAll();
        }
        events.close();
        boolean interrupted = false;
        for (Thread t : List.of(main, follower)) {
            for (;;) {
                try {
                    t.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // the threads end by themselves: wait, then say so
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- the worker thread -------------------------------------------------

    private void run() {
        for (;;) {
            synchronized (lock) {
                while (!kick && !stopping) {
                    try {
                        lock.wait(o.intervalMs);
                    } catch (InterruptedException e) {
                        stopping = true;
                    }
                    kick = true; // the interval passed: look anyway
                }
                if (stopping) {
                    break;
                }
                kick = false;
            }
            try {
                step();
                lastError = null;
            } catch (TenureException | RuntimeException e) {
                lastError = e;
                pause(Math.min(1000, o.ttlMs / 10));
                kick();
            }
        }
        leave();
    }

    private void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void giveUp(Collection<String> names, String why) {
        List<String> sorted = new ArrayList<>(new TreeSet<>(names));
        synchronized (lock) {
            owned.keySet().removeAll(sorted);
        }
        if (!sorted.isEmpty()) {
            o.onLoss.accept(sorted, why);
        }
    }

    private void step() throws TenureException {
        List<Lease> heard;
        synchronized (lock) {
            heard = new ArrayList<>(lost);
            lost.clear();
        }
        if (session != null && !session.held()) {
            // lost or run out: so is every shard of it; join again.  (Only the
            // session in hand counts: an older one's report must not end it.)
            TenureException e = session.error();
            giveUp(owned().keySet(), e instanceof TenureException.Expired ? "expired" : "lost");
            session = null;
        }
        List<String> gone = new ArrayList<>();
        synchronized (lock) {
            for (Lease l : heard) {
                if (owned.get(l.name()) == l) {
                    gone.add(l.name());
                }
            }
        }
        giveUp(gone, "lost");
        if (session == null) {
            session = c.openSession(SessionOptions.ttlMs(o.ttlMs).owner(owner)
                    .onEnd((s, why, err) -> kick())
                    .onLeaseEnd((l, why, err) -> {
                        if (why.equals("lost") || why.equals("expired")) {
                            synchronized (lock) {
                                lost.add(l);
                                kick = true;
                                lock.notifyAll();
                            }
                        }
                    }));
        }
        balance(session);
    }

    private void balance(Session s) throws TenureException {
        List<String> live = new ArrayList<>();
        for (SessionInfo i : c.sessionsAll(o.group + "/")) {
            live.add(i.id());
        }
        int t = target(o.shards.size(), live, s.id());
        target = t;
        Map<String, Long> taken = new HashMap<>();
        for (LeaseInfo i : c.listAll(prefix)) {
            taken.put(i.name(), i.token());
        }
        // a shard whose live token is another (or none) was lost: a force
        // release, an end no event told of
        List<String> gone = new ArrayList<>();
        for (Map.Entry<String, Lease> e : owned().entrySet()) {
            Long tok = taken.get(e.getKey());
            if (tok == null || tok != e.getValue().token()) {
                gone.add(e.getKey());
            }
        }
        giveUp(gone, "lost");
        Map<String, Lease> mine = owned();
        if (mine.size() > t) {
            List<String> surplus = new ArrayList<>(new TreeSet<>(mine.keySet())).subList(t, mine.size());
            List<Lease> leases = new ArrayList<>();
            for (String n : surplus) {
                leases.add(mine.get(n));
            }
            giveUp(surplus, "released"); // the application stops writing them first
            s.release(leases);
            return;
        }
        int want = t - mine.size();
        if (want <= 0) {
            return;
        }
        List<String> free = new ArrayList<>();
        for (String n : o.shards) {
            if (!taken.containsKey(n) && !mine.containsKey(n)) {
                free.add(n);
            }
        }
        if (free.isEmpty()) {
            return;
        }
        Collections.shuffle(free, ThreadLocalRandom.current()); // workers starting together reach for different ones
        Session.Claim res = s.claim(free.subList(0, Math.min(want, free.size())));
        Map<String, Lease> got = new LinkedHashMap<>();
        for (Lease l : res.granted) {
            if (set.contains(l.name())) {
                got.put(l.name(), l);
            }
        }
        synchronized (lock) {
            owned.putAll(got);
        }
        if (!got.isEmpty()) {
            o.onGain.accept(got);
        }
        if (got.size() < want && (!res.held.isEmpty() || !res.lockDelay.isEmpty())) {
            pause(10 + ThreadLocalRandom.current().nextInt(40));
            kick(); // others took some of the same: look again soon
        }
    }

    private void leave() {
        try {
            giveUp(owned().keySet(), "stopped");
        } catch (RuntimeException e) {
            lastError = e; // the session ends all the same
        }
        if (session != null) {
            try {
                session.close();
            } catch (TenureException e) {
                // it ended anyway: lost, or the server will expire it
            }
            session = null;
        }
    }

    // ---- the event follower thread -------------------------------------------

    /** Kicks the worker on the events that can change its share: a session of the group opened or ended, a shard ended, a reset. */
    private void follow() {
        String mine = o.group + "/";
        try {
            for (Event e; (e = events.next()) != null;) {
                String type = e.type() != null ? e.type() : "";
                if (type.equals("session_opened") || type.equals("session_ended")) {
                    if (e.ownerId() != null && e.ownerId().startsWith(mine)) {
                        kick();
                    }
                } else if (type.equals("reset") || (e.name() != null && set.contains(e.name()) && !type.equals("acquired"))) {
                    kick(); // a shard may be free now
                }
            }
        } catch (TenureException e) {
            // closed, or the stream gave up: the interval still looks
        }
    }
}
