# SPDX-License-Identifier: MIT
"""The context managers of :meth:`Client.hold` (one lease) and
:meth:`Client.hold_session` (a session and the names it claimed): keep
alive while the body runs, give back at exit, and raise :class:`Lost` (or
:class:`Expired`) at exit instead when the lease or session was lost
meanwhile."""
from __future__ import annotations

import threading
from types import TracebackType
from typing import Any, Callable, Dict, List, Optional, Type

from ._http import mono_ms
from ._keepalive import Keepalive
from ._lease import _EXPIRED, _LOST, _RELEASED, Kept, Lease
from ._session import ClaimResult, Session
from .errors import Error, Expired, Held, Lost

__all__ = ["Hold", "SessionHold"]


def _exit(ka: Keepalive, item: Kept, done: threading.Event,
          et: Optional[Type[BaseException]],
          give_back: Callable[[], None]) -> None:
    """The exit of both: raise the loss, or give back (release or end)."""
    t = item._t
    with t.mu:
        item._safe_at(mono_ms())
        state, err = item._state, item._end_error
    if state in (_LOST, _EXPIRED):
        ka.stop_keeping(item)
        done.wait(1.0)  # the keepalive has let go of it
        if et is not None:
            return  # the body's own exception goes on
        if state == _EXPIRED:
            raise Expired(f"the safe time of {item._what()} ran out while "
                          "it was held")
        raise err if isinstance(err, Lost) else Lost(
            f"{item._what()} was lost while it was held")
    if state == _RELEASED:  # the body gave it back itself
        done.wait(1.0)
        return
    try:
        give_back()
    except Lost:
        if et is None:
            raise
    except Error as e:
        t.logf(f"giving back {item._what()} failed: {e}")
    finally:
        done.wait(1.0)  # the keepalive has let go of it


class Hold:
    """``with client.hold(...) as lease``: acquire, keep, release."""

    def __init__(self, acquire: Callable[[], Lease], ka: Keepalive) -> None:
        self._acquire = acquire
        self._ka = ka
        self.lease: Optional[Lease] = None
        self._end = threading.Event()

    def __enter__(self) -> Lease:
        lease = self._acquire()
        self.lease = lease
        try:
            self._ka.keep(lease, lambda _l, _r, _e: self._end.set())
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
        assert self.lease is not None
        lease = self.lease
        _exit(self._ka, lease, self._end, et, lease.release)


class SessionHold:
    """``with client.hold_session(...) as session``: open a session, claim
    the names, keep it alive, end it (and with it every lease) at exit.
    ``claim`` is what the entry's claim answered."""

    def __init__(self, open_session: Callable[..., Session],
                 ka: Keepalive, names: List[str], require_all: bool,
                 claim_kw: Dict[str, Any]) -> None:
        self._open = open_session
        self._ka = ka
        self._names = names
        self._require_all = require_all
        self._claim_kw = claim_kw
        self.session: Optional[Session] = None
        self.claim = ClaimResult()
        self._end = threading.Event()

    def __enter__(self) -> Session:
        s = self._open(on_end=lambda _s, _r, _e: self._end.set())
        self.session = s
        try:
            if self._names:
                self.claim = s.claim(self._names, **self._claim_kw)
            missing = [n for n in self._names if n not in self.claim.granted]
            if self._require_all and missing:
                h = self.claim.held.get(missing[0])
                raise Held(f"{len(missing)} of {len(self._names)} names are "
                           f"not free (first {missing[0]!r})",
                           body={"holder": h.__dict__} if h else None)
        except BaseException:
            try:
                s.end()
            except Error:
                pass
            raise
        return s

    def __exit__(self, et: Optional[Type[BaseException]],
                 ev: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        assert self.session is not None
        s = self.session
        _exit(self._ka, s, self._end, et, s.end)
