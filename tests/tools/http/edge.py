#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tn-http-edge: clients at the edge of the HTTP front end, for the
t12x-http integration tests (half-closed connections, parked waiters).

Python 3 standard library only; talks to 127.0.0.1:PORT and prints plain
"key=value" lines a shell test reads with sed or awk.  Interim 1xx
responses are skipped, as HTTP clients do (RFC 9110 section 15.2).

  edge.py halfclose PORT KIND N [--name NAME] [--hold-file F]
      N connections, one after the other (KIND waiting: all at once), each
      sends one request and then shuts down its sending side
      (shutdown(SHUT_WR)), and reads until the server closes.  KIND:
        close     GET /healthz HTTP/1.1 with Connection: close
        http10    GET /healthz HTTP/1.0
        bad       a malformed request line (earns a 400)
        commit    POST /v1/leases of a fresh name (parked for its commit),
                  keep-alive
        waiting   POST /v1/leases of NAME-i with wait_ms 60000: the tool
                  holds NAME-0..N-1 first, sends the N waiters at once,
                  waits until the server counts them (tenure_waiters),
                  then releases the names and reads every answer; adds
                  "early=E", the waiters answered before the release
        waiting10 POST /v1/leases of NAME (held by the test) with wait_ms
                  60000 over HTTP/1.0, which cannot be sent an interim
                  answer: its half-close is taken for leaving (a 400)
      Prints "answered=A statuses=S:C,... interim=I closed=K": A requests
      got a final response, C of them with status S, I interim responses
      seen, K connections closed by the server after it.

  edge.py park PORT N NAME WAIT_MS GO_FILE [--owner O] [--bearer TOKEN]
                [--settle K]
      N connections each a blocking acquire of NAME with wait_ms WAIT_MS
      (kept open, not half-closed); once K of them are answered (the
      refusals expected; at most 20 s) prints "sent n=N"; reads what comes
      until GO_FILE exists, then closes them all and prints
      "refused=R statuses=S:C,... closed=K": R were answered meanwhile
      (refused: NAME is held), C of them with status S, and K connections
      were closed by the server (K - R without any answer).
"""

import argparse
import json
import os
import selectors
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attack import parse_responses, raise_nofile  # noqa: E402


def request(kind, i, name):
    if kind == "close":
        return (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Connection: close\r\n\r\n")
    if kind == "http10":
        return b"GET /healthz HTTP/1.0\r\n\r\n"
    if kind == "bad":
        return b"GET /healthz HTTP/1.1 junk\r\nHost: 127.0.0.1\r\n\r\n"
    version = "1.1"
    if kind == "commit":
        body = ('{"name":"hc:%d:%d","owner_id":"o","ttl_ms":60000}'
                % (os.getpid(), i))
    elif kind == "waiting":
        body = ('{"name":"%s-%d","owner_id":"w%d","ttl_ms":60000,'
                '"wait_ms":60000}' % (name, i, i))
    else:  # waiting10: NAME itself, held by the test
        version = "1.0"
        body = ('{"name":"%s","owner_id":"w%d","ttl_ms":60000,'
                '"wait_ms":60000}' % (name, i))
    return (("POST /v1/leases HTTP/%s\r\nHost: 127.0.0.1\r\n"
             "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
             % (version, len(body), body)).encode())


def read_all(s, deadline):
    """Read until the server closes or the deadline; (data, closed)."""
    data = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return data, False
        s.settimeout(left)
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return data, False
        except OSError:
            return data, True
        if not chunk:
            return data, True
        data += chunk


class Tally:
    def __init__(self):
        self.answered = self.interim = self.closed = 0
        self.statuses = {}

    def add(self, data, closed):
        finals = 0
        for st, _ in parse_responses(data):
            if 100 <= st < 200:
                self.interim += 1
                continue
            finals += 1
            self.statuses[st] = self.statuses.get(st, 0) + 1
        self.answered += 1 if finals > 0 else 0
        self.closed += 1 if closed else 0

    def line(self):
        st = ",".join("%d:%d" % kv for kv in sorted(self.statuses.items()))
        return "answered=%d statuses=%s interim=%d closed=%d" % (
            self.answered, st or "-", self.interim, self.closed)


def connect(port, payload):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(payload)
    s.shutdown(socket.SHUT_WR)
    return s


class Conn:
    """One keep-alive connection for the tool's own requests."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.data = b""

    def call(self, method, path, body=None):
        b = body.encode() if body is not None else b""
        head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n" % (method, path)
        if body is not None:
            head += "Content-Length: %d\r\n" % len(b)
        self.s.sendall(head.encode() + b"\r\n" + b)
        while True:
            resps = [r for r in parse_responses(self.data) if r[0] >= 200]
            if resps:
                self.data = b""
                return resps[0]
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the tool's connection")
            self.data += chunk

    def metric(self, name):
        _, body = self.call("GET", "/metrics")
        for line in body.decode().splitlines():
            if line.split(" ")[0] == name:
                return float(line.split(" ")[1])
        return None


def hold(conn, name, n):
    """Acquire NAME-0..n-1 for the tool; returns their (token, secret)."""
    held = []
    for i in range(n):
        st, body = conn.call("POST", "/v1/leases",
                             '{"name":"%s-%d","owner_id":"holder","ttl_ms":'
                             '600000}' % (name, i))
        if st != 201:
            raise SystemExit("holding %s-%d: %d %s" % (name, i, st, body))
        d = json.loads(body)
        held.append((d["token"], d["lease_secret"]))
    return held


def wait_metric(conn, name, value):
    for _ in range(1000):
        if conn.metric(name) == value:
            return
        time.sleep(0.02)
    raise SystemExit("the server never had %s %d" % (name, value))


def early_finals(socks):
    """Final answers already received (a waiter must not have one yet)."""
    n = 0
    for s in socks:
        s.setblocking(False)
        try:
            data = s.recv(65536, socket.MSG_PEEK)
        except (BlockingIOError, OSError):
            data = b""
        s.setblocking(True)
        n += any(st >= 200 for st, _ in parse_responses(data))
    return n


def halfclose(port, kind, n, name):
    t = Tally()
    if kind != "waiting":
        for i in range(n):
            s = connect(port, request(kind, i, name))
            t.add(*read_all(s, time.monotonic() + 10))
            s.close()
        print(t.line())
        return
    conn = Conn(port)
    held = hold(conn, name, n)
    socks = [connect(port, request(kind, i, name)) for i in range(n)]
    wait_metric(conn, "tenure_waiters", n)
    time.sleep(0.2)  # time for an answer that should not come
    early = early_finals(socks)
    for i, (token, secret) in enumerate(held):
        st, body = conn.call("DELETE", "/v1/leases/%s-%d" % (name, i),
                             '{"token":%d,"lease_secret":"%s"}'
                             % (token, secret))
        if st != 204:
            raise SystemExit("releasing %s-%d: %d %s" % (name, i, st, body))
    deadline = time.monotonic() + 60
    for s in socks:
        t.add(*read_all(s, deadline))
        s.close()
    print(t.line() + " early=%d" % early)


def park(port, n, name, wait_ms, go_file, owner, bearer=None, settle=0):
    sel = selectors.DefaultSelector()
    data = {}
    for i in range(n):
        body = ('{"name":"%s","owner_id":"%s%d","ttl_ms":10000,"wait_ms":%d}'
                % (name, owner, i, wait_ms)).encode()
        auth = "Authorization: Bearer %s\r\n" % bearer if bearer else ""
        head = ("POST /v1/leases HTTP/1.1\r\nHost: 127.0.0.1\r\n%s"
                "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                % (auth, len(body))).encode()
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        try:
            s.sendall(head + body)
        except OSError:
            pass  # closed at once: counted below
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        data[s] = [b"", False]
    def read_some():
        for key, _ in sel.select(0.1):
            s = key.fileobj
            try:
                chunk = s.recv(65536)
            except OSError:
                chunk = b""
            if chunk:
                data[s][0] += chunk
            else:
                data[s][1] = True
                sel.unregister(s)

    deadline = time.monotonic() + 20
    while (sum(1 for got, _ in data.values() if parse_responses(got)) < settle
           and time.monotonic() < deadline):
        read_some()
    print("sent n=%d" % n)
    sys.stdout.flush()
    while not os.path.exists(go_file):
        read_some()
    t = Tally()
    for s, (got, closed) in data.items():
        t.add(got, closed)
        s.close()
    print("refused=%d statuses=%s closed=%d" % (
        t.answered, t.line().split()[1][9:], t.closed))


def main():
    raise_nofile()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("halfclose")
    p.add_argument("port", type=int)
    p.add_argument("kind", choices=["close", "http10", "bad", "commit",
                                    "waiting", "waiting10"])
    p.add_argument("n", type=int)
    p.add_argument("--name", default="hc:wait")
    p = sub.add_parser("park")
    p.add_argument("port", type=int)
    p.add_argument("n", type=int)
    p.add_argument("name")
    p.add_argument("wait_ms", type=int)
    p.add_argument("go_file")
    p.add_argument("--owner", default="w")
    p.add_argument("--bearer")
    p.add_argument("--settle", type=int, default=0)
    a = ap.parse_args()
    if a.cmd == "halfclose":
        halfclose(a.port, a.kind, a.n, a.name)
    else:
        park(a.port, a.n, a.name, a.wait_ms, a.go_file, a.owner, a.bearer,
             a.settle)


if __name__ == "__main__":
    main()
