# SPDX-License-Identifier: MIT
"""py_keepalive.py URL MODE N TTL_MS SECONDS TENURED_PID: one Python Client
keeps N leases for SECONDS and counts the ones it lost.  Run by
bench/keepalive-py-go.sh.

MODE "leases": N leases of their own (acquire, then keep each: one renew
per lease every TTL/3).  MODE "session": one session with N leases claimed
under it (one renew for all).  The leases are taken (by 8 threads, each
kept as soon as granted) before the count starts; then for SECONDS the
script measures tenured's CPU (/proc/TENURED_PID/stat) and its own, and
at the end asks the server whether every lease is still the same grant.
Prints one JSON line: kept, lost (ends reported by the keepalive), alive
(same token live on the server at the end), tenured_cpu_pct and
client_cpu_pct (of one core), renews (the keepalive's, from its log)."""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List

import tenure

HZ = os.sysconf("SC_CLK_TCK")


def ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        st = f.read().rsplit(")", 1)[1].split()
    return int(st[11]) + int(st[12])  # utime + stime


def own_cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def live_tokens(c: tenure.Client, prefix: str) -> Dict[str, int]:
    out: Dict[str, int] = {}
    after = None
    while True:
        items, after = c.list(prefix, after, 1000)
        out.update((i.name, i.token) for i in items)
        if after is None:
            return out


def take_leases(c: tenure.Client, prefix: str, n: int, ttl: int,
                on_end: Any) -> List[tenure.Lease]:
    def one(i: int) -> tenure.Lease:
        lease = c.acquire(f"{prefix}{i:06d}", ttl_ms=ttl)
        c.keep(lease, on_end)
        return lease
    with ThreadPoolExecutor(8) as ex:
        return list(ex.map(one, range(n)))


def take_session(c: tenure.Client, prefix: str, n: int, ttl: int,
                 on_end: Any) -> List[tenure.Lease]:
    s = c.open_session(ttl_ms=ttl, on_end=on_end, on_lease_end=on_end)
    names = [f"{prefix}{i:06d}" for i in range(n)]
    res = s.claim(names)
    if len(res.granted) != n:
        raise SystemExit(f"claimed {len(res.granted)} of {n}")
    return list(res.granted.values())


def main(argv: List[str]) -> int:
    if len(argv) != 7:
        print(__doc__, file=sys.stderr)
        return 2
    url, mode, n, ttl = argv[1], argv[2], int(argv[3]), int(argv[4])
    seconds, pid = float(argv[5]), int(argv[6])
    ends: Dict[str, int] = {}
    renews = [0]
    mu = threading.Lock()

    def on_end(_item: Any, why: str, _err: Any) -> None:
        with mu:
            ends[why] = ends.get(why, 0) + 1

    def log(msg: str) -> None:
        if msg.startswith("renewed"):
            renews[0] += 1

    prefix = f"bench-ka-{os.getpid()}/"
    with tenure.Client(url, log=log) as c:
        take = take_leases if mode == "leases" else take_session
        t_setup = time.monotonic()
        leases = take(c, prefix, n, ttl, on_end)
        setup_s = time.monotonic() - t_setup
        renews[0] = 0
        k0, c0, t0 = ticks(pid), own_cpu_s(), time.monotonic()
        time.sleep(seconds)
        k1, c1, t1 = ticks(pid), own_cpu_s(), time.monotonic()
        wall = t1 - t0
        with mu:
            lost = sum(v for k, v in ends.items() if k != "stopped")
            got = dict(ends)
        live = live_tokens(c, prefix)
        alive = sum(1 for x in leases if live.get(x.name) == x.token)
        out = {"mode": mode, "kept": n, "ttl_ms": ttl, "seconds": seconds,
               "lost": lost, "ends": got, "alive": alive,
               "setup_s": round(setup_s, 1),
               "renews_per_s": round(renews[0] / wall, 1),
               "tenured_cpu_pct": round(100.0 * (k1 - k0) / HZ / wall, 2),
               "client_cpu_pct": round(100.0 * (c1 - c0) / wall, 1)}
    print(json.dumps(out), flush=True)
    return 0 if lost == 0 and alive == n else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
