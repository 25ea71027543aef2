# SPDX-License-Identifier: MIT
"""A worker that holds a lease through tenure.Client.hold() and writes
fenced rows into a sink (sqlite:PATH or a postgresql:// URL), one JSON line
per event on stdout.  After its first write it stops itself (SIGSTOP)
between its is_held() check and its next write: the gap no lease can
close.  Run by test_frozen_holder.py, which takes the lease over meanwhile
and resumes it."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
import time
from typing import Any

import tenure


def say(**kw: Any) -> None:
    print(json.dumps(kw), flush=True)


def connect(sink: str) -> Any:
    if sink.startswith("sqlite:"):
        return sqlite3.connect(sink[7:], timeout=10)
    import psycopg2  # python3-psycopg2
    return psycopg2.connect(sink)


def write(sink: str, name: str, token: int, step: int) -> bool:
    """One fenced write: the mark check and the row in one transaction."""
    conn = connect(sink)
    try:
        if sink.startswith("sqlite:"):
            with conn:
                ok = tenure.fence.admit_sqlite(conn, name, token)
                if ok:
                    conn.execute("INSERT INTO data VALUES (?, ?, ?)",
                                 (name, token, step))
            return ok
        with conn:  # psycopg2: commit at the end of the block
            ok = tenure.fence.admit_postgres(conn, name, token)
            if ok:
                with conn.cursor() as cur:
                    cur.execute("INSERT INTO data VALUES (%s, %s, %s)",
                                (name, token, step))
        return ok
    finally:
        conn.close()


def main() -> int:
    url, name, sink = sys.argv[1:4]
    c = tenure.Client(url)
    try:
        with c.hold(name, owner="zombie", ttl_ms=2000) as lease:
            say(token=lease.token)
            step = 0
            while True:
                try:
                    lease.ensure_held()  # right before each write
                except tenure.Lost as e:
                    say(learned=type(e).__name__, safe=lease.safe_for_ms())
                    break
                if step == 1:
                    say(stopping=True)
                    os.kill(os.getpid(), signal.SIGSTOP)  # frozen in the gap
                admitted = write(sink, name, lease.token, step)
                say(step=step, admitted=admitted, safe=lease.safe_for_ms())
                step += 1
                time.sleep(0.05)
    except tenure.Lost as e:
        say(hold_raised=type(e).__name__)
        return 4
    finally:
        c.close()
    say(hold_returned=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
