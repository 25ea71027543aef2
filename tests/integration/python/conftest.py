# SPDX-License-Identifier: MIT
"""Fixtures for the Python client's tests: a real tenured started here on a
free loopback port with its own data directory, ready once /readyz says so.

TN_BIN names the build's bin/ folder (tenured, tn-conformance); TN_SRC the
source tree; TENURE_TEST_PG_URL a PostgreSQL (scripts/with-pg.sh)."""
from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator, Optional

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from tenured import BIN, SRC, Tenured, free_port  # noqa: E402

__all__ = ["BIN", "SRC", "Server", "free_port"]


class Server(Tenured):
    """One tenured process (tests/tools/tenured.py); restart() keeps its
    port and data dir; stop() kills it (-9) unless given a signal."""

    def stop(self, sig: int = signal.SIGKILL,
             timeout: float = 30) -> Optional[int]:
        return super().stop(sig, timeout)


def no_sanitizer_reports(s: Tenured) -> None:
    bad = s.sanitizer_reports()
    assert not bad, "sanitizer report from tenured:\n" + "\n".join(bad[:20])


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    tmp = Path(tempfile.mkdtemp(prefix="tenure-py."))
    s = Server(tmp)
    s.start()
    try:
        yield s
        s.stop()
        no_sanitizer_reports(s)
    finally:
        s.stop()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[Server]:
    """A server of the test's own, for restarts and special flags."""
    s = Server(tmp_path)
    yield s
    s.stop()
    no_sanitizer_reports(s)


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
