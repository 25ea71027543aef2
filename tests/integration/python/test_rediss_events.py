# SPDX-License-Identifier: MIT
"""The Python client following the Redis stream over TLS (``rediss://``):
a real redis-server that speaks only TLS and requires client certificates
(made here with openssl), fed by a real ``tenured --publish rediss://``.
A holder hears of a force release through it; a server certificate from
another CA is refused; a bad TLS key in the URL is refused at once."""
from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tenure
from tenure._redis import RedisEventStream, Resp
from conftest import Server, free_port
from test_tls import mkcert


@pytest.fixture
def rediss(tmp_path: Path) -> Iterator[Dict[str, Any]]:
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.skip("no redis-server (scripts/deps.sh installs it)")
    d = tmp_path / "pki"
    d.mkdir()
    mkcert(d, "ca", "tenure test CA", "self")
    mkcert(d, "other", "another CA", "self")
    mkcert(d, "server", "127.0.0.1", "ca", "IP:127.0.0.1")
    mkcert(d, "client", "follower", "ca")
    port = free_port()
    log = open(tmp_path / "redis.log", "wb")
    proc = subprocess.Popen(
        [exe, "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1",
         "--save", "", "--appendonly", "no", "--dir", str(tmp_path),
         "--tls-cert-file", str(d / "server.pem"),
         "--tls-key-file", str(d / "server.key"),
         "--tls-ca-cert-file", str(d / "ca.pem"),
         "--tls-auth-clients", "yes"], stdout=log, stderr=subprocess.STDOUT)
    tls = {"tls_ca": str(d / "ca.pem"), "tls_cert": str(d / "client.pem"),
           "tls_key": str(d / "client.key")}
    end = time.monotonic() + 10
    while True:
        try:
            Resp("127.0.0.1", port, tls=tls).close()
            break
        except tenure.Error:
            if time.monotonic() > end or proc.poll() is not None:
                raise RuntimeError("redis-server (TLS) did not start")
            time.sleep(0.05)
    stream = f"tenure:events:{time.monotonic_ns()}"
    base = f"rediss://127.0.0.1:{port}/{stream}"
    query = "&".join(f"{k}={v}" for k, v in tls.items())
    srv = Server(tmp_path, ["--publish", base] + [
        x for k, v in tls.items()
        for x in ("--publish-opt", f"redis.{k}={v}")])
    srv.start()
    try:
        yield {"srv": srv, "url": f"{base}?{query}", "base": base,
               "pki": d}
    finally:
        srv.stop()
        proc.kill()
        proc.wait(10)
        log.close()


def test_holder_hears_of_a_force_release_over_tls(
        rediss: Dict[str, Any], uniq: str) -> None:
    srv = rediss["srv"]
    ends: List[str] = []
    done = threading.Event()

    def on_end(_l: tenure.Lease, why: str, _e: Any) -> None:
        ends.append(why)
        done.set()

    with tenure.Client(srv.url, events_url=rediss["url"]) as c:
        lease = c.acquire(uniq + "fr", ttl_ms=30000)  # renew due in 10 s
        c.keep(lease, on_end)
        assert c._ev_stream is not None
        assert c._ev_stream.wait_connected(10), "no TLS connection to Redis"
        tenure.Client(srv.url).force_release(uniq + "fr")
        assert done.wait(5), "the loss never came through the TLS stream"
        assert ends == ["lost"]
        assert c.event_losses == 1


def test_a_certificate_from_another_ca_is_refused(
        rediss: Dict[str, Any]) -> None:
    d = rediss["pki"]
    url = (f"{rediss['base']}?tls_ca={d / 'other.pem'}"
           f"&tls_cert={d / 'client.pem'}&tls_key={d / 'client.key'}")
    s = RedisEventStream(url, reconnect=False)
    errors: List[BaseException] = []

    def first() -> None:
        try:
            next(iter(s), None)
        except tenure.Error as e:
            errors.append(e)

    t = threading.Thread(target=first, daemon=True)
    t.start()
    t.join(10)
    connected = s.connected.is_set()
    s.close()
    assert not connected, "connected to a server of another CA"
    assert errors and "CERTIFICATE_VERIFY" in str(errors[0]), errors
    # tls_verify=0: the same connection succeeds, unchecked.
    s = RedisEventStream(url + "&tls_verify=0", reconnect=False)
    it = iter(s)
    t = threading.Thread(target=lambda: next(it, None), daemon=True)
    t.start()
    assert s.wait_connected(10)
    s.close()


@pytest.mark.parametrize("query", ["tls_bogus=1", "tls_verify=maybe"])
def test_bad_tls_options_are_refused_at_once(
        rediss: Dict[str, Any], query: str) -> None:
    with pytest.raises(ValueError):
        tenure.Client(rediss["srv"].url,
                      events_url=f"{rediss['base']}?{query}")
    with pytest.raises(ValueError):  # TLS keys need rediss://
        tenure.Client(rediss["srv"].url, events_url=rediss["url"].replace(
            "rediss://", "redis://"))
