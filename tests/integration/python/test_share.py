# SPDX-License-Identifier: MIT
"""tenure.share over a real tenured: workers balance within one shard of
each other, a worker that leaves has its shards taken by the others, one
that joins gets its share from their surplus, and every shard reported
gained is the live grant with the token given.  Skipped while tenured has
no sessions (501)."""
from __future__ import annotations

import threading
import time
from typing import Dict, List

import tenure
from tenure import share
from test_sessions import need_sessions


def test_target_splits_within_one() -> None:
    live = ["c", "a", "b"]
    got = {me: share.target_of(1000, live, me) for me in live}
    assert got == {"a": 334, "b": 333, "c": 333}
    assert share.target_of(10, [], "x") == 10
    assert share.target_of(2, ["a", "b", "c"], "c") == 0


class Owned:
    def __init__(self) -> None:
        self.mu = threading.Lock()
        self.leases: Dict[str, tenure.Lease] = {}
        self.lost: Dict[str, str] = {}  # name -> why, as on_loss said

    def gain(self, leases: Dict[str, tenure.Lease]) -> None:
        with self.mu:
            self.leases.update(leases)

    def loss(self, names: List[str], why: str) -> None:
        with self.mu:
            for n in names:
                self.leases.pop(n, None)
                self.lost[n] = why

    def count(self) -> int:
        with self.mu:
            return len(self.leases)


def test_workers_share_the_shards(url: str, uniq: str) -> None:
    need_sessions(url)
    shards = [f"{uniq}shard:{i:02d}" for i in range(31)]
    group = uniq.strip("/").replace("/", "-")
    c = tenure.Client(url)
    owned: Dict[str, Owned] = {}
    workers: Dict[str, share.Worker] = {}

    def start(name: str) -> None:
        o = Owned()
        owned[name] = o
        workers[name] = share.Worker(c, group, name, shards, ttl_ms=1500,
                                     on_gain=o.gain, on_loss=o.loss).start()

    def balanced(*live: str) -> None:
        counts: List[int] = []
        end = time.monotonic() + 30
        while time.monotonic() < end:
            counts = [owned[w].count() for w in live]
            if sum(counts) == len(shards) and max(counts) - min(counts) <= 1:
                for w in live:
                    with owned[w].mu:
                        for n, lease in owned[w].leases.items():
                            assert lease.is_held(), (w, n)
                            assert c.check(n, lease.token)[0], (w, n)
                return
            time.sleep(0.05)
        raise AssertionError(f"{live} not balanced: {counts}")

    try:
        for w in ("w1", "w2", "w3"):
            start(w)
        balanced("w1", "w2", "w3")
        # a shard of w1 force-released: w1 reports it lost (its round
        # checks its shards against the list), and it is claimed again
        with owned["w1"].mu:
            name, old = sorted(owned["w1"].leases.items())[0]
        c.force_release(name)
        end = time.monotonic() + 30
        while owned["w1"].lost.get(name) != "lost" and time.monotonic() < end:
            time.sleep(0.02)
        assert owned["w1"].lost.get(name) == "lost", "the loss went unseen"
        balanced("w1", "w2", "w3")
        info = c.get(name)
        assert info is not None and info.token > old.token
        workers["w2"].stop()  # leaves: its shards are free
        balanced("w1", "w3")
        start("w4")  # joins late: the others give their surplus back
        balanced("w1", "w3", "w4")
    finally:
        for w in workers.values():
            w.stop()
        c.close()
    with tenure.Client(url) as c2:
        assert c2.list_all(uniq) == []


def test_a_late_report_of_an_old_session_ends_nothing(url: str,
                                                      uniq: str) -> None:
    """A worker that found its session gone joins again with a new one;
    the keepalive's report of the old session's end, arriving after that,
    must not make it drop the new one (it did, and the dropped session,
    still kept, counted as a worker of the group for ever)."""
    need_sessions(url)
    shards = [f"{uniq}shard:{i}" for i in range(10)]
    group = uniq.strip("/").replace("/", "-")
    o = Owned()
    with tenure.Client(url) as c:
        w = share.Worker(c, group, "w1", shards, ttl_ms=1500,
                         on_gain=o.gain, on_loss=o.loss).start()
        try:
            end = time.monotonic() + 20
            while o.count() < 10 and time.monotonic() < end:
                time.sleep(0.02)
            old = w.session
            assert old is not None and o.count() == 10
            old.end()  # gone: the worker joins again with a new session
            while (w.session is old or o.count() < 10) \
                    and time.monotonic() < end:
                time.sleep(0.02)
            new = w.session
            assert new is not None and new is not old and o.count() == 10
            w._session_ended(old, "lost", None)  # the late report
            time.sleep(0.5)
            assert w.session is new and o.count() == 10
            assert [i.session_id for i in c.sessions_all(group + "/")] \
                == [new.session_id]
        finally:
            w.stop()
