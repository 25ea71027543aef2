# SPDX-License-Identifier: MIT
"""The fair-share demo (`make demo-shards`): workers share shards through
sessions (tenure.share) and write through the fence into one SQLite sink.

    demo.py [--tenured PATH | --server URL] [--shards N] [--workers N]
            [--ttl-ms MS] [--short] [--balance-timeout S]

Three workers (worker.py) share 1,000 shards.  Once they are balanced, the
second is frozen with SIGSTOP past its TTL: the others take its shards.
It is resumed: it tries the rest of its round with its old tokens (the
fence refuses them), learns that its session is gone, and joins again.
Then a fourth joins late.  After each change the demo prints how long the
shards took to be balanced again (every shard held, by the live workers
only, the counts within one of each other) and the counts; at the end the
writes the sink admitted, the stale ones among them (a token below one
the sink had already admitted for that shard: must be 0) and the stale
writes the fence refused.  --short: 300 shards, ttl 2000 ms (ctest).

Exit 0 when every change was balanced in time, every shard of the frozen
worker went to another with a higher token, and no stale write was
admitted (none below a token already admitted, none of the frozen worker
with a token it held when it froze); 1 otherwise (also when the frozen
worker made no stale write at all: the run then proved nothing); 77 when
the server has no sessions.
TN_DEMO_FENCE=off makes the sink skip the token check (the demo then
fails: the resumed worker's stale writes are admitted).
"""
from __future__ import annotations

import argparse
import collections
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "python"))

import tenure  # noqa: E402

GROUP = "demo"
PREFIX = "demo/shard:"
T0 = time.monotonic()


def say(msg: str) -> None:
    print(f"[{time.monotonic() - T0:6.1f}s] {msg}", flush=True)


def free_port() -> int:
    """A free port below the ephemeral range (no outgoing connection can
    take it before tenured binds it)."""
    import random
    for _ in range(200):
        p = random.randint(12000, 31000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                continue
        return p
    raise SystemExit("no free port")


def start_tenured(exe: str, data: Path) -> "tuple[subprocess.Popen[bytes], str]":
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(data.parent / "tenured.log", "wb")
    p = subprocess.Popen([exe, "--listen", f"127.0.0.1:{port}",
                          "--data-dir", str(data)], stdout=log,
                         stderr=subprocess.STDOUT)
    for _ in range(600):
        if p.poll() is not None:
            raise SystemExit(f"tenured exited: see {log.name}")
        try:
            with urllib.request.urlopen(url + "/readyz", timeout=1) as r:
                if r.status == 200:
                    return p, url
        except OSError:
            pass
        time.sleep(0.05)
    raise SystemExit("tenured did not become ready")


def make_sink(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    # t: when the write was decided (julian day, SQLite's clock: the wall
    # clock), so that a write decided after the frozen worker resumed is
    # told from one it had under way when it froze.
    db.execute("CREATE TABLE writes (shard TEXT, token INTEGER, worker TEXT,"
               " kind TEXT, t REAL NOT NULL DEFAULT (julianday('now')))")
    db.execute("CREATE TABLE refused (shard TEXT, token INTEGER,"
               " worker TEXT)")
    db.commit()
    db.close()


class Demo:
    def __init__(self, a: argparse.Namespace, url: str, tmp: Path) -> None:
        self.a = a
        self.url = url
        self.sink = tmp / "sink.db"
        self.c = tenure.Client(url)
        self.procs: Dict[str, subprocess.Popen[bytes]] = {}
        self.ok = True
        self.frozen = ""
        self.frozen_held: Dict[str, int] = {}  # shard -> token at the freeze
        self.resumed_jd = 0.0  # when it was resumed (julian day)

    def start_worker(self, name: str) -> None:
        """Start a worker and wait until it says it runs (a Python process
        takes a while to start on a busy machine: not the recipe's time)."""
        p = subprocess.Popen(
            [sys.executable, str(HERE / "worker.py"), self.url, GROUP, name,
             str(self.a.shards), PREFIX, str(self.sink), str(self.a.ttl_ms)],
            stdout=subprocess.PIPE)
        self.procs[name] = p
        assert p.stdout is not None
        line = p.stdout.readline()
        if not line.startswith(f"{name}: ready".encode()):
            raise SystemExit(f"worker {name} did not start: {line!r}")

    def counts(self) -> Dict[str, int]:
        n: Dict[str, int] = collections.Counter()
        for info in self.c.list_all(PREFIX):
            n[info.owner_id.split("/", 1)[-1]] += 1
        return dict(n)

    def balanced(self, live: List[str], why: str) -> None:
        """Wait until every shard is held by the live workers only, their
        counts within one of each other; print how long it took."""
        t = time.monotonic()
        end = t + self.a.balance_timeout
        n: Dict[str, int] = {}
        while time.monotonic() < end:
            n = self.counts()
            if set(n) == set(live) and sum(n.values()) == self.a.shards \
                    and max(n.values()) - min(n.values()) <= 1:
                say(f"{why}: balanced in {time.monotonic() - t:.1f} s: "
                    + " ".join(f"{w}={n[w]}" for w in sorted(n)))
                return
            time.sleep(0.1)
        say(f"{why}: NOT balanced after {self.a.balance_timeout} s: "
            + " ".join(f"{w}={n[w]}" for w in sorted(n)))
        for info in self.c.sessions_all(GROUP + "/"):
            say(f"  live session {info.session_id} of {info.owner_id}: "
                f"{info.leases} leases, expires in {info.expires_in_ms} ms")
        self.ok = False

    def held_by(self, worker: str) -> Dict[str, int]:
        """The shards worker holds now, with their tokens."""
        return {info.name: info.token for info in self.c.list_all(PREFIX)
                if info.owner_id.split("/", 1)[-1] == worker}

    def handed_over(self, others: List[str]) -> None:
        """Every shard the frozen worker held is now another worker's,
        with a higher token."""
        now = {info.name: (info.owner_id.split("/", 1)[-1], info.token)
               for info in self.c.list_all(PREFIX)}
        bad = [f"{n} (token {t}): now {now.get(n)}"
               for n, t in sorted(self.frozen_held.items())
               if n not in now or now[n][0] not in others or now[n][1] <= t]
        if bad:
            say("NOT handed over with a higher token: " + "; ".join(bad[:5]))
            self.ok = False
        else:
            say(f"all {len(self.frozen_held)} shards of {self.frozen} went "
                "to the others, each with a higher token")

    def run(self) -> None:
        a = self.a
        names = [f"w{i + 1}" for i in range(a.workers)]
        say(f"{a.workers} workers over {a.shards} shards, ttl {a.ttl_ms} ms,"
            f" fence {'off' if os.environ.get('TN_DEMO_FENCE') == 'off' else 'on'}")
        for w in names:
            self.start_worker(w)
        say(f"{', '.join(names)} started")
        self.balanced(names, "start")
        frozen = names[1]
        self.procs[frozen].send_signal(signal.SIGSTOP)
        self.frozen = frozen
        self.frozen_held = self.held_by(frozen)
        say(f"{frozen} frozen (SIGSTOP) holding {len(self.frozen_held)} shards")
        others = [w for w in names if w != frozen]
        self.balanced(others, f"{frozen} frozen past its TTL")
        self.handed_over(others)
        time.sleep(2 * ROUND_S)  # the new holders write
        self.resumed_jd = time.time() / 86400.0 + 2440587.5
        self.procs[frozen].send_signal(signal.SIGCONT)
        say(f"{frozen} resumed (SIGCONT)")
        self.balanced(names, f"{frozen} back")
        late = f"w{a.workers + 1}"
        self.start_worker(late)
        say(f"{late} joins (started)")
        self.balanced(names + [late], f"{late} joined")
        time.sleep(ROUND_S)

    def stop(self) -> None:
        for p in self.procs.values():
            p.send_signal(signal.SIGCONT)
            p.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        self.c.close()

    def verdict(self) -> int:
        db = sqlite3.connect(self.sink)
        seen: Dict[str, int] = {}
        admitted, stale = 0, collections.Counter()
        for shard, token, worker in db.execute(
                "SELECT shard, token, worker FROM writes ORDER BY rowid"):
            admitted += 1
            if token < seen.get(shard, 0):
                stale[worker] += 1
            seen[shard] = max(seen.get(shard, 0), token)
        refused = collections.Counter(
            dict(db.execute("SELECT worker, count(*) FROM refused"
                            " GROUP BY worker").fetchall()))
        # Every write the frozen worker decided after it resumed with a
        # token it held when it froze: none may have landed (by then every
        # such shard was another worker's, with a higher token).
        late = sum(1 for shard, token in db.execute(
            "SELECT shard, token FROM writes WHERE t > ? AND worker = ?",
            (self.resumed_jd, self.frozen))
            if self.frozen_held.get(shard) == token)
        db.close()
        say(f"writes admitted: {admitted}; stale writes admitted: "
            f"{sum(stale.values())} {dict(stale)}; stale writes refused by "
            f"the fence: {sum(refused.values())} {dict(refused)}")
        say(f"writes of {self.frozen} with its old tokens admitted after "
            f"it resumed: {late}")
        if sum(stale.values()) or late:
            say("FAIL: stale writes were admitted")
            return 1
        if not refused[self.frozen]:
            say("FAIL: the frozen worker made no stale write: nothing was "
                "shown")
            return 1
        if not self.ok:
            say("FAIL: not balanced in time")
            return 1
        say("PASS")
        return 0


ROUND_S = 1.0  # worker.py's round


def sessions_missing(url: str) -> Optional[str]:
    try:
        with tenure.Client(url) as c:
            c.open_session(ttl_ms=1000, keep=False).end()
    except tenure.Error as e:
        if e.status in (404, 501):
            return f"{e.status} {e}"
        raise
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tenured", help="start this tenured")
    ap.add_argument("--server", help="use this server instead")
    ap.add_argument("--shards", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--ttl-ms", type=int, default=3000)
    ap.add_argument("--balance-timeout", type=float, default=30.0)
    ap.add_argument("--short", action="store_true")
    a = ap.parse_args()
    if a.short:
        a.shards, a.ttl_ms = 300, 2000
    tmp = Path(tempfile.mkdtemp(prefix="tenure-demo-shards."))
    server = None
    try:
        if a.server:
            url = a.server
        else:
            exe = a.tenured or str(HERE.parents[1] / "build/dev/bin/tenured")
            (tmp / "data").mkdir()
            server, url = start_tenured(exe, tmp / "data")
        missing = sessions_missing(url)
        if missing:
            print(f"demo-shards: skipped: the server has no sessions yet "
                  f"({missing})", flush=True)
            return 77
        make_sink(tmp / "sink.db")
        d = Demo(a, url, tmp)
        try:
            d.run()
        finally:
            d.stop()
        return d.verdict()
    finally:
        if server is not None:
            server.kill()
            server.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
