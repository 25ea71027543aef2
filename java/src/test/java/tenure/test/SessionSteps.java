// SPDX-License-Identifier: MIT
package tenure.test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import tenure.AcquireOptions;
import tenure.Client;
import tenure.Json;
import tenure.Lease;
import tenure.LeaseInfo;
import tenure.Session;
import tenure.SessionInfo;
import tenure.SessionOptions;
import tenure.TenureException;

/**
 * The session steps of the shared scenarios (tests/conformance/README.md,
 * "Sessions"), each through the Java client's public API: a part of
 * {@link Conformance}, which owns the lease labels and the namespace.
 */
final class SessionSteps {
    /** What a session's keepalive reported (session_wait_end). */
    static final class Ends {
        String reason;
        long calls;
        long leaseCalls;
        long leasesBefore;
    }

    private final Client c;
    private final Conformance r;
    private final Map<String, Session> sessions = new HashMap<>();
    private final Map<String, Ends> ends = new HashMap<>();

    SessionSteps(Client c, Conformance r) {
        this.c = c;
        this.r = r;
    }

    void clear() {
        sessions.clear();
        ends.clear();
    }

    /** A symbolic owner under the namespace. */
    private String ownerReal(String sym) {
        return r.namespace() + (sym == null ? "" : sym);
    }

    /** A real owner_id relative to the namespace, or null when outside it. */
    String ownerRel(String real) {
        String ns = r.namespace();
        return real != null && real.startsWith(ns) ? real.substring(ns.length()) : null;
    }

    /** A session event of this scenario's namespace, owner relative; null for another run's. */
    Map<String, Object> sessionEvent(Map<String, Object> ev) {
        Object o = ev.get("owner_id");
        String rel = ownerRel(o instanceof String ? (String) o : null);
        if (rel == null) {
            return null;
        }
        Map<String, Object> m = new LinkedHashMap<>(ev);
        m.put("owner_id", rel);
        return m;
    }

    private static String str(Map<String, Object> st, String k) {
        Object v = st.get(k);
        return v instanceof String ? (String) v : null;
    }

    private SessionOptions listened(Ends e, long ttlMs) {
        return SessionOptions.ttlMs(ttlMs).noKeepalive()
                .onLeaseEnd((l, why, err) -> {
                    synchronized (e) {
                        e.leaseCalls++;
                    }
                })
                .onEnd((s, why, err) -> {
                    synchronized (e) {
                        e.reason = why;
                        e.calls++;
                        e.leasesBefore = e.leaseCalls;
                        e.notifyAll();
                    }
                });
    }

    /** The result of a session step, or null when op is not one. */
    Map<String, Object> step(String op, Map<String, Object> st) throws Exception {
        Session s = sessions.get(str(st, "session"));
        try {
            switch (op) {
            case "session_open":
                return open(st);
            case "session_adopt": {
                Ends e = new Ends();
                sessions.put(str(st, "as"), c.adoptSession(s.id(), str(st, "secret"),
                        listened(e, 0).owner(s.ownerId())));
                ends.put(str(st, "as"), e);
                return Json.obj("ok", true);
            }
            case "session_renew":
                s.renew(r.intArg(st, "ttl_ms", 0));
                return Json.obj("ok", true, "safe_for_ms", s.safeForMs());
            case "session_end":
                s.end();
                return Json.obj("ok", true);
            case "session_force_end":
                c.forceEndSession(s.id());
                return Json.obj("ok", true);
            case "session_safe":
                return Json.obj("safe_for_ms", s.safeForMs());
            case "session_get":
                return get(s);
            case "session_list":
                return list(st);
            case "claim":
                return claim(s, st);
            case "release_many":
                return releaseMany(s, st);
            case "session_keepalive":
                s.keepAlive();
                return Json.obj("ok", true);
            case "session_wait_end":
                return waitEnd(ends.get(str(st, "session")), r.intArg(st, "timeout_ms", 5000));
            default:
                return null;
            }
        } catch (TenureException e) {
            return Conformance.err(e);
        }
    }

    private Map<String, Object> open(Map<String, Object> st) throws TenureException {
        Ends e = new Ends();
        Session s = c.openSession(listened(e, r.intArg(st, "ttl_ms", 0)).owner(ownerReal(str(st, "owner"))));
        sessions.put(str(st, "as"), s);
        ends.put(str(st, "as"), e);
        return Json.obj("ok", true, "session_id", s.id(), "owner_id", ownerRel(s.ownerId()), "ttl_ms", s.ttlMs(),
                "safe_for_ms", s.safeForMs());
    }

    private Map<String, Object> get(Session s) throws TenureException {
        SessionInfo i;
        try {
            i = c.getSession(s.id());
        } catch (TenureException e) {
            if ("not_found".equals(e.code())) {
                return Json.obj("found", false);
            }
            throw e;
        }
        return Json.obj("found", true, "owner_id", ownerRel(i.ownerId()), "ttl_ms", i.ttlMs(), "leases", i.leases());
    }

    private Map<String, Object> list(Map<String, Object> st) throws TenureException {
        List<String> owners = new ArrayList<>();
        for (SessionInfo i : c.sessionsAll(ownerReal(str(st, "prefix")))) {
            owners.add(ownerRel(i.ownerId()));
        }
        Collections.sort(owners);
        return Json.obj("count", (long) owners.size(), "owners", new ArrayList<Object>(owners));
    }

    private Map<String, Object> claim(Session s, Map<String, Object> st) throws TenureException {
        Map<String, String> sym = new HashMap<>();
        List<String> names = new ArrayList<>();
        for (Object n : (List<?>) st.get("names")) {
            String real = r.real((String) n);
            sym.put(real, (String) n);
            names.add(real);
        }
        Session.Claim res = s.claim(names, str(st, "owner"), r.intArg(st, "lock_delay_ms", 0));
        String as = str(st, "as") != null ? str(st, "as") : "";
        Map<String, Object> granted = new LinkedHashMap<>();
        for (Lease l : res.granted) {
            r.label(as + sym.get(l.name()), l);
            granted.put(sym.get(l.name()), Json.obj("token", l.token()));
        }
        Map<String, Object> held = new LinkedHashMap<>();
        for (Map.Entry<String, LeaseInfo> h : res.held.entrySet()) {
            LeaseInfo li = h.getValue();
            held.put(sym.get(h.getKey()), Json.obj("holder", li == null ? null
                    : Json.obj("owner_id", li.ownerId(), "token", li.token())));
        }
        Map<String, Object> delayed = new LinkedHashMap<>();
        for (Map.Entry<String, Long> d : res.lockDelay.entrySet()) {
            delayed.put(sym.get(d.getKey()), Json.obj("retry_after_ms", d.getValue()));
        }
        return Json.obj("granted", granted, "held", held, "lock_delay", delayed);
    }

    private Map<String, Object> releaseMany(Session s, Map<String, Object> st) throws TenureException {
        List<Lease> todo = new ArrayList<>();
        for (Object x : (List<?>) st.get("leases")) {
            todo.add(r.lease((String) x));
        }
        Session.Released res = s.release(todo);
        return Json.obj("ok", true, "released", relNames(res.released), "lost", relNames(res.lost));
    }

    private List<Object> relNames(List<Lease> ls) {
        List<String> out = new ArrayList<>();
        for (Lease l : ls) {
            out.add(l.name().substring(r.namespace().length()));
        }
        Collections.sort(out);
        return new ArrayList<Object>(out);
    }

    private static Map<String, Object> waitEnd(Ends e, long timeoutMs) throws InterruptedException {
        long end = System.nanoTime() + timeoutMs * 1_000_000L;
        synchronized (e) {
            for (long left = timeoutMs; e.calls == 0 && left > 0; left = (end - System.nanoTime()) / 1_000_000L) {
                e.wait(left);
            }
        }
        Thread.sleep(300); // a second report would be counted
        synchronized (e) {
            return Json.obj("reason", e.reason, "calls", e.calls, "lease_calls", e.leaseCalls,
                    "leases_before", e.leasesBefore);
        }
    }

    /** The acquire step under a session. */
    Map<String, Object> acquire(Map<String, Object> st) {
        AcquireOptions o = AcquireOptions.ofSession().owner(str(st, "owner")).waitMs(r.intArg(st, "wait_ms", 0))
                .requestId(str(st, "request_id")).lockDelayMs(r.intArg(st, "lock_delay_ms", 0));
        try {
            Lease l = sessions.get(str(st, "session")).acquire(r.real(str(st, "name")), o);
            if (str(st, "as") != null) {
                r.label(str(st, "as"), l);
            }
            return Json.obj("ok", true, "token", l.token(), "owner_id", l.ownerId(), "ttl_ms", l.ttlMs(),
                    "safe_for_ms", l.safeForMs());
        } catch (TenureException e) {
            return Conformance.err(e);
        }
    }
}
