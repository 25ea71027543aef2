# SPDX-License-Identifier: MIT
"""The Python client against a real tenured: safe time, keepalive, hold(),
events (resume after a cut, reset after a restart), the event follower's
loss and reset rules, bearer auth, several URLs, timeouts."""
from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

import tenure
from conftest import Server
from proxy import Proxy


def wait_for(cond: Any, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def test_exception_hierarchy() -> None:
    assert issubclass(tenure.Held, tenure.Error)
    assert issubclass(tenure.Lost, tenure.Error)
    assert issubclass(tenure.Expired, tenure.Lost)
    assert issubclass(tenure.ConnectError, tenure.TransportError)
    assert issubclass(tenure.Timeout, tenure.TransportError)
    assert issubclass(tenure.TransportError, tenure.Error)
    assert issubclass(tenure.fence.FenceError, tenure.Error)


def test_acquire_held_check(url: str, uniq: str) -> None:
    with tenure.Client(url) as c:
        lease = c.acquire(uniq + "a", owner="w1", ttl_ms=5000)
        assert (lease.name, lease.owner) == (uniq + "a", "w1")
        assert len(lease.secret) >= 32 and lease.token > 0
        assert lease.secret not in repr(lease)
        with pytest.raises(tenure.Held) as ei:
            c.acquire(uniq + "a", owner="w2", ttl_ms=5000)
        assert ei.value.holder is not None
        assert ei.value.holder.owner_id == "w1"
        assert ei.value.holder.token == lease.token
        assert c.check(uniq + "a", lease.token) == (True, lease.token)
        lease.release()
        assert c.check(uniq + "a", lease.token) == (False, lease.token)
        with pytest.raises(tenure.BadRequest):
            c.acquire(uniq + "a", owner="w1", ttl_ms=1)  # below the minimum


def test_safe_time_counts_from_the_sending(server: Server, uniq: str) -> None:
    """Every answer comes 400 ms late: the safe time must already be 400 ms
    shorter when acquire returns (counted from the receipt it would not)."""
    px = Proxy(server.port, delay_s=0.4)
    try:
        with tenure.Client(px.url) as c:
            lease = c.acquire(uniq + "a", owner="w1", ttl_ms=4000)
            safe = lease.safe_for_ms()
            # ttl 4000 - margin 400 - delay 400 = 3200 at most
            assert 0 < safe <= 3200, safe
            lease.renew()
            assert 0 < lease.safe_for_ms() <= 3200
            lease.release()
    finally:
        px.close()


def test_safety_margin_option(url: str, uniq: str) -> None:
    with tenure.Client(url, safety_margin_ms=1500) as c:
        lease = c.acquire(uniq + "a", ttl_ms=5000)
        assert 0 < lease.safe_for_ms() <= 3500
        lease.release()


def test_safe_time_runs_out_and_never_comes_back(url: str, uniq: str) -> None:
    with tenure.Client(url) as c:
        lease = c.acquire(uniq + "a", ttl_ms=300)
        time.sleep(0.35)
        assert lease.safe_for_ms() == 0
        assert lease.state == "expired"
        with pytest.raises(tenure.Expired):
            lease.renew()
        with pytest.raises(tenure.Expired):
            lease.ensure_held()


def test_hold_keeps_alive_past_the_ttl_and_releases(url: str, uniq: str) -> None:
    with tenure.Client(url) as c:
        with c.hold(uniq + "a", owner="w1", ttl_ms=1500) as lease:
            for _ in range(35):  # 3.5 s: more than two TTLs
                assert lease.is_held()
                time.sleep(0.1)
            assert c.check(uniq + "a", lease.token)[0]
        assert lease.ended == tenure.END_RELEASED
        assert c.get(uniq + "a") is None


def test_hold_raises_lost_at_exit_when_revoked(url: str, uniq: str) -> None:
    ended: List[str] = []
    with tenure.Client(url, log=ended.append) as c:
        with pytest.raises(tenure.Lost):
            with c.hold(uniq + "a", owner="w1", ttl_ms=900) as lease:
                c.force_release(uniq + "a")
                # the next renew (a third of the TTL) learns it
                wait_for(lambda: not lease.is_held(), 3, "the loss")
                assert lease.safe_for_ms() == 0
                with pytest.raises(tenure.Lost):
                    lease.ensure_held()
        assert lease.state == "lost"
        assert any("ended: lost" in m for m in ended), ended


def test_hold_lets_the_body_exception_through(url: str, uniq: str) -> None:
    with tenure.Client(url) as c:
        with pytest.raises(KeyError):
            with c.hold(uniq + "a", ttl_ms=2000):
                raise KeyError("body")
        assert c.get(uniq + "a") is None  # released all the same


def test_hold_of_a_held_name_raises_held(url: str, uniq: str) -> None:
    with tenure.Client(url) as c:
        first = c.acquire(uniq + "a", owner="w1", ttl_ms=5000)
        with pytest.raises(tenure.Held):
            with c.hold(uniq + "a", owner="w2", ttl_ms=5000):
                pytest.fail("the body ran without the lease")
        first.release()


def test_keep_reports_exactly_once(url: str, uniq: str) -> None:
    ends: List[str] = []
    with tenure.Client(url) as c:
        a = c.acquire(uniq + "a", ttl_ms=1500)
        b = c.acquire(uniq + "b", ttl_ms=1500)
        c.keep(a, lambda _l, why, _e: ends.append("a:" + why))
        c.keep(b, lambda _l, why, _e: ends.append("b:" + why))
        time.sleep(0.7)  # a renew each
        assert a.is_held() and b.is_held()
        a.release()
        c.force_release(uniq + "b")
        wait_for(lambda: len(ends) == 2, 3, "two ends")
        time.sleep(0.3)
    assert sorted(ends) == ["a:released", "b:lost"]


def test_events_resume_after_a_cut(server: Server, uniq: str) -> None:
    """Events that happen while the stream is cut and reconnection is
    refused arrive after it, once each and in order (Last-Event-ID)."""
    px = Proxy(server.port)
    got: List[Dict[str, Any]] = []
    cv = threading.Condition()
    try:
        with tenure.Client(server.url) as w, tenure.Client(px.url) as r:
            stream = r.events(prefix=uniq)

            def read() -> None:
                for ev in stream:
                    with cv:
                        got.append(ev)
                        cv.notify_all()

            t = threading.Thread(target=read, daemon=True)
            t.start()
            assert stream.wait_connected(10)
            l1 = w.acquire(uniq + "a", owner="w1", ttl_ms=5000)
            with cv:
                assert cv.wait_for(lambda: len(got) == 1, 10)
            px.refuse = True
            px.cut_all()
            l1.release()
            l2 = w.acquire(uniq + "a", owner="w2", ttl_ms=5000)
            l2.release()
            time.sleep(0.3)  # a few refused reconnections
            px.refuse = False
            with cv:
                assert cv.wait_for(lambda: len(got) >= 4, 10), got
            stream.close()
            t.join(5)
    finally:
        px.close()
    assert [(e["type"], e["owner_id"], e["token"]) for e in got] == [
        ("acquired", "w1", l1.token), ("released", "w1", l1.token),
        ("acquired", "w2", l2.token), ("released", "w2", l2.token)]
    ids = [e["id"] for e in got]
    assert ids == sorted(set(ids))
    assert all(e["name"] == uniq + "a" and e["floor"] == e["token"]
               for e in got)
    assert stream.connects >= 2


def test_events_cap_one_event_data(uniq: str) -> None:
    """A server sending an event of endless data lines cannot make the
    client hold it: past 64 KiB of data the stream is cut (here, without
    reconnection, it ends) and what follows is never read.  Without the
    cap the oversized event would be dropped as not JSON and the next one
    yielded."""
    import http.server

    valid = json.dumps({"type": "acquired", "name": uniq + "a",
                        "owner_id": "w", "token": 1, "floor": 1})
    body = (": subscribed\n\n" +
            ("data: " + "y" * 1000 + "\n") * 200 + "\n" +
            "id: 1\ndata: " + valid + "\n\n").encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        with tenure.Client(f"http://127.0.0.1:{srv.server_address[1]}") as c:
            got = list(c.events(prefix=uniq, reconnect=False))
    finally:
        srv.shutdown()
        srv.server_close()
    assert got == []


def test_events_reset_after_a_restart(own_server: Server, uniq: str) -> None:
    """A server restart starts ids afresh: the resumed stream yields a
    reset (state must be read again), then goes on with new events."""
    own_server.start()
    got: List[Dict[str, Any]] = []
    cv = threading.Condition()
    with tenure.Client(own_server.url) as c:
        stream = c.events(prefix=uniq)

        def read() -> None:
            for ev in stream:
                with cv:
                    got.append(ev)
                    cv.notify_all()

        t = threading.Thread(target=read, daemon=True)
        t.start()
        assert stream.wait_connected(10)
        c.acquire(uniq + "a", ttl_ms=60000)
        with cv:
            assert cv.wait_for(lambda: len(got) == 1, 10)
        own_server.restart()
        with cv:
            assert cv.wait_for(lambda: len(got) >= 2, 15), got
        assert got[1]["type"] == "reset"
        assert got[1]["name"] is None and got[1]["token"] is None
        c.acquire(uniq + "b", ttl_ms=60000)
        with cv:
            assert cv.wait_for(lambda: len(got) >= 3, 10), got
        assert (got[2]["type"], got[2]["name"]) == ("acquired", uniq + "b")
        stream.close()
        t.join(5)


def test_watch_events_reports_a_loss_before_the_renew(url: str,
                                                      uniq: str) -> None:
    ends: List[str] = []
    with tenure.Client(url, watch_events=True) as c:
        lease = c.acquire(uniq + "a", ttl_ms=30000)  # renew due in 10 s
        c.keep(lease, lambda _l, why, _e: ends.append(why))
        time.sleep(0.5)  # the follower subscribes
        t0 = time.monotonic()
        tenure.Client(url).force_release(uniq + "a")
        wait_for(lambda: ends == ["lost"], 5, "the loss report")
        assert time.monotonic() - t0 < 5
        assert c.event_losses == 1
        assert lease.safe_for_ms() == 0


def test_watch_events_reset_renews_every_kept_lease_at_once(
        own_server: Server, uniq: str) -> None:
    """Leases with a 60 s TTL are renewed every 20 s; after a server
    restart the follower gets a reset and must renew both at once."""
    own_server.start()
    log: List[str] = []
    with tenure.Client(own_server.url, watch_events=True,
                       log=log.append) as c:
        a = c.acquire(uniq + "a", ttl_ms=60000)
        b = c.acquire(uniq + "b", ttl_ms=60000)
        c.keep(a)
        c.keep(b)
        time.sleep(0.5)  # the follower subscribes
        assert not [m for m in log if m.startswith("renewed")]
        own_server.restart()
        wait_for(lambda: len([m for m in log if m.startswith("renewed")]) >= 2,
                 10, f"renews after the reset: {log}")
        assert a.is_held() and b.is_held()
        a.release()
        b.release()


def test_bearer_auth(own_server: Server, uniq: str, tmp_path: Path) -> None:
    tok = "py-client-test-token-0123456789"
    auth = {"principals": [{"name": "py", "admin": True,
                            "token_sha256": hashlib.sha256(tok.encode())
                            .hexdigest()}]}
    f = tmp_path / "auth.json"
    f.write_text(json.dumps(auth))
    f.chmod(0o600)
    own_server.args = ["--auth-file", str(f)]
    own_server.start()
    with pytest.raises(tenure.Unauthorized):
        tenure.Client(own_server.url).acquire(uniq + "a", ttl_ms=5000)
    with pytest.raises(tenure.Unauthorized):
        tenure.Client(own_server.url, bearer="wrong").get(uniq + "a")
    with tenure.Client(own_server.url, bearer=tok) as c:
        with c.hold(uniq + "a", ttl_ms=2000) as lease:
            time.sleep(0.8)  # a renew, with the bearer
            assert lease.is_held()
        stream = c.events(prefix=uniq)
        ok = threading.Event()
        t = threading.Thread(target=lambda: [ok.set() for _ in stream],
                             daemon=True)
        t.start()
        assert stream.wait_connected(10)
        stream.close()


def test_several_urls_move_on_when_nothing_listens(server: Server,
                                                   uniq: str) -> None:
    from conftest import free_port
    dead = f"http://127.0.0.1:{free_port()}"
    with tenure.Client([dead, server.url]) as c:
        lease = c.acquire(uniq + "a", ttl_ms=2000)
        lease.release()
    with pytest.raises(tenure.ConnectError):
        tenure.Client(dead).get(uniq + "a")


def test_a_request_without_answer_is_a_timeout(server: Server,
                                               uniq: str) -> None:
    px = Proxy(server.port)
    px.blackhole = True
    try:
        c = tenure.Client(px.url, timeout=0.5)
        t0 = time.monotonic()
        with pytest.raises(tenure.Timeout):
            c.acquire(uniq + "a", ttl_ms=2000)
        assert time.monotonic() - t0 < 3
    finally:
        px.close()


def test_keepalive_gives_up_when_the_safe_time_runs_out(server: Server,
                                                        uniq: str) -> None:
    """A server that stops answering: the keepalive reports expired no
    later than the safe time, whatever the hung renews do."""
    px = Proxy(server.port)
    ends: List[str] = []
    try:
        with tenure.Client(px.url, timeout=30) as c:
            lease = c.acquire(uniq + "a", ttl_ms=900)
            c.keep(lease, lambda _l, why, _e: ends.append(why))
            px.blackhole = True
            px.cut_all()
            t0 = time.monotonic()
            wait_for(lambda: ends == ["expired"], 5, "the expiry report")
            assert time.monotonic() - t0 < 2.5  # safe time <= 810 ms
            assert lease.safe_for_ms() == 0
    finally:
        px.close()


def test_get_and_list(url: str, uniq: str) -> None:
    with tenure.Client(url) as c:
        ls = [c.acquire(f"{uniq}{i}", owner="w", ttl_ms=5000) for i in range(3)]
        items, nxt = c.list(prefix=uniq, limit=2)
        assert [i.name for i in items] == [uniq + "0", uniq + "1"]
        assert nxt == uniq + "1"
        items2, nxt2 = c.list(prefix=uniq, after=nxt, limit=2)
        assert [i.name for i in items2] == [uniq + "2"] and nxt2 is None
        info = c.get(uniq + "0")
        assert info is not None and info.token == ls[0].token
        for lease in ls:
            lease.release()




def test_close_aborts_a_hung_renew(server: Server, uniq: str) -> None:
    px = Proxy(server.port)
    ends: List[str] = []
    log: List[str] = []
    try:
        c = tenure.Client(px.url, timeout=30, log=log.append)
        lease = c.acquire(uniq + "a", ttl_ms=6000)
        c.keep(lease, lambda _l, why, _e: ends.append(why))
        px.blackhole = True
        px.cut_all()  # the keepalive's kept-alive connection too
        time.sleep(2.3)  # the renew (due at 2 s) would hang until 5.4 s
        assert c._keepalive.in_flight() == 1
        t0 = time.monotonic()
        c.close()
        assert time.monotonic() - t0 < 1.0
        assert ends == ["stopped"], (ends, log)
    finally:
        px.close()


def test_hold_body_may_release_early(url: str, uniq: str) -> None:
    with tenure.Client(url) as c:
        with c.hold(uniq + "a", ttl_ms=2000) as lease:
            lease.release()
            assert not lease.is_held()
        assert lease.ended == tenure.END_RELEASED
        assert c.get(uniq + "a") is None
