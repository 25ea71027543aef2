# SPDX-License-Identifier: MIT
"""Fencing at the sink: admit a write only if its token is >= the highest
token the sink has seen for the resource (the mark), and raise the mark in
the same transaction as the write.

The same table and rule as the C fence kit (``<tenure/fence.h>``,
docs/FENCING.md), so Python and C writers can share one sink:

* SQLite: ``tenure_fence(resource TEXT PRIMARY KEY NOT NULL, hwm INTEGER NOT
  NULL CHECK (hwm >= 0))`` and one conditional upsert.
* PostgreSQL: ``tenure_fence(resource text PRIMARY KEY, hwm bigint NOT NULL
  CHECK (hwm >= 0))`` and the SQL function ``tenure_fence_advance(resource
  text, token bigint) returns boolean``, installed under the kit's advisory
  lock (7300406) exactly as ``tn_fence_pg_migrate`` installs it.

Equal tokens are admitted (the same holder's writes), lower ones rejected,
and the mark never moves down.  Both helpers run inside the caller's
transaction and refuse to run where their statement would commit on its own:
a check that commits separately from its write fences nothing.
"""
from __future__ import annotations

import sqlite3
from typing import Any, Optional

from .errors import Error, StaleToken

__all__ = ["admit_sqlite", "admit_postgres", "require_sqlite",
           "require_postgres", "mark_sqlite", "mark_postgres",
           "migrate_sqlite", "migrate_postgres", "FenceError", "TOKEN_MAX",
           "NAME_MAX"]

TOKEN_MAX = 1 << 53
NAME_MAX = 256
PG_LOCK_KEY = 7300406

SQLITE_CREATE = ("CREATE TABLE IF NOT EXISTS tenure_fence ("
                 " resource TEXT PRIMARY KEY NOT NULL,"
                 " hwm INTEGER NOT NULL CHECK (hwm >= 0))")
SQLITE_UPSERT = ("INSERT INTO tenure_fence(resource, hwm) VALUES (?, ?)"
                 " ON CONFLICT(resource) DO UPDATE SET hwm = excluded.hwm"
                 " WHERE tenure_fence.hwm <= excluded.hwm")
SQLITE_GET = "SELECT hwm FROM tenure_fence WHERE resource = ?"

PG_CREATE_TABLE = ("CREATE TABLE IF NOT EXISTS tenure_fence ("
                   " resource text PRIMARY KEY,"
                   " hwm bigint NOT NULL CHECK (hwm >= 0))")
PG_CREATE_FUNCTION = (
    "CREATE OR REPLACE FUNCTION tenure_fence_advance(resource text,"
    " token bigint) RETURNS boolean LANGUAGE sql VOLATILE AS $f$"
    " WITH up AS ("
    "  INSERT INTO tenure_fence AS f (resource, hwm) VALUES ($1, $2)"
    "  ON CONFLICT (resource) DO UPDATE SET hwm = EXCLUDED.hwm"
    "  WHERE f.hwm <= EXCLUDED.hwm RETURNING 1)"
    " SELECT EXISTS (SELECT 1 FROM up) $f$")
PG_PRESENT = ("SELECT to_regclass('tenure_fence') IS NOT NULL"
              " AND to_regprocedure('tenure_fence_advance(text,bigint)')"
              " IS NOT NULL")


class FenceError(Error):
    """The fence cannot decide: bad arguments, no transaction, or a
    database error (wrapped; the original is ``__cause__``)."""

    code = "fence"


def _args(resource: str, token: int) -> None:
    if not isinstance(resource, str):
        raise FenceError("resource must be a str", code="bad_request")
    n = len(resource.encode("utf-8"))
    if n == 0 or n > NAME_MAX or "\0" in resource:
        raise FenceError(f"resource must be 1 to {NAME_MAX} bytes without NUL",
                         code="bad_request")
    if isinstance(token, bool) or not isinstance(token, int) \
            or token < 0 or token > TOKEN_MAX:
        raise FenceError("token must be an int in 0..2^53", code="bad_request")


# ---- SQLite ----

def _sqlite_autocommits(conn: sqlite3.Connection) -> bool:
    """Would a statement on conn commit on its own?"""
    if conn.in_transaction:
        return False
    ac = getattr(conn, "autocommit", None)  # Python 3.12+
    if ac is True:
        return True
    if ac is False:
        return False  # always inside a transaction
    # Legacy mode: with an isolation_level, the upsert (an INSERT) opens a
    # transaction that lasts until the caller commits; without one, it
    # would commit by itself.
    return conn.isolation_level is None


def migrate_sqlite(conn: sqlite3.Connection) -> None:
    """Create the mark table if missing (``tn_fence_sqlite_migrate``)."""
    try:
        conn.execute(SQLITE_CREATE)
    except sqlite3.Error as e:
        raise FenceError(f"create tenure_fence failed: {e}") from e


def admit_sqlite(conn: sqlite3.Connection, resource: str, token: int) -> bool:
    """Inside the caller's transaction on ``conn``: True when ``token`` is
    admitted (>= the mark; the mark is now ``token``), False when it is
    stale (the mark is unchanged).  Creates the table if missing.  Commit
    the write together with this decision, or roll both back."""
    _args(resource, token)
    if _sqlite_autocommits(conn):
        raise FenceError("fence check outside a transaction: BEGIN first, or "
                         "use a connection with an isolation_level",
                         code="bad_request")
    try:
        conn.execute(SQLITE_CREATE)
        cur = conn.execute(SQLITE_UPSERT, (resource, token))
        return cur.rowcount == 1
    except sqlite3.Error as e:
        raise FenceError(f"fence advance failed: {e}") from e


def require_sqlite(conn: sqlite3.Connection, resource: str, token: int) -> None:
    """As :func:`admit_sqlite`, raising :class:`StaleToken` when stale."""
    if not admit_sqlite(conn, resource, token):
        raise StaleToken(f"token {token} is below the mark of {resource!r}")


def mark_sqlite(conn: sqlite3.Connection, resource: str) -> int:
    """The mark of ``resource`` (0 when none, or no table yet)."""
    try:
        row = conn.execute(SQLITE_GET, (resource,)).fetchone()
    except sqlite3.OperationalError as e:
        if "no such table" in str(e):
            return 0
        raise FenceError(f"fence read failed: {e}") from e
    return int(row[0]) if row else 0


# ---- PostgreSQL (any DB-API 2 driver with the format paramstyle) ----

def _pg_in_transaction(conn: Any) -> bool:
    """Is conn inside a transaction its next statement will join?"""
    if not getattr(conn, "autocommit", False):
        return True  # DB-API default: statements run in an open transaction
    info = getattr(conn, "info", None)
    st = getattr(info, "transaction_status", None)  # psycopg 3, psycopg2>=2.8
    if st is None and hasattr(conn, "get_transaction_status"):
        st = conn.get_transaction_status()  # psycopg2
    return st is not None and int(st) == 2  # INTRANS


def migrate_postgres(conn: Any) -> None:
    """Create the mark table and ``tenure_fence_advance`` if missing, inside
    the caller's transaction, under the kit's advisory lock (so any number
    of processes, C or Python, can run it at once)."""
    cur = conn.cursor()
    try:
        cur.execute(PG_PRESENT)
        row = cur.fetchone()
        if row is not None and row[0]:
            return
        cur.execute("SELECT pg_advisory_xact_lock(%s)" % PG_LOCK_KEY)
        cur.execute(PG_CREATE_TABLE)
        cur.execute(PG_CREATE_FUNCTION)
    finally:
        cur.close()


def admit_postgres(conn: Any, resource: str, token: int) -> bool:
    """Inside the caller's transaction on the DB-API connection ``conn``
    (psycopg2, psycopg, pg8000): True when ``token`` is admitted (the mark
    is now ``token``), False when stale.  Creates the table and the SQL
    function if missing.  The row lock of the upsert orders concurrent
    writers of one resource until the caller commits."""
    _args(resource, token)
    if not _pg_in_transaction(conn):
        raise FenceError("fence check outside a transaction",
                         code="bad_request")
    migrate_postgres(conn)
    cur = conn.cursor()
    try:
        cur.execute("SELECT tenure_fence_advance(%s, %s::bigint)",
                    (resource, token))
        row = cur.fetchone()
    finally:
        cur.close()
    if row is None or not isinstance(row[0], bool):
        raise FenceError(f"tenure_fence_advance answered {row!r}")
    return row[0]


def require_postgres(conn: Any, resource: str, token: int) -> None:
    """As :func:`admit_postgres`, raising :class:`StaleToken` when stale."""
    if not admit_postgres(conn, resource, token):
        raise StaleToken(f"token {token} is below the mark of {resource!r}")


def mark_postgres(conn: Any, resource: str) -> int:
    """The mark of ``resource`` (0 when none).  The table must exist."""
    cur = conn.cursor()
    try:
        cur.execute("SELECT hwm FROM tenure_fence WHERE resource = %s",
                    (resource,))
        row: Optional[Any] = cur.fetchone()
    finally:
        cur.close()
    return int(row[0]) if row else 0
