# SPDX-License-Identifier: MIT
"""The event follower of ``watch_events``: one thread follows the event
stream while anything is kept and tells the keepalive what the server
announced.  A kept lease whose grant ended (expired, revoked, released) or
whose name a newer token took is lost at once, instead of at its next
renew; a kept session the server announced ended is lost at once, and
with it every lease of it; on a ``reset`` (events may have been missed)
every kept item is renewed at once, so an end that was not heard of is
found by the renew.  A latency optimisation only: nothing here can make
anything look held.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Dict, Iterable, Optional

from ._keepalive import Keepalive
from ._lease import _HELD, Lease
from ._transport import Transport
from .errors import Error, Lost

__all__ = ["Follower"]

Stream = Any  # EventStream, RedisEventStream or KafkaEventStream


def _ends(lease: Lease, typ: str, token: int) -> bool:
    if typ == "acquired":
        return token > lease.token
    return token == lease.token and typ in ("expired", "revoked", "released")


class Follower:
    """The follower thread of one client."""

    def __init__(self, t: Transport, ka: Keepalive,
                 open_stream: Callable[[], Stream]) -> None:
        self._t = t
        self._ka = ka
        self._open = open_stream
        self.stream: Optional[Stream] = None
        self._thread: Optional[threading.Thread] = None
        self._stopping = False
        self.event_losses = 0  # kept items reported lost by the stream

    def start(self) -> None:
        """Lock held: start following unless already."""
        if self._thread is not None or self._stopping:
            return
        self.stream = self._open()
        self._thread = threading.Thread(target=self._main,
                                        name="tenure-events", daemon=True)
        self._thread.start()

    def close(self) -> None:
        with self._t.mu:
            self._stopping = True
            th, st = self._thread, self.stream
        if st is not None:
            st.close()
        if th is not None:
            th.join()

    def _lose(self, item: Any, why: str) -> None:
        if item._state == _HELD:
            item._lose(Lost(f"{item._what()}: the server announced {why}"))
            self.event_losses += 1

    def _apply(self, ev: Dict[str, Any]) -> None:
        """Lock held: fold one event in."""
        ka = self._ka
        typ = ev["type"]
        if typ == "reset":
            ka.renew_all_now()
            return
        if typ == "session_ended":
            s = ka.sessions.get(ev.get("session_id") or "")
            if s is not None:
                self._lose(s, f"session_ended ({ev.get('reason')})")
            return
        tok, name = ev.get("token"), ev.get("name")
        if not isinstance(tok, int) or not isinstance(name, str):
            return
        what = f"{typ} (token {tok})"
        for lease in list(ka.by_name.get(name, ())):
            if _ends(lease, typ, tok):
                self._lose(lease, what)
        for s in list(ka.sessions.values()):
            lease = getattr(s, "_leases", {}).get(name)
            if lease is not None and _ends(lease, typ, tok):
                self._lose(lease, what)

    def _main(self) -> None:
        es = self.stream
        assert es is not None
        try:
            it: Iterable[Dict[str, Any]] = es
            for ev in it:
                with self._t.mu:
                    if self._stopping:
                        break
                    self._apply(ev)
        except Error as e:
            self._t.logf(f"event follower stopped: {e}")
