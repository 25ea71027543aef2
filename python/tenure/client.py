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

The leases themselves are in _lease.py, the event stream in _events.py and
the two background threads in _keepalive.py; all are importable from here
as before.
"""
from __future__ import annotations

import json
import os
import secrets
import socket
import ssl
import threading
from typing import (Any, Callable, Dict, List, Optional, Sequence, Tuple,
                    Union)
from urllib.parse import quote, urlencode

from . import _http
from ._events import EventStream
from ._http import mono_ms
from ._kafka import KafkaEventStream
from ._kafka import parse_url as _kafka_url
from ._keepalive import _abort, _Keepalive
from ._lease import (END_EXPIRED, END_LOST, END_RELEASED, END_STOPPED,
                     OWNER_MAX, TOKEN_MAX, _EXPIRED, _HELD, _LOST, _RELEASED,
                     CheckResult, Hold, Lease, LeaseInfo, LogFn, _int,
                     _name_ok)
from ._redis import RedisEventStream
from ._redis import parse_url as _redis_url
from .errors import (ConnectError, Error, Expired, Forbidden, Lost,
                     ProtocolError, from_response)

__all__ = ["Client", "Lease", "LeaseInfo", "CheckResult", "EventStream",
           "Hold", "END_LOST", "END_EXPIRED", "END_RELEASED", "END_STOPPED"]


class Client(_Keepalive):
    """A connection to one or more tenured servers.

    ``url`` is a base URL (``http://host:port``; ``host:port`` alone means
    http) or a sequence of them: a request moves on to the next one when
    nothing was sent (no connection) or on a 503, never after it was sent
    and no answer came; since a 503 does not prove that nothing was done,
    every acquire carries a ``request_id`` (drawn when not given), so the
    next server answers the same grant.  ``bearer``
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
        """Send to the URL that last answered; move on when nothing was sent
        (no connection) or on a 503 (see the class docstring)."""
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
        # Always a request_id: _do sends a request again to the next server
        # after a 503, and a 503 does not prove nothing was done (the
        # PostgreSQL store answers 503 for a commit whose connection broke
        # before its result came); with the same request_id the next server
        # answers that very grant instead of 409 held by our own owner.
        body["request_id"] = request_id if request_id is not None \
            else secrets.token_hex(16)
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
        if wait_ms > 0:
            self._refresh_waited(lease)
        return lease

    def _refresh_waited(self, lease: Lease) -> None:
        """A waiting acquire's safe time counts from its sending, as every
        request's does, so the wait used it up (after waiting the TTL none
        was left).  When more than half of it went, one renew restarts the
        count from its own sending; if it fails the lease stays as the grant
        left it (run out, or lost when the server says so)."""
        with self._mu:
            d, sent = lease._deadline_ms, lease._sent_ms
            if lease._state != _HELD or d is None \
                    or 2 * (d - mono_ms()) >= d - sent:
                return
            lease._deadline_ms = None  # renewable, never writable meanwhile
        try:
            self._renew(lease, None)
        except Error:
            pass
        finally:
            with self._mu:
                if lease._deadline_ms is None:
                    lease._deadline_ms = d

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
