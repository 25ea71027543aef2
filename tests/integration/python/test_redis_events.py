# SPDX-License-Identifier: MIT
"""The Python client following the Redis stream ``tenured --publish`` fills,
against a real redis-server and a real tenured: a holder hears of a force
release through it, a reset record (or a jump in the events' ids) makes it
renew every kept lease at once, and the iterator yields every event in id
order, without gaps or repeats."""
from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tenure
from tenure._redis import Resp
from conftest import Server, free_port


def wait_for(cond: Any, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


class Redis:
    def __init__(self, tmp: Path) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.skip("no redis-server (scripts/deps.sh installs it)")
        self.port = free_port()
        self.log = open(tmp / "redis.log", "wb")
        self.proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", str(tmp)],
            stdout=self.log, stderr=subprocess.STDOUT)
        end = time.monotonic() + 10
        while True:
            try:
                r = Resp("127.0.0.1", self.port)
                try:
                    if r.call("PING") == "PONG":
                        return
                finally:
                    r.close()
            except tenure.Error:
                if time.monotonic() > end or self.proc.poll() is not None:
                    raise RuntimeError("redis-server did not start")
                time.sleep(0.05)

    def call(self, *args: str) -> Any:
        r = Resp("127.0.0.1", self.port)
        try:
            return r.call(*args)
        finally:
            r.close()

    def last(self, stream: str) -> Dict[str, str]:
        """The fields of the newest record of stream ({} when empty)."""
        r = self.call("XREVRANGE", stream, "+", "-", "COUNT", "1")
        if not r:
            return {}
        kv = [x.decode() for x in r[0][1]]
        return dict(zip(kv[0::2], kv[1::2]))

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(10)
        self.log.close()


@pytest.fixture(scope="module")
def redis() -> Iterator[Redis]:
    tmp = Path(tempfile.mkdtemp(prefix="tenure-py-redis."))
    r = Redis(tmp)
    try:
        yield r
    finally:
        r.stop()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def pub(redis: Redis, tmp_path: Path, request: pytest.FixtureRequest
        ) -> Iterator[Any]:
    """A tenured of the test's own publishing to a stream of its own."""
    stream = f"tenure:events:{request.node.name[:40]}:{time.monotonic_ns()}"
    ev = f"redis://127.0.0.1:{redis.port}/{stream}"
    s = Server(tmp_path, ["--publish", ev])
    s.start()
    try:
        yield s, stream, ev
    finally:
        s.stop()


def published(redis: Redis, stream: str, typ: str, name: str) -> bool:
    return redis.last(stream).get("type") == typ \
        and redis.last(stream).get("name") == name


def test_holder_hears_of_a_force_release_through_redis(
        pub: Any, redis: Redis, uniq: str) -> None:
    srv, stream, ev = pub
    lat: List[float] = []
    for i in range(3):
        ends: List[str] = []
        done = threading.Event()

        def on_end(_l: tenure.Lease, why: str, _e: Any) -> None:
            ends.append(why)
            done.set()

        with tenure.Client(srv.url, events_url=ev) as c:
            name = f"{uniq}fr{i}"
            lease = c.acquire(name, ttl_ms=30000)  # renew due in 10 s
            c.keep(lease, on_end)
            assert c._ev_stream is not None
            assert c._ev_stream.wait_connected(5)
            t0 = time.monotonic()
            tenure.Client(srv.url).force_release(name)
            assert done.wait(5), "the loss never came through the stream"
            lat.append((time.monotonic() - t0) * 1000)
            assert ends == ["lost"]
            assert c.event_losses == 1
            assert lease.safe_for_ms() == 0
            assert "revoked" in str(lease._end_error)
    print(f"force release -> loss through the Redis stream: "
          f"{', '.join(f'{x:.1f}' for x in lat)} ms")


@pytest.mark.parametrize("how", ["reset-record", "id-jump"])
def test_reset_renews_every_kept_lease_at_once(
        pub: Any, redis: Redis, uniq: str, how: str) -> None:
    """60 s leases are renewed every 20 s; a reset record, or a record
    whose id jumps, must make the follower renew both at once."""
    srv, stream, ev = pub
    log: List[str] = []
    with tenure.Client(srv.url, events_url=ev, log=log.append) as c:
        a = c.acquire(uniq + "a", ttl_ms=60000)
        b = c.acquire(uniq + "b", ttl_ms=60000)
        wait_for(lambda: published(redis, stream, "acquired", uniq + "b"),
                 5, "the acquires on the stream")
        c.keep(a)
        c.keep(b)
        assert c._ev_stream is not None
        assert c._ev_stream.wait_connected(5)
        time.sleep(0.3)
        assert not [m for m in log if m.startswith("renewed")], log
        last = int(redis.last(stream)["id"])
        t0 = time.monotonic()
        if how == "reset-record":
            redis.call("XADD", stream, "*", "id", str(last + 1), "type",
                       "reset", "name", "", "owner_id", "", "token", "0",
                       "floor", "0", "at_ms", "0")
        else:
            redis.call("XADD", stream, "*", "id", str(last + 10), "type",
                       "acquired", "name", uniq + "other", "owner_id", "x",
                       "token", "999", "floor", "999", "at_ms", "0")
        wait_for(lambda: len([m for m in log if m.startswith("renewed")])
                 >= 2, 5, f"renews after the {how}: {log}")
        print(f"{how} -> both leases renewed in "
              f"{(time.monotonic() - t0) * 1000:.1f} ms")
        assert a.is_held() and b.is_held()
        assert c.event_losses == 0
        a.release()
        b.release()


def test_iterator_yields_every_event_in_order(pub: Any, redis: Redis,
                                              uniq: str) -> None:
    srv, stream, ev = pub
    c = tenure.Client(srv.url)
    tenure.Client(srv.url).acquire("not-ours", ttl_ms=60000)  # filtered
    got: List[Dict[str, Any]] = []
    cv = threading.Condition()
    es = c.events(prefix=uniq, source=ev)

    def follow() -> None:
        for e in es:
            with cv:
                got.append(e)
                cv.notify_all()

    t = threading.Thread(target=follow, daemon=True)
    t.start()
    assert es.wait_connected(5)
    n = 150
    tokens = []
    for i in range(n):
        lease = c.acquire(f"{uniq}{i % 10}", ttl_ms=5000)
        tokens.append(lease.token)
        lease.release()
    with cv:
        assert cv.wait_for(lambda: len(got) >= 2 * n, 15), len(got)
    # A record delivered again (the publisher delivers at least once) is
    # not yielded again.
    first = redis.call("XRANGE", stream, "-", "+", "COUNT", "2")[1][1]
    redis.call("XADD", stream, "*", *[x.decode() for x in first])
    c.acquire(uniq + "end", ttl_ms=5000)
    with cv:
        assert cv.wait_for(lambda: len(got) >= 2 * n + 1, 5), len(got)
    es.close()
    t.join(5)
    assert not t.is_alive()
    assert [e["type"] for e in got] == ["acquired", "released"] * n \
        + ["acquired"], [e["type"] for e in got]
    ids = [e["id"] for e in got]
    assert ids == list(range(ids[0], ids[0] + 2 * n + 1)), ids
    assert [e["token"] for e in got[0:2 * n:2]] == tokens
    assert all(e["name"].startswith(uniq) for e in got)
    assert got[0]["owner_id"] == c.owner_id
    assert isinstance(got[0]["floor"], int)
    # Resuming from an id reads on after it, as Last-Event-ID does.
    es2 = c.events(prefix=uniq, source=ev, last_event_id=ids[-3])
    it = iter(es2)
    assert [next(it)["id"], next(it)["id"]] == ids[-2:]
    es2.close()


@pytest.mark.parametrize("reply", [
    b"$99999999\r\n" + b"x" * 70000,         # a bulk string beyond the cap
    b"*99999999\r\n" + b":1\r\n" * 20000,    # an array beyond the cap
    b"*1\r\n" * 50 + b":1\r\n",              # nested beyond the cap
    b"+" + b"x" * 70000,                     # a line without an end
    b"?what\r\n",                            # not RESP
], ids=["bulk", "array", "depth", "line", "type"])
def test_hostile_replies_drop_the_connection(reply: bytes) -> None:
    """Whatever a fake Redis answers, the reader refuses it after reading at
    most a little beyond its caps, instead of buffering or recursing."""
    import socket
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    sent: List[int] = []

    def serve() -> None:
        conn, _ = srv.accept()
        conn.recv(4096)
        try:
            conn.sendall(reply)
            sent.append(len(reply))
            conn.recv(4096)  # until the reader hangs up
        except OSError:
            pass
        conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    es = tenure.RedisEventStream(f"redis://127.0.0.1:{port}/s",
                                 reconnect=False)
    t0 = time.monotonic()
    with pytest.raises(tenure.ProtocolError):
        next(iter(es))
    assert time.monotonic() - t0 < 2.5  # refused, not timed out
    t.join(5)
    srv.close()


def test_odd_records_are_skipped(redis: Redis) -> None:
    """Records without a usable id or type (a stray writer on the stream)
    are passed over; the reader goes on with the next good one."""
    stream = f"odd:{time.monotonic_ns()}"
    es = tenure.RedisEventStream(f"redis://127.0.0.1:{redis.port}/{stream}",
                                 last_event_id=0)
    for fields in (["id", "\u00b2", "type", "acquired", "name", "a"],
                   ["id", "9" * 40, "type", "acquired", "name", "a"],
                   ["type", "acquired", "name", "a"],
                   ["id", "1"],
                   ["id", "1", "type", "acquired", "name", "a", "owner_id",
                    "o", "token", "x", "floor", "1"]):
        redis.call("XADD", stream, "*", *fields)
    ev = next(iter(es))
    es.close()
    assert (ev["id"], ev["type"], ev["name"], ev["token"]) \
        == (1, "acquired", "a", None)
