# SPDX-License-Identifier: MIT
"""Sessions (docs/SESSIONS.md): one heartbeat for many leases.

A :class:`Session` is kept alive by the client's keepalive like a lease,
with one renew for all its leases.  Its safe time is counted as a lease's:
``expires_in_ms`` of the last acknowledged open or renew, on the monotonic
clock from the moment that request was sent, minus the margin.  Every lease
taken under it (:meth:`Session.acquire`, :meth:`Session.claim`) reads that
safe time and ends when the session ends: lost or expired with it, or
released when the session is ended.  Each lease still has its own token,
secret and release.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from ._http import mono_ms
from ._lease import (END_EXPIRED, END_LOST, END_RELEASED, END_STOPPED,
                     _EXPIRED, _HELD, _LOST, _RELEASED, EndFn, Kept, Lease,
                     Request, _int, _name_ok)
from ._transport import Transport, error_of, session_path
from .errors import Error, Holder, Lost, ProtocolError

__all__ = ["Session", "ClaimResult", "BATCH_NAMES"]

# Names per claim request: the API takes at least 256 per batch (and 64 KiB
# of body); a longer claim is sent as several batches.
BATCH_NAMES = 256
BATCH_BODY_BYTES = 48 * 1024

Call = Tuple[Callable[..., None], Tuple[Any, ...]]


@dataclass
class ClaimResult:
    """What became of each name of a claim: ``granted`` (name -> the new
    :class:`Lease`), ``held`` (name -> :class:`Holder`), ``lock_delay``
    (name -> ms to wait)."""

    granted: Dict[str, Lease] = field(default_factory=dict)
    held: Dict[str, Holder] = field(default_factory=dict)
    lock_delay: Dict[str, int] = field(default_factory=dict)


def _batches(names: List[str]) -> Iterable[List[str]]:
    out: List[str] = []
    size = 0
    for n in names:
        b = len(n.encode("utf-8")) + 8
        if out and (len(out) == BATCH_NAMES or size + b > BATCH_BODY_BYTES):
            yield out
            out, size = [], 0
        out.append(n)
        size += b
    if out:
        yield out


class Session(Kept):
    """A session of this process.  ``session_id`` (public), ``owner_id``
    and ``secret`` (the credential; never log it) never change.  Made by
    :meth:`Client.open_session` (or :meth:`Client.adopt_session`).  Once
    :meth:`end` was called, its calls raise ``Error(code="ended")``."""

    _released_code = "ended"

    def __init__(self, t: Transport, session_id: str, owner_id: str,
                 secret: str, ttl_ms: int,
                 on_lease_end: Optional[EndFn] = None) -> None:
        super().__init__(t, ttl_ms)
        self.session_id = session_id
        self.owner_id = owner_id
        self.secret = secret
        self._leases: Dict[str, Lease] = {}  # live or not yet reported
        self._ended_leases: List[Lease] = []
        self._on_lease_end = on_lease_end

    def __repr__(self) -> str:  # never shows the secret
        return (f"Session(session_id={self.session_id!r}, "
                f"owner_id={self.owner_id!r}, state={self._state!r})")

    # -- under the transport's lock --

    def _what(self) -> str:
        return f"session {self.session_id}"

    def _renew_request(self, ttl_ms: Optional[int]) -> Request:
        body: Dict[str, Any] = {"session_secret": self.secret}
        if ttl_ms:
            body["ttl_ms"] = ttl_ms
        return "PATCH", session_path(self.session_id), body

    def _changed_lease(self, lease: Lease) -> None:
        self._ended_leases.append(lease)
        if len(self._ended_leases) == 1:
            self._changed()

    def _lease_ends(self, now: int, ended_as: Optional[str]) -> List[Call]:
        """The on_lease_end calls of every lease that ended since the last
        look; of all of them when the session itself ended (``ended_as``
        is then its end: its leases end with it, ``"stopped"`` when it is
        no longer kept but may still be live)."""
        if ended_as is not None:
            for lease in self._leases.values():
                lease._safe_at(now)  # takes the session's end
            ended = list(self._leases.values())
            self._ended_leases = []
        else:
            ended, self._ended_leases = self._ended_leases, []
        calls: List[Call] = []
        for lease in ended:
            if self._leases.get(lease.name) is not lease:
                continue  # reported already
            why = _lease_end(lease) or (END_STOPPED if ended_as else None)
            if why is None:
                continue
            del self._leases[lease.name]
            lease._ended = why
            if self._on_lease_end is not None:
                calls.append((self._on_lease_end, (lease, why,
                                                   lease._end_error)))
        return calls

    def _add(self, lease: Lease) -> Lease:
        old = self._leases.get(lease.name)
        if old is not None and old.token == lease.token \
                and old._state == _HELD:
            return old  # the same grant answered again
        self._leases[lease.name] = lease
        if self._state != _HELD:
            lease._safe_at(mono_ms())  # ended meanwhile: so is the lease
        return lease

    def _answered(self, status_ok: Tuple[int, ...], r: Any) -> Any:
        """The JSON of a 2xx, or raises (losing the session on 409 lost: a
        403 may be a name the principal may not take, and loses nothing;
        a renew refused with 403 does lose it)."""
        if r.status in status_ok:
            return r.json() if r.body else None
        err = error_of(r)
        if isinstance(err, Lost):
            with self._t.mu:
                self._lose(err)
        raise err

    def _lease_of(self, o: Any, owner: str) -> Lease:
        if not isinstance(o, dict) or not isinstance(o.get("name"), str):
            raise ProtocolError(f"not a grant: {o!r}")
        secret = o.get("lease_secret")
        if not isinstance(secret, str) or not secret:
            raise ProtocolError("grant without lease_secret")
        proof = o.get("proof")
        with self._t.mu:
            ttl = self._ttl_ms
        return Lease(self._t, o["name"], str(o.get("owner_id") or owner),
                     int(_int(o, "token") or 0), secret,
                     proof if isinstance(proof, str) else None, ttl,
                     session=self)

    # -- public --

    def renew(self, ttl_ms: Optional[int] = None) -> None:
        """Renew now (the keepalive does it by itself): safe time counts
        again from this request's sending, for every lease of it."""
        self._renew_now(ttl_ms)

    def leases(self) -> Dict[str, Lease]:
        """The leases of this session still held, by name."""
        now = mono_ms()
        with self._t.mu:
            return {n: lease for n, lease in self._leases.items()
                    if lease._safe_at(now) > 0}

    def acquire(self, name: str, owner: Optional[str] = None,
                wait_ms: int = 0, *, request_id: Optional[str] = None,
                lock_delay_ms: int = 0) -> Lease:
        """Take ``name`` under this session (its TTL is the session's).
        Raises as :meth:`Client.acquire` does, and :class:`Lost` when the
        session is not live (it is then lost)."""
        _name_ok(name)
        if wait_ms < 0 or lock_delay_ms < 0:
            raise ValueError("wait_ms and lock_delay_ms must be >= 0")
        self._usable()
        owner = owner or self.owner_id
        body: Dict[str, Any] = {"name": name, "owner_id": owner,
                                "session_id": self.session_id,
                                "session_secret": self.secret,
                                "request_id": request_id
                                or secrets.token_hex(16)}
        if wait_ms > 0:
            body["wait_ms"] = wait_ms
        if lock_delay_ms > 0:
            body["lock_delay_ms"] = lock_delay_ms
        r = self._t.do("POST", "/v1/leases", body, extra_ms=wait_ms)
        if r.status == 409 and _code(r) == "lost":
            self._answered((), r)  # the session is gone
        if r.status not in (200, 201):
            raise error_of(r)
        lease = self._lease_of(r.json(), owner)
        with self._t.mu:
            return self._add(lease)

    def claim(self, names: Iterable[str], owner: Optional[str] = None,
              lock_delay_ms: int = 0) -> ClaimResult:
        """Claim many names at once (``POST /v1/sessions/{id}/leases``):
        each is decided on its own, as a non-waiting acquire, and the
        answer says which were granted, held or in their lock delay.  More
        than :data:`BATCH_NAMES` names go as several batches.  Raises
        :class:`Lost` when the session is not live."""
        todo = list(names)
        if len(set(todo)) != len(todo):
            raise ValueError("a name is given twice")
        for n in todo:
            _name_ok(n)
        res = ClaimResult()
        for chunk in _batches(todo):
            self._claim_batch(chunk, owner, lock_delay_ms, res)
        return res

    def _usable(self) -> None:
        """Raise unless the session may still be used: lost, run out
        (Lost, Expired), ended (Error "ended").  An adopted session, not
        yet renewed, may."""
        with self._t.mu:
            self._renew_allowed()

    def _claim_batch(self, names: List[str], owner: Optional[str],
                     lock_delay_ms: int, res: ClaimResult) -> None:
        self._usable()
        body: Dict[str, Any] = {"session_secret": self.secret,
                                "names": names}
        if owner:
            body["owner_id"] = owner
        if lock_delay_ms > 0:
            body["lock_delay_ms"] = lock_delay_ms
        o = self._answered((200,), self._t.do(
            "POST", session_path(self.session_id, "/leases"), body))
        if not isinstance(o, dict) or not isinstance(o.get("granted"), list):
            raise ProtocolError(f"claim answer without granted: {o!r}")
        got = [self._lease_of(g, owner or self.owner_id) for g in o["granted"]]
        with self._t.mu:
            for lease in got:
                res.granted[lease.name] = self._add(lease)
        for h in o.get("held") or []:
            if isinstance(h, dict) and isinstance(h.get("name"), str):
                res.held[h["name"]] = _holder(h.get("holder"))
        for d in o.get("lock_delay") or []:
            if isinstance(d, dict) and isinstance(d.get("name"), str):
                res.lock_delay[d["name"]] = int(
                    _int(d, "retry_after_ms", required=False) or 0)

    def release(self, leases: Iterable[Lease]
                ) -> Tuple[List[Lease], List[Lease]]:
        """Give back several leases of this session in one batch
        (``DELETE /v1/sessions/{id}/leases``); the session goes on.  From
        this call on none of them is held.  Returns (released, lost): lost
        are those that were no longer live."""
        todo = list(leases)
        t = self._t
        with t.mu:
            for lease in todo:
                if lease.session is not self:
                    raise ValueError(f"{lease!r} is not of this session")
                lease._state = _RELEASED
        released: List[Lease] = []
        lost: List[Lease] = []
        try:
            for i in range(0, len(todo), BATCH_NAMES):
                self._release_batch(todo[i:i + BATCH_NAMES], released, lost)
        finally:
            with t.mu:
                for lease in todo:
                    lease._release_done = True
                    lease._changed()
        return released, lost

    def _release_batch(self, chunk: List[Lease], released: List[Lease],
                       lost: List[Lease]) -> None:
        body = {"session_secret": self.secret,
                "leases": [{"name": x.name, "token": x.token} for x in chunk]}
        try:
            o = self._answered((200,), self._t.do(
                "DELETE", session_path(self.session_id, "/leases"), body))
        except Error as e:
            with self._t.mu:
                for lease in chunk:
                    lease._end_error = e
            raise
        gone = {(x.get("name"), x.get("token"))
                for x in (o or {}).get("lost") or [] if isinstance(x, dict)}
        with self._t.mu:
            for lease in chunk:
                if (lease.name, lease.token) in gone:
                    lease._end_error = Lost(f"lease {lease.name!r} was not "
                                            "live when released")
                    lost.append(lease)
                else:
                    released.append(lease)

    def end(self) -> None:
        """End the session and with it every lease of it (each is
        released).  From this call on nothing of it is held.  Raises
        :class:`Lost` when the session had already ended."""
        t = self._t
        with t.mu:
            self._safe_at(mono_ms())
            was = self._state
            if was == _RELEASED:
                raise Error(f"{self._what()} was ended", code="ended")
            self._state = _RELEASED
        err: Optional[Error] = None
        try:
            r = t.do("DELETE", session_path(self.session_id),
                     {"session_secret": self.secret})
            if r.status not in (200, 204):
                raise error_of(r)
        except Error as e:
            err = e
        with t.mu:
            self._end_error = err
            self._release_done = True
            self._changed()
            t.cond.notify_all()
        if err is not None and was == _HELD:
            raise err
        if was in (_LOST, _EXPIRED):
            raise Lost(f"{self._what()} had ended before end()")


def _lease_end(lease: Lease) -> Optional[str]:
    st = lease._state
    if st == _LOST:
        return END_LOST
    if st == _EXPIRED:
        return END_EXPIRED
    if st == _RELEASED and lease._release_done:
        return END_RELEASED
    return None


def _code(r: Any) -> Optional[str]:
    try:
        o = r.json()
    except ProtocolError:
        return None
    return o.get("error") if isinstance(o, dict) else None


def _holder(h: Any) -> Holder:
    h = h if isinstance(h, dict) else {}
    tok, exp = h.get("token"), h.get("expires_in_ms")
    return Holder(owner_id=str(h.get("owner_id", "")),
                  token=tok if isinstance(tok, int) else 0,
                  expires_in_ms=exp if isinstance(exp, int) else None)
