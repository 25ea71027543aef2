# SPDX-License-Identifier: MIT
"""The client's background threads: the keepalive that renews every kept
lease and reports each one's end exactly once, and the event follower
(``watch_events``).  :class:`_Keepalive` is a part of :class:`Client`; it
uses the client's lock, its renew request and its event stream."""
from __future__ import annotations

import socket
import threading
from typing import Optional, Tuple

from ._http import mono_ms
from ._lease import (END_EXPIRED, END_LOST, END_RELEASED, END_STOPPED,
                     _EXPIRED, _HELD, _LOST, _RELEASED, EndFn, Lease)
from .errors import Error, Expired, Lost


class _Keepalive:
    """Keepalive and event follower of a :class:`Client`."""

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
