# SPDX-License-Identifier: MIT
"""The lease client: the same semantics as libtenure (docs/CLIENT.md).

* A :class:`Lease` knows for how long it is still safe to act as the holder:
  ``expires_in_ms`` of the last successful acquire or renew, counted on the
  monotonic clock from the moment that request was *sent*, minus a safety
  margin (a tenth of the TTL unless ``safety_margin_ms`` is given).  Once it
  has run out it stays 0, even if a late renew answer arrives.
* One keepalive thread per client renews every kept lease when a third of
  its TTL has passed since the last successful renew was sent, retries with
  backoff (TTL/30 doubling up to TTL/6) while safe time is left, bounds each
  renew by the earliest safe deadline of all kept leases, and reports each
  lease's end exactly once.
* With ``watch_events=True`` a second thread follows the event stream and
  reports a kept lease lost as soon as the server announces its end; on a
  ``reset`` it renews every kept lease at once.  A latency optimisation only.
  With ``events_url="redis://HOST:PORT[/DB]/STREAM"`` it follows the Redis
  stream ``tenured --publish`` fills instead, with the same rules (a
  ``reset`` record or a jump in the events' ids counts as a reset);
  ``rediss://...?tls_ca=FILE&tls_cert=FILE&tls_key=FILE`` over TLS;
  ``events_url="kafka://BROKERS/TOPIC[?librdkafka settings]"`` follows the
  Kafka topic instead (needs python3-confluent-kafka).
"""
from __future__ import annotations

import json
import os
import socket
import ssl
import threading
from dataclasses import dataclass
from typing import (Any, Callable, Dict, Iterator, List, Optional, Sequence,
                    Tuple, Type, Union)
from types import TracebackType
from urllib.parse import quote, urlencode

from . import _http
from ._http import mono_ms
from ._kafka import KafkaEventStream
from ._kafka import parse_url as _kafka_url
from ._redis import RedisEventStream
from ._redis import parse_url as _redis_url
from .errors import (ConnectError, Error, Expired, Forbidden, Lost,
                     ProtocolError, TooManyRequests, TransportError,
                     Unavailable, from_response)

__all__ = ["Client", "Lease", "LeaseInfo", "CheckResult", "EventStream",
           "Hold", "END_LOST", "END_EXPIRED", "END_RELEASED", "END_STOPPED"]

NAME_MAX = 256
OWNER_MAX = 128
TOKEN_MAX = 1 << 53

# Why a kept lease left the keepalive (the argument of on_end).
END_LOST = "lost"
END_EXPIRED = "expired"
END_RELEASED = "released"
END_STOPPED = "stopped"

_HELD, _LOST, _EXPIRED, _RELEASED = "held", "lost", "expired", "released"

LogFn = Callable[[str], None]
EndFn = Callable[["Lease", str, Optional[Error]], None]


@dataclass(frozen=True)
class LeaseInfo:
    """A live lease as the server reports it (get, list)."""

    name: str
    owner_id: str
    token: int
    expires_in_ms: Optional[int]


@dataclass(frozen=True)
class CheckResult:
    """The answer of check: is token the live grant, and the name's floor."""

    current: bool
    token: Optional[int]
    floor: int


def _int(o: Dict[str, Any], key: str, *, required: bool = True,
         lo: int = 0) -> Optional[int]:
    v = o.get(key)
    if isinstance(v, int) and not isinstance(v, bool) and v >= lo:
        return v
    if required:
        raise ProtocolError(f"answer without a valid {key!r}: {o!r}")
    return None


def _name_ok(name: str) -> None:
    if not isinstance(name, str):
        raise TypeError("a lease name is a str")
    n = len(name.encode("utf-8"))
    if n == 0 or n > NAME_MAX:
        raise ValueError(f"a lease name must be 1 to {NAME_MAX} bytes")


class Lease:
    """One grant held by this process.

    ``name``, ``owner``, ``token`` (the fencing token: stamp every write with
    it), ``secret`` (the credential for renew and release; never log it) and
    ``proof`` (the server's signature, or None) never change.
    """

    def __init__(self, client: "Client", name: str, owner: str, token: int,
                 secret: str, proof: Optional[str], ttl_ms: int) -> None:
        self._client = client
        self.name = name
        self.owner = owner
        self.token = token
        self.secret = secret
        self.proof = proof
        self._ttl_ms = ttl_ms
        self._state = _HELD
        self._sent_ms = 0
        self._deadline_ms: Optional[int] = None
        self._end_error: Optional[Error] = None
        # keepalive bookkeeping, under the client's lock
        self._kept = False
        self._stop_requested = False
        self._release_done = False
        self._on_end: Optional[EndFn] = None
        self._next_renew_ms = 0
        self._backoff_ms = 0
        self._ended: Optional[str] = None  # reason, once reported

    def __repr__(self) -> str:  # never shows the secret
        return (f"Lease(name={self.name!r}, owner={self.owner!r}, "
                f"token={self.token}, state={self._state!r})")

    @property
    def owner_id(self) -> str:
        return self.owner

    @property
    def ttl_ms(self) -> int:
        with self._client._mu:
            return self._ttl_ms

    # -- safe time (client lock held) --

    def _safe_at(self, now_ms: int) -> int:
        if self._state != _HELD or self._deadline_ms is None:
            return 0
        left = self._deadline_ms - now_ms
        if left <= 0:
            self._state = _EXPIRED
            return 0
        return left

    def _granted(self, sent_ms: int, ttl_ms: int, expires_in_ms: int) -> None:
        if self._state != _HELD:
            return  # lost, expired or released: never revived
        if self._deadline_ms is not None and sent_ms < self._sent_ms:
            return  # an older request answered late
        self._ttl_ms = ttl_ms
        self._sent_ms = sent_ms
        self._deadline_ms = (sent_ms + expires_in_ms
                             - self._client._margin_ms(ttl_ms))

    # -- public --

    def safe_for_ms(self) -> int:
        """Milliseconds for which no other holder can exist, on the monotonic
        clock, counted from when the last successful acquire or renew was
        sent, minus the safety margin.  0 once lost, released or run out;
        once 0 it never grows back."""
        with self._client._mu:
            return self._safe_at(mono_ms())

    def is_held(self) -> bool:
        """``safe_for_ms() > 0``: check it right before each write."""
        return self.safe_for_ms() > 0

    def ensure_held(self) -> None:
        """Raise :class:`Lost` (or :class:`Expired`) unless still held."""
        with self._client._mu:
            self._safe_at(mono_ms())
            st, err = self._state, self._end_error
        if st == _HELD:
            return
        if st == _EXPIRED:
            raise Expired(f"the safe time of lease {self.name!r} ran out")
        if st == _LOST:
            raise err if isinstance(err, Lost) else Lost(
                f"lease {self.name!r} was lost")
        raise Lost(f"lease {self.name!r} was released")

    @property
    def state(self) -> str:
        """``"held"``, ``"lost"``, ``"expired"`` or ``"released"``."""
        with self._client._mu:
            self._safe_at(mono_ms())
            return self._state

    @property
    def ended(self) -> Optional[str]:
        """Why the keepalive stopped keeping this lease, once it did."""
        with self._client._mu:
            return self._ended

    def renew(self, ttl_ms: Optional[int] = None) -> None:
        """Renew now; safe time counts again from this request's sending.

        Raises :class:`Lost` when the server says the grant is gone (for
        good), :class:`Expired` without sending anything when the safe time
        already ran out, :class:`Forbidden` on a wrong secret; transport
        errors leave the lease as it was."""
        self._client._renew(self, ttl_ms)

    def release(self) -> None:
        """Give the lease back.  From this call on it is neither held nor
        renewed, whatever the outcome.  Raises :class:`Lost` when it was no
        longer live."""
        self._client._release(self)


class Hold:
    """The context manager of :meth:`Client.hold`."""

    def __init__(self, client: "Client", kw: Dict[str, Any]) -> None:
        self._client = client
        self._kw = kw
        self.lease: Optional[Lease] = None
        self._end = threading.Event()

    def __enter__(self) -> Lease:
        lease = self._client.acquire(**self._kw)
        self.lease = lease
        try:
            self._client.keep(lease, lambda _l, _r, _e: self._end.set())
        except BaseException:
            try:
                lease.release()
            except Error:
                pass
            raise
        return lease

    def __exit__(self, et: Optional[Type[BaseException]],
                 ev: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        lease = self.lease
        assert lease is not None
        c = self._client
        with c._mu:
            c._mu_now_check(lease)
            state, err = lease._state, lease._end_error
        if state in (_LOST, _EXPIRED):
            c.stop_keeping(lease)
            self._end.wait(1.0)  # the keepalive has let go of it
            if et is not None:
                return None  # the body's own exception goes on
            if state == _EXPIRED:
                raise Expired(f"the safe time of lease {lease.name!r} ran out"
                              " while it was held")
            raise err if isinstance(err, Lost) else Lost(
                f"lease {lease.name!r} was lost while it was held")
        if state == _RELEASED:  # the body gave it back itself
            self._end.wait(1.0)
            return None
        try:
            lease.release()
        except Lost:
            if et is None:
                raise
        except Error as e:
            c._logf(f"release of lease {lease.name!r} failed: {e}")
        finally:
            self._end.wait(1.0)  # the keepalive has let go of it
        return None


class EventStream:
    """Iterator over lease events of ``GET /v1/events``.

    Yields dicts with ``type`` (``acquired``, ``released``, ``expired``,
    ``revoked`` or ``reset``), ``name``, ``owner_id``, ``token``, ``floor``
    and ``id`` (None where the event has none: a reset has no name).  When
    the stream is cut it reconnects (through the client's URLs) with
    ``Last-Event-ID`` and resumes after the last id seen; when the server no
    longer has the missed events it yields ``{"type": "reset", ...}``: state
    must be read again.  ``close()`` (from any thread) ends the iteration.
    """

    def __init__(self, client: "Client", prefix: str,
                 last_event_id: Optional[int], idle_timeout_s: float,
                 reconnect: bool) -> None:
        self._client = client
        self.prefix = prefix
        self.last_id: Optional[int] = last_event_id
        self._idle_s = idle_timeout_s
        self._reconnect = reconnect
        self._stream: Optional[_http.Stream] = None
        self._closed = threading.Event()
        self.connected = threading.Event()
        self.connects = 0
        self._lock = threading.Lock()

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            st = self._stream
        if st is not None:
            st.close()

    def wait_connected(self, timeout: float) -> bool:
        """True once the server said the stream is subscribed."""
        return self.connected.wait(timeout)

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def cut(self) -> None:
        """Drop the current connection (as a network cut would); iteration
        goes on with a reconnection.  For tests and failover drills."""
        with self._lock:
            st = self._stream
        if st is not None:
            st.close()

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        return self._run()

    def _open(self, attempt: int) -> _http.Stream:
        c = self._client
        t = c._targets[(c._current + attempt) % len(c._targets)]
        q = urlencode({"prefix": self.prefix}) if self.prefix else ""
        hdrs = c._headers()
        hdrs["Accept"] = "text/event-stream"
        if self.last_id is not None:
            hdrs["Last-Event-ID"] = str(self.last_id)
        st = _http.open_stream(t, "/v1/events" + ("?" + q if q else ""),
                               headers=hdrs,
                               connect_timeout_ms=c._connect_timeout_ms,
                               first_answer_ms=c._timeout_ms,
                               idle_s=self._idle_s, ssl_ctx=c._ssl_ctx)
        if st.status != 200:
            body = st.body.read_all()
            st.close()
            try:
                parsed = json.loads(body.decode("utf-8")) if body else None
            except ValueError:
                parsed = None
            raise from_response(st.status, parsed)
        return st

    def _run(self) -> Iterator[Dict[str, Any]]:
        attempt = 0
        while not self._closed.is_set():
            try:
                st = self._open(attempt)
            except (TransportError, Unavailable, TooManyRequests):
                if not self._reconnect:
                    raise
                attempt += 1
                # 100 ms, doubling to 5 s while nobody answers
                self._closed.wait(min(5.0, 0.1 * 2 ** min(attempt - 1, 6)))
                continue
            attempt = 0
            with self._lock:
                self._stream = st
            if self._closed.is_set():
                st.close()
                break
            self.connects += 1
            try:
                yield from self._read(st)
            except (TransportError, ProtocolError):
                pass  # cut: resume after the last id
            finally:
                with self._lock:
                    self._stream = None
                st.close()
            if not self._reconnect:
                break
            self._closed.wait(0.1)  # a pause between reconnects

    def _read(self, st: _http.Stream) -> Iterator[Dict[str, Any]]:
        ev_id: Optional[int] = None
        data: List[str] = []
        while True:
            line = st.readline()
            if line is None:
                return
            if line == "":
                if ev_id is not None:
                    self.last_id = ev_id
                if data:
                    ev = self._event("\n".join(data), ev_id)
                    if ev is not None:
                        yield ev
                ev_id, data = None, []
                continue
            if line.startswith(":"):
                if line.startswith(": subscribed"):
                    self.connected.set()
                continue
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "id":
                ev_id = int(value) if value.isdigit() else None
            elif field == "data":
                data.append(value)

    @staticmethod
    def _event(text: str, ev_id: Optional[int]) -> Optional[Dict[str, Any]]:
        try:
            o = json.loads(text)
        except ValueError:
            return None
        if not isinstance(o, dict) or not isinstance(o.get("type"), str):
            return None
        ev: Dict[str, Any] = {"type": o["type"], "name": o.get("name"),
                              "owner_id": o.get("owner_id"),
                              "token": o.get("token"),
                              "floor": o.get("floor"), "id": ev_id}
        if "message" in o:
            ev["message"] = o["message"]
        return ev


class Client:
    """A connection to one or more tenured servers.

    ``url`` is a base URL (``http://host:port``; ``host:port`` alone means
    http) or a sequence of them: a request moves on to the next one only
    when it certainly was not processed (no connection, or 503).  ``bearer``
    is sent as ``Authorization: Bearer``.  ``timeout`` (seconds) bounds each
    request beyond any ``wait_ms``.  Thread-safe; create one per process.
    """

    def __init__(self, url: Union[str, Sequence[str]] = "http://127.0.0.1:7300",
                 bearer: Optional[str] = None, timeout: float = 5.0, *,
                 connect_timeout: float = 1.0,
                 owner_id: Optional[str] = None,
                 safety_margin_ms: Optional[int] = None,
                 watch_events: bool = False,
                 events_url: Optional[str] = None,
                 ca_file: Optional[str] = None,
                 cert_file: Optional[str] = None,
                 key_file: Optional[str] = None,
                 log: Optional[LogFn] = None) -> None:
        urls = [url] if isinstance(url, str) else list(url)
        if not 1 <= len(urls) <= 8:
            raise ValueError("between 1 and 8 server URLs are needed")
        self._targets = [_http.parse_url(u) for u in urls]
        self._current = 0
        if timeout <= 0 or connect_timeout <= 0:
            raise ValueError("timeouts must be positive")
        self._timeout_ms = int(timeout * 1000)
        self._connect_timeout_ms = int(connect_timeout * 1000)
        if owner_id is None:
            owner_id = f"{socket.gethostname() or 'localhost'}:{os.getpid()}"
        if not 1 <= len(owner_id.encode("utf-8")) <= OWNER_MAX:
            raise ValueError(f"owner_id must be 1 to {OWNER_MAX} bytes")
        self.owner_id = owner_id
        if bearer is not None and ("\r" in bearer or "\n" in bearer):
            raise ValueError("the bearer token contains a line break")
        self._bearer = bearer
        self._margin = safety_margin_ms
        self._ssl_ctx: Optional[ssl.SSLContext] = None
        if ca_file or cert_file:
            ctx = ssl.create_default_context(cafile=ca_file)
            if cert_file:
                ctx.load_cert_chain(cert_file, key_file)
            self._ssl_ctx = ctx
        self._log = log
        if events_url is not None:
            # ValueError now, not in the thread
            if events_url.startswith("kafka://"):
                _kafka_url(events_url)
            else:
                _redis_url(events_url)
            watch_events = True
        self._events_url = events_url
        self._watch_events = watch_events
        self._mu = threading.Lock()
        self._cond = threading.Condition(self._mu)
        self._kept: List[Lease] = []
        self._thread: Optional[threading.Thread] = None
        self._ev_thread: Optional[threading.Thread] = None
        self._ev_stream: Optional[Union[EventStream, RedisEventStream,
                                        KafkaEventStream]] = None
        self._stopping = False
        self._ka_sock: Optional[socket.socket] = None  # renew in flight
        self.event_losses = 0  # kept leases reported lost by the event stream

    # ---- plumbing ----

    def _logf(self, msg: str) -> None:
        if self._log is not None:
            try:
                self._log(msg)
            except Exception:  # a log hook never breaks the keepalive
                pass

    def _margin_ms(self, ttl_ms: int) -> int:
        return self._margin if self._margin is not None and self._margin >= 0 \
            else ttl_ms // 10

    def _mu_now_check(self, lease: Lease) -> None:
        lease._safe_at(mono_ms())

    def _headers(self) -> Dict[str, str]:
        h = {"Accept": "application/json"}
        if self._bearer is not None:
            h["Authorization"] = f"Bearer {self._bearer}"
        return h

    def _do(self, method: str, path: str, body: Optional[Dict[str, Any]] = None,
            *, extra_ms: int = 0, deadline_ms: Optional[int] = None,
            track: Optional[Callable[[Optional[socket.socket]], None]] = None
            ) -> _http.Response:
        """Send to the URL that last answered; move on only when the request
        certainly was not processed (no connection, or 503)."""
        data = json.dumps(body, separators=(",", ":")).encode("utf-8") \
            if body is not None else None
        if deadline_ms is None:
            deadline_ms = mono_ms() + self._timeout_ms + extra_ms
        n = len(self._targets)
        start = self._current
        last: Optional[_http.Response] = None
        err: Optional[Error] = None
        for i in range(n):
            idx = (start + i) % n
            try:
                r = _http.request(self._targets[idx], method, path,
                                  headers=self._headers(), body=data,
                                  deadline_ms=deadline_ms,
                                  connect_timeout_ms=self._connect_timeout_ms,
                                  ssl_ctx=self._ssl_ctx, track=track)
            except ConnectError as e:
                err = e
                continue
            self._current = idx
            if r.status == 503 and i + 1 < n:
                last = r
                continue
            return r
        if last is not None:
            return last
        assert err is not None
        raise err

    @staticmethod
    def _raise_for(r: _http.Response) -> None:
        try:
            body = r.json()
        except ProtocolError:
            body = None
        raise from_response(r.status, body if isinstance(body, dict) else None)

    @staticmethod
    def _path(name: str, suffix: str = "") -> str:
        return "/v1/leases/" + quote(name, safe="") + suffix

    # ---- leases ----

    def acquire(self, name: str, owner: Optional[str] = None, ttl_ms: int = 0,
                wait_ms: int = 0, *, request_id: Optional[str] = None,
                lock_delay_ms: int = 0) -> Lease:
        """Take the lease ``name`` for ``ttl_ms``.  With ``wait_ms`` > 0 the
        server queues the request (first come, first served) for up to that
        long while the name is held.  Raises :class:`Held` (``.holder``),
        :class:`LockDelay`, :class:`Timeout` (outcome unknown: retry with the
        same ``request_id``), :class:`ConnectError` or another
        :class:`Error`.  The monotonic time is taken just before sending."""
        _name_ok(name)
        if not isinstance(ttl_ms, int) or ttl_ms <= 0:
            raise ValueError("ttl_ms must be a positive int")
        if wait_ms < 0 or lock_delay_ms < 0:
            raise ValueError("wait_ms and lock_delay_ms must be >= 0")
        body: Dict[str, Any] = {"name": name,
                                "owner_id": owner or self.owner_id,
                                "ttl_ms": ttl_ms}
        if wait_ms > 0:
            body["wait_ms"] = wait_ms
        if request_id is not None:
            body["request_id"] = request_id
        if lock_delay_ms > 0:
            body["lock_delay_ms"] = lock_delay_ms
        r = self._do("POST", "/v1/leases", body, extra_ms=wait_ms)
        if r.status not in (200, 201):
            self._raise_for(r)
        o = r.json()
        if not isinstance(o, dict):
            raise ProtocolError("grant is not an object")
        token = _int(o, "token")
        secret = o.get("lease_secret")
        expires = _int(o, "expires_in_ms")
        if not isinstance(secret, str) or not secret:
            raise ProtocolError("grant without lease_secret")
        ttl = _int(o, "ttl_ms", required=False, lo=1) or ttl_ms
        proof = o.get("proof")
        lease = Lease(self, name, str(o.get("owner_id", owner or self.owner_id)),
                      int(token or 0), secret,
                      proof if isinstance(proof, str) else None, ttl)
        with self._mu:
            lease._granted(r.sent_ms, ttl, int(expires or 0))
        return lease

    def adopt(self, name: str, token: int, secret: str) -> Lease:
        """A handle for a grant made elsewhere (e.g. ``tenure acquire``), to
        renew or release it.  Its safe time is 0 until a renew succeeds."""
        _name_ok(name)
        if not secret:
            raise ValueError("secret is required")
        return Lease(self, name, "", token, secret, None, 0)

    def _renew_allowed(self, lease: Lease) -> None:
        if lease._deadline_ms is not None:
            lease._safe_at(mono_ms())
        if lease._state == _HELD:
            return
        if lease._state == _EXPIRED:
            raise Expired(f"the safe time of lease {lease.name!r} ran out")
        if lease._state == _LOST:
            raise Lost(f"lease {lease.name!r} was lost")
        raise Error(f"lease {lease.name!r} was released", code="released")

    def _renew_raw(self, lease: Lease, ttl_send: Optional[int],
                   deadline_ms: int, track: Optional[
                       Callable[[Optional[socket.socket]], None]] = None
                   ) -> Tuple[int, int, int]:
        """PATCH; returns (sent_ms, ttl_ms, expires_in_ms) or raises."""
        body: Dict[str, Any] = {"token": lease.token,
                                "lease_secret": lease.secret}
        if ttl_send:
            body["ttl_ms"] = ttl_send
        r = self._do("PATCH", self._path(lease.name), body,
                     deadline_ms=deadline_ms, track=track)
        if r.status != 200:
            self._raise_for(r)
        o = r.json()
        if not isinstance(o, dict):
            raise ProtocolError("renew answer is not an object")
        exp = _int(o, "expires_in_ms")
        ttl = _int(o, "ttl_ms", required=False, lo=1) or ttl_send \
            or lease._ttl_ms
        return r.sent_ms, int(ttl), int(exp or 0)

    def _apply_renew(self, lease: Lease, res: Optional[Tuple[int, int, int]],
                     err: Optional[Error]) -> Optional[Error]:
        """Under the lock: fold a renew's outcome into the lease."""
        if isinstance(err, (Lost, Forbidden)):
            if lease._state == _HELD:
                lease._state = _LOST
                lease._end_error = err if isinstance(err, Lost) else Lost(
                    f"lease {lease.name!r}: {err}", status=err.status)
            self._cond.notify_all()
            return err
        if err is not None:
            return err
        assert res is not None
        lease._granted(*res)
        if lease._safe_at(mono_ms()) <= 0:
            if lease._state == _RELEASED:
                return Error(f"lease {lease.name!r} was released",
                             code="released")
            return Expired(f"the renew of {lease.name!r} answered after its "
                           "safe time ran out")
        return None

    def _renew(self, lease: Lease, ttl_ms: Optional[int]) -> None:
        with self._mu:
            self._renew_allowed(lease)
        res, err = None, None
        try:
            res = self._renew_raw(lease, ttl_ms, mono_ms() + self._timeout_ms)
        except Error as e:
            err = e
        with self._mu:
            out = self._apply_renew(lease, res, err)
        if out is not None:
            raise out

    def _release(self, lease: Lease) -> None:
        with self._mu:
            lease._state = _RELEASED  # the keepalive never renews it again
        err: Optional[Error] = None
        try:
            r = self._do("DELETE", self._path(lease.name),
                         {"token": lease.token, "lease_secret": lease.secret})
            if r.status not in (200, 204):
                self._raise_for(r)
        except Error as e:
            err = e
        with self._mu:
            lease._end_error = err
            lease._release_done = True
            self._cond.notify_all()
        if err is not None:
            raise err

    def force_release(self, name: str) -> None:
        """End whatever grant of ``name`` is live (``?force=true``): an
        admin's operation (anyone's while authentication is off).  Raises
        :class:`Lost` when nothing is live."""
        _name_ok(name)
        r = self._do("DELETE", self._path(name, "?force=true"))
        if r.status not in (200, 204):
            self._raise_for(r)

    def get(self, name: str) -> Optional[LeaseInfo]:
        """The live lease of ``name``, or None when the name is free."""
        _name_ok(name)
        r = self._do("GET", self._path(name))
        if r.status == 404:
            try:
                b = r.json()
            except ProtocolError:
                b = None
            if isinstance(b, dict) and b.get("error") == "not_found":
                return None
        if r.status != 200:
            self._raise_for(r)
        return self._info(r.json())

    @staticmethod
    def _info(o: Any) -> LeaseInfo:
        if not isinstance(o, dict) or not isinstance(o.get("name"), str):
            raise ProtocolError(f"not a lease: {o!r}")
        return LeaseInfo(name=o["name"], owner_id=str(o.get("owner_id", "")),
                         token=int(_int(o, "token") or 0),
                         expires_in_ms=_int(o, "expires_in_ms",
                                            required=False))

    def list(self, prefix: str = "", after: Optional[str] = None,
             limit: int = 0) -> Tuple[List[LeaseInfo], Optional[str]]:
        """One page of live leases in name order and the ``after`` of the
        next page (None at the end)."""
        q: Dict[str, str] = {}
        if prefix:
            q["prefix"] = prefix
        if after is not None:
            q["after"] = after
        if limit:
            q["limit"] = str(limit)
        r = self._do("GET", "/v1/leases" + ("?" + urlencode(q) if q else ""))
        if r.status != 200:
            self._raise_for(r)
        o = r.json()
        if not isinstance(o, dict) or not isinstance(o.get("leases"), list):
            raise ProtocolError("list answer without leases")
        nxt = o.get("next")
        return ([self._info(x) for x in o["leases"]],
                nxt if isinstance(nxt, str) else None)

    def check_full(self, name: str, token: int) -> CheckResult:
        """Whether ``token`` is the live grant of ``name``, the live token
        (None when free) and the name's floor."""
        _name_ok(name)
        if not isinstance(token, int) or token < 0 or token > TOKEN_MAX:
            raise ValueError("token must be an int in 0..2^53")
        r = self._do("GET", self._path(name, f"/check?token={token}"))
        if r.status != 200:
            self._raise_for(r)
        o = r.json()
        if not isinstance(o, dict) or not isinstance(o.get("current"), bool):
            raise ProtocolError(f"check answer without current: {o!r}")
        return CheckResult(current=o["current"],
                           token=_int(o, "token", required=False),
                           floor=int(_int(o, "floor") or 0))

    def check(self, name: str, token: int) -> Tuple[bool, int]:
        """``(current, floor)``: is ``token`` the live grant of ``name``, and
        the highest token ever granted for it.  A sink may admit a token
        only if it is >= the floor it knows."""
        res = self.check_full(name, token)
        return res.current, res.floor

    def events(self, prefix: str = "", *, last_event_id: Optional[int] = None,
               idle_timeout: float = 60.0, reconnect: bool = True,
               source: Optional[str] = None
               ) -> Union[EventStream, RedisEventStream, KafkaEventStream]:
        """Follow lease events of names starting with ``prefix``; see
        :class:`EventStream`.  ``idle_timeout`` (seconds without a byte,
        heartbeats included) counts as a cut.  With ``source=
        "redis://HOST:PORT[/DB]/STREAM"`` the same dicts come from the
        Redis stream ``tenured --publish`` fills (the prefix is applied
        here; ``idle_timeout`` does not apply: it reads with XREAD BLOCK);
        with ``source="kafka://BROKERS/TOPIC"`` from the Kafka topic
        (from its end; ``last_event_id`` and ``idle_timeout`` do not
        apply)."""
        if source is not None and source.startswith("kafka://"):
            return KafkaEventStream(source, prefix)
        if source is not None:
            return RedisEventStream(
                source, prefix, last_event_id, reconnect,
                connect_timeout_s=self._connect_timeout_ms / 1000.0)
        return EventStream(self, prefix, last_event_id, idle_timeout, reconnect)

    def hold(self, name: str, owner: Optional[str] = None, ttl_ms: int = 0,
             wait_ms: int = 0, **kw: Any) -> Hold:
        """``with client.hold(name, owner=..., ttl_ms=...) as lease:`` acquire,
        renew in the background while the body runs, release at exit.  If
        the lease was lost (or its safe time ran out) meanwhile, the exit
        raises :class:`Lost` (:class:`Expired`) instead of releasing.  Inside
        the body check ``lease.is_held()`` (or call ``lease.ensure_held()``)
        before each write."""
        args: Dict[str, Any] = dict(name=name, owner=owner, ttl_ms=ttl_ms,
                                    wait_ms=wait_ms)
        args.update(kw)
        return Hold(self, args)

    # ---- keepalive ----

    def keep(self, lease: Lease, on_end: Optional[EndFn] = None) -> None:
        """Keep ``lease`` alive from the client's background thread; on_end
        (lease, reason, error) runs exactly once, on that thread, when it
        ends: ``"lost"``, ``"expired"``, ``"released"`` or ``"stopped"``."""
        with self._mu:
            if lease._client is not self or lease._kept or self._stopping:
                raise Error("lease cannot be kept", code="bad_request")
            if lease._safe_at(mono_ms()) <= 0:
                if lease._state == _EXPIRED:
                    raise Expired(f"the safe time of {lease.name!r} ran out")
                raise Error("lease is not held", code="bad_request")
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._keepalive_main, name="tenure-keepalive",
                    daemon=True)
                self._thread.start()
            if self._watch_events and self._ev_thread is None:
                self._ev_stream = self.events(
                    "", idle_timeout=60.0, source=self._events_url)
                self._ev_thread = threading.Thread(
                    target=self._follow_main, name="tenure-events",
                    daemon=True)
                self._ev_thread.start()
            lease._kept = True
            lease._stop_requested = False
            lease._on_end = on_end
            lease._ended = None
            lease._backoff_ms = 0
            lease._next_renew_ms = lease._sent_ms + lease._ttl_ms // 3
            self._kept.append(lease)
            self._cond.notify_all()

    def stop_keeping(self, lease: Lease) -> None:
        """Stop renewing ``lease`` without releasing it; its on_end runs with
        ``"stopped"`` unless it already ended."""
        with self._mu:
            if lease._kept:
                lease._stop_requested = True
                self._cond.notify_all()

    def _track_ka(self, sock: Optional[socket.socket]) -> None:
        with self._mu:
            self._ka_sock = sock
            abort = sock is not None and self._stopping
        if abort and sock is not None:
            _abort(sock)

    def close(self) -> None:
        """Stop the keepalive (kept leases end with ``"stopped"``, without a
        release; an in-flight renew is aborted) and the event follower, and
        wait for them."""
        with self._mu:
            self._stopping = True
            self._cond.notify_all()
            t, et, es = self._thread, self._ev_thread, self._ev_stream
            ka = self._ka_sock
        if ka is not None:
            _abort(ka)
        if es is not None:
            es.close()
        if t is not None:
            t.join()
        if et is not None:
            et.join()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _end_of(self, lease: Lease, now: int) -> Optional[Tuple[str, Optional[Error]]]:
        lease._safe_at(now)
        if lease._state == _LOST:
            return END_LOST, lease._end_error
        if lease._state == _EXPIRED:
            return END_EXPIRED, Expired(f"the safe time of {lease.name!r} "
                                        "ran out before a renew succeeded")
        if lease._state == _RELEASED and lease._release_done:
            return END_RELEASED, lease._end_error
        if self._stopping or lease._stop_requested:
            return END_STOPPED, None
        return None

    def _finish_one(self) -> bool:
        now = mono_ms()
        for lease in self._kept:
            end = self._end_of(lease, now)
            if end is None:
                continue
            self._kept.remove(lease)
            lease._kept = False
            lease._ended = end[0]
            cb = lease._on_end
            self._mu.release()
            try:
                self._logf(f"keepalive of lease {lease.name!r} "
                           f"token={lease.token} ended: {end[0]}")
                if cb is not None:
                    try:
                        cb(lease, end[0], end[1])
                    except Exception as e:  # never kill the keepalive
                        self._logf(f"on_end of {lease.name!r} raised {e!r}")
            finally:
                self._mu.acquire()
            return True
        return False

    @staticmethod
    def _renewable(lease: Lease) -> bool:
        return lease._state == _HELD and not lease._stop_requested

    def _earliest_deadline(self) -> Optional[int]:
        ds = [lease._deadline_ms for lease in self._kept
              if self._renewable(lease) and lease._deadline_ms is not None]
        return min(ds) if ds else None

    def _pick_due(self, now: int) -> Tuple[Optional[Lease], Optional[int]]:
        due: Optional[Lease] = None
        wake: Optional[int] = None
        for lease in self._kept:
            if not self._renewable(lease):
                continue
            if lease._deadline_ms is not None:
                wake = lease._deadline_ms if wake is None \
                    else min(wake, lease._deadline_ms)
            if lease._next_renew_ms > now:
                wake = lease._next_renew_ms if wake is None \
                    else min(wake, lease._next_renew_ms)
            elif due is None or lease._next_renew_ms < due._next_renew_ms:
                due = lease
        return due, wake

    def _renew_one(self, lease: Lease) -> None:
        """Called and returns with the lock held; drops it meanwhile."""
        ttl = lease._ttl_ms
        deadline = mono_ms() + self._timeout_ms
        ed = self._earliest_deadline()
        if ed is not None:
            deadline = min(deadline, ed)
        self._mu.release()
        res, err = None, None
        try:
            res = self._renew_raw(lease, ttl, deadline, self._track_ka)
        except Error as e:
            err = e
        finally:
            self._mu.acquire()
        out = err
        if lease._state == _HELD:
            out = self._apply_renew(lease, res, err)
        now = mono_ms()
        safe = lease._safe_at(now)
        if out is None:
            lease._backoff_ms = 0
            lease._next_renew_ms = lease._sent_ms + lease._ttl_ms // 3
            msg = (f"renewed lease {lease.name!r} token={lease.token} "
                   f"safe_for_ms={safe}")
        else:
            first = max(10, lease._ttl_ms // 30)
            cap = max(first, lease._ttl_ms // 6)
            lease._backoff_ms = first if lease._backoff_ms == 0 \
                else min(cap, 2 * lease._backoff_ms)
            lease._next_renew_ms = now + lease._backoff_ms
            msg = (f"renew of lease {lease.name!r} token={lease.token} "
                   f"failed: {out.code} ({out})")
        if lease._state == _HELD or out is not None:
            self._mu.release()
            try:
                self._logf(msg)
            finally:
                self._mu.acquire()

    def _keepalive_main(self) -> None:
        with self._mu:
            while True:
                if self._finish_one():
                    continue
                if self._stopping and not self._kept:
                    break
                due, wake = self._pick_due(mono_ms())
                if due is not None and not self._stopping:
                    self._renew_one(due)
                    continue
                timeout = None if wake is None \
                    else max(0.0, (wake - mono_ms()) / 1000.0)
                self._cond.wait(timeout)
            self._thread = None

    # ---- event follower (watch_events) ----

    @staticmethod
    def _ends(lease: Lease, typ: str, token: int) -> bool:
        if typ == "acquired":
            return token > lease.token
        return token == lease.token and typ in ("expired", "revoked",
                                                "released")

    def _follow_main(self) -> None:
        es = self._ev_stream
        assert es is not None
        try:
            for ev in es:
                with self._mu:
                    if self._stopping:
                        break
                    if ev["type"] == "reset":
                        # Events may have been missed: a kept lease may have
                        # ended unheard, so renew every one of them now.
                        now = mono_ms()
                        for lease in self._kept:
                            if lease._state == _HELD \
                                    and lease._next_renew_ms > now:
                                lease._next_renew_ms = now
                        self._cond.notify_all()
                        continue
                    tok = ev.get("token")
                    if not isinstance(tok, int):
                        continue
                    for lease in self._kept:
                        if lease._state == _HELD and lease.name == ev["name"] \
                                and self._ends(lease, ev["type"], tok):
                            lease._state = _LOST
                            lease._end_error = Lost(
                                f"lease {lease.name!r}: the server announced "
                                f"{ev['type']} (token {tok})")
                            self.event_losses += 1
                            self._cond.notify_all()
        except Error as e:
            self._logf(f"event follower stopped: {e}")


def _abort(sock: socket.socket) -> None:
    """Make a blocked request on sock fail at once."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
