#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks and figures of the HA chaos profile (docs/HA.md), on the history
the recording clients wrote (docs/safety/tenure-check.md).

  ha_check.py ledger LEDGER HISTORY...
      Every grant a client was told of (an ok acquire) must be in the
      promoted primary's ledger: LEDGER has one "name|token" line per row
      of lease_grants.  The ledger keeps the newest grants of each name
      (TN_PG_LEDGER_KEEP, src/store/pg/sql.h): a grant older than every
      row kept for its name, once the name has that many, may have been
      pruned and is not counted.  Exit 1 with the missing grants.
  ha_check.py windows HISTORY...
      Per failover (a nemesis line "kill -9 primary ..."): how long the
      clients could not get a lease, from the first acquire refused after
      the kill (503, connection refused, no answer) to the first acquire
      granted after it, how long from the kill itself, and how many
      acquires were refused in between; and where the time went: from the
      kill to the standby's promotion (promoted_ms) and to the dead node
      rebuilt as the new standby (rebuilt_ms), from the nemesis's lines.
      One "ha-window ..." line each, then their median and max.
  ha_check.py summary < lines
      The median and max of "ha-window" lines gathered from many runs.
  ha_check.py patroni WINDOWS FAULTS HOLDER [SESSION]
      The Patroni profile's report (tests/integration/lib-patroni.sh): per
      fault, its "ha-window" line (WINDOWS, from windows above) joined with
      the nemesis's line (FAULTS: kind, old and new primary, how the old
      one came back, pg_rewind runs, when a node became writable and how
      long after that each tenured instance served again, from
      serve_probe.py) as one "patroni-window" line; then one
      "patroni-holder" line for the long-lived holder (HOLDER: tenure -v
      run's log stamped by serve_probe.py stamp: the longest time between
      two successful renews, the least safe time left, whether the lease
      was lost); the "patroni-session" line of SESSION (session_holder.py:
      a session's longest renew gap, its leases kept or lost); then the
      summary.
  ha_check.py patroni-summary [--by-kind] < lines
      The summary of "patroni-window", "patroni-holder" and
      "patroni-session" lines gathered
      from many runs (scripts/chaos.sh keeps them in
      OUT/patroni-windows.txt); --by-kind adds one per kind of fault.
"""
import json
import pathlib
import re
import statistics
import sys


def ledger_keep():
    """Grants the store keeps per name in its ledger after a prune:
    TN_PG_LEDGER_KEEP, read from the C header so the two never differ."""
    h = pathlib.Path(__file__).resolve().parents[3] / "src/store/pg/sql.h"
    m = re.search(r"#define TN_PG_LEDGER_KEEP (\d+)", h.read_text())
    if m is None:
        sys.exit("ha_check.py: no TN_PG_LEDGER_KEEP in " + str(h))
    return int(m.group(1))


LEDGER_KEEP = ledger_keep()
REFUSED = {"unavailable", "refused", "timeout", "server_error"}


def events(paths):
    out = []
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line:
                    out.append(json.loads(line))
    out.sort(key=lambda e: e["t"])
    return out


def ledger(argv):
    kept = {}
    with open(argv[0]) as f:
        for line in f:
            name, _, token = line.strip().rpartition("|")
            if name:
                kept.setdefault(name, set()).add(int(token))
    granted = [(e["name"], e["token"]) for e in events(argv[1:])
               if e.get("op") == "acquire" and e.get("phase") == "ok"]
    missing = []
    for name, token in granted:
        rows = kept.get(name, set())
        pruned = len(rows) >= LEDGER_KEEP and token < min(rows)
        if token not in rows and not pruned:
            missing.append((name, token))
    print(f"ledger: {len(granted)} acknowledged grants, "
          f"{sum(len(r) for r in kept.values())} ledger rows, "
          f"{len(missing)} missing")
    for name, token in missing[:20]:
        print(f"  missing: {name} token {token}")
    return 1 if missing else 0


# Nemesis lines: a fault that may fail the primary over (the HA profile's
# kill, the Patroni profile's every fault), a promotion, a rebuilt node.
FAULT_PREFIXES = ("kill -9 primary", "fault: ")
PROMOTED_PREFIXES = ("standby ", "new primary ")

FIELDS = ("unavailable_ms", "from_kill_ms", "refused", "promoted_ms",
          "rebuilt_ms", "outage_ms", "refused_in_outage")


def line_of(i, w):
    return f"ha-window failover={i} " + " ".join(
        f"{k}={w[k]}" for k in FIELDS)


def note_after(evs, t_kill, prefix, t_next=float("inf")):
    """ms from the kill to the first nemesis line starting with prefix,
    before the next fault."""
    for e in evs:
        if e["t"] >= t_next:
            break
        if e["t"] > t_kill and e.get("src") == "nemesis" and \
                e.get("fault", "").startswith(prefix):
            return (e["t"] - t_kill) // 1000000
    return -1


def outage(evs, t_kill, t_next):
    """The longest time without any acquire granted, from the fault to
    the next one (or to the last grant): the outage whatever the fault
    takes to bite (a primary cut from etcd serves a few seconds more);
    and the acquires refused in all that time."""
    mine = [e for e in evs if t_kill <= e["t"] < t_next and
            e.get("op") == "acquire"]
    oks = [e["t"] for e in mine if e.get("phase") == "ok"]
    prev, gap = t_kill, 0
    for t in oks:
        gap = max(gap, t - prev)
        prev = t
    return gap // 1000000, sum(e.get("error") in REFUSED for e in mine)


def window(evs, t_kill, t_next):
    invoked = {}
    first_bad = None
    refused = 0
    for e in evs:
        if e["t"] < t_kill or e.get("op") != "acquire":
            continue
        if e["t"] >= t_next:
            break
        if e["phase"] == "invoke":
            invoked[e["proc"]] = e["t"]
        elif e["phase"] == "ok" and invoked.get(e["proc"], 0) >= t_kill:
            start = first_bad if first_bad is not None else e["t"]
            return {"unavailable_ms": (e["t"] - start) // 1000000,
                    "from_kill_ms": (e["t"] - t_kill) // 1000000,
                    "refused": refused}
        elif e.get("error") in REFUSED:
            refused += 1
            if first_bad is None:
                first_bad = e["t"]
    return None


def windows(argv):
    evs = events(argv)
    kills = [e["t"] for e in evs if e.get("src") == "nemesis" and
             e.get("fault", "").startswith(FAULT_PREFIXES)]
    found = []
    for i, t in enumerate(kills):
        t_next = kills[i + 1] if i + 1 < len(kills) else float("inf")
        w = window(evs, t, t_next)
        if w is None:
            print(f"ha-window failover={i + 1} no grant after it")
            continue
        w["outage_ms"], w["refused_in_outage"] = outage(evs, t, t_next)
        w["promoted_ms"] = note_after(evs, t, PROMOTED_PREFIXES, t_next)
        w["rebuilt_ms"] = note_after(evs, t, "old primary ", t_next)
        print(line_of(i + 1, w))
        found.append(w)
    report(found)
    return 0


def report(found):
    if not found:
        print("ha-windows: none")
        return
    out = [f"failovers={len(found)}"]
    for k in FIELDS:
        v = [w[k] for w in found]
        out.append(f"{k}_median={int(statistics.median(v))} "
                   f"{k}_max={max(v)}")
    out.append(f"refused_total={sum(w['refused'] for w in found)}")
    print("ha-windows: " + " ".join(out))


def summary():
    found = []
    for line in sys.stdin:
        if not line.startswith("ha-window ") or "unavailable_ms=" not in line:
            continue
        kv = dict(x.split("=", 1) for x in line.split()[1:])
        found.append({k: int(kv.get(k, -1)) for k in FIELDS})
    report(found)
    return 0


def kv_line(line):
    return dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)


def holder(path):
    """The long-lived holder's leases (one per tenure run, started again
    when one ends): the longest time between a grant or a successful
    renew and the next one, or the loss; the least safe time left after a
    renew; how many leases were lost (ended otherwise than released)."""
    try:
        f = open(path)
    except OSError:
        return None
    stamps, safe, lost, last, leases = [], [], 0, None, 0
    gap = 0
    with f:
        for raw in f:
            e = json.loads(raw)
            line = e["line"]
            if "acquired" in line:
                leases += 1
                last = e["t"]
            elif line.startswith("tenure: renewed") and last is not None:
                gap = max(gap, e["t"] - last)
                last = e["t"]
                stamps.append(e["t"])
                m = re.search(r"safe_for_ms=(-?\d+)", line)
                if m:
                    safe.append(int(m.group(1)))
            elif "ended: " in line and last is not None:
                if "ended: released" not in line:
                    lost += 1
                    gap = max(gap, e["t"] - last)
                last = None
    if leases == 0:
        return None
    return {"renew_gap_max_ms": gap // 1000000, "renews": len(stamps),
            "min_safe_ms": min(safe, default=-1), "leases": leases,
            "lost": lost}


PAT_NUM = ("promoted_ms", "writable_ms", "outage_ms", "refused_in_outage",
           "unavailable_ms", "from_kill_ms", "refused", "serve_max_ms",
           "rejoined_ms")


def patroni(argv):
    wins = {}
    with open(argv[0]) as f:
        for line in f:
            if line.startswith("ha-window ") and "unavailable_ms=" in line:
                kv = kv_line(line)
                wins[int(kv["failover"])] = kv
    out = []
    with open(argv[1]) as f:
        for line in f:
            if not line.startswith("fault="):
                continue
            kv = dict(x.split("=", 1) for x in line.split() if "=" in x)
            i = int(kv["fault"])
            w = wins.get(i, {})
            row = {"fault": i, "kind": kv["kind"], "from": kv["from"],
                   "to": kv["to"],
                   "failover": "yes" if kv["to"] != kv["from"] else "no",
                   "promoted_ms": w.get("promoted_ms", -1),
                   "writable_ms": kv.get("writable_ms", -1),
                   "unavailable_ms": w.get("unavailable_ms", -1),
                   "outage_ms": w.get("outage_ms", -1),
                   "refused_in_outage": w.get("refused_in_outage", -1),
                   "from_kill_ms": w.get("from_kill_ms", -1),
                   "refused": w.get("refused", -1),
                   "serve_max_ms": kv.get("max_ms", -1),
                   "serve": ",".join(f"{k[:-3]}:{v}" for k, v in kv.items()
                                     if re.fullmatch(r"i\d+_ms", k)),
                   "rejoined_ms": kv.get("rejoined_ms", -1),
                   "rejoined_as": kv.get("rejoined_as", "none"),
                   "rewinds": kv.get("rewinds", 0)}
            out.append("patroni-window " + " ".join(
                f"{k}={v}" for k, v in row.items()))
    h = holder(argv[2])
    if h is not None:
        out.append("patroni-holder " + " ".join(
            f"{k}={v}" for k, v in h.items()))
    if len(argv) > 3:
        with open(argv[3], encoding="utf-8") as f:
            out += [x.strip() for x in f if x.startswith("patroni-session ")]
    for line in out:
        print(line)
    print(patroni_summary(out))
    return 0


def patroni_summary(lines):
    rows, holders, sessions = [], [], []
    for line in lines:
        if line.startswith("patroni-window "):
            rows.append(kv_line(line))
        elif line.startswith("patroni-holder "):
            holders.append(kv_line(line))
        elif line.startswith("patroni-session "):
            sessions.append(kv_line(line))
    fo = [r for r in rows if r.get("failover") == "yes"]
    kinds = {}
    for r in rows:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
    out = [f"faults={len(rows)} failovers={len(fo)} kinds=" +
           ",".join(f"{k}:{v}" for k, v in sorted(kinds.items()))]
    for k in PAT_NUM:
        v = [int(r[k]) for r in rows if int(r.get(k, -1)) >= 0]
        if v:
            out.append(f"{k}_median={int(statistics.median(v))} "
                       f"{k}_max={max(v)}")
    out.append("rewinds=" + str(sum(int(r.get("rewinds", 0)) for r in rows)))
    if holders:
        out.append("holder_renew_gap_max_ms=" + str(max(
            int(h["renew_gap_max_ms"]) for h in holders)))
        out.append("holder_min_safe_ms=" + str(min(
            int(h["min_safe_ms"]) for h in holders)))
        out.append("holder_leases=" + str(sum(
            int(h.get("leases", 1)) for h in holders)))
        out.append("holder_lost=" + str(sum(
            int(h["lost"]) if h["lost"].isdigit() else h["lost"] == "yes"
            for h in holders)))
    if sessions:
        out.append("session_renew_gap_max_ms=" + str(max(
            int(x.get("renew_gap_max_ms", -1)) for x in sessions)))
        out.append("session_leases=" + str(sum(
            int(x.get("leases", 0)) for x in sessions)))
        out.append("session_kept=" + str(sum(
            int(x.get("kept", 0)) for x in sessions)))
        out.append("session_lost=" + str(sum(
            int(x.get("lost", 1)) for x in sessions)))
    return "patroni-summary: " + " ".join(out)


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "ledger":
        return ledger(sys.argv[2:])
    if len(sys.argv) >= 3 and sys.argv[1] == "windows":
        return windows(sys.argv[2:])
    if len(sys.argv) == 2 and sys.argv[1] == "summary":
        return summary()
    if len(sys.argv) in (5, 6) and sys.argv[1] == "patroni":
        return patroni(sys.argv[2:])
    if len(sys.argv) in (2, 3) and sys.argv[1] == "patroni-summary":
        lines = sys.stdin.readlines()
        print(patroni_summary(lines))
        if sys.argv[2:] == ["--by-kind"]:
            kinds = sorted({kv_line(x)["kind"] for x in lines
                            if x.startswith("patroni-window ")})
            for k in kinds:
                mine = [x for x in lines if x.startswith("patroni-window ")
                        and kv_line(x)["kind"] == k]
                print(f"  {k}: " + patroni_summary(mine).split(": ", 1)[1])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
