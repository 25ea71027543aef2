# SPDX-License-Identifier: MIT
"""The independent reader of the comparison: after every worker has
stopped, reads each sink's final state and the event log (who acquired
when, what each write call returned), and counts, per lock system and
sink, what happened to the writes (docs/COMPARE.md, "What is counted").

    reader.py OUT_DIR                 writes OUT_DIR/results.json
    reader.py check OUT_DIR/results.json
                                      the test's verdict (exit 1 on failure)

It shares no state with the harness or the workers: what a sink admitted
is read from the sink, never taken from a worker's word.  Only "did A see
a rejection" comes from A's own report of its write call.
"""
from __future__ import annotations

import json
import os
import sqlite3
import statistics
import sys
from typing import Any, Dict, List, Optional, Tuple

import psycopg2

from common import SINKS, SYSTEMS, read_json

# A's last write, after the pause, and B's two.
LATE, NEW = "A2", ("B1", "B2")


def rows_of(system: str) -> List[str]:
    out = []
    for sink in SINKS[system]:
        out += ["kafka/fenced", "kafka/plain"] if sink == "kafka" else [sink]
    return out


def load_trials(path: str) -> Dict[Tuple[str, int], Dict[str, Any]]:
    """The event log, folded into one record per trial."""
    trials: Dict[Tuple[str, int], Dict[str, Any]] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            ev = json.loads(line)
            if "trial" not in ev:
                continue
            tr = trials.setdefault((ev["sys"], ev["trial"]), {
                "resource": ev["resource"], "writes": {}, "errors": []})
            kind, role = ev["ev"], ev.get("role", "")
            if kind == "trial":
                tr["pause_ms"] = ev["pause_ms"]
            elif kind == "checked":
                tr["held"] = ev["ok"]
            elif kind in ("freeze", "resume"):
                tr[kind] = ev["t"]
            elif kind in ("acquired", "granted"):
                tr[role + "_token"] = ev["token"]
                tr[role + "_granted"] = ev["t"]
            elif kind == "wrote":
                for w in ev["writes"]:
                    tr["writes"][(w["sink"], w["label"])] = w
            elif kind in ("error", "harness_error", "not_granted", "exit"):
                tr["errors"].append(f"{role}: {kind} {ev.get('msg', '')}")
    return trials


class Sinks:
    """Reads the order in which a sink accepted a resource's writes, and
    the value it holds in the end."""

    def __init__(self, cfg: Dict[str, Any]) -> None:
        self.cfg = cfg
        self.conns: Dict[str, Any] = {}

    def _conn(self, system: str, sink: str) -> Tuple[Any, str]:
        kind, _, variant = sink.partition("/")
        if kind == "pg":
            key = "pg/" + variant
            if key not in self.conns:
                self.conns[key] = psycopg2.connect(self.cfg["pg"][variant])
            return self.conns[key], "%s"
        if kind == "kafka":
            name = f"kafka-{variant}.db"
        else:
            name = f"{system}-{variant}.db"
        key = "sqlite/" + name
        if key not in self.conns:
            path = os.path.join(self.cfg["sinks_dir"], name)
            self.conns[key] = sqlite3.connect(f"file:{path}?mode=ro",
                                              uri=True)
        return self.conns[key], "?"

    def _all(self, conn: Any, sql: str, args: tuple) -> List[Any]:
        cur = conn.cursor()
        cur.execute(sql, args)
        rows = cur.fetchall()
        cur.close()
        return rows

    def history(self, system: str, sink: str,
                resource: str) -> Tuple[List[str], Optional[str]]:
        """(accepted writes in the sink's order, the final value's writer)"""
        conn, p = self._conn(system, sink)
        if sink.startswith("kafka/"):
            order = [r[0] for r in self._all(
                conn, "SELECT CAST(value AS TEXT) FROM tenure_admitted"
                " WHERE resource = ? AND claim = 0"
                " ORDER BY \"partition\", \"offset\"", (resource,))]
            return order, (order[-1] if order else None)
        order = [r[0] for r in self._all(
            conn, f"SELECT writer FROM compare_log WHERE resource = {p}"
            " ORDER BY version", (resource,))]
        final = self._all(conn, "SELECT writer FROM compare_state"
                          f" WHERE resource = {p}", (resource,))
        return order, (final[0][0] if final else None)


def judge(tr: Dict[str, Any], sink: str, order: List[str],
          final: Optional[str]) -> Dict[str, bool]:
    """One trial at one sink: see docs/COMPARE.md for each word."""
    late = tr["writes"].get((sink.split("/")[0] if sink.startswith("kafka")
                             else sink, LATE))
    granted = tr.get("B_granted")
    zombie = late is not None and granted is not None \
        and late["t0"] > granted
    first_new = next((i for i, w in enumerate(order) if w in NEW), None)
    stale = first_new is not None and LATE in order[first_new:]
    early = LATE in order[:first_new]  # the whole order when B has none
    return {
        "zombie": zombie,
        "early": zombie and early,
        "stale": stale,
        "lost": first_new is not None and final not in NEW,
        "refused": zombie and LATE not in order,
        "told": zombie and late["result"] in ("rejected", "error"),
    }


def count_row(trials: List[Dict[str, Any]], system: str, sink: str,
              sinks: Sinks) -> Dict[str, Any]:
    keys = ("zombie", "early", "stale", "lost", "refused", "told")
    row: Dict[str, Any] = {"sys": system, "sink": sink, "trials": 0,
                           "check_failed": 0, "errors": 0,
                           "error_samples": []}
    row.update({k: 0 for k in keys})
    for tr in trials:
        row["trials"] += 1
        # A's check found the lock gone before the freeze: a careful
        # worker does not write then, so the trial staged nothing.
        row["check_failed"] += int(not tr.get("held", True))
        if tr["errors"]:
            row["errors"] += 1
            row["error_samples"] = (row["error_samples"] + tr["errors"])[:5]
        order, final = sinks.history(system, sink, tr["resource"])
        for k, v in judge(tr, sink, order, final).items():
            row[k] += int(v)
    return row


def pct(xs: List[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def bench_summary(path: str) -> Dict[str, Any]:
    """Per system: medians over the rounds of the single client's median
    and p99 acquire latency, of the clients' acquire/release cycles per
    second, and of each round's ratio to tenure in that same round."""
    if not os.path.exists(path):
        return {}
    b = read_json(path)
    per: Dict[str, Dict[int, Dict[str, float]]] = {}
    for r in b["rounds"]:
        lat = [x / 1e6 for x in r["single"]["lat_ns"]]
        many = r["many"]
        span = (max(m["end"] for m in many) - min(m["start"] for m in many))
        n = sum(len(m["lat_ns"]) for m in many)
        per.setdefault(r["sys"], {})[r["round"]] = {
            "p50_ms": statistics.median(lat) if lat else 0.0,
            "p99_ms": pct(lat, 0.99), "per_s": n / (span / 1e9)}
    out: Dict[str, Any] = {}
    base = per.get("tenure", {})
    for system, rounds in per.items():
        s: Dict[str, Any] = {"rounds": len(rounds), "samples": b["workers"]}
        for k in ("p50_ms", "p99_ms", "per_s"):
            s[k] = statistics.median(v[k] for v in rounds.values())
            ratios = [v[k] / base[r][k] for r, v in rounds.items()
                      if r in base and base[r][k] > 0]
            s[k + "_ratio"] = statistics.median(ratios) if ratios else None
        out[system] = s
    return out


def read(out: str) -> Dict[str, Any]:
    cfg = read_json(os.path.join(out, "config.json"))
    trials = load_trials(os.path.join(out, "events.jsonl"))
    sinks = Sinks(cfg)
    rows = []
    systems = [s for s in SYSTEMS if s in cfg["settings"]["systems"]]
    for system in systems:
        mine = [trials[k] for k in sorted(trials) if k[0] == system]
        for sink in rows_of(system):
            rows.append(count_row(mine, system, sink, sinks))
    return {"settings": cfg["settings"], "systems": systems, "rows": rows,
            "bench": bench_summary(os.path.join(out, "bench.json"))}


def check(results: Dict[str, Any]) -> List[str]:
    """The test's verdict: tenure with a fence admits no stale write and
    loses no update, in trials that did stage the incident; each sink
    that ignores the token (the negative control) admits one."""
    bad = []
    for row in results["rows"]:
        if row["sys"] != "tenure":
            continue
        name = f"tenure + {row['sink']}"
        if row["errors"]:
            bad.append(f"{name}: {row['errors']} trials with errors: "
                       f"{row['error_samples']}")
        if row["sink"].endswith("/fenced"):
            if row["stale"] or row["lost"]:
                bad.append(f"{name}: {row['stale']} stale writes admitted, "
                           f"{row['lost']} lost updates (want 0)")
            if not row["zombie"]:
                bad.append(f"{name}: no trial staged the incident")
        elif row["sink"].endswith("/plain") and not row["stale"]:
            bad.append(f"{name} (negative control, ignores the token): no "
                       f"stale write admitted in {row['trials']} trials")
    return bad


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        results = read_json(sys.argv[2])
        for row in results["rows"]:
            print("compare: {sys:<10} {sink:<13} trials {trials:>3}  late "
                  "{zombie:>3}: before B's {early:>3}, stale admitted "
                  "{stale:>3}, refused {refused:>3} (told {told:>3}); lost "
                  "{lost:>3}; errors {errors}".format(**row))
        bad = check(results)
        for b in bad:
            print(f"FAIL: {b}")
        return 1 if bad else 0
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    results = read(sys.argv[1])
    with open(os.path.join(sys.argv[1], "results.json"), "w",
              encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
