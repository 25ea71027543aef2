# SPDX-License-Identifier: MIT
"""Fixtures for the Python client's tests: a real tenured started here on a
free loopback port with its own data directory, ready once /readyz says so.

TN_BIN names the build's bin/ folder (tenured, tn-conformance); TN_SRC the
source tree; TENURE_TEST_PG_URL a PostgreSQL (scripts/with-pg.sh)."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Iterator, List, Optional

import pytest

SRC = Path(os.environ.get("TN_SRC", Path(__file__).resolve().parents[3]))
BIN = Path(os.environ.get("TN_BIN", SRC / "build" / "dev" / "bin"))


def free_port() -> int:
    """A port nothing listens on now, below the ephemeral range (so no
    outgoing connection takes it between this check and the bind)."""
    import random
    for _ in range(200):
        p = random.randint(12000, 31000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                continue
        return p
    raise RuntimeError("no free port")


class Server:
    """One tenured process; restart() keeps its port and data dir."""

    def __init__(self, tmp: Path, args: Optional[List[str]] = None) -> None:
        self.tls_ca: Optional[str] = None  # set for an https:// server
        self.tmp = tmp
        self.data = tmp / "data"
        self.data.mkdir(parents=True, exist_ok=True)
        self.args = list(args or [])
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: Optional[subprocess.Popen[bytes]] = None
        self.log = tmp / "tenured.log"

    def start(self) -> None:
        exe = BIN / "tenured"
        assert exe.exists(), f"missing {exe} (build first)"
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [str(exe), "--listen", f"127.0.0.1:{self.port}",
                 "--data-dir", str(self.data)] + self.args,
                stdout=log, stderr=subprocess.STDOUT)
        ctx = None
        if self.tls_ca is not None:
            import ssl
            self.url = f"https://127.0.0.1:{self.port}"
            ctx = ssl.create_default_context(cafile=self.tls_ca)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("tenured exited: "
                                   + self.log.read_text()[-2000:])
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=2,
                                            context=ctx) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("tenured did not become ready")

    def stop(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    tmp = Path(tempfile.mkdtemp(prefix="tenure-py."))
    s = Server(tmp)
    s.start()
    try:
        yield s
    finally:
        s.stop()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[Server]:
    """A server of the test's own, for restarts and special flags."""
    s = Server(tmp_path)
    yield s
    s.stop()


@pytest.fixture
def url(server: Server) -> str:
    return server.url


@pytest.fixture
def uniq(request: pytest.FixtureRequest) -> str:
    """A lease-name prefix no other test uses."""
    return f"py-{os.getpid()}-{request.node.name[:60]}-{time.monotonic_ns()}/"


@pytest.fixture
def pg_url() -> str:
    u = os.environ.get("TENURE_TEST_PG_URL")
    if not u:
        pytest.skip("TENURE_TEST_PG_URL is not set (run under scripts/with-pg.sh)")
    return u
