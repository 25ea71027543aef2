# SPDX-License-Identifier: MIT
"""A small HTTP/1.1 client on plain sockets, bounded by a monotonic deadline.

http.client bounds each socket operation, not a whole request; the keepalive
needs every renew to end by the earliest safe deadline of the leases it
keeps, so that a hung server never delays a loss report.  :func:`request`
uses a fresh connection per request (no stale keep-alive connection can make
the outcome of an acquire or a release ambiguous), records the monotonic
instant just before it is sent, and gives up at its deadline.
:class:`Conn` is the exception, for renews only (sending one twice is
harmless): a kept-alive connection on which the keepalive pipelines many
renews at once.  Also reads text/event-stream bodies (chunked,
Content-Length or until close) line by line for the events follower.
"""
from __future__ import annotations

import json
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple, Union
from urllib.parse import urlsplit

from .errors import (ConnectError, Error, ProtocolError, Timeout,
                     TransportError)

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 16 * 1024 * 1024


def mono_ms() -> int:
    """Milliseconds on the monotonic clock (what safe time counts on)."""
    return time.monotonic_ns() // 1_000_000


@dataclass
class Target:
    """One server base URL, parsed."""

    url: str
    tls: bool
    host: str
    port: int
    base_path: str


def parse_url(url: str) -> Target:
    """Parse a base URL; ``host:port`` without a scheme means http://."""
    if "://" not in url:
        url = "http://" + url
    u = urlsplit(url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ValueError(f"server URL {url!r} must be http:// or https://")
    port = u.port or (443 if u.scheme == "https" else 80)
    return Target(url=url.rstrip("/"), tls=u.scheme == "https",
                  host=u.hostname, port=port, base_path=u.path.rstrip("/"))


@dataclass
class Response:
    status: int
    headers: Dict[str, str]
    body: bytes
    sent_ms: int

    def json(self) -> Any:
        try:
            return json.loads(self.body.decode("utf-8")) if self.body else None
        except (UnicodeDecodeError, ValueError) as e:
            raise ProtocolError(f"answer is not JSON: {e}") from None


class _Reader:
    """Buffered reads from a socket, each bounded by the deadline."""

    def __init__(self, sock: socket.socket, deadline_ms: Optional[int]) -> None:
        self.sock = sock
        self.buf = b""
        self.deadline_ms = deadline_ms
        self.idle_s: Optional[float] = None  # per-read bound (streams)

    def _fill(self) -> bool:
        try:
            if self.deadline_ms is not None:
                left = self.deadline_ms - mono_ms()
                if left <= 0:
                    raise Timeout("no answer before the deadline")
                self.sock.settimeout(left / 1000.0)
            else:
                self.sock.settimeout(self.idle_s)
            data = self.sock.recv(65536)
        except socket.timeout:
            raise Timeout("no answer before the deadline") from None
        except (ssl.SSLError, OSError) as e:
            raise TransportError(f"connection broke: {e}") from None
        if not data:
            return False
        self.buf += data
        return True

    def readline(self, limit: int = MAX_HEADER_BYTES) -> Optional[bytes]:
        """One line including its LF; None at EOF before any byte."""
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line, self.buf = self.buf[:i + 1], self.buf[i + 1:]
                return line
            if len(self.buf) > limit:
                raise ProtocolError("line too long")
            if not self._fill():
                if self.buf:
                    line, self.buf = self.buf, b""
                    return line
                return None

    def read(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._fill():
                raise TransportError("connection closed in the middle of a body")
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_to_eof(self) -> bytes:
        while self._fill():
            if len(self.buf) > MAX_BODY_BYTES:
                raise ProtocolError("body too large")
        out, self.buf = self.buf, b""
        return out


def _connect(t: Target, deadline_ms: int, connect_timeout_ms: int,
             ssl_ctx: Optional[ssl.SSLContext]) -> socket.socket:
    left = min(deadline_ms - mono_ms(), connect_timeout_ms)
    if left <= 0:
        raise ConnectError(f"{t.url}: no time left to connect")
    try:
        s = socket.create_connection((t.host, t.port), timeout=left / 1000.0)
    except OSError as e:
        raise ConnectError(f"{t.url}: {e}") from None
    try:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if t.tls:
            ctx = ssl_ctx if ssl_ctx is not None else ssl.create_default_context()
            s = ctx.wrap_socket(s, server_hostname=t.host)
    except (OSError, ssl.SSLError) as e:
        s.close()
        raise ConnectError(f"{t.url}: TLS: {e}") from None
    return s


def _head(t: Target, method: str, path: str, headers: Dict[str, str],
          body: Optional[bytes], keep_alive: bool = False) -> bytes:
    lines = [f"{method} {t.base_path}{path} HTTP/1.1",
             f"Host: {t.host}:{t.port}"]
    if not keep_alive:
        lines.append("Connection: close")
    for k, v in headers.items():
        if "\r" in v or "\n" in v:
            raise ValueError(f"header {k} contains a line break")
        lines.append(f"{k}: {v}")
    if body is not None:
        lines.append("Content-Type: application/json")
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")


def _read_head(r: _Reader) -> Tuple[int, Dict[str, str]]:
    line = r.readline()
    if line is None:
        raise TransportError("connection closed before an answer")
    parts = line.decode("latin-1").split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") \
            or not parts[1].isdigit():
        raise ProtocolError(f"bad status line {line[:80]!r}")
    status = int(parts[1])
    headers: Dict[str, str] = {}
    total = 0
    while True:
        h = r.readline()
        if h is None:
            raise TransportError("connection closed in the headers")
        total += len(h)
        if total > MAX_HEADER_BYTES:
            raise ProtocolError("headers too large")
        h = h.rstrip(b"\r\n")
        if not h:
            return status, headers
        k, sep, v = h.decode("latin-1").partition(":")
        if sep:
            headers[k.strip().lower()] = v.strip()


class BodyReader:
    """Reads a response body as it arrives (chunked, sized or to EOF)."""

    def __init__(self, r: _Reader, headers: Dict[str, str]) -> None:
        self.r = r
        self.chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        cl = headers.get("content-length")
        self.left: Optional[int] = int(cl) if cl and cl.isdigit() else None
        self.done = False

    def read_some(self) -> bytes:
        """The next piece of the body; b"" at its end."""
        if self.done:
            return b""
        if self.chunked:
            size_line = self.r.readline()
            if size_line is None:
                raise TransportError("connection closed in a chunked body")
            try:
                size = int(size_line.split(b";")[0].strip(), 16)
            except ValueError:
                raise ProtocolError("bad chunk size") from None
            if size == 0:
                while True:  # trailers up to the empty line
                    t = self.r.readline()
                    if t is None or not t.strip():
                        break
                self.done = True
                return b""
            data = self.r.read(size)
            self.r.read(2)  # CRLF after the chunk
            return data
        if self.left is not None:
            if self.left == 0:
                self.done = True
                return b""
            if not self.r.buf and not self.r._fill():
                raise TransportError("connection closed in the middle of a body")
            n = min(self.left, len(self.r.buf))
            data = self.r.read(n)
            self.left -= n
            return data
        if not self.r.buf and not self.r._fill():
            self.done = True
            return b""
        data, self.r.buf = self.r.buf, b""
        return data

    def read_all(self) -> bytes:
        parts: List[bytes] = []
        total = 0
        while True:
            p = self.read_some()
            if not p:
                return b"".join(parts)
            total += len(p)
            if total > MAX_BODY_BYTES:
                raise ProtocolError("body too large")
            parts.append(p)


def request(t: Target, method: str, path: str, *,
            headers: Dict[str, str], body: Optional[bytes],
            deadline_ms: int, connect_timeout_ms: int,
            ssl_ctx: Optional[ssl.SSLContext],
            track: Optional[Callable[[Optional[socket.socket]], None]] = None
            ) -> Response:
    """One request on a new connection, ended by deadline_ms at the latest.

    Raises ConnectError when the connection could not be made (the request
    was not sent), Timeout or TransportError once it may have been sent.
    track(sock) / track(None) tell the caller which socket is in flight, so
    that another thread can abort it.
    """
    s = _connect(t, deadline_ms, connect_timeout_ms, ssl_ctx)
    if track is not None:
        track(s)
    try:
        data = _head(t, method, path, headers, body) + (body or b"")
        sent_ms = mono_ms()  # taken just before sending: safe time counts
        left = deadline_ms - sent_ms
        if left <= 0:
            raise Timeout("no time left to send")
        s.settimeout(left / 1000.0)
        try:
            s.sendall(data)
        except socket.timeout:
            raise Timeout("sending timed out") from None
        except OSError as e:
            raise TransportError(f"send failed: {e}") from None
        r = _Reader(s, deadline_ms)
        status, hdrs = _read_head(r)
        if method == "HEAD" or status in (204, 304):
            payload = b""
        else:
            payload = BodyReader(r, hdrs).read_all()
        return Response(status=status, headers=hdrs, body=payload,
                        sent_ms=sent_ms)
    finally:
        if track is not None:
            track(None)
        try:
            s.close()
        except OSError:
            pass


# A kept-alive connection idle for longer is not reused: tenured closes
# idle ones after --request-timeout-ms (30 s by default).
CONN_IDLE_MS = 15000

Track = Callable[[Optional[socket.socket]], None]
Outcome = Union[Response, Error]


class Conn:
    """A kept-alive connection for requests that may safely be sent twice
    (renews): :meth:`pipeline` writes many at once and reads their answers
    in order, all bounded by one deadline.  Not thread-safe: one per
    thread."""

    def __init__(self, connect_timeout_ms: int,
                 ssl_ctx: Optional[ssl.SSLContext],
                 track: Optional[Track] = None) -> None:
        self._connect_timeout_ms = connect_timeout_ms
        self._ssl_ctx = ssl_ctx
        self._track = track
        self._sock: Optional[socket.socket] = None
        self._reader: Optional[_Reader] = None
        self._target: Optional[Target] = None
        self._used_ms = 0

    def close(self) -> None:
        s, self._sock, self._reader = self._sock, None, None
        if s is None:
            return
        if self._track is not None:
            self._track(None)
        try:
            s.close()
        except OSError:
            pass

    def _open(self, t: Target, deadline_ms: int) -> None:
        self.close()
        s = _connect(t, deadline_ms, self._connect_timeout_ms, self._ssl_ctx)
        self._sock, self._target = s, t
        self._reader = _Reader(s, deadline_ms)
        if self._track is not None:
            self._track(s)

    def pipeline(self, t: Target, headers: Dict[str, str],
                 reqs: List[Tuple[str, str, Optional[bytes]]],
                 deadline_ms: int) -> List[Outcome]:
        """Send every request of reqs to t and return one outcome each, in
        order: the answer (sent_ms is the instant just before the bytes
        that carried it were written) or the TransportError that left it
        unanswered.  Raises ConnectError when nothing could be sent.  A
        reused connection that the server closed before answering anything
        is replaced once; a server that closes after some answers gets the
        rest on a new connection."""
        out: List[Outcome] = []
        replaced = False
        while len(out) < len(reqs):
            reused = (self._sock is not None and self._target is t
                      and mono_ms() - self._used_ms < CONN_IDLE_MS)
            if not reused:
                try:
                    self._open(t, deadline_ms)
                except ConnectError as e:
                    if not out:
                        raise
                    out.extend([e] * (len(reqs) - len(out)))
                    break
            before = len(out)
            err = self._round(t, headers, reqs[before:], deadline_ms, out)
            self._used_ms = mono_ms()
            if err is None:
                continue  # all answered, or the server closed: the rest
            self.close()
            if len(out) == before and reused and not replaced \
                    and not isinstance(err, Timeout):
                replaced = True  # a stale kept-alive connection: once more
                continue
            out.extend([err] * (len(reqs) - len(out)))
        return out

    def _round(self, t: Target, headers: Dict[str, str],
               reqs: List[Tuple[str, str, Optional[bytes]]], deadline_ms: int,
               out: List[Outcome]) -> Optional[Error]:
        """One write of reqs and the reading of their answers into out;
        None when done or when the server closed the connection after an
        answer (the caller sends the rest again), else the error."""
        s, r = self._sock, self._reader
        assert s is not None and r is not None
        data = b"".join(_head(t, m, p, headers, b, keep_alive=True) + (b or b"")
                        for m, p, b in reqs)
        sent_ms = mono_ms()
        left = deadline_ms - sent_ms
        if left <= 0:
            return Timeout("no time left to send")
        r.deadline_ms = deadline_ms
        try:
            s.settimeout(left / 1000.0)
            s.sendall(data)
            for method, _p, _b in reqs:
                status, hdrs = _read_head(r)
                body = BodyReader(r, hdrs)
                payload = b"" if method == "HEAD" or status in (204, 304) \
                    else body.read_all()
                out.append(Response(status=status, headers=hdrs,
                                    body=payload, sent_ms=sent_ms))
                if "close" in hdrs.get("connection", "").lower() or (
                        not body.chunked and body.left is None
                        and status not in (204, 304)):
                    self.close()
                    return None
            return None
        except socket.timeout:
            return Timeout("no answer before the deadline")
        except Error as e:  # transport or protocol: the rest is unanswered
            return e
        except OSError as e:
            return TransportError(f"connection broke: {e}")


class Stream:
    """An open streaming response (GET /v1/events)."""

    def __init__(self, sock: socket.socket, status: int,
                 headers: Dict[str, str], reader: _Reader) -> None:
        self.sock = sock
        self.status = status
        self.headers = headers
        self.reader = reader
        self.body = BodyReader(reader, headers)
        self._pending = b""

    def readline(self) -> Optional[str]:
        """The next line without its line end; None at the end of stream."""
        while True:
            i = self._pending.find(b"\n")
            if i >= 0:
                line, self._pending = self._pending[:i], self._pending[i + 1:]
                return line.rstrip(b"\r").decode("utf-8", "replace")
            if len(self._pending) > MAX_HEADER_BYTES:
                raise ProtocolError("event line too long")
            piece = self.body.read_some()
            if not piece:
                return None
            self._pending += piece

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass


def open_stream(t: Target, path: str, *, headers: Dict[str, str],
                connect_timeout_ms: int, first_answer_ms: int,
                idle_s: float, ssl_ctx: Optional[ssl.SSLContext]) -> Stream:
    """Open a GET whose body is read as it arrives; reads after the headers
    wait at most idle_s for the next bytes (heartbeats keep it alive)."""
    deadline = mono_ms() + first_answer_ms
    s = _connect(t, deadline, connect_timeout_ms, ssl_ctx)
    try:
        s.settimeout(max(0.001, (deadline - mono_ms()) / 1000.0))
        s.sendall(_head(t, "GET", path, headers, None))
        r = _Reader(s, deadline)
        status, hdrs = _read_head(r)
        r.deadline_ms = None
        r.idle_s = idle_s
        return Stream(s, status, hdrs, r)
    except socket.timeout:
        s.close()
        raise Timeout("no answer to the event stream request") from None
    except BaseException:
        s.close()
        raise
