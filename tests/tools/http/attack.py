#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tn-http-attack: hostile HTTP clients for the t11x-http integration tests.

Python 3 standard library only.  Every subcommand talks to 127.0.0.1:PORT
and prints plain "key=value" lines a shell test can read with sed or awk.

  attack.py exchange PORT FILE [--wait S]
      Send the bytes of FILE in one write, then read until the server
      closes the connection or S seconds (default 5) pass.  Prints one
      line per complete response:
        response status=N ms=T body=<body on one line>
      then "closed ms=T" (EOF or reset) or "open ms=T".

  attack.py headers-only PORT FILE [--wait S]
      Like exchange, but FILE holds only the request head of a request
      that announces a body, and the body is never sent: a response
      means the server decided without the body.

  attack.py slowbody PORT N SECONDS [--timeout-ms MS] [--ramp R] [--out FILE]
      N connections (R more every 50 ms, default 100) each send the head of a POST /v1/leases with a
      Content-Length of 100, then the body at one byte per second; each
      reconnects as soon as the server closes it.  After SECONDS prints
        opened=A closed=C max_life_ms=L open_now=O answered=R
      where L is the longest life of a connection the server closed and
      O counts connections still open at the end that had lived longer
      than --timeout-ms (default: never counted).  With --out the line
      is also rewritten there every second while it runs.

  attack.py stall-subscribe PORT N GO_FILE [--rcvbuf B] [--sample K]
      Open N GET /v1/events streams with a small receive buffer and never
      read them; print "subscribed n=N" once all are sent; wait until
      GO_FILE exists; then close all but K (default 50), drain those for
      up to 60 s and print
        streams=N sampled=K eof=E reset=R
      where E counts sampled streams the server ended and R those whose
      last event was {"type":"reset",...}.

  attack.py wait-abandon PORT N NAME WAIT_MS GO_FILE
      Open N connections, each a blocking acquire of NAME (held by
      someone else) with wait_ms WAIT_MS; print "sent n=N"; when GO_FILE
      exists, close them all without reading, print "closed n=N" and exit.

  attack.py keepalive PORT STOP_FILE [--every-ms MS]
      One keep-alive connection doing GET /healthz every MS ms (default
      200) until STOP_FILE exists; prints "requests=N answered=A max_ms=M lost=L"
      (lost: the connection was closed on it or an answer took over 20 s,
      after which it reconnects).
  attack.py pipeline-flood PORT N STOP_FILE [--target T] [--read]
      N connections each write pipelined "GET T" requests (default
      /v1/leases?limit=1000) as fast as the socket takes them and never
      read an answer (with --read: read and drop every answer as fast as
      it comes), until STOP_FILE exists; prints "flood sent_mb=M".
"""

import argparse
import asyncio
import os
import re
import resource
import socket
import sys
import time


def now_ms():
    return time.monotonic() * 1000.0


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def parse_responses(data):
    """Split a byte stream into complete HTTP/1.1 responses.

    Returns a list of (status, body bytes); a trailing incomplete response
    is left out.  Bodies are framed by Content-Length or chunked coding;
    a response with neither runs to the end of the data."""
    out = []
    pos = 0
    while True:
        end = data.find(b"\r\n\r\n", pos)
        if end < 0:
            break
        head = data[pos:end].decode("latin-1")
        lines = head.split("\r\n")
        m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
        if not m:
            break
        status = int(m.group(1))
        hdrs = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            hdrs[k.strip().lower()] = v.strip()
        body_start = end + 4
        if status in (100, 101, 204, 304):
            out.append((status, b""))
            pos = body_start
            continue
        if "content-length" in hdrs:
            n = int(hdrs["content-length"])
            if len(data) < body_start + n:
                break
            out.append((status, data[body_start:body_start + n]))
            pos = body_start + n
        elif hdrs.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            p = body_start
            complete = False
            while True:
                e = data.find(b"\r\n", p)
                if e < 0:
                    break
                size = int(data[p:e].split(b";")[0], 16)
                if size == 0:
                    t = data.find(b"\r\n\r\n", e)
                    if t >= 0 or data[e + 2:e + 4] == b"\r\n":
                        p = e + 4
                        complete = True
                    break
                if len(data) < e + 2 + size + 2:
                    break
                body += data[e + 2:e + 2 + size]
                p = e + 2 + size + 2
            if not complete:
                out.append((status, body))
                pos = len(data)
                break
            out.append((status, body))
            pos = p
        else:
            out.append((status, data[body_start:]))
            pos = len(data)
            break
    return out


def one_line(b):
    return b.decode("utf-8", "replace").replace("\r", "\\r").replace("\n", "\\n")


def exchange(port, payload, wait_s):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    t0 = now_ms()
    s.sendall(payload)
    data = b""
    seen = 0
    closed = False
    deadline = time.monotonic() + wait_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        s.settimeout(left)
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        except (ConnectionResetError, BrokenPipeError):
            closed = True
            break
        if not chunk:
            closed = True
            break
        data += chunk
        resps = parse_responses(data)
        while seen < len(resps):
            st, body = resps[seen]
            print("response status=%d ms=%.0f body=%s" % (st, now_ms() - t0, one_line(body)))
            seen += 1
        sys.stdout.flush()
    for st, body in parse_responses(data)[seen:]:
        print("response status=%d ms=%.0f body=%s" % (st, now_ms() - t0, one_line(body)))
    print("%s ms=%.0f" % ("closed" if closed else "open", now_ms() - t0))
    s.close()


# ------------------------------------------------------------- slow body
class SlowStats:
    def __init__(self):
        self.opened = 0
        self.closed = 0
        self.max_life = 0.0
        self.answered = 0
        self.live = {}  # id -> start ms

    def line(self, timeout_ms):
        t = now_ms()
        overdue = 0
        if timeout_ms > 0:
            overdue = sum(1 for st in self.live.values() if t - st > timeout_ms)
        return "opened=%d closed=%d max_life_ms=%.0f open_now=%d answered=%d live=%d" % (
            self.opened, self.closed, self.max_life, overdue, self.answered, len(self.live))


async def slow_conn(port, stats, stop, ident):
    head = (b"POST /v1/leases HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n")
    body = b'{"name":"slow-%d","owner_id":"slow","ttl_ms":1000}' % ident
    body = body + b" " * (100 - len(body))
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.1)
            continue
        start = now_ms()
        stats.opened += 1
        key = (ident, stats.opened)
        stats.live[key] = start
        ended = False
        try:
            writer.write(head)
            await writer.drain()
            i = 0
            while not stop.is_set():
                try:
                    data = await asyncio.wait_for(reader.read(4096), 1.0)
                    if not data:
                        ended = True
                        break
                    stats.answered += 1  # an answer (408, 400...) then close
                    continue
                except asyncio.TimeoutError:
                    pass
                if i < len(body) - 1:  # never the last byte
                    writer.write(body[i:i + 1])
                    i += 1
                    await writer.drain()
        except (ConnectionError, OSError):
            ended = True
        del stats.live[key]
        if ended:
            stats.closed += 1
            stats.max_life = max(stats.max_life, now_ms() - start)
        writer.close()


async def slowbody_main(port, n, seconds, timeout_ms, out, ramp):
    stats = SlowStats()
    stop = asyncio.Event()
    tasks = []
    for i in range(n):
        tasks.append(asyncio.ensure_future(slow_conn(port, stats, stop, i)))
        if i % ramp == ramp - 1:
            await asyncio.sleep(0.05)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        await asyncio.sleep(1.0)
        if out:
            with open(out + ".tmp", "w") as f:
                f.write(stats.line(timeout_ms) + "\n")
            os.replace(out + ".tmp", out)
    final = stats.line(timeout_ms)
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(final)
    if out:
        with open(out, "w") as f:
            f.write(final + "\n")


# ---------------------------------------------------- stalled subscribers
def stall_subscribe(port, n, go_file, rcvbuf, sample):
    socks = []
    req = b"GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.connect(("127.0.0.1", port))
        s.sendall(req)
        socks.append(s)
    print("subscribed n=%d" % n)
    sys.stdout.flush()
    while not os.path.exists(go_file):
        time.sleep(0.1)
    # Only a sample is read to its end: all of them hold more than a
    # Python reader gets through in reasonable time.
    sample = min(sample, n)
    for s in socks[sample:]:
        s.close()
    socks = socks[:sample]
    eof = 0
    reset = 0
    tails = [b""] * sample
    done = [False] * sample
    import selectors
    sel = selectors.DefaultSelector()
    for i, s in enumerate(socks):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, i)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all(done):
        for key, _ in sel.select(timeout=1.0):
            i = key.data
            try:
                chunk = socks[i].recv(1 << 20)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                done[i] = True
                eof += 1
                sel.unregister(socks[i])
                continue
            tails[i] = (tails[i] + chunk)[-4096:]
    for i in range(sample):
        # The last event a stream carried, before the server ended it.
        events = [e for e in tails[i].split(b"\n\n") if b"data:" in e]
        if events and b'"type":"reset"' in events[-1]:
            reset += 1
    print("streams=%d sampled=%d eof=%d reset=%d" % (n, sample, eof, reset))
    for s in socks:
        s.close()


# ------------------------------------------------- abandoned waiters
def wait_abandon(port, n, name, wait_ms, go_file):
    socks = []
    for i in range(n):
        body = ('{"name":"%s","owner_id":"w%d","ttl_ms":10000,"wait_ms":%d}'
                % (name, i, wait_ms)).encode()
        head = ("POST /v1/leases HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                % len(body)).encode()
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(head + body)
        socks.append(s)
    print("sent n=%d" % n)
    sys.stdout.flush()
    while not os.path.exists(go_file):
        time.sleep(0.1)
    for s in socks:
        s.close()
    print("closed n=%d" % n)


# ---------------------------------------------------------- keep-alive
def keepalive(port, stop_file, every_ms):
    req = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    s = None
    n = answered = lost = 0
    worst = 0.0
    while not os.path.exists(stop_file):
        try:
            if s is None:
                s = socket.create_connection(("127.0.0.1", port), timeout=20)
            t0 = now_ms()
            n += 1
            s.sendall(req)
            data = b""
            s.settimeout(20)
            while not parse_responses(data):
                chunk = s.recv(4096)
                if not chunk:
                    raise ConnectionResetError
                data += chunk
            answered += 1
            worst = max(worst, now_ms() - t0)
        except (OSError, ConnectionError):
            lost += 1
            if s is not None:
                s.close()
            s = None
        time.sleep(every_ms / 1000.0)
    print("requests=%d answered=%d max_ms=%.0f lost=%d" % (n, answered, worst, lost))


def pipeline_flood(port, n, stop_file, target, read=False):
    req = (b"GET " + target.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") * 1000
    def connect():
        s = socket.create_connection(("127.0.0.1", port))
        s.setblocking(False)
        return s

    socks = [connect() for _ in range(n)]
    sent = closed = 0
    while not os.path.exists(stop_file):
        for i, s in enumerate(socks):
            try:
                sent += s.send(req)
            except BlockingIOError:
                pass
            except OSError:  # closed by the server: come back at once
                closed += 1
                s.close()
                socks[i] = connect()
                continue
            while read:
                try:
                    if not s.recv(1 << 20):
                        break
                except (BlockingIOError, OSError):
                    break
        time.sleep(0.001)
    print("flood sent_mb=%.0f closed_by_server=%d" % (sent / 1e6, closed))
    for s in socks:
        s.close()


def main():
    raise_nofile()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("exchange")
    p.add_argument("port", type=int)
    p.add_argument("file")
    p.add_argument("--wait", type=float, default=5.0)
    p = sub.add_parser("headers-only")
    p.add_argument("port", type=int)
    p.add_argument("file")
    p.add_argument("--wait", type=float, default=5.0)
    p = sub.add_parser("slowbody")
    p.add_argument("port", type=int)
    p.add_argument("n", type=int)
    p.add_argument("seconds", type=float)
    p.add_argument("--timeout-ms", type=float, default=0)
    p.add_argument("--ramp", type=int, default=100)
    p.add_argument("--out")
    p = sub.add_parser("stall-subscribe")
    p.add_argument("port", type=int)
    p.add_argument("n", type=int)
    p.add_argument("go_file")
    p.add_argument("--rcvbuf", type=int, default=4096)
    p.add_argument("--sample", type=int, default=50)
    p = sub.add_parser("wait-abandon")
    p.add_argument("port", type=int)
    p.add_argument("n", type=int)
    p.add_argument("name")
    p.add_argument("wait_ms", type=int)
    p.add_argument("go_file")
    p = sub.add_parser("keepalive")
    p.add_argument("port", type=int)
    p.add_argument("stop_file")
    p.add_argument("--every-ms", type=float, default=200)
    p = sub.add_parser("pipeline-flood")
    p.add_argument("port", type=int)
    p.add_argument("n", type=int)
    p.add_argument("stop_file")
    p.add_argument("--target", default="/v1/leases?limit=1000")
    p.add_argument("--read", action="store_true")
    a = ap.parse_args()
    if a.cmd in ("exchange", "headers-only"):
        with open(a.file, "rb") as f:
            exchange(a.port, f.read(), a.wait)
    elif a.cmd == "slowbody":
        asyncio.run(slowbody_main(a.port, a.n, a.seconds, a.timeout_ms, a.out, a.ramp))
    elif a.cmd == "stall-subscribe":
        stall_subscribe(a.port, a.n, a.go_file, a.rcvbuf, a.sample)
    elif a.cmd == "wait-abandon":
        wait_abandon(a.port, a.n, a.name, a.wait_ms, a.go_file)
    elif a.cmd == "keepalive":
        keepalive(a.port, a.stop_file, a.every_ms)
    elif a.cmd == "pipeline-flood":
        pipeline_flood(a.port, a.n, a.stop_file, a.target, a.read)


if __name__ == "__main__":
    main()
