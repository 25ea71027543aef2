# SPDX-License-Identifier: MIT
"""Leases as the client hands them out: :class:`Lease` (its safe time, its
state, its renew and release), the answers of get and check, and the
limits and end reasons of docs/CLIENT.md.

:class:`Kept` is what a lease and a session share: the safe time (counted
on the monotonic clock from the sending of the last acknowledged acquire,
open or renew, minus the margin; once run out it never grows back) and the
keepalive's bookkeeping.  Every field of it is guarded by the transport's
lock.  A lease taken under a session has no safe time of its own: it reads
its session's, and ends when the session does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

from . import _http
from ._http import mono_ms
from ._transport import Transport, error_of, lease_path
from .errors import Error, Expired, Forbidden, Lost, ProtocolError

__all__ = ["Lease", "LeaseInfo", "CheckResult", "Kept", "END_LOST",
           "END_EXPIRED", "END_RELEASED", "END_STOPPED"]

NAME_MAX = 256
OWNER_MAX = 128
TOKEN_MAX = 1 << 53

# Why a kept lease or session left the keepalive (the argument of on_end).
END_LOST = "lost"
END_EXPIRED = "expired"
END_RELEASED = "released"
END_STOPPED = "stopped"

_HELD, _LOST, _EXPIRED, _RELEASED = "held", "lost", "expired", "released"

EndFn = Callable[[Any, str, Optional[Error]], None]
Request = Tuple[str, str, Dict[str, Any]]  # method, path, body
Renewed = Tuple[int, int, int]  # sent_ms, ttl_ms, expires_in_ms


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


def parse_renewed(r: _http.Response, ttl_sent: Optional[int],
                  ttl_before: int) -> Renewed:
    """(sent_ms, ttl_ms, expires_in_ms) of a renew's 200, or raises the
    error of any other answer."""
    if r.status != 200:
        raise error_of(r)
    o = r.json()
    if not isinstance(o, dict):
        raise ProtocolError("renew answer is not an object")
    exp = _int(o, "expires_in_ms")
    ttl = _int(o, "ttl_ms", required=False, lo=1) or ttl_sent or ttl_before
    return r.sent_ms, int(ttl), int(exp or 0)


class Kept:
    """A lease or a session as its holder counts it (see the module)."""

    _released_code = "released"  # the local error once given back

    def __init__(self, t: Transport, ttl_ms: int) -> None:
        self._t = t
        self._ttl_ms = ttl_ms
        self._state = _HELD
        self._sent_ms = 0
        self._deadline_ms: Optional[int] = None
        self._end_error: Optional[Error] = None
        # keepalive bookkeeping
        self._kept = False
        self._stop_requested = False
        self._release_done = False
        self._on_end: Optional[EndFn] = None
        self._next_renew_ms = 0
        self._backoff_ms = 0
        self._busy = False  # a renew of the keepalive is in flight
        self._ended: Optional[str] = None  # reason, once reported
        self._notify: Optional[Callable[["Kept"], None]] = None
        self._queued = False  # in the keepalive's list of changed items

    # -- under the transport's lock --

    def _changed(self) -> None:
        """Tell the keepalive that the state changed (it reports ends)."""
        if self._notify is not None:
            self._notify(self)

    def _what(self) -> str:
        raise NotImplementedError

    def _changed_lease(self, lease: "Lease") -> None:
        """A session hears here that one of its leases changed."""

    def _log_name(self) -> str:
        return self._what()

    def _renew_request(self, ttl_ms: Optional[int]) -> Request:
        raise NotImplementedError

    def _safe_at(self, now_ms: int) -> int:
        if self._state != _HELD or self._deadline_ms is None:
            return 0
        left = self._deadline_ms - now_ms
        if left <= 0:
            self._state = _EXPIRED
            self._changed()
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
                             - self._t.margin_ms(ttl_ms))

    def _lose(self, err: Error) -> None:
        if self._state == _HELD:
            self._state = _LOST
            self._end_error = err if isinstance(err, Lost) else Lost(
                f"{self._what()}: {err}", status=err.status)
            self._changed()

    def _apply_renew(self, res: Optional[Renewed],
                     err: Optional[Error]) -> Optional[Error]:
        """Fold a renew's outcome in; the error to report, if any."""
        if isinstance(err, (Lost, Forbidden)):
            self._lose(err)
            return err
        if err is not None:
            return err
        assert res is not None
        self._granted(*res)
        if self._safe_at(mono_ms()) <= 0:
            if self._state == _RELEASED:
                return Error(f"{self._what()} was {self._released_code}",
                             code=self._released_code)
            return Expired(f"the renew of {self._what()} answered after its "
                           "safe time ran out")
        return None

    def _renew_allowed(self) -> None:
        if self._deadline_ms is not None:
            self._safe_at(mono_ms())
        if self._state == _HELD:
            return
        if self._state == _EXPIRED:
            raise Expired(f"the safe time of {self._what()} ran out")
        if self._state == _LOST:
            raise Lost(f"{self._what()} was lost")
        raise Error(f"{self._what()} was {self._released_code}",
                    code=self._released_code)

    def _renew_now(self, ttl_ms: Optional[int]) -> None:
        """One renew from the caller's thread (not the keepalive's)."""
        t = self._t
        with t.mu:
            self._renew_allowed()
            method, path, body = self._renew_request(ttl_ms)
            before = self._ttl_ms
        res, err = None, None
        try:
            res = parse_renewed(t.do(method, path, body), ttl_ms, before)
        except Error as e:
            err = e
        with t.mu:
            out = self._apply_renew(res, err)
        if out is not None:
            raise out

    def _ensure(self) -> None:
        """Raise Lost/Expired unless held (lock held)."""
        self._safe_at(mono_ms())
        st, err = self._state, self._end_error
        if st == _HELD:
            return
        if st == _EXPIRED:
            raise Expired(f"the safe time of {self._what()} ran out")
        if st == _LOST:
            raise err if isinstance(err, Lost) else Lost(
                f"{self._what()} was lost")
        raise Lost(f"{self._what()} was released")

    # -- public --

    def safe_for_ms(self) -> int:
        """Milliseconds for which no other holder can exist, on the monotonic
        clock, counted from when the last successful acquire or renew was
        sent, minus the safety margin.  0 once lost, released or run out;
        once 0 it never grows back."""
        with self._t.mu:
            return self._safe_at(mono_ms())

    def is_held(self) -> bool:
        """``safe_for_ms() > 0``: check it right before each write."""
        return self.safe_for_ms() > 0

    def ensure_held(self) -> None:
        """Raise :class:`Lost` (or :class:`Expired`) unless still held."""
        with self._t.mu:
            self._ensure()

    @property
    def state(self) -> str:
        """``"held"``, ``"lost"``, ``"expired"`` or ``"released"``."""
        with self._t.mu:
            self._safe_at(mono_ms())
            return self._state

    @property
    def ended(self) -> Optional[str]:
        """Why the keepalive stopped keeping this, once it did."""
        with self._t.mu:
            return self._ended

    @property
    def ttl_ms(self) -> int:
        with self._t.mu:
            return self._ttl_ms


class Lease(Kept):
    """One grant held by this process.

    ``name``, ``owner``, ``token`` (the fencing token: stamp every write with
    it), ``secret`` (the credential for renew and release; never log it),
    ``proof`` (the server's signature, or None) and ``session`` (the
    :class:`Session` it was taken under, or None) never change.
    """

    def __init__(self, t: Transport, name: str, owner: str, token: int,
                 secret: str, proof: Optional[str], ttl_ms: int,
                 session: Optional[Kept] = None) -> None:
        super().__init__(t, ttl_ms)
        self.name = name
        self.owner = owner
        self.token = token
        self.secret = secret
        self.proof = proof
        self.session = session

    def __repr__(self) -> str:  # never shows the secret
        return (f"Lease(name={self.name!r}, owner={self.owner!r}, "
                f"token={self.token}, state={self._state!r})")

    @property
    def owner_id(self) -> str:
        return self.owner

    def _what(self) -> str:
        return f"lease {self.name!r}"

    def _log_name(self) -> str:
        return f"lease {self.name!r} token={self.token}"

    def _changed(self) -> None:
        super()._changed()
        s = self.session
        if s is not None:
            s._changed_lease(self)

    def _safe_at(self, now_ms: int) -> int:
        s = self.session
        if s is None or self._state != _HELD:
            return super()._safe_at(now_ms)
        left = s._safe_at(now_ms)
        if left <= 0:  # the session ended: so did this lease, at once
            st = s._state
            if st == _HELD:
                return 0  # never acknowledged: not yet safe
            self._state = _RELEASED if st == _RELEASED else st
            self._release_done = st == _RELEASED
            self._end_error = s._end_error
            self._changed()
        return left

    def _renew_request(self, ttl_ms: Optional[int]) -> Request:
        body: Dict[str, Any] = {"token": self.token,
                                "lease_secret": self.secret}
        if ttl_ms:
            body["ttl_ms"] = ttl_ms
        return "PATCH", lease_path(self.name), body

    def _renew_allowed(self) -> None:
        if self.session is not None:
            self._safe_at(mono_ms())  # ended with its session?
        super()._renew_allowed()

    def renew(self, ttl_ms: Optional[int] = None) -> None:
        """Renew now; safe time counts again from this request's sending.

        Raises :class:`Lost` when the server says the grant is gone (for
        good), :class:`Expired` without sending anything when the safe time
        already ran out, :class:`Forbidden` on a wrong secret; transport
        errors leave the lease as it was.  A lease under a session lives
        as long as its session: renew the session (the server refuses
        this renew with :class:`BadRequest`, and nothing changes)."""
        self._renew_now(ttl_ms)

    def release(self) -> None:
        """Give the lease back.  From this call on it is neither held nor
        renewed, whatever the outcome.  Raises :class:`Lost` when it was no
        longer live.  A lease under a session leaves the session; the
        session goes on."""
        t = self._t
        with t.mu:
            self._state = _RELEASED  # the keepalive never renews it again
        err: Optional[Error] = None
        try:
            r = t.do("DELETE", lease_path(self.name),
                     {"token": self.token, "lease_secret": self.secret})
            if r.status not in (200, 204):
                raise error_of(r)
        except Error as e:
            err = e
        with t.mu:
            self._end_error = err
            self._release_done = True
            self._changed()
            t.cond.notify_all()
        if err is not None:
            raise err
