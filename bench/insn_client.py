# SPDX-License-Identifier: MIT
"""insn_client.py PORT PREFIX N MODE: the fixed request mix of
bench/insn.sh, one request at a time on one keep-alive connection, so that
every commit batch holds exactly one request and the server's work per
request does not depend on how busy the machine is.

MODE "acquire": N acquires, each of a new name PREFIX-i (ttl 60 s), every
answer must be 201.  MODE "cycle": N acquires as above, each followed by
its release (DELETE with the returned token and lease_secret), 204.  The
bytes of every request are built here, the same for every run (no
library adds headers of its own).  Exits 1 on the first other answer."""
from __future__ import annotations

import json
import socket
import sys


def request(method: str, path: str, body: str) -> bytes:
    return (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n{body}").encode()


class Conn:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def call(self, raw: bytes) -> tuple[int, bytes]:
        self.sock.sendall(raw)
        while b"\r\n\r\n" not in self.buf:
            self.more()
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            key, _, value = line.partition(b":")
            if key.strip().lower() == b"content-length":
                length = int(value)
        while len(rest) < length:
            self.buf = head + b"\r\n\r\n" + rest
            self.more()
            head, _, rest = self.buf.partition(b"\r\n\r\n")
        self.buf = rest[length:]
        return status, rest[:length]

    def more(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            sys.exit("insn_client: the server closed the connection")
        self.buf += chunk


def main() -> int:
    port, prefix, n, mode = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
    conn = Conn(port)
    for i in range(n):
        name = f"{prefix}-{i}"
        body = json.dumps({"name": name, "owner_id": "insn", "ttl_ms": 60000},
                          separators=(",", ":"))
        status, reply = conn.call(request("POST", "/v1/leases", body))
        if status != 201:
            print(f"insn_client: acquire {name}: {status} {reply!r}", file=sys.stderr)
            return 1
        if mode != "cycle":
            continue
        grant = json.loads(reply)
        body = json.dumps({"token": grant["token"], "lease_secret": grant["lease_secret"]},
                          separators=(",", ":"))
        status, reply = conn.call(request("DELETE", f"/v1/leases/{name}", body))
        if status != 204:
            print(f"insn_client: release {name}: {status} {reply!r}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
