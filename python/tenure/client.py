# SPDX-License-Identifier: MIT
"""The lease client: the same semantics as libtenure (docs/CLIENT.md).

* A :class:`Lease` knows for how long it is still safe to act as the holder:
  ``expires_in_ms`` of the last successful acquire or renew, counted on the
  monotonic clock from the moment that request was *sent*, minus a safety
  margin (a tenth of the TTL unless ``safety_margin_ms`` is given).  Once it
  has run out it stays 0, even if a late renew answer arrives.
* A :class:`Session` (``open_session``) is one heartbeat for many leases:
  every lease taken under it has the session's safe time and ends with it.
* The client's keepalive renews every kept lease and session when a third
  of its TTL has passed since the last successful renew was sent, retries
  with backoff (TTL/30 doubling up to TTL/6) while safe time is left, and
  reports each one's end exactly once; its renews go out pipelined on a few
  kept-alive connections at once (_keepalive.py).
* With ``watch_events=True`` a follower thread reads the event stream and
  reports a kept lease or session lost as soon as the server announces its
  end; on a ``reset`` it renews everything kept at once (_follow.py).  A
  latency optimisation only.  ``events_url="redis://HOST:PORT[/DB]/STREAM"``
  follows the Redis stream ``tenured --publish`` fills instead, with the
  same rules; ``rediss://...?tls_ca=FILE&tls_cert=FILE&tls_key=FILE`` over
  TLS; ``events_url="kafka://BROKERS/TOPIC[?librdkafka settings]"`` the
  Kafka topic (needs python3-confluent-kafka).

The modules import one way: errors and _http at the bottom, then
_transport (servers, credential, the one lock), _lease, _session, _events,
_keepalive, _follow, _hold, and this module at the top; everything is
importable from here as before.
"""
from __future__ import annotations

import os
import secrets
import socket
import ssl
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union
from urllib.parse import urlencode

from ._events import EventStream
from ._follow import Follower
from ._hold import Hold, SessionHold
from ._http import mono_ms
from ._kafka import KafkaEventStream
from ._kafka import parse_url as _kafka_url
from ._keepalive import Keepalive
from ._lease import (END_EXPIRED, END_LOST, END_RELEASED, END_STOPPED,
                     OWNER_MAX, TOKEN_MAX, _HELD, CheckResult, EndFn, Kept,
                     Lease, LeaseInfo, _int, _name_ok)
from ._redis import RedisEventStream
from ._redis import parse_url as _redis_url
from ._session import ClaimResult, Session
from ._transport import (LogFn, Transport, error_of, lease_path,
                         session_path)
from .errors import Error, ProtocolError

__all__ = ["Client", "Lease", "LeaseInfo", "CheckResult", "EventStream",
           "Hold", "SessionHold", "Session", "SessionInfo", "ClaimResult",
           "END_LOST", "END_EXPIRED", "END_RELEASED", "END_STOPPED"]

AnyStream = Union[EventStream, RedisEventStream, KafkaEventStream]


class SessionInfo:
    """A live session as the server lists it (never its secret)."""

    __slots__ = ("session_id", "owner_id", "ttl_ms", "expires_in_ms",
                 "leases")

    def __init__(self, o: Dict[str, Any]) -> None:
        sid = o.get("session_id")
        if not isinstance(sid, str) or not sid:
            raise ProtocolError(f"not a session: {o!r}")
        self.session_id: str = sid
        self.owner_id = str(o.get("owner_id", ""))
        self.ttl_ms = _int(o, "ttl_ms", required=False)  # get only
        self.expires_in_ms = _int(o, "expires_in_ms", required=False)
        self.leases = _int(o, "leases", required=False) or 0

    def __repr__(self) -> str:
        return (f"SessionInfo(session_id={self.session_id!r}, "
                f"owner_id={self.owner_id!r}, leases={self.leases})")


class Client:
    """A connection to one or more tenured servers.

    ``url`` is a base URL (``http://host:port``; ``host:port`` alone means
    http) or a sequence of them: a request moves on to the next one when
    nothing was sent (no connection) or on a 503, never after it was sent
    and no answer came; since a 503 does not prove that nothing was done,
    every acquire carries a ``request_id`` (drawn when not given), so the
    next server answers the same grant.  ``bearer``
    is sent as ``Authorization: Bearer``.  ``timeout`` (seconds) bounds each
    request beyond any ``wait_ms``.  ``keepalive_connections`` is how many
    connections the keepalive renews on at once.  Thread-safe; create one
    per process.
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
                 log: Optional[LogFn] = None,
                 keepalive_connections: int = 4) -> None:
        urls = [url] if isinstance(url, str) else list(url)
        if not 1 <= len(urls) <= 8:
            raise ValueError("between 1 and 8 server URLs are needed")
        if timeout <= 0 or connect_timeout <= 0:
            raise ValueError("timeouts must be positive")
        if not 1 <= keepalive_connections <= 64:
            raise ValueError("keepalive_connections must be 1 to 64")
        if owner_id is None:
            owner_id = f"{socket.gethostname() or 'localhost'}:{os.getpid()}"
        if not 1 <= len(owner_id.encode("utf-8")) <= OWNER_MAX:
            raise ValueError(f"owner_id must be 1 to {OWNER_MAX} bytes")
        if bearer is not None and ("\r" in bearer or "\n" in bearer):
            raise ValueError("the bearer token contains a line break")
        ssl_ctx: Optional[ssl.SSLContext] = None
        if ca_file or cert_file:
            ssl_ctx = ssl.create_default_context(cafile=ca_file)
            if cert_file:
                ssl_ctx.load_cert_chain(cert_file, key_file)
        if events_url is not None:
            # ValueError now, not in the thread
            if events_url.startswith("kafka://"):
                _kafka_url(events_url)
            else:
                _redis_url(events_url)
            watch_events = True
        self._t = Transport(urls, bearer=bearer,
                            timeout_ms=int(timeout * 1000),
                            connect_timeout_ms=int(connect_timeout * 1000),
                            owner_id=owner_id, margin_ms=safety_margin_ms,
                            ssl_ctx=ssl_ctx, log=log)
        self.owner_id = owner_id
        self._events_url = events_url
        self._watch_events = watch_events
        self._keepalive = Keepalive(self._t, workers=keepalive_connections)
        self._follower = Follower(self._t, self._keepalive, lambda: self.events(
            "", idle_timeout=60.0, source=self._events_url))

    @property
    def event_losses(self) -> int:
        """Kept leases and sessions reported lost by the event stream."""
        return self._follower.event_losses

    @property
    def _ev_stream(self) -> Optional[AnyStream]:
        return self._follower.stream

    def _logf(self, msg: str) -> None:
        self._t.logf(msg)

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
        # Always a request_id: the transport sends a request again to the
        # next server after a 503, and a 503 does not prove nothing was
        # done (the PostgreSQL store answers 503 for a commit whose
        # connection broke before its result came); with the same
        # request_id the next server answers that very grant instead of 409
        # held by our own owner.
        body["request_id"] = request_id if request_id is not None \
            else secrets.token_hex(16)
        if lock_delay_ms > 0:
            body["lock_delay_ms"] = lock_delay_ms
        r = self._t.do("POST", "/v1/leases", body, extra_ms=wait_ms)
        if r.status not in (200, 201):
            raise error_of(r)
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
        lease = Lease(self._t, name,
                      str(o.get("owner_id", owner or self.owner_id)),
                      int(token or 0), secret,
                      proof if isinstance(proof, str) else None, ttl)
        with self._t.mu:
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
        mu = self._t.mu
        with mu:
            d, sent = lease._deadline_ms, lease._sent_ms
            if lease._state != _HELD or d is None \
                    or 2 * (d - mono_ms()) >= d - sent:
                return
            lease._deadline_ms = None  # renewable, never writable meanwhile
        try:
            lease._renew_now(None)
        except Error:
            pass
        finally:
            with mu:
                if lease._deadline_ms is None:
                    lease._deadline_ms = d

    def adopt(self, name: str, token: int, secret: str) -> Lease:
        """A handle for a grant made elsewhere (e.g. ``tenure acquire``), to
        renew or release it.  Its safe time is 0 until a renew succeeds."""
        _name_ok(name)
        if not secret:
            raise ValueError("secret is required")
        return Lease(self._t, name, "", token, secret, None, 0)

    def force_release(self, name: str) -> None:
        """End whatever grant of ``name`` is live (``?force=true``): an
        admin's operation (anyone's while authentication is off).  Raises
        :class:`Lost` when nothing is live."""
        _name_ok(name)
        r = self._t.do("DELETE", lease_path(name, "?force=true"))
        if r.status not in (200, 204):
            raise error_of(r)

    def get(self, name: str) -> Optional[LeaseInfo]:
        """The live lease of ``name``, or None when the name is free."""
        _name_ok(name)
        r = self._t.do("GET", lease_path(name))
        if r.status == 404:
            try:
                b = r.json()
            except ProtocolError:
                b = None
            if isinstance(b, dict) and b.get("error") == "not_found":
                return None
        if r.status != 200:
            raise error_of(r)
        return self._info(r.json())

    @staticmethod
    def _info(o: Any) -> LeaseInfo:
        if not isinstance(o, dict) or not isinstance(o.get("name"), str):
            raise ProtocolError(f"not a lease: {o!r}")
        return LeaseInfo(name=o["name"], owner_id=str(o.get("owner_id", "")),
                         token=int(_int(o, "token") or 0),
                         expires_in_ms=_int(o, "expires_in_ms",
                                            required=False))

    def _page(self, path: str, key: str, prefix: str, after: Optional[str],
              limit: int) -> Tuple[List[Any], Optional[str]]:
        q: Dict[str, str] = {}
        if prefix:
            q["prefix"] = prefix
        if after is not None:
            q["after"] = after
        if limit:
            q["limit"] = str(limit)
        r = self._t.do("GET", path + ("?" + urlencode(q) if q else ""))
        if r.status != 200:
            raise error_of(r)
        o = r.json()
        if not isinstance(o, dict) or not isinstance(o.get(key), list):
            raise ProtocolError(f"list answer without {key}")
        nxt = o.get("next")
        return o[key], nxt if isinstance(nxt, str) else None

    def list(self, prefix: str = "", after: Optional[str] = None,
             limit: int = 0) -> Tuple[List[LeaseInfo], Optional[str]]:
        """One page of live leases in name order and the ``after`` of the
        next page (None at the end)."""
        items, nxt = self._page("/v1/leases", "leases", prefix, after, limit)
        return [self._info(x) for x in items], nxt

    def list_all(self, prefix: str = "") -> List[LeaseInfo]:
        """Every live lease whose name starts with ``prefix`` (all pages)."""
        out: List[LeaseInfo] = []
        after: Optional[str] = None
        while True:
            items, after = self.list(prefix, after, 1000)
            out.extend(items)
            if after is None:
                return out

    def check_full(self, name: str, token: int) -> CheckResult:
        """Whether ``token`` is the live grant of ``name``, the live token
        (None when free) and the name's floor."""
        _name_ok(name)
        if not isinstance(token, int) or token < 0 or token > TOKEN_MAX:
            raise ValueError("token must be an int in 0..2^53")
        r = self._t.do("GET", lease_path(name, f"/check?token={token}"))
        if r.status != 200:
            raise error_of(r)
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

    # ---- sessions (docs/SESSIONS.md) ----

    def open_session(self, owner_id: Optional[str] = None, ttl_ms: int = 0,
                     *, keep: bool = True, on_end: Optional[EndFn] = None,
                     on_lease_end: Optional[EndFn] = None) -> Session:
        """Open a session (``POST /v1/sessions``) and, unless ``keep`` is
        False, keep it alive from the keepalive: one renew for all its
        leases.  ``on_end(session, reason, error)`` runs once when it ends
        (``"lost"``, ``"expired"``, ``"released"`` after :meth:`Session.end`,
        ``"stopped"``); ``on_lease_end(lease, reason, error)`` once for each
        of its leases when it ends, alone or with the session (every lease
        of a lost session is reported lost)."""
        if not isinstance(ttl_ms, int) or ttl_ms <= 0:
            raise ValueError("ttl_ms must be a positive int")
        owner = owner_id or self.owner_id
        r = self._t.do("POST", "/v1/sessions",
                       {"owner_id": owner, "ttl_ms": ttl_ms})
        if r.status not in (200, 201):
            raise error_of(r)
        o = r.json()
        if not isinstance(o, dict):
            raise ProtocolError("session answer is not an object")
        sid, secret = o.get("session_id"), o.get("session_secret")
        if not isinstance(sid, str) or not sid \
                or not isinstance(secret, str) or not secret:
            raise ProtocolError("session without session_id or secret")
        ttl = _int(o, "ttl_ms", required=False, lo=1) or ttl_ms
        s = Session(self._t, sid, str(o.get("owner_id") or owner), secret,
                    ttl, on_lease_end)
        with self._t.mu:
            s._granted(r.sent_ms, ttl, int(_int(o, "expires_in_ms") or 0))
        if keep:
            try:
                self.keep(s, on_end)
            except Error:
                try:
                    s.end()
                except Error:
                    pass
                raise
        return s

    def adopt_session(self, session_id: str, secret: str,
                      owner_id: str = "", ttl_ms: int = 0) -> Session:
        """A handle for a session opened elsewhere (``tenure session
        open``), to renew, claim under or end it.  Its safe time is 0 until
        a renew succeeds; not kept until :meth:`keep`."""
        if not session_id or not secret:
            raise ValueError("session_id and secret are required")
        return Session(self._t, session_id, owner_id, secret, ttl_ms)

    def get_session(self, session_id: str) -> Optional[SessionInfo]:
        """The live session ``session_id`` (owner, TTL, time left, number
        of leases; never its secret), or None when it is not live."""
        r = self._t.do("GET", session_path(session_id))
        if r.status == 404:
            return None
        if r.status != 200:
            raise error_of(r)
        return SessionInfo(r.json() or {})

    def force_end_session(self, session_id: str) -> None:
        """End the session ``session_id`` and every lease of it (each
        revoked): an admin's operation (anyone's while authentication is
        off).  Raises :class:`Lost` when it is not live."""
        r = self._t.do("DELETE", session_path(session_id, "?force=true"))
        if r.status not in (200, 204):
            raise error_of(r)

    def hold_session(self, names: Sequence[str] = (), *,
                     owner_id: Optional[str] = None, ttl_ms: int = 0,
                     require_all: bool = False,
                     **claim_kw: Any) -> SessionHold:
        """``with client.hold_session(names, owner_id=..., ttl_ms=...) as s:``
        open a session, claim ``names`` (``.claim`` of the returned object
        says which were granted; with ``require_all`` anything short of all
        raises :class:`Held` and ends the session), keep it alive while the
        body runs, and end it (releasing every lease of it) at exit.  If
        the session was lost meanwhile, the exit raises :class:`Lost`
        (:class:`Expired`) instead.  Check ``s.is_held()`` before each
        write."""
        def open_it(on_end: EndFn) -> Session:
            return self.open_session(owner_id, ttl_ms, on_end=on_end)
        return SessionHold(open_it, self._keepalive, list(names),
                           require_all, claim_kw)

    def sessions(self, prefix: str = "", after: Optional[str] = None,
                 limit: int = 0) -> Tuple[List[SessionInfo], Optional[str]]:
        """One page of live sessions whose owner_id starts with ``prefix``,
        in session_id order, and the ``after`` of the next page."""
        items, nxt = self._page("/v1/sessions", "sessions", prefix, after,
                                limit)
        return [SessionInfo(x) for x in items], nxt

    def sessions_all(self, prefix: str = "") -> List[SessionInfo]:
        """Every live session whose owner_id starts with ``prefix``."""
        out: List[SessionInfo] = []
        after: Optional[str] = None
        while True:
            items, after = self.sessions(prefix, after, 1000)
            out.extend(items)
            if after is None:
                return out

    # ---- events ----

    def events(self, prefix: str = "", *, last_event_id: Optional[int] = None,
               idle_timeout: float = 60.0, reconnect: bool = True,
               source: Optional[str] = None) -> AnyStream:
        """Follow lease events of names starting with ``prefix`` (session
        events whatever the prefix); see :class:`EventStream`.
        ``idle_timeout`` (seconds without a byte, heartbeats included)
        counts as a cut.  With ``source="redis://HOST:PORT[/DB]/STREAM"``
        the same dicts come from the Redis stream ``tenured --publish``
        fills (the prefix is applied here; ``idle_timeout`` does not apply:
        it reads with XREAD BLOCK); with ``source="kafka://BROKERS/TOPIC"``
        from the Kafka topic (from its end; ``last_event_id`` and
        ``idle_timeout`` do not apply)."""
        if source is not None and source.startswith("kafka://"):
            return KafkaEventStream(source, prefix)
        if source is not None:
            return RedisEventStream(
                source, prefix, last_event_id, reconnect,
                connect_timeout_s=self._t.connect_timeout_ms / 1000.0)
        return EventStream(self._t, prefix, last_event_id, idle_timeout,
                           reconnect)

    # ---- the keepalive ----

    def keep(self, item: Kept, on_end: Optional[EndFn] = None) -> None:
        """Keep a lease (or a session opened with ``keep=False``) alive
        from the client's keepalive; on_end(item, reason, error) runs
        exactly once, on the keepalive's thread, when it ends:
        ``"lost"``, ``"expired"``, ``"released"`` or ``"stopped"``."""
        self._keepalive.keep(item, on_end)
        if self._watch_events:
            with self._t.mu:
                self._follower.start()

    def stop_keeping(self, item: Kept) -> None:
        """Stop renewing a lease or session without releasing it; its
        on_end runs with ``"stopped"`` unless it already ended."""
        self._keepalive.stop_keeping(item)

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
        return Hold(lambda: self.acquire(**args), self._keepalive)

    def close(self) -> None:
        """Stop the keepalive (kept leases and sessions end with
        ``"stopped"``, without a release; renews in flight are aborted)
        and the event follower, and wait for them."""
        self._keepalive.close()
        self._follower.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
