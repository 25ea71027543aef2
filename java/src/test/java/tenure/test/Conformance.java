// SPDX-License-Identifier: MIT
package tenure.test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import tenure.AcquireOptions;
import tenure.CheckResult;
import tenure.Client;
import tenure.Event;
import tenure.EventStream;
import tenure.Json;
import tenure.Lease;
import tenure.LeaseInfo;
import tenure.TenureException;

/**
 * The shared client scenarios (tests/conformance/*.json, language in its
 * README.md) through the Java client: {@code Conformance URL FILE...}
 * runs each scenario against a live tenured and exits 0 when all pass.
 * Every step goes through the public API of package tenure, events and
 * force release included.
 */
public final class Conformance {
    private final String url;
    private final String prefix;
    private final Client client;
    private String scenario;
    private final Map<String, Object> vars = new HashMap<>();
    private final Map<String, Lease> slots = new HashMap<>();
    private final Map<String, Boolean> released = new HashMap<>();
    private final SessionSteps sessions;
    private EventStream stream;
    private Thread reader;
    private final List<Map<String, Object>> got = new ArrayList<>();
    private String why = "";
    private boolean needs; // the scenario has "needs"
    private List<String> needsWhat = List.of();
    private String skipped; // why the scenario was skipped, or null

    Conformance(String url) throws TenureException {
        this.url = url;
        this.prefix = "conf-java-" + ProcessHandle.current().pid() + "-" + (System.nanoTime() % 1_000_000_000L) + "/";
        this.client = Client.builder().url(url).ownerId("conformance-java").build();
        this.sessions = new SessionSteps(client, this);
    }

    /** The scenario's namespace: every symbolic name and session owner lives under it. */
    String namespace() {
        return prefix + scenario + "/";
    }

    String real(String sym) {
        return namespace() + sym;
    }

    void label(String as, Lease l) {
        slots.put(as, l);
        released.put(as, false);
    }

    Lease lease(String label) {
        return slots.get(label);
    }

    // ---- matching ---------------------------------------------------------

    private static boolean isInt(Object o) {
        return o instanceof Long;
    }

    @SuppressWarnings("unchecked")
    boolean match(Object exp, Object act, String path) {
        if (exp instanceof String && ((String) exp).startsWith("$")) {
            String ref = ((String) exp).substring(1);
            if (!vars.containsKey(ref)) {
                if (act == null) {
                    why = path + ": nothing to bind $" + ref;
                    return false;
                }
                vars.put(ref, act);
                return true;
            }
            exp = vars.get(ref);
        }
        if (exp instanceof Map && ((Map<String, Object>) exp).size() == 1) {
            Map<String, Object> m = (Map<String, Object>) exp;
            if (m.containsKey("gt")) {
                Object lo = m.get("gt");
                if (lo instanceof String) {
                    lo = vars.get(((String) lo).substring(1));
                }
                if (!isInt(act) || !isInt(lo) || (Long) act <= (Long) lo) {
                    why = path + ": expected > " + lo + ", got " + act;
                    return false;
                }
                return true;
            }
            if (m.get("range") instanceof List) {
                List<Object> r = (List<Object>) m.get("range");
                if (!isInt(act) || (Long) act < (Long) r.get(0) || (Long) act > (Long) r.get(1)) {
                    why = path + ": expected in " + r + ", got " + act;
                    return false;
                }
                return true;
            }
        }
        if (exp instanceof Map) {
            if (!(act instanceof Map)) {
                why = path + ": expected an object, got " + act;
                return false;
            }
            Map<String, Object> a = (Map<String, Object>) act;
            for (Map.Entry<String, Object> e : ((Map<String, Object>) exp).entrySet()) {
                String sub = path + "." + e.getKey();
                if (!a.containsKey(e.getKey()) && e.getValue() != null) {
                    why = sub + ": missing";
                    return false;
                }
                if (e.getKey().equals("name") && e.getValue() instanceof String) {
                    String want = real((String) e.getValue());
                    if (!want.equals(a.get("name"))) {
                        why = sub + ": expected " + want + ", got " + a.get("name");
                        return false;
                    }
                    continue;
                }
                if (!match(e.getValue(), a.get(e.getKey()), sub)) {
                    return false;
                }
            }
            return true;
        }
        if (!Objects.equals(exp, act)) {
            why = path + ": expected " + Json.write(exp) + ", got " + Json.write(act);
            return false;
        }
        return true;
    }

    // ---- steps ------------------------------------------------------------

    long intArg(Map<String, Object> step, String key, long dflt) {
        Object v = step.get(key);
        if (v instanceof String && ((String) v).startsWith("$")) {
            v = vars.get(((String) v).substring(1));
        }
        return v instanceof Long ? (Long) v : dflt;
    }

    private static String str(Map<String, Object> step, String key) {
        Object v = step.get(key);
        return v instanceof String ? (String) v : null;
    }

    static Map<String, Object> err(TenureException e) {
        if (e instanceof TenureException.Held) {
            LeaseInfo h = ((TenureException.Held) e).holder();
            return Json.obj("error", "held", "holder", h == null ? null
                    : Json.obj("owner_id", h.ownerId(), "token", h.token(), "expires_in_ms", h.expiresInMs()));
        }
        if (e instanceof TenureException.LockDelay) {
            return Json.obj("error", "lock_delay", "retry_after_ms", ((TenureException.LockDelay) e).retryAfterMs());
        }
        return Json.obj("error", e.code());
    }

    private Map<String, Object> acquire(Map<String, Object> step) {
        if (step.containsKey("session")) {
            return sessions.acquire(step);
        }
        AcquireOptions o = AcquireOptions.ttlMs(intArg(step, "ttl_ms", 0)).owner(str(step, "owner"))
                .waitMs(intArg(step, "wait_ms", 0)).requestId(str(step, "request_id"))
                .lockDelayMs(intArg(step, "lock_delay_ms", 0));
        try {
            Lease l = client.acquire(real(str(step, "name")), o);
            if (str(step, "as") != null) {
                slots.put(str(step, "as"), l);
                released.put(str(step, "as"), false);
            }
            return Json.obj("ok", true, "token", l.token(), "owner_id", l.ownerId(), "ttl_ms", l.ttlMs(),
                    "safe_for_ms", l.safeForMs());
        } catch (TenureException e) {
            return err(e);
        }
    }

    private Map<String, Object> leaseOp(Map<String, Object> step, String op) {
        String label = str(step, "lease");
        Lease l = slots.get(label);
        if (l == null) {
            return Json.obj("error", "no such lease label");
        }
        try {
            switch (op) {
            case "safe":
                return Json.obj("safe_for_ms", l.safeForMs());
            case "renew":
                l.renew(intArg(step, "ttl_ms", 0));
                return Json.obj("ok", true, "safe_for_ms", l.safeForMs());
            default:
                released.put(label, true);
                l.release();
                return Json.obj("ok", true);
            }
        } catch (TenureException e) {
            return err(e);
        }
    }

    private Map<String, Object> other(Map<String, Object> step, String op) throws Exception {
        try {
            switch (op) {
            case "adopt":
                slots.put(str(step, "as"), client.adopt(real(str(step, "name")), intArg(step, "token", 0),
                        str(step, "secret")));
                return Json.obj("ok", true);
            case "check": {
                CheckResult r = client.check(real(str(step, "name")), intArg(step, "token", 0));
                Map<String, Object> m = Json.obj("current", r.current(), "floor", r.floor());
                m.put("token", r.token());
                return m;
            }
            case "get": {
                try {
                    LeaseInfo i = client.get(real(str(step, "name")));
                    return Json.obj("found", true, "owner_id", i.ownerId(), "token", i.token());
                } catch (TenureException e) {
                    if ("not_found".equals(e.code())) {
                        return Json.obj("found", false);
                    }
                    throw e;
                }
            }
            case "force_release":
                client.forceRelease(real(str(step, "name")));
                return Json.obj("ok", true);
            case "events_open":
                return eventsOpen();
            default:
                return Json.obj("error", "unknown op " + op);
            }
        } catch (TenureException e) {
            return err(e);
        }
    }

    private Map<String, Object> eventsOpen() throws InterruptedException {
        stopEvents();
        got.clear();
        EventStream s = client.events(prefix + scenario + "/", new EventStream.Options());
        stream = s;
        reader = new Thread(() -> {
            try {
                for (Event e; (e = s.next()) != null;) {
                    Map<String, Object> d = e.data();
                    if (e.sessionId() != null) { // every session's: this run's only, owner relative
                        d = sessions.sessionEvent(d);
                    }
                    if (d != null) {
                        synchronized (got) {
                            got.add(d);
                        }
                    }
                }
            } catch (TenureException e) {
                // the stream ended: events_expect reports what came
            }
        });
        reader.setDaemon(true);
        reader.start();
        if (!s.awaitSubscribed(10_000)) {
            return Json.obj("error", "not subscribed");
        }
        return Json.obj("ok", true);
    }

    @SuppressWarnings("unchecked")
    private boolean eventsExpect(Map<String, Object> step) throws InterruptedException {
        if (stream == null) {
            why = "events_expect: no stream";
            return false;
        }
        List<Object> want = (List<Object>) step.get("events");
        long end = System.nanoTime() + intArg(step, "timeout_ms", 5000) * 1_000_000L;
        List<Map<String, Object>> have;
        for (;;) {
            synchronized (got) {
                have = new ArrayList<>(got);
            }
            if (have.size() >= want.size() || System.nanoTime() - end > 0) {
                break;
            }
            Thread.sleep(10);
        }
        if (have.size() < want.size()) {
            why = "events: " + have.size() + " of " + want.size() + " came: " + Json.write(have);
            return false;
        }
        for (int k = 0; k < want.size(); k++) {
            if (!match(want.get(k), have.get(k), "events[" + k + "]")) {
                return false;
            }
        }
        return true;
    }

    private void stopEvents() throws InterruptedException {
        if (stream != null) {
            stream.close();
            reader.join(5000);
            stream = null;
        }
    }

    private boolean step(Map<String, Object> step, int k) throws Exception {
        String op = str(step, "do");
        if (op == null) {
            why = "step " + k + ": no \"do\"";
            return false;
        }
        Map<String, Object> res;
        switch (op) {
        case "sleep":
            Thread.sleep(intArg(step, "ms", 0));
            return true;
        case "events_expect":
            return eventsExpect(step);
        case "acquire":
            res = acquire(step);
            break;
        case "renew": case "release": case "safe":
            res = leaseOp(step, op);
            break;
        default:
            res = sessions.step(op, step);
            if (res == null) {
                res = other(step, op);
            }
        }
        String path = "step " + k + " (" + op + ")";
        if (needs && "not_implemented".equals(res.get("error"))) {
            skipped = path + ": the server has no " + String.join(", ", needsWhat) + " (not_implemented)";
            return false;
        }
        if (step.containsKey("expect")) {
            return match(step.get("expect"), res, path);
        }
        if (res.containsKey("error")) {
            why = path + ": failed: " + res.get("error");
            return false;
        }
        return true;
    }

    @SuppressWarnings("unchecked")
    boolean runFile(Path file) throws Exception {
        Map<String, Object> doc = Json.parseObject(Files.readString(file));
        scenario = Objects.requireNonNullElse(str(doc, "scenario"), "unnamed");
        List<Object> steps = (List<Object>) doc.get("steps");
        needsWhat = new ArrayList<>();
        if (doc.get("needs") instanceof List) {
            for (Object n : (List<Object>) doc.get("needs")) {
                needsWhat.add(String.valueOf(n));
            }
        }
        needs = !needsWhat.isEmpty();
        skipped = null;
        boolean ok = steps != null && !steps.isEmpty();
        why = ok ? "" : "no steps";
        for (int k = 0; ok && k < steps.size(); k++) {
            ok = step((Map<String, Object>) steps.get(k), k);
        }
        if (skipped != null) {
            ok = true;
            System.out.println("skip - " + scenario + " (Java client): " + skipped);
        } else if (ok) {
            System.out.println("ok - " + scenario + " (Java client)");
        } else {
            System.err.println("FAIL " + scenario + " (Java client): " + why);
        }
        stopEvents();
        sessions.clear();
        slots.clear();
        released.clear();
        vars.clear();
        return ok;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: Conformance URL SCENARIO.json...");
            System.exit(2);
        }
        Conformance r = new Conformance(args[0]);
        int failed = 0;
        int skipped = 0;
        for (int k = 1; k < args.length; k++) {
            if (!r.runFile(Path.of(args[k]))) {
                failed++;
            } else if (r.skipped != null) {
                skipped++;
            }
        }
        int n = args.length - 1;
        System.out.println(n - failed - skipped + " passed, " + skipped + " skipped, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }
}
