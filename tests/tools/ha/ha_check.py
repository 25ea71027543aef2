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


FIELDS = ("unavailable_ms", "from_kill_ms", "refused", "promoted_ms",
          "rebuilt_ms")


def line_of(i, w):
    return f"ha-window failover={i} " + " ".join(
        f"{k}={w[k]}" for k in FIELDS)


def note_after(evs, t_kill, prefix):
    """ms from the kill to the first nemesis line starting with prefix."""
    for e in evs:
        if e["t"] > t_kill and e.get("src") == "nemesis" and \
                e.get("fault", "").startswith(prefix):
            return (e["t"] - t_kill) // 1000000
    return -1


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
             e.get("fault", "").startswith("kill -9 primary")]
    found = []
    for i, t in enumerate(kills):
        t_next = kills[i + 1] if i + 1 < len(kills) else float("inf")
        w = window(evs, t, t_next)
        if w is None:
            print(f"ha-window failover={i + 1} no grant after it")
            continue
        w["promoted_ms"] = note_after(evs, t, "standby ")
        w["rebuilt_ms"] = note_after(evs, t, "old primary ")
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


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "ledger":
        return ledger(sys.argv[2:])
    if len(sys.argv) >= 3 and sys.argv[1] == "windows":
        return windows(sys.argv[2:])
    if len(sys.argv) == 2 and sys.argv[1] == "summary":
        return summary()
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
