# SPDX-License-Identifier: MIT
"""The keepalive's connections: many kept leases renew pipelined over the
few kept-alive connections the client asks for (not one connection per
renew), and a kept-alive connection that tenured closed while idle is
replaced without a failed renew.  How many leases one client keeps at
what cost is a bench (bench/keepalive-py-go.sh), not a test."""
from __future__ import annotations

import re
import time
import urllib.request
from typing import List

import tenure
from conftest import Server


READS = [0]  # metric reads so far: each opens one connection


def metric(url: str, name: str) -> float:
    READS[0] += 1
    with urllib.request.urlopen(url + "/metrics", timeout=5) as r:
        text = r.read().decode()
    m = re.search(rf"^{re.escape(name)} ([0-9.e+]+)$", text, re.M)
    assert m is not None, f"no metric {name}"
    return float(m.group(1))


def wait_for(cond, timeout: float, what: str) -> None:  # type: ignore
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def test_many_leases_renew_over_few_connections(url: str, uniq: str) -> None:
    """200 leases at ttl 1500 renew every 500 ms: three rounds of renews
    (600 or more) must come over the client's two connections, where one
    connection per renew would have opened 600."""
    log: List[str] = []
    with tenure.Client(url, keepalive_connections=2, log=log.append) as c:
        leases = [c.acquire(f"{uniq}{i}", ttl_ms=1500) for i in range(200)]
        renews0 = metric(url, "tenure_renews_total")
        conns0 = metric(url, "tenure_http_connections_accepted_total")
        reads0 = READS[0]
        for lease in leases:
            c.keep(lease)
        wait_for(lambda: metric(url, "tenure_renews_total") - renews0 >= 600,
                 60, "three rounds of renews")
        opened = metric(url, "tenure_http_connections_accepted_total") \
            - conns0 - (READS[0] - reads0)
        assert all(lease.is_held() for lease in leases)
        assert 1 <= opened <= 2, (opened, log[-5:])
        assert not [m for m in log if "failed" in m], log[-5:]
        for lease in leases:
            lease.release()


def test_a_connection_closed_while_idle_is_replaced(own_server: Server,
                                                   uniq: str) -> None:
    """tenured closes keep-alive connections idle for 300 ms; renews come
    every 700 ms, each on a connection the server has closed: the renew
    goes out again on a new one, and none fails."""
    own_server.args = ["--request-timeout-ms", "300"]
    own_server.start()
    log: List[str] = []
    with tenure.Client(own_server.url, keepalive_connections=1,
                       log=log.append) as c:
        lease = c.acquire(uniq + "a", ttl_ms=2100)
        c.keep(lease)
        wait_for(lambda: len([m for m in log if m.startswith("renewed")])
                 >= 4, 30, f"four renews: {log}")
        assert lease.is_held()
        assert metric(own_server.url, "tenure_http_idle_timeouts_total") >= 2
        assert not [m for m in log if "failed" in m], log
        lease.release()
