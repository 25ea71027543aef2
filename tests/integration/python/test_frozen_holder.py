# SPDX-License-Identifier: MIT
"""The incident with a Python worker: it holds a lease through hold(), is
frozen (SIGSTOP) between its is_held() check and its write, the lease is
forced over to a successor that writes, and the worker resumes (SIGCONT).
Its stale write is rejected by the sink's fence, in SQLite and in
PostgreSQL, as the C kit rejects it; its safe time reads 0, the body learns
Lost, and hold() raises Lost at exit without releasing the successor's
grant."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

import sinks
import tenure
import zombie_worker
from conftest import Server

HERE = Path(__file__).resolve().parent


def stopped(pid: int) -> bool:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t")


def read_until(p: "subprocess.Popen[str]", key: str,
               got: List[Dict[str, Any]]) -> Dict[str, Any]:
    assert p.stdout is not None
    for line in p.stdout:
        ev = json.loads(line)
        got.append(ev)
        if key in ev:
            return ev
    raise AssertionError(f"worker ended before {key!r}: {got}")


@pytest.fixture(params=["sqlite", "postgres"])
def sink(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return sinks.new_sqlite(tmp_path)
    return sinks.new_postgres(request.getfixturevalue("pg_url"))


def test_frozen_holder_is_fenced_and_learns_lost(server: Server, uniq: str,
                                                 sink: str) -> None:
    name = uniq + "shard"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE)] + [p for p in sys.path if p])
    p = subprocess.Popen([sys.executable, str(HERE / "zombie_worker.py"),
                          server.url, name, sink],
                         stdout=subprocess.PIPE, text=True, env=env)
    got: List[Dict[str, Any]] = []
    try:
        t1 = read_until(p, "token", got)["token"]
        read_until(p, "stopping", got)
        end = time.monotonic() + 10
        while not stopped(p.pid):
            assert time.monotonic() < end, "the worker did not stop"
            time.sleep(0.01)
        t_stop = time.monotonic()

        # The takeover: force a new grant, and the successor writes.
        c = tenure.Client(server.url)
        c.force_release(name)
        succ = c.acquire(name, owner="successor", ttl_ms=10000)
        assert succ.token > t1
        assert zombie_worker.write(sink, name, succ.token, 100)

        # Frozen past its whole TTL (2 s), then resumed.
        time.sleep(max(0.0, 2.5 - (time.monotonic() - t_stop)))
        os.kill(p.pid, signal.SIGCONT)
        rc = p.wait(timeout=30)
        assert p.stdout is not None
        got += [json.loads(x) for x in p.stdout.read().splitlines() if x]
    finally:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGCONT)
            p.kill()
            p.wait()

    # The write from the gap was refused by the sink, not by luck.
    assert {"step": 1, "admitted": False} == {
        k: v for k, v in got[got.index({"stopping": True}) + 1].items()
        if k in ("step", "admitted")}, got
    learned = [g for g in got if "learned" in g]
    assert learned and learned[0]["safe"] == 0, got
    assert learned[0]["learned"] in ("Lost", "Expired")
    assert {"hold_raised": "Lost"} in got or {"hold_raised": "Expired"} in got
    assert rc == 4, got
    assert not any(g.get("hold_returned") for g in got)

    # The sink: the worker's first write and the successor's, nothing else.
    assert sinks.rows(sink) == [(name, t1, 0), (name, succ.token, 100)]
    assert sinks.mark(sink, name) == succ.token
    # hold() did not release the successor's grant on its way out.
    assert c.check(name, succ.token) == (True, succ.token)
    # The C kit decides the same on the same table.
    assert sinks.c_kit(sink, name, t1) == "stale"
    assert sinks.c_kit(sink, name, succ.token) == "admitted"
    succ.release()
    c.close()
