# SPDX-License-Identifier: MIT
"""Leases as the client hands them out: :class:`Lease` (its safe time, its
state), :class:`Hold` (``with client.hold(...)``), the answers of get and
check, and the limits and end reasons of docs/CLIENT.md."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Type

from ._http import mono_ms
from .errors import Error, Expired, Lost, ProtocolError

if TYPE_CHECKING:
    from .client import Client


__all__ = ["Lease", "LeaseInfo", "CheckResult", "Hold", "END_LOST", "END_EXPIRED",
           "END_RELEASED", "END_STOPPED"]

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
