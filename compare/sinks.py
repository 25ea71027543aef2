# SPDX-License-Identifier: MIT
"""The sinks the workers of the comparison write through, and their
schema.

Every SQL sink holds, per resource, the current value
(``compare_state``: who wrote it last, with which token, and how many
writes it has seen) and the log of the writes it accepted
(``compare_log``, numbered per resource in the sink's own order), both
changed in one transaction.  A *fenced* sink first asks the fence kit
(python/tenure/fence.py: table ``tenure_fence``, the same SQL as the C
kit) in that same transaction and writes nothing when the token is
stale.  A *plain* sink ignores the token.  The Kafka sink is one record
on the raw topic, stamped with the token as the fence kit stamps it;
tenure-materializer decides there.

COMPARE_PLANT plants a bug for the test's negative runs: ``fence-off``
makes the fenced sinks write without asking the fence, ``fence-plain``
makes the plain ones fence.
"""
from __future__ import annotations

import os
import sqlite3
from typing import Any, Dict, List, Optional, Tuple

import psycopg2

from common import SINKS, now_ns
from tenure import fence

SQLITE_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS compare_state (resource TEXT PRIMARY KEY,"
    " writer TEXT NOT NULL, token INTEGER, version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS compare_log (resource TEXT NOT NULL,"
    " version INTEGER NOT NULL, writer TEXT NOT NULL, token INTEGER,"
    " t_ns INTEGER NOT NULL, PRIMARY KEY (resource, version))")
PG_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS compare_state (resource text PRIMARY KEY,"
    " writer text NOT NULL, token bigint, version bigint NOT NULL)",
    "CREATE TABLE IF NOT EXISTS compare_log (resource text NOT NULL,"
    " version bigint NOT NULL, writer text NOT NULL, token bigint,"
    " t_ns bigint NOT NULL, PRIMARY KEY (resource, version))")
UPSERT = ("INSERT INTO compare_state (resource, writer, token, version)"
          " VALUES ({p}, {p}, {p}, 1) ON CONFLICT (resource) DO UPDATE SET"
          " writer = excluded.writer, token = excluded.token,"
          " version = compare_state.version + 1 RETURNING version")
LOG = ("INSERT INTO compare_log (resource, version, writer, token, t_ns)"
       " VALUES ({p}, {p}, {p}, {p}, {p})")


def sqlite_path(cfg: dict, system: str, variant: str) -> str:
    return os.path.join(cfg["sinks_dir"], f"{system}-{variant}.db")


def _sqlite(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=60, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 60000")
    return conn


def setup(cfg: dict, systems: List[str]) -> None:
    """Create every sink the systems write to (run once, before any
    worker starts, so that no two workers race to create a table)."""
    for system in systems:
        for sink in SINKS[system]:
            kind, _, variant = sink.partition("/")
            if kind != "sqlite":
                continue
            conn = _sqlite(sqlite_path(cfg, system, variant))
            conn.execute("PRAGMA journal_mode = WAL")
            for ddl in SQLITE_SCHEMA:
                conn.execute(ddl)
            if variant == "fenced":
                fence.migrate_sqlite(conn)
            conn.close()
    for variant in ("plain", "fenced", "session"):
        conn = psycopg2.connect(cfg["pg"][variant])
        with conn, conn.cursor() as cur:
            for ddl in PG_SCHEMA:
                cur.execute(ddl)
            if variant == "fenced":
                fence.migrate_postgres(conn)
        conn.close()


def _fenced(variant: str, token: Optional[int]) -> bool:
    plant = os.environ.get("COMPARE_PLANT", "")
    if variant == "fenced":
        return plant != "fence-off"
    return plant == "fence-plain" and token is not None


class Writer:
    """One worker's connections to its system's sinks."""

    def __init__(self, cfg: dict, system: str) -> None:
        self.cfg = cfg
        self.system = system
        self.sinks = SINKS[system]
        self.sqlite: Dict[str, sqlite3.Connection] = {}
        self.pg: Dict[str, Any] = {}
        self.producer: Any = None
        self.delivered: List[Tuple[int, int]] = []

    def _pg(self, variant: str) -> Any:
        conn = self.pg.get(variant)
        if conn is None or conn.closed:
            conn = psycopg2.connect(self.cfg["pg"][variant],
                                    application_name="compare-sink")
            self.pg[variant] = conn
        return conn

    def _sqlite_write(self, variant: str, resource: str, label: str,
                      token: Optional[int]) -> str:
        conn = self.sqlite.get(variant)
        if conn is None:
            conn = _sqlite(sqlite_path(self.cfg, self.system, variant))
            self.sqlite[variant] = conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            if _fenced(variant, token) and \
                    not fence.admit_sqlite(conn, resource, token or 0):
                conn.execute("ROLLBACK")
                return "rejected"
            v = conn.execute(UPSERT.format(p="?"),
                             (resource, label, token)).fetchone()[0]
            conn.execute(LOG.format(p="?"),
                         (resource, v, label, token, now_ns()))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return "ok"

    def _pg_write(self, conn: Any, fenced: bool, resource: str, label: str,
                  token: Optional[int]) -> str:
        try:
            if fenced and not fence.admit_postgres(conn, resource,
                                                   token or 0):
                conn.rollback()
                return "rejected"
            with conn.cursor() as cur:
                cur.execute(UPSERT.format(p="%s"), (resource, label, token))
                v = cur.fetchone()[0]
                cur.execute(LOG.format(p="%s"),
                            (resource, v, label, token, now_ns()))
            conn.commit()
        except BaseException:
            if not conn.closed:
                conn.rollback()
            raise
        return "ok"

    def _session_write(self, lock: Any, resource: str, label: str,
                       token: Optional[int]) -> str:
        """On the session that holds the advisory lock."""
        conn = lock.session
        conn.autocommit = False
        try:
            return self._pg_write(conn, False, resource, label, token)
        finally:
            if not conn.closed:
                conn.autocommit = True

    def _kafka_write(self, resource: str, label: str, token: int) -> str:
        if self.producer is None:
            from confluent_kafka import Producer
            self.producer = Producer({
                "bootstrap.servers": self.cfg["kafka"],
                "partitioner": "murmur2_random",
                "enable.idempotence": True, "linger.ms": 0})
        errs: List[str] = []

        def done(err: Any, msg: Any) -> None:
            if err is not None:
                errs.append(str(err))

        self.producer.produce(self.cfg["topic"], key=resource,
                              value=label.encode(), on_delivery=done,
                              headers=[("lease-token", str(token))])
        if self.producer.flush(30) != 0:
            errs.append("not delivered in 30 s")
        if errs:
            raise RuntimeError("; ".join(errs))
        return "ok"

    def write_one(self, sink: str, resource: str, label: str,
                  token: Optional[int], lock: Any) -> str:
        kind, _, variant = sink.partition("/")
        if kind == "sqlite":
            return self._sqlite_write(variant, resource, label, token)
        if kind == "kafka":
            return self._kafka_write(resource, label, token or 0)
        if variant == "session":
            return self._session_write(lock, resource, label, token)
        return self._pg_write(self._pg(variant), _fenced(variant, token),
                              resource, label, token)

    def write(self, resource: str, label: str, token: Optional[int],
              lock: Any) -> List[Dict[str, Any]]:
        """The write ``label`` to every sink: one result each, "ok",
        "rejected" (the fence said stale) or "error" (an exception the
        writer saw, with its message)."""
        out = []
        for sink in self.sinks:
            t0 = now_ns()
            try:
                res, msg = self.write_one(sink, resource, label, token,
                                          lock), ""
            except Exception as e:  # the writer is told: that is the point
                res, msg = "error", f"{type(e).__name__}: {e}"[:200]
            out.append({"sink": sink, "label": label, "result": res,
                        "msg": msg, "t0": t0, "t1": now_ns()})
        return out

    def close(self) -> None:
        for c in self.sqlite.values():
            c.close()
        for c in self.pg.values():
            c.close()
        if self.producer is not None:
            self.producer.flush(30)
