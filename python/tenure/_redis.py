# SPDX-License-Identifier: MIT
"""Lease events from the Redis stream ``tenured --publish redis://...`` fills.

A small RESP2 client (only what ``XREAD BLOCK``, ``XREVRANGE``, ``AUTH`` and
``SELECT`` need), with caps on every reply (line length, bulk string size,
array length, nesting depth): anything odd drops the connection.  The
stream's records carry the fields ``id type name owner_id token floor
at_ms``; :class:`RedisEventStream` yields them as the same dicts as the SSE
iterator, skips repeated ids (the publisher delivers at least once) and
yields a ``reset`` where events may have been missed: a ``reset`` record,
or a jump in the records' ids (the stream was trimmed past the reader, or
Redis lost data).  As in libtenure (src/client/events_redis.c).

``rediss://...?tls_ca=FILE&tls_cert=FILE&tls_key=FILE&tls_sni=NAME&
tls_verify=0|1`` speaks TLS (the standard library's :mod:`ssl`), with the
same query keys as libtenure; the certificate is verified unless
``tls_verify=0``.
"""
from __future__ import annotations

import socket
import ssl
import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union
from urllib.parse import unquote

from .errors import ConnectError, ProtocolError, TransportError

LINE_MAX = 512
BULK_MAX = 4096
ARRAY_MAX = 1024
DEPTH_MAX = 6
BLOCK_MS = 500
COUNT = 256
IO_TIMEOUT_S = 3.0  # a reply may take BLOCK_MS; far beyond is a dead peer

Reply = Union[None, int, bytes, str, List[Any]]


class RedisError(ProtocolError):
    """Redis answered with an error reply (``-ERR ...``)."""


TLS_KEYS = ("tls_ca", "tls_cert", "tls_key", "tls_sni", "tls_verify")


def tls_options(url: str) -> Optional[Dict[str, str]]:
    """The TLS keys of a ``rediss://`` URL's query (not decoded, as in
    libtenure), None for ``redis://``; ValueError for an unknown key, a
    bad ``tls_verify`` or a query on ``redis://``."""
    _, q, query = url.partition("?")
    tls = url.startswith("rediss://")
    if not tls:
        if q:
            raise ValueError(f"TLS options need rediss://: {url!r}")
        return None
    opts: Dict[str, str] = {}
    for kv in filter(None, query.split("&")):
        k, eq, v = kv.partition("=")
        if not eq or k not in TLS_KEYS or \
                (k == "tls_verify" and v not in ("0", "1")):
            raise ValueError(f"bad TLS option {kv!r} in {url!r}")
        opts[k] = v
    return opts


def ssl_context(opts: Dict[str, str]) -> ssl.SSLContext:
    """An SSLContext for the keys of :func:`tls_options`."""
    ctx = ssl.create_default_context(cafile=opts.get("tls_ca") or None)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if opts.get("tls_cert"):
        ctx.load_cert_chain(opts["tls_cert"], opts.get("tls_key") or None)
    if opts.get("tls_verify") == "0":
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


def parse_url(url: str) -> Tuple[str, int, Optional[str], Optional[str],
                                 Optional[str], str]:
    """``redis[s]://[USER:PASS@]HOST:PORT[/DB]/STREAM[?tls_KEY=VALUE&...]``
    -> (host, port, user, password, db, stream); ValueError when it is not
    of that form."""
    tls_options(url)
    url = url.partition("?")[0]
    scheme = "rediss://" if url.startswith("rediss://") else "redis://"
    if not url.startswith(scheme):
        raise ValueError(f"not a redis:// URL: {url!r}")
    rest = url[len(scheme):]
    auth, sep, after = rest.rpartition("@")
    if not sep:
        auth, after = "", rest
    hostport, slash, path = after.partition("/")
    if not slash or not path:
        raise ValueError(f"no stream in {url!r}")
    user: Optional[str] = None
    pw: Optional[str] = None
    if auth:
        u, colon, p = auth.partition(":")
        if colon:
            user, pw = (unquote(u) or None), unquote(p)
        else:
            pw = unquote(u)
    host, colon, port_s = hostport.rpartition(":")
    if not colon:
        host, port_s = hostport, "6379"
    host = host.strip("[]")
    if not host or not port_s.isdigit() or not 0 < int(port_s) < 65536:
        raise ValueError(f"bad host:port in {url!r}")
    db: Optional[str] = None
    first, slash2, stream = path.partition("/")
    if slash2:
        if not first.isdigit():
            raise ValueError(f"bad database number in {url!r}")
        db = first
    else:
        stream = first
    if not stream or len(stream.encode("utf-8")) > 511:
        raise ValueError(f"bad stream name in {url!r}")
    return host, int(port_s), user, pw, db, stream


class Resp:
    """One connection to Redis, one command at a time."""

    def __init__(self, host: str, port: int,
                 connect_timeout_s: float = 1.0,
                 tls: Optional[Dict[str, str]] = None) -> None:
        try:
            sock = socket.create_connection((host, port),
                                            timeout=connect_timeout_s)
        except OSError as e:
            raise ConnectError(f"redis {host}:{port}: {e}") from None
        if tls is not None:
            try:
                sock = ssl_context(tls).wrap_socket(
                    sock, server_hostname=tls.get("tls_sni") or host)
            except (OSError, ValueError) as e:  # ssl.SSLError included
                sock.close()
                raise ConnectError(f"rediss {host}:{port}: {e}") from None
        self.sock = sock
        self.sock.settimeout(IO_TIMEOUT_S)
        self._buf = bytearray()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def abort(self) -> None:
        """Make a blocked call fail at once (from another thread)."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def call(self, *args: str) -> Reply:
        out = bytearray(b"*%d\r\n" % len(args))
        for a in args:
            b = a.encode("utf-8")
            out += b"$%d\r\n%s\r\n" % (len(b), b)
        try:
            self.sock.sendall(bytes(out))
        except OSError as e:
            raise TransportError(f"redis: {e}") from None
        r = self._parse(0)
        if isinstance(r, RedisError):
            raise r
        return r

    def _fill(self) -> None:
        try:
            chunk = self.sock.recv(65536)
        except OSError as e:  # socket.timeout included
            raise TransportError(f"redis: {e}") from None
        if not chunk:
            raise TransportError("redis closed the connection")
        self._buf += chunk

    def _line(self) -> bytes:
        start = 0
        while True:
            i = self._buf.find(b"\r\n", start)
            if i >= 0:
                if i > LINE_MAX:
                    break
                ln = bytes(self._buf[:i])
                del self._buf[:i + 2]
                return ln
            if len(self._buf) > LINE_MAX:
                break
            start = max(0, len(self._buf) - 1)
            self._fill()
        raise ProtocolError("redis: reply line too long")

    def _int(self, b: bytes) -> int:
        try:
            return int(b)
        except ValueError:
            raise ProtocolError(f"redis: bad number {b[:32]!r}") from None

    def _parse(self, depth: int) -> Any:
        if depth > DEPTH_MAX:
            raise ProtocolError("redis: reply nested too deep")
        ln = self._line()
        if not ln:
            raise ProtocolError("redis: empty reply line")
        t, rest = ln[:1], ln[1:]
        if t == b"+":
            return rest.decode("utf-8", "replace")
        if t == b"-":
            return RedisError("redis: " + rest.decode("utf-8", "replace"))
        if t == b":":
            return self._int(rest)
        if t == b"$":
            n = self._int(rest)
            if n == -1:
                return None
            if n < 0 or n > BULK_MAX:
                raise ProtocolError(f"redis: bulk string of {n} bytes")
            while len(self._buf) < n + 2:
                self._fill()
            if self._buf[n:n + 2] != b"\r\n":
                raise ProtocolError("redis: bulk string not ended by CRLF")
            b = bytes(self._buf[:n])
            del self._buf[:n + 2]
            return b
        if t == b"*":
            n = self._int(rest)
            if n == -1:
                return None
            if n < 0 or n > ARRAY_MAX:
                raise ProtocolError(f"redis: array of {n} elements")
            items = [self._parse(depth + 1) for _ in range(n)]
            for x in items:
                if isinstance(x, RedisError):
                    raise x
            return items
        raise ProtocolError(f"redis: unknown reply type {t!r}")


def _fields(kv: Any) -> Optional[Dict[str, str]]:
    if not isinstance(kv, list) or len(kv) % 2:
        return None
    out: Dict[str, str] = {}
    for k, v in zip(kv[0::2], kv[1::2]):
        if isinstance(k, bytes) and isinstance(v, bytes):
            out[k.decode("utf-8", "replace")] = v.decode("utf-8", "replace")
    return out


def _num(s: Optional[str]) -> Optional[int]:
    return int(s) if s is not None and s.isascii() and s.isdigit() \
        and len(s) <= 20 else None


def _reset(ev_id: Optional[int], why: str) -> Dict[str, Any]:
    return {"type": "reset", "name": None, "owner_id": None, "token": None,
            "floor": None, "id": ev_id, "message": why}


class RedisEventStream:
    """Iterator over lease events read from a Redis stream (the interface
    of :class:`tenure.EventStream`: ``close``, ``cut``, ``wait_connected``,
    ``last_id``, ``connects``).

    Starts after the newest record (like a new SSE subscriber); with
    ``last_event_id`` it reads the stream from its start and yields what
    comes after that id (a ``reset`` first when the stream no longer holds
    the next one).  Filters by ``prefix`` on the client side; ``reset``
    is yielded whatever the prefix."""

    def __init__(self, url: str, prefix: str = "",
                 last_event_id: Optional[int] = None,
                 reconnect: bool = True,
                 connect_timeout_s: float = 1.0) -> None:
        (self._host, self._port, self._user, self._pw, self._db,
         self._stream_key) = parse_url(url)
        self._tls = tls_options(url)
        self.url = url
        self.prefix = prefix
        self.last_id: Optional[int] = last_event_id
        self._from_start = last_event_id is not None
        self._entry: Optional[str] = None  # stream entry id to read after
        self._reconnect = reconnect
        self._connect_timeout_s = connect_timeout_s
        self._closed = threading.Event()
        self.connected = threading.Event()
        self.connects = 0
        self._lock = threading.Lock()
        self._conn: Optional[Resp] = None

    def close(self) -> None:
        self._closed.set()
        self.cut()

    def cut(self) -> None:
        """Drop the current connection; iteration goes on after a
        reconnection, from the last record read."""
        with self._lock:
            conn = self._conn
        if conn is not None:
            conn.abort()

    def wait_connected(self, timeout: float) -> bool:
        """True once the reader knows where in the stream it starts."""
        return self.connected.wait(timeout)

    def __enter__(self) -> "RedisEventStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        return self._run()

    def _setup(self, conn: Resp) -> None:
        if self._pw is not None:
            if self._user is not None:
                conn.call("AUTH", self._user, self._pw)
            else:
                conn.call("AUTH", self._pw)
        if self._db is not None:
            conn.call("SELECT", self._db)
        if self._entry is not None:
            return
        if self._from_start:
            self._entry = "0-0"
            return
        # The first time: after the newest record; "$" on every XREAD
        # would lose what comes in between two reads.
        r = conn.call("XREVRANGE", self._stream_key, "+", "-", "COUNT", "1")
        if not isinstance(r, list):
            raise ProtocolError("redis: XREVRANGE answer is not an array")
        entry = "0-0"
        if len(r) == 1 and isinstance(r[0], list) and len(r[0]) == 2 \
                and isinstance(r[0][0], bytes):
            entry = r[0][0].decode("ascii", "replace")
            kv = _fields(r[0][1])
            # Its event id too, so that a jump is seen from the first event.
            if kv is not None and _num(kv.get("id")) is not None:
                self.last_id = _num(kv.get("id"))
        self._entry = entry

    def _entries(self, conn: Resp) -> List[Any]:
        assert self._entry is not None
        r = conn.call("XREAD", "COUNT", str(COUNT), "BLOCK", str(BLOCK_MS),
                      "STREAMS", self._stream_key, self._entry)
        # nil on timeout, else [[key, [entry, ...]]]
        if isinstance(r, list) and r and isinstance(r[0], list) \
                and len(r[0]) == 2 and isinstance(r[0][1], list):
            return r[0][1]
        return []

    def _apply(self, e: Any) -> Iterator[Dict[str, Any]]:
        if not isinstance(e, list) or len(e) != 2 \
                or not isinstance(e[0], bytes):
            return
        self._entry = e[0].decode("ascii", "replace")
        kv = _fields(e[1])
        if kv is None:
            return
        ev_id, typ = _num(kv.get("id")), kv.get("type")
        if ev_id is None or not typ:
            return
        last = self.last_id
        if last is not None and ev_id <= last:
            return  # delivered again
        self.last_id = ev_id
        if typ == "reset":
            yield _reset(ev_id, "the publisher dropped events")
            return
        if last is not None and ev_id != last + 1:
            yield _reset(None, f"event ids jumped from {last} to {ev_id}")
        name = kv.get("name")
        if name is None or not name.startswith(self.prefix):
            return
        ev: Dict[str, Any] = {"type": typ, "name": name,
                              "owner_id": kv.get("owner_id"),
                              "token": _num(kv.get("token")),
                              "floor": _num(kv.get("floor")), "id": ev_id}
        at = _num(kv.get("at_ms"))
        if at is not None:
            ev["at_ms"] = at
        yield ev

    def _run(self) -> Iterator[Dict[str, Any]]:
        attempt = 0
        while not self._closed.is_set():
            try:
                conn = Resp(self._host, self._port, self._connect_timeout_s,
                            self._tls)
            except TransportError:
                if not self._reconnect:
                    raise
                attempt += 1
                self._closed.wait(min(5.0, 0.1 * 2 ** min(attempt - 1, 6)))
                continue
            with self._lock:
                self._conn = conn
            try:
                if self._closed.is_set():
                    break
                self._setup(conn)
                attempt = 0
                self.connects += 1
                self.connected.set()
                while not self._closed.is_set():
                    for e in self._entries(conn):
                        yield from self._apply(e)
            except (TransportError, ProtocolError):
                if not self._reconnect or self._closed.is_set():
                    if self._closed.is_set():
                        break
                    raise
            finally:
                with self._lock:
                    self._conn = None
                conn.close()
            self._closed.wait(0.2)  # a pause between reconnects
