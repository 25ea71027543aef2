#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""When does each part serve again after a fault (docs/HA.md)?

  serve_probe.py run --out FILE [--every-ms 50]
                     [--http NAME=URL]... [--pg NAME=DSN]...
      Until SIGTERM, every every-ms: an acquire of a fresh name on each
      tenured instance (NAME=URL; a 201 is a durable write served), and a
      write on each PostgreSQL node (NAME=DSN: one INSERT committed with
      synchronous_commit = remote_apply, so "writable" means what tenured
      needs: a commit a synchronous standby has applied).  Each attempt
      runs on its own thread and is abandoned (a failure) after 2 s; a
      write on a paused node never returns.  One JSON line per attempt:
      {"t": <CLOCK_MONOTONIC ns at the end>, "src": "probe", "kind":
      "http"|"pg", "target": NAME, "ok": true|false}.
  serve_probe.py stamp --out FILE
      Each line of stdin (a holder's log: tenure -v run) as
      {"t": <CLOCK_MONOTONIC ns when read>, "src": "holder", "line": ...}.
  serve_probe.py writes FILE FROM_NS TO_NS [NODE]
      How many writes were committed on any node (on NODE) between the two
      instants: strict synchronous mode with no standby left must commit
      none, nor may a deposed primary once another one was promoted.
  serve_probe.py delays FILE T_FAULT_NS [--end T_END_NS] [--on NODE]
      For the fault at T_FAULT_NS: W, when NODE (the primary after the
      fault; any node when not given) became writable, i.e. its first
      write committed after its last failed one (the fault's first write
      when none failed), and per instance the end
      of its outage: the first ok after its last failure (0 when it never
      failed).  Prints "serve writable_ms=<W - fault> <name>_ms=<its end -
      W, never below 0> ... max_ms=<the largest>" (ms); exit 1 when an
      instance never served again before T_END_NS.
"""
import json
import signal
import sys
import threading
import time
import urllib.error
import urllib.request

ABANDON_S = 2.0
stop = threading.Event()
out_lock = threading.Lock()


def record(out, kind, target, ok):
    line = json.dumps({"t": time.monotonic_ns(), "src": "probe",
                       "kind": kind, "target": target, "ok": ok})
    with out_lock:
        out.write(line + "\n")
        out.flush()


def http_attempt(url, name, seq):
    body = json.dumps({"name": f"probe:{name}:{seq}", "owner_id": "probe",
                       "ttl_ms": 200}).encode()
    req = urllib.request.Request(url + "/v1/leases", data=body,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=ABANDON_S) as r:
            return r.status == 201
    except (urllib.error.URLError, OSError, ValueError):
        return False


def pg_attempt(dsn):
    import psycopg2  # only the pg probes need it
    conn = None
    try:
        conn = psycopg2.connect(dsn, connect_timeout=1)
        cur = conn.cursor()
        cur.execute("SET synchronous_commit TO remote_apply")
        cur.execute("CREATE TABLE IF NOT EXISTS tn_probe (t bigint)")
        cur.execute("INSERT INTO tn_probe VALUES (%s)", (time.time_ns(),))
        conn.commit()
        return True
    except Exception:  # any failure is "not writable"
        return False
    finally:
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass


def prober(out, kind, name, target, every):
    seq = 0
    while not stop.is_set():
        seq += 1
        result = []
        fn = (lambda: result.append(http_attempt(target, name, seq))) \
            if kind == "http" else (lambda: result.append(pg_attempt(target)))
        t = threading.Thread(target=fn, daemon=True)
        t.start()
        t.join(ABANDON_S)
        record(out, kind, name, bool(result and result[0]))
        stop.wait(every)


def run(argv):
    out_path, every, targets = None, 0.05, []
    i = 0
    while i < len(argv):
        a, v = argv[i], argv[i + 1] if i + 1 < len(argv) else None
        if v is None:
            return usage()
        if a == "--out":
            out_path = v
        elif a == "--every-ms":
            every = int(v) / 1000.0
        elif a in ("--http", "--pg"):
            name, _, target = v.partition("=")
            targets.append((a[2:], name, target))
        else:
            return usage()
        i += 2
    if out_path is None or not targets:
        return usage()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with open(out_path, "a") as out:
        threads = [threading.Thread(target=prober, daemon=True,
                                    args=(out, k, n, t, every))
                   for k, n, t in targets]
        for t in threads:
            t.start()
        while not stop.is_set():
            stop.wait(0.2)
    return 0


def delays(argv):
    path, t_fault = argv[0], int(argv[1])
    opts = dict(zip(argv[2::2], argv[3::2]))
    t_end = int(opts["--end"]) if "--end" in opts else float("inf")
    on = opts.get("--on")
    evs = []
    with open(path) as f:
        for line in f:
            if line.strip():
                evs.append(json.loads(line))
    evs = [e for e in evs if t_fault <= e["t"] <= t_end]
    evs.sort(key=lambda e: e["t"])
    writes = [e for e in evs if e["kind"] == "pg" and
              (on is None or e["target"] == on)]
    bad = max((e["t"] for e in writes if not e["ok"]), default=0) \
        if on is not None else 0
    w = next((e["t"] for e in writes if e["ok"] and e["t"] > bad), None)
    if w is None:
        print("serve: no node became writable")
        return 1
    names = sorted({e["target"] for e in evs if e["kind"] == "http"})
    out, worst, rc = [f"writable_ms={(w - t_fault) // 1000000}"], 0, 0
    for n in names:
        mine = [e for e in evs if e["kind"] == "http" and e["target"] == n]
        last_bad = max((e["t"] for e in mine if not e["ok"]), default=None)
        if last_bad is None:
            back = t_fault
        else:
            back = next((e["t"] for e in mine
                         if e["ok"] and e["t"] > last_bad), None)
        if back is None:
            out.append(f"{n}_ms=never")
            rc = 1
            continue
        d = max(0, (back - w) // 1000000)
        worst = max(worst, d)
        out.append(f"{n}_ms={d}")
    out.append(f"max_ms={worst}")
    print("serve " + " ".join(out))
    return rc


def stamp(argv):
    if len(argv) != 2 or argv[0] != "--out":
        return usage()
    with open(argv[1], "a") as out:
        for line in sys.stdin:
            out.write(json.dumps({"t": time.monotonic_ns(), "src": "holder",
                                  "line": line.rstrip("\n")}) + "\n")
            out.flush()
    return 0


def writes(argv):
    lo, hi = int(argv[1]), int(argv[2])
    node = argv[3] if len(argv) > 3 else None
    n = 0
    with open(argv[0]) as f:
        for line in f:
            e = json.loads(line) if line.strip() else {}
            n += e.get("kind") == "pg" and e.get("ok") and \
                lo <= e["t"] <= hi and node in (None, e["target"])
    print(n)
    return 0


def usage():
    sys.stderr.write(__doc__)
    return 2


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "run":
        return run(sys.argv[2:])
    if len(sys.argv) >= 2 and sys.argv[1] == "stamp":
        return stamp(sys.argv[2:])
    if len(sys.argv) in (5, 6) and sys.argv[1] == "writes":
        return writes(sys.argv[2:])
    if len(sys.argv) >= 4 and sys.argv[1] == "delays":
        return delays(sys.argv[2:])
    return usage()


if __name__ == "__main__":
    sys.exit(main())
