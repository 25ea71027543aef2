# SPDX-License-Identifier: MIT
"""docs/PYTHON.md's complete worker, run as written."""
from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import tenure
from conftest import SRC, Server


def worker_source() -> str:
    doc = (SRC / "docs" / "PYTHON.md").read_text()
    part = doc.split("## A complete worker", 1)[1]
    m = re.search(r"```python\n(.*?)```", part, re.S)
    assert m is not None, "no python block after 'A complete worker'"
    return m.group(1)


def test_the_documented_worker_runs(own_server: Server, tmp_path: Path) -> None:
    own_server.start()
    src = tmp_path / "worker.py"
    src.write_text(worker_source())
    env = dict(os.environ, TENURE_SERVER=own_server.url,
               SINK=str(tmp_path / "sink.db"))
    p = subprocess.run([sys.executable, str(src)], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "done, released"
    rows = sqlite3.connect(tmp_path / "sink.db").execute(
        "SELECT token, step FROM rows ORDER BY step").fetchall()
    assert [s for _, s in rows] == list(range(20))
    assert len({t for t, _ in rows}) == 1
    # While another holds the name it says so and writes nothing.
    other = tenure.Client(own_server.url).acquire("shard:8841", owner="other",
                                                  ttl_ms=10000)
    p = subprocess.run([sys.executable, str(src)], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert p.stdout.strip() == f"held by other (token {other.token})", p.stderr
    other.release()
