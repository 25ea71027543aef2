# SPDX-License-Identifier: MIT
"""Sessions through the Python client against a real tenured: one renew
keeps every lease, a claim answers per name, batch and single releases,
the safe time of every lease is the session's (counted from the sending),
the loss of the session is reported once for every lease, hold_session.
Skipped, with the server's answer, while tenured has no sessions (501)."""
from __future__ import annotations

import json
import signal
import threading
import time
import urllib.request
from typing import Any, Dict, List, Tuple

import pytest

import tenure
from conftest import Server
from proxy import Proxy


def need_sessions(url: str) -> None:
    """Skip unless the server at url has sessions."""
    try:
        with tenure.Client(url) as c:
            s = c.open_session(ttl_ms=1000, keep=False)
            s.end()
    except tenure.Error as e:
        if e.status in (404, 501):
            pytest.skip(f"the server has no sessions yet: {e.status} {e}")
        raise


@pytest.fixture
def surl(url: str) -> str:
    need_sessions(url)
    return url


def wait_for(cond: Any, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def force_end(url: str, sid: str) -> None:
    req = urllib.request.Request(f"{url}/v1/sessions/{sid}?force=true",
                                 method="DELETE")
    with urllib.request.urlopen(req, timeout=5) as r:
        assert r.status == 204


class Ends:
    """on_end / on_lease_end recorder."""

    def __init__(self) -> None:
        self.mu = threading.Lock()
        self.got: List[Tuple[str, str]] = []

    def __call__(self, item: Any, why: str, _err: Any) -> None:
        with self.mu:
            self.got.append((getattr(item, "name", "session"), why))

    def list(self) -> List[Tuple[str, str]]:
        with self.mu:
            return list(self.got)


def test_one_renew_keeps_every_lease(surl: str, uniq: str) -> None:
    log: List[str] = []
    with tenure.Client(surl, log=log.append) as c:
        s = c.open_session(owner_id="w1", ttl_ms=1500)
        res = s.claim([uniq + "a", uniq + "b", uniq + "c"])
        assert sorted(res.granted) == [uniq + "a", uniq + "b", uniq + "c"]
        assert not res.held and not res.lock_delay
        time.sleep(3.5)  # past two TTLs: only the session was renewed
        assert [m for m in log if m.startswith("renewed session")]
        assert not [m for m in log if m.startswith("renewed lease")]
        for name, lease in res.granted.items():
            assert lease.is_held() and lease.session is s
            assert lease.owner == "w1"
            assert c.check(name, lease.token)[0]
        s.end()
        for name in res.granted:
            assert c.get(name) is None
        assert not any(x.is_held() for x in res.granted.values())


def test_claim_answers_per_name(surl: str, uniq: str) -> None:
    with tenure.Client(surl) as c:
        other = c.acquire(uniq + "held", owner="someone", ttl_ms=30000)
        s = c.open_session(ttl_ms=5000)
        res = s.claim([uniq + "free", uniq + "held"])
        assert list(res.granted) == [uniq + "free"]
        h = res.held[uniq + "held"]
        assert (h.owner_id, h.token) == ("someone", other.token)
        # the same claim again answers the same grant (idempotent)
        again = s.claim([uniq + "free"])
        assert again.granted[uniq + "free"] is res.granted[uniq + "free"]
        with pytest.raises(ValueError):
            s.claim([uniq + "x", uniq + "x"])
        s.end()
        other.release()


def test_acquire_under_a_session_and_release_alone(surl: str,
                                                   uniq: str) -> None:
    ends = Ends()
    with tenure.Client(surl) as c:
        s = c.open_session(ttl_ms=3000, on_lease_end=ends)
        a = s.acquire(uniq + "a")
        b = s.acquire(uniq + "b")
        assert a.session is s and a.ttl_ms == 3000
        with pytest.raises(tenure.Held):
            c.acquire(uniq + "a", owner="other", ttl_ms=1000)
        a.release()
        wait_for(lambda: ends.list() == [(uniq + "a", "released")], 5,
                 "the release reported")
        assert c.get(uniq + "a") is None and b.is_held()
        assert list(s.leases()) == [uniq + "b"]
        rel, lost = s.release([b])
        assert (rel, lost) == ([b], [])
        wait_for(lambda: len(ends.list()) == 2, 5, "the batch release")
        assert s.is_held()  # the session goes on
        s.end()
    assert sorted(ends.list()) == [(uniq + "a", "released"),
                                   (uniq + "b", "released")]


def test_batch_release_says_which_were_lost(surl: str, uniq: str) -> None:
    with tenure.Client(surl) as c:
        s = c.open_session(ttl_ms=5000)
        res = s.claim([uniq + "a", uniq + "b"])
        a, b = res.granted[uniq + "a"], res.granted[uniq + "b"]
        c.force_release(uniq + "b")
        rel, lost = s.release([a, b])
        assert (rel, lost) == ([a], [b])
        assert not a.is_held() and not b.is_held()
        s.end()


def test_safe_time_is_the_sessions_from_the_sending(server: Server,
                                                    uniq: str) -> None:
    """Every answer comes 400 ms late: the session's safe time, and every
    lease's, is at most ttl - margin - 400 ms when the answer arrives."""
    need_sessions(server.url)
    px = Proxy(server.port, delay_s=0.4)
    try:
        with tenure.Client(px.url) as c:
            s = c.open_session(ttl_ms=4000, keep=False)
            assert 0 < s.safe_for_ms() <= 3200
            lease = s.acquire(uniq + "a")
            assert abs(lease.safe_for_ms() - s.safe_for_ms()) <= 5
            s.renew()
            assert 0 < lease.safe_for_ms() <= 3200
            s.end()
            assert lease.safe_for_ms() == 0 and lease.state == "released"
    finally:
        px.close()


def test_loss_is_reported_for_every_lease(surl: str, uniq: str) -> None:
    ends = Ends()
    s_end: List[str] = []
    with tenure.Client(surl) as c:
        s = c.open_session(ttl_ms=900, on_lease_end=ends,
                           on_end=lambda _s, why, _e: s_end.append(why))
        res = s.claim([f"{uniq}{i}" for i in range(5)])
        force_end(surl, s.session_id)
        wait_for(lambda: s_end == ["lost"], 5, "the session's loss")
        wait_for(lambda: len(ends.list()) == 5, 5, "every lease's loss")
        time.sleep(0.3)  # nothing more comes
        assert sorted(ends.list()) == sorted((n, "lost") for n in res.granted)
        assert s_end == ["lost"]
        for lease in res.granted.values():
            assert lease.state == "lost"
            with pytest.raises(tenure.Lost):
                lease.ensure_held()
        with pytest.raises(tenure.Lost):
            s.claim([uniq + "more"])


def test_a_frozen_server_lets_the_session_expire(own_server: Server,
                                                 uniq: str) -> None:
    own_server.start()
    need_sessions(own_server.url)
    ends = Ends()
    assert own_server.proc is not None
    with tenure.Client(own_server.url, timeout=30) as c:
        s = c.open_session(ttl_ms=900, on_lease_end=ends)
        lease = s.acquire(uniq + "a")
        own_server.proc.send_signal(signal.SIGSTOP)
        try:
            wait_for(lambda: ends.list() == [(uniq + "a", "expired")], 5,
                     "the expiry")
            assert s.state == "expired" and lease.safe_for_ms() == 0
        finally:
            own_server.proc.send_signal(signal.SIGCONT)


def test_watch_events_hears_the_session_end(surl: str, uniq: str) -> None:
    s_end: List[str] = []
    with tenure.Client(surl, watch_events=True) as c:
        s = c.open_session(ttl_ms=30000,
                           on_end=lambda _s, why, _e: s_end.append(why))
        s.acquire(uniq + "a")
        assert c._ev_stream is not None and c._ev_stream.wait_connected(10)
        force_end(surl, s.session_id)
        wait_for(lambda: s_end == ["lost"], 5, "the loss, from the event")
        assert c.event_losses >= 1


def test_session_events_and_list(surl: str, uniq: str) -> None:
    got: List[Dict[str, Any]] = []
    with tenure.Client(surl) as c:
        stream = c.events(prefix=uniq)
        t = threading.Thread(target=lambda: [got.append(e) for e in stream],
                             daemon=True)
        t.start()
        assert stream.wait_connected(10)
        s = c.open_session(owner_id=uniq + "w1", ttl_ms=5000)
        infos = c.sessions_all(prefix=uniq)
        assert [(i.session_id, i.owner_id) for i in infos] == \
            [(s.session_id, uniq + "w1")]
        s.end()
        wait_for(lambda: [e["type"] for e in got if e.get("session_id")
                          == s.session_id] == ["session_opened",
                                               "session_ended"],
                 5, f"the session's events: {json.dumps(got)}")
        ended = [e for e in got if e["type"] == "session_ended"][0]
        assert ended["reason"] == "released"
        stream.close()
        assert c.sessions_all(prefix=uniq) == []


def test_hold_session(surl: str, uniq: str) -> None:
    with tenure.Client(surl) as c:
        other = c.acquire(uniq + "b", owner="other", ttl_ms=30000)
        h = c.hold_session([uniq + "a", uniq + "b"], ttl_ms=1500)
        with h as s:
            assert list(h.claim.granted) == [uniq + "a"]
            assert uniq + "b" in h.claim.held
            time.sleep(2)
            assert s.is_held()
        assert c.get(uniq + "a") is None  # ended at exit
        with pytest.raises(tenure.Held):
            with c.hold_session([uniq + "b"], ttl_ms=1500, require_all=True):
                pytest.fail("the body ran without every name")
        with pytest.raises(tenure.Lost):
            with c.hold_session([uniq + "c"], ttl_ms=900) as s:
                force_end(surl, s.session_id)
                wait_for(lambda: not s.is_held(), 5, "the loss")
        with pytest.raises(KeyError):
            with c.hold_session([uniq + "d"], ttl_ms=1500):
                raise KeyError("body")
        assert c.get(uniq + "d") is None
        other.release()
