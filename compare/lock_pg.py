# SPDX-License-Identifier: MIT
"""The PostgreSQL lock of the comparison: a session advisory lock
(``pg_try_advisory_lock``; a waiting contender blocks in
``pg_advisory_lock``).  The lock lives as long as the session.  The
session's ``idle_session_timeout`` is the TTL: a holder frozen past it
loses its connection, and with it the lock, as it would behind a cut
network once TCP keepalive gives up.

No fencing token.  The session itself is exposed (``session``) so that a
sink can be written on it: a write on the session that holds the lock
cannot outlive the lock.  Through Debian's python3-psycopg2.
"""
from __future__ import annotations

from typing import Optional

import psycopg2

from common import NotGranted, pg_key



class PgAdvisoryLock:
    token_kind: Optional[str] = None

    def __init__(self, cfg: dict) -> None:
        self.ttl_ms = int(cfg["ttl_ms"])
        # Autocommit: between statements the session is idle (not idle in
        # a transaction), which is what idle_session_timeout counts.
        self.session = psycopg2.connect(
            cfg["pg"]["session"], application_name="compare-lock",
            options=f"-c idle_session_timeout={self.ttl_ms}")
        self.session.autocommit = True
        self.key = 0

    def _one(self, sql: str, args: tuple = ()) -> object:
        with self.session.cursor() as cur:
            cur.execute(sql, args)
            row = cur.fetchone()
        return row[0] if row else None

    def acquire(self, resource: str, wait_s: float) -> Optional[int]:
        self.key = pg_key(resource)
        if wait_s <= 0:
            if not self._one("SELECT pg_try_advisory_lock(%s)", (self.key,)):
                raise NotGranted(resource)
        else:
            self._one("SELECT set_config('statement_timeout', %s, false)",
                      (str(int(wait_s * 1000)),))
            try:
                self._one("SELECT pg_advisory_lock(%s)", (self.key,))
            except psycopg2.errors.QueryCanceled as e:
                raise NotGranted(resource) from e
            self._one("SELECT set_config('statement_timeout', '0', false)")
        return None

    def keep(self) -> None:
        """The open session keeps the lock: nothing to start."""

    def check(self) -> bool:
        """Is the session (and so the lock) still alive?"""
        return self._one("SELECT 1") == 1

    def release(self) -> bool:
        try:
            return bool(self._one("SELECT pg_advisory_unlock(%s)",
                                  (self.key,)))
        except psycopg2.Error:  # the session was cut: the lock went with it
            return False

    def close(self) -> None:
        self.session.close()
