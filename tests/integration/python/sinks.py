# SPDX-License-Identifier: MIT
"""Sinks for the fence tests: a fresh SQLite file or a fresh PostgreSQL
database, each with a data table, and the C fence kit driven through
tn-conformance --fence so both kits meet on one mark table."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any, List, Tuple

from conftest import BIN


def new_sqlite(tmp: Path) -> str:
    path = tmp / "sink.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE data (resource TEXT, token INTEGER, step INTEGER)")
    conn.commit()
    conn.close()
    return f"sqlite:{path}"


def new_postgres(pg_url: str) -> str:
    import psycopg2
    db = f"tn_py_{os.getpid()}_{time.monotonic_ns()}"
    admin = psycopg2.connect(pg_url)
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f"CREATE DATABASE {db}")
    admin.close()
    base, _, _ = pg_url.rpartition("/")
    url = f"{base}/{db}"
    conn = psycopg2.connect(url)
    with conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE data (resource text, token bigint, step int)")
    conn.close()
    return url


def connect(sink: str) -> Any:
    if sink.startswith("sqlite:"):
        return sqlite3.connect(sink[7:], timeout=10)
    import psycopg2
    return psycopg2.connect(sink)


def rows(sink: str) -> List[Tuple[str, int, int]]:
    conn = connect(sink)
    try:
        cur = conn.cursor()
        cur.execute("SELECT resource, token, step FROM data ORDER BY token, step")
        return [(r[0], int(r[1]), int(r[2])) for r in cur.fetchall()]
    finally:
        conn.close()


def mark(sink: str, resource: str) -> int:
    import tenure
    conn = connect(sink)
    try:
        if sink.startswith("sqlite:"):
            return tenure.fence.mark_sqlite(conn, resource)
        return tenure.fence.mark_postgres(conn, resource)
    finally:
        conn.close()


def c_kit(sink: str, resource: str, token: int) -> str:
    """One check-and-advance by the C fence kit: "admitted" or "stale"."""
    exe = BIN / "tn-conformance"
    assert exe.exists(), f"missing {exe} (build first)"
    p = subprocess.run([str(exe), "--fence", sink, resource, str(token)],
                       capture_output=True, text=True, timeout=60)
    out = p.stdout.strip()
    assert (p.returncode, out) in ((0, "admitted"), (3, "stale")), \
        (p.returncode, p.stdout, p.stderr)
    return out
