# SPDX-License-Identifier: MIT
"""py_ev_loss.py URL NAME TTL_MS EVENTS_URL: the Python client's twin of
tn-ev-loss (tests/tools/client/ev_loss.c) for bench/follower-latency.sh.
Acquires NAME, keeps it alive with the client following EVENTS_URL (a
redis:// stream or a kafka:// topic), prints "acquired TOKEN" once the
follower's start position is fixed, then waits (at most 2*TTL) for the
keepalive to report the end and prints "lost MS REASON AT": MS counted from
"acquired", AT the wall clock then (ms since the epoch)."""
from __future__ import annotations

import sys
import threading
import time
from typing import Any, List

import tenure


def main(argv: List[str]) -> int:
    if len(argv) != 5:
        print("usage: py_ev_loss.py URL NAME TTL_MS EVENTS_URL",
              file=sys.stderr)
        return 2
    url, name, ttl, events = argv[1], argv[2], int(argv[3]), argv[4]
    ended: List[str] = []
    done = threading.Event()

    def on_end(_lease: tenure.Lease, why: str, _err: Any) -> None:
        ended.append(why)
        done.set()

    with tenure.Client(url, events_url=events) as c:
        lease = c.acquire(name, ttl_ms=ttl)
        c.keep(lease, on_end)
        stream = c._ev_stream
        if stream is None or not stream.wait_connected(10):
            print("follower did not connect", file=sys.stderr)
            return 1
        t0 = time.monotonic()
        print(f"acquired {lease.token}", flush=True)
        if done.wait(2 * ttl / 1000):
            ms = int((time.monotonic() - t0) * 1000)
            print(f"lost {ms} {ended[0]} {time.time_ns() // 1000000}",
                  flush=True)
        else:
            print("held", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
