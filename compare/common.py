# SPDX-License-Identifier: MIT
"""What every part of the comparison shares: the one clock, the JSON line
format of the event log, the background renewer the lock adapters use,
and the names of the systems and sinks.

Every time in the comparison is ``time.monotonic_ns()``: CLOCK_MONOTONIC,
one clock for every process of the machine, so the harness, the workers
and the reader can order each other's events.  Not a test of any lock by
itself: see docs/COMPARE.md.
"""
from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from typing import Any, Callable, Dict, Optional

# The lock systems, in report order.
SYSTEMS = ("redis", "redlock", "etcd", "zookeeper", "pgadvisory", "tenure")

# The sinks each system's workers write through.  "plain" ignores the
# token; "fenced" admits a write only through the fence kit's rule
# (python/tenure/fence.py); "session" is PostgreSQL written on the very
# session that holds the advisory lock; "kafka" is a record on the raw
# topic, read by two tenure-materializer processes (fenced and
# --no-fence), which make the sinks "kafka/fenced" and "kafka/plain".
SINKS = {
    "redis": ("sqlite/plain", "pg/plain"),
    "redlock": ("sqlite/plain", "pg/plain"),
    "etcd": ("sqlite/plain", "pg/plain", "sqlite/fenced", "pg/fenced"),
    "zookeeper": ("sqlite/plain", "pg/plain", "sqlite/fenced", "pg/fenced"),
    "pgadvisory": ("sqlite/plain", "pg/plain", "pg/session"),
    "tenure": ("sqlite/plain", "pg/plain", "sqlite/fenced", "pg/fenced",
               "kafka"),
}

TOPIC = "compare"


class NotGranted(Exception):
    """The lock was not granted before the wait ran out."""


def now_ns() -> int:
    return time.monotonic_ns()


def emit(obj: Dict[str, Any]) -> None:
    """One event on stdout, one JSON line, flushed at once (the harness
    reads it while this process may be frozen a moment later)."""
    obj.setdefault("t", now_ns())
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def read_json(path: str) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def pg_key(resource: str) -> int:
    """A resource's advisory lock key: a signed 64-bit int."""
    h = hashlib.sha256(resource.encode("utf-8")).digest()
    return int.from_bytes(h[:8], "big", signed=True)


class Renewer:
    """Calls ``fn`` every ``interval_s`` on a daemon thread until stopped
    or until ``fn`` returns False: the watchdog that keeps a lock alive
    while its holder runs (Redisson's, etcd's session keepalive).  A
    SIGSTOP freezes it with the rest of the process, which is the point."""

    def __init__(self, fn: Callable[[], bool], interval_s: float) -> None:
        self._fn = fn
        self._interval = interval_s
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._thread.start()

    def _main(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                if not self._fn():
                    return
            except Exception:  # a failed renewal is the lock's end
                return

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
