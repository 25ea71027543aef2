#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An HTTP relay in front of one tenured that loses the answers: each
request is passed on and its answer read in full, so whatever it did is
done; then the client gets, instead of that answer, a 503 (--mode 503) or
nothing at all, the connection closed (--mode drop).  It shows what a
client does when a request that changed state comes back as 503 or not at
all (tests/integration/t613-pg-client-failover.sh).  One request per
connection.

    lost_reply_proxy.py --mode 503|drop --pidfile F LISTEN_PORT TARGET_PORT
"""
import argparse
import os
import socket
import sys
import threading

BODY_503 = (b'{"error":"unavailable","message":"the relay lost the answer"}')


def read_message(sock: socket.socket) -> bytes:
    """One HTTP message with a Content-Length body (or none)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v.strip())
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def serve(conn: socket.socket, target: int, mode: str) -> None:
    with conn:
        request = read_message(conn)
        if not request:
            return
        with socket.create_connection(("127.0.0.1", target)) as up:
            up.sendall(request)
            read_message(up)  # the answer, thrown away
        if mode == "503":
            conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\n"
                         b"Content-Type: application/json\r\n"
                         b"Retry-After: 1\r\nConnection: close\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(BODY_503) +
                         BODY_503)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("503", "drop"), required=True)
    ap.add_argument("--pidfile", required=True)
    ap.add_argument("listen", type=int)
    ap.add_argument("target", type=int)
    a = ap.parse_args()
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", a.listen))
    ls.listen(16)
    with open(a.pidfile + ".tmp", "w") as f:
        f.write(f"{os.getpid()}\n")
    os.rename(a.pidfile + ".tmp", a.pidfile)
    while True:
        conn, _ = ls.accept()
        threading.Thread(target=serve, args=(conn, a.target, a.mode),
                         daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
