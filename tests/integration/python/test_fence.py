# SPDX-License-Identifier: MIT
"""The fence helpers: the rule (equal admitted, lower rejected, the mark
never moves down), the transaction they must run in, bad arguments, and one
mark table shared with the C kit in both directions, in SQLite and in
PostgreSQL."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

import sinks
import tenure
from tenure import fence


@pytest.fixture(params=["sqlite", "postgres"])
def sink(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return sinks.new_sqlite(tmp_path)
    return sinks.new_postgres(request.getfixturevalue("pg_url"))


def admit(sink: str, resource: str, token: int, *, commit: bool = True) -> bool:
    conn = sinks.connect(sink)
    try:
        if sink.startswith("sqlite:"):
            ok = fence.admit_sqlite(conn, resource, token)
        else:
            ok = fence.admit_postgres(conn, resource, token)
        if commit:
            conn.commit()
        else:
            conn.rollback()
        return ok
    finally:
        conn.close()


def test_the_rule(sink: str) -> None:
    assert admit(sink, "r", 5)
    assert sinks.mark(sink, "r") == 5
    assert admit(sink, "r", 5)  # the same holder's writes
    assert not admit(sink, "r", 4)  # a zombie's
    assert sinks.mark(sink, "r") == 5
    assert admit(sink, "r", 7)
    assert not admit(sink, "r", 6)
    assert sinks.mark(sink, "r") == 7
    assert admit(sink, "other", 1)  # marks are per resource
    assert admit(sink, "r", 1 << 53)
    assert not admit(sink, "r", (1 << 53) - 1)


def test_a_rolled_back_decision_leaves_no_mark(sink: str) -> None:
    assert admit(sink, "r", 3)
    assert admit(sink, "r", 9, commit=False)
    assert sinks.mark(sink, "r") == 3
    assert admit(sink, "r", 4)


def test_bad_arguments_are_refused(sink: str) -> None:
    conn = sinks.connect(sink)
    f = fence.admit_sqlite if sink.startswith("sqlite:") else fence.admit_postgres
    try:
        for res, tok in (("", 1), ("x" * 257, 1), ("r", -1), ("r", (1 << 53) + 1),
                         ("r", True), ("r", "5"), ("a\0b", 1)):
            with pytest.raises(fence.FenceError):
                f(conn, res, tok)  # type: ignore[arg-type]
    finally:
        conn.close()


def test_sqlite_refuses_to_decide_outside_a_transaction(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    with pytest.raises(fence.FenceError, match="outside a transaction"):
        fence.admit_sqlite(conn, "r", 1)
    conn.execute("BEGIN")
    assert fence.admit_sqlite(conn, "r", 1)
    conn.execute("COMMIT")
    assert fence.mark_sqlite(conn, "r") == 1


def test_sqlite_default_mode_joins_the_callers_transaction(tmp_path: Path) -> None:
    """Python's default isolation: the upsert opens the transaction that the
    caller's write joins and its commit (or rollback) ends."""
    conn = sqlite3.connect(tmp_path / "s.db")
    conn.execute("CREATE TABLE data (v INTEGER)")
    assert fence.admit_sqlite(conn, "r", 2)
    assert conn.in_transaction
    conn.execute("INSERT INTO data VALUES (2)")
    conn.rollback()
    assert fence.mark_sqlite(conn, "r") == 0
    assert conn.execute("SELECT count(*) FROM data").fetchone()[0] == 0


def test_postgres_refuses_to_decide_outside_a_transaction(pg_url: str) -> None:
    import psycopg2
    conn: Any = psycopg2.connect(sinks.new_postgres(pg_url))
    conn.autocommit = True
    try:
        with pytest.raises(fence.FenceError, match="outside a transaction"):
            fence.admit_postgres(conn, "r", 1)
        with conn.cursor() as cur:
            cur.execute("BEGIN")
        assert fence.admit_postgres(conn, "r", 1)
        with conn.cursor() as cur:
            cur.execute("COMMIT")
        assert fence.mark_postgres(conn, "r") == 1
    finally:
        conn.close()


def test_require_raises_stale(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "s.db")
    fence.require_sqlite(conn, "r", 4)
    with pytest.raises(tenure.StaleToken):
        fence.require_sqlite(conn, "r", 3)


def test_one_mark_table_for_both_kits(sink: str) -> None:
    """C first (its migration creates the table), then Python, then C."""
    assert sinks.c_kit(sink, "shard:1", 10) == "admitted"
    assert not admit(sink, "shard:1", 9)
    assert admit(sink, "shard:1", 10)
    assert admit(sink, "shard:1", 12)
    assert sinks.c_kit(sink, "shard:1", 11) == "stale"
    assert sinks.c_kit(sink, "shard:1", 12) == "admitted"
    # Python first on a new resource: the C kit honours its mark.
    assert admit(sink, "shard:2", 30)
    assert sinks.c_kit(sink, "shard:2", 29) == "stale"
    assert sinks.mark(sink, "shard:2") == 30


def test_python_creates_the_table_the_c_kit_then_uses(tmp_path: Path,
                                                      pg_url: str) -> None:
    """A sink touched only by Python first: the C kit's migration and
    advance work on the table and function Python created."""
    for sink in (sinks.new_sqlite(tmp_path), sinks.new_postgres(pg_url)):
        assert admit(sink, "r", 5)
        assert sinks.c_kit(sink, "r", 4) == "stale"
        assert sinks.c_kit(sink, "r", 6) == "admitted"
        assert not admit(sink, "r", 5)


def test_both_kits_create_the_same_schema(tmp_path: Path, pg_url: str) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "py").mkdir()
    by_c, by_py = sinks.new_sqlite(tmp_path / "c"), sinks.new_sqlite(tmp_path / "py")
    sinks.c_kit(by_c, "r", 1)
    admit(by_py, "r", 1)
    q = "SELECT sql FROM sqlite_master WHERE name = 'tenure_fence'"
    a = sqlite3.connect(by_c[7:]).execute(q).fetchone()
    b = sqlite3.connect(by_py[7:]).execute(q).fetchone()
    assert a is not None and a == b
    by_c, by_py = sinks.new_postgres(pg_url), sinks.new_postgres(pg_url)
    sinks.c_kit(by_c, "r", 1)
    admit(by_py, "r", 1)
    defs = []
    for s in (by_c, by_py):
        conn = sinks.connect(s)
        with conn.cursor() as cur:
            cur.execute("SELECT column_name, data_type, is_nullable"
                        " FROM information_schema.columns"
                        " WHERE table_name = 'tenure_fence' ORDER BY 1")
            cols = cur.fetchall()
            cur.execute("SELECT pg_get_functiondef("
                        "'tenure_fence_advance(text,bigint)'::regprocedure)")
            defs.append((cols, cur.fetchone()))
        conn.close()
    assert defs[0] == defs[1]
