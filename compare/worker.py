# SPDX-License-Identifier: MIT
"""A worker process of the comparison: takes one lock system's locks and
writes through that system's sinks, one role at a time, as the harness
tells it on stdin (one JSON command a line); every step is one JSON event
on stdout, stamped with the monotonic clock.

    worker.py SYSTEM CONFIG.json

Roles:
  hold   (A) acquire RESOURCE, write "A1", check that the lock is still
         held, say "checked", wait for a line on stdin (the harness
         freezes the process right there, with SIGSTOP), then, if the
         check said held, write "A2" with what it believes is still its
         lock, and release;
  take   (B) acquire RESOURCE waiting up to wait_s, write "B1", work for
         gap_s, write "B2", release;
  bench  acquire and release one name n times, timing each acquire.
A fresh lock client is made for each role, as a fresh process would.
"""
from __future__ import annotations

import importlib
import json
import os
import sys
import time
from typing import Any, Callable, Dict

from common import NotGranted, emit, now_ns, read_json
from sinks import Writer


# Each system's adapter: (module, class), imported only when used.
ADAPTERS = {
    "redis": ("lock_redis", "RedisLock"),
    "redlock": ("lock_redis", "Redlock"),
    "etcd": ("lock_etcd", "EtcdLock"),
    "zookeeper": ("lock_zk", "ZkLock"),
    "pgadvisory": ("lock_pg", "PgAdvisoryLock"),
    "tenure": ("lock_tenure", "TenureLock"),
}


def lock_factory(system: str) -> Callable[[dict], Any]:
    """The adapter class of SYSTEM; imports only that system's client."""
    if system not in ADAPTERS:
        raise SystemExit(f"worker: unknown system {system!r}")
    module, cls = ADAPTERS[system]
    return getattr(importlib.import_module(module), cls)


class Worker:
    def __init__(self, system: str, cfg: dict) -> None:
        self.cfg = cfg
        self.make = lock_factory(system)
        self.writer = Writer(cfg, system)

    def write(self, res: str, label: str, token: Any, lock: Any) -> None:
        emit({"ev": "wrote",
              "writes": self.writer.write(res, label, token, lock)})

    def hold(self, cmd: Dict[str, Any]) -> None:
        res = cmd["resource"]
        lock = self.make(self.cfg)
        try:
            token = lock.acquire(res, 0)
            emit({"ev": "acquired", "token": token})
            lock.keep()
            self.write(res, "A1", token, lock)
            held = lock.check()
            emit({"ev": "checked", "ok": held})
            sys.stdin.readline()  # frozen here: the harness's SIGSTOP
            if not held:  # a careful worker does not write then
                return
            self.write(res, "A2", token, lock)
            emit({"ev": "released", "ok": lock.release()})
        finally:
            lock.close()

    def take(self, cmd: Dict[str, Any]) -> None:
        res = cmd["resource"]
        lock = self.make(self.cfg)
        try:
            try:
                token = lock.acquire(res, cmd["wait_s"])
            except NotGranted:
                emit({"ev": "not_granted"})
                return
            emit({"ev": "granted", "token": token})
            lock.keep()
            self.write(res, "B1", token, lock)
            time.sleep(cmd["gap_s"])
            self.write(res, "B2", token, lock)
            emit({"ev": "released", "ok": lock.release()})
        finally:
            lock.close()

    def bench(self, cmd: Dict[str, Any]) -> None:
        lock = self.make(self.cfg)
        lat = []
        start = now_ns()
        deadline = start + int(cmd["max_s"] * 1e9)
        try:
            for _ in range(cmd["n"]):
                t0 = now_ns()
                lock.acquire(cmd["resource"], 0)
                lat.append(now_ns() - t0)
                lock.release()
                if now_ns() > deadline:
                    break
        finally:
            lock.close()
        emit({"ev": "bench", "lat_ns": lat, "start": start, "end": now_ns()})


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    w = Worker(sys.argv[1], read_json(sys.argv[2]))
    emit({"ev": "ready", "pid": os.getpid()})
    ops = {"hold": w.hold, "take": w.take, "bench": w.bench}
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        cmd = json.loads(line)
        if cmd["op"] == "quit":
            break
        try:
            ops[cmd["op"]](cmd)
        except Exception as e:  # reported, and the worker goes on
            emit({"ev": "error", "msg": f"{type(e).__name__}: {e}"[:300]})
        emit({"ev": "done"})
    w.writer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
