# SPDX-License-Identifier: MIT
"""One worker of the fair-share demo (demo.py runs several): it takes its
share of the shards with tenure.share and writes every shard it holds
once a round into a SQLite sink, each write with the shard's token,
through the fence in the write's own transaction.

    worker.py URL GROUP NAME SHARDS PREFIX SINK TTL_MS

It checks its leases once per round, as a worker that batches its writes
does: a worker frozen in the middle of a round resumes and tries the rest
of the round with its old tokens, and the fence refuses them (they land in
the sink's ``refused`` table).  With TN_DEMO_FENCE=off the sink skips the
token check, and those stale writes are admitted.  TN_DEMO_DEBUG=1
prints each gain and loss on stderr.  SIGTERM ends the
worker: its session ends and its shards are released.
"""
from __future__ import annotations

import os
import signal
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

import tenure  # noqa: E402
from tenure import fence, share  # noqa: E402

ROUND_S = 1.0  # every shard held is written once a round
CHUNK = 20  # writes per transaction


class Writer:
    def __init__(self, sink: str, me: str, fenced: bool) -> None:
        # the share thread's claims and the writer's rounds share it
        self.db = sqlite3.connect(sink, timeout=60, check_same_thread=False)
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db_lock = threading.Lock()
        self.me = me
        self.fenced = fenced
        self.round_lock = threading.Lock()  # held while a round writes
        self.mu = threading.Lock()
        self.turn = threading.Condition(self.mu)
        self.losing = 0  # losses waiting for the round to end
        self.owned: Dict[str, int] = {}  # shard -> token
        self.leases: Dict[str, tenure.Lease] = {}
        self.stop = threading.Event()

    def write(self, rows: List[tuple], kind: str) -> None:
        """One transaction: each row's fence check and write together."""
        with self.db_lock, self.db:
            for shard, token in rows:
                if not self.fenced or fence.admit_sqlite(self.db, shard, token):
                    self.db.execute(
                        "INSERT INTO writes(shard, token, worker, kind)"
                        " VALUES (?, ?, ?, ?)", (shard, token, self.me, kind))
                else:
                    self.db.execute(
                        "INSERT INTO refused(shard, token, worker)"
                        " VALUES (?, ?, ?)", (shard, token, self.me))

    # share.Worker's callbacks (its thread)

    def debug(self, msg: str) -> None:
        if os.environ.get("TN_DEMO_DEBUG"):
            print(f"{time.monotonic():.2f} {self.me}: {msg}", file=sys.stderr,
                  flush=True)

    def gained(self, leases: Dict[str, tenure.Lease]) -> None:
        self.debug(f"gained {len(leases)}")
        # Claim before anything else: the new token raises the mark, so
        # nothing the previous holder still sends can land after it.
        self.write([(n, x.token) for n, x in leases.items()], "claim")
        with self.mu:
            self.leases.update(leases)
            self.owned.update((n, x.token) for n, x in leases.items())

    def lost(self, names: List[str], why: str) -> None:
        self.debug(f"losing {len(names)} ({why})")
        with self.mu:
            self.losing += 1
        with self.round_lock:  # the round in progress ends first
            with self.mu:
                for n in names:
                    self.owned.pop(n, None)
                    self.leases.pop(n, None)
                self.losing -= 1
                self.turn.notify_all()
        self.debug(f"lost {len(names)}")

    def run(self) -> None:
        while not self.stop.is_set():
            with self.round_lock:
                with self.mu:  # the once-a-round check
                    snap = sorted((n, t) for n, t in self.owned.items()
                                  if self.leases[n].is_held())
                chunks = [snap[i:i + CHUNK] for i in range(0, len(snap), CHUNK)]
                pause = ROUND_S / max(1, len(chunks))
                for rows in chunks:
                    if self.stop.wait(pause):
                        break
                    self.write(rows, "write")
            with self.mu:  # a loss waiting goes before the next round
                self.turn.wait_for(lambda: not self.losing, 5.0)
            if not snap:
                self.stop.wait(0.05)


def main(argv: List[str]) -> int:
    url, group, name, n, prefix, sink, ttl = argv[1:8]
    shards = [f"{prefix}{i:05d}" for i in range(int(n))]
    fenced = os.environ.get("TN_DEMO_FENCE", "on") != "off"
    w = Writer(sink, name, fenced)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with tenure.Client(url, owner_id=f"{group}/{name}") as c:
        sw = share.Worker(c, group, name, shards, ttl_ms=int(ttl),
                          on_gain=w.gained, on_loss=w.lost)
        sw.start()
        t = threading.Thread(target=w.run, daemon=True)
        t.start()
        print(f"{name}: ready", flush=True)
        done.wait()
        sw.stop()
        w.stop.set()
        t.join()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
