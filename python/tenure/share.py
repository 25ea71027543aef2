# SPDX-License-Identifier: MIT
"""The fair-share recipe (docs/SESSIONS.md): the workers of a group spread
a list of shards evenly over the workers that are alive, and a shard moves
from one to another only through the lease server, with a higher token at
each move.

    w = tenure.share.Worker(client, "indexers", "w1", shards,
                            on_gain=gained, on_loss=lost)
    w.start()      # a thread: session, claims, releases
    ...            # write through the fence with w.owned()[shard].token
    w.stop()       # ends the session: every shard is given back

Each worker opens a session with ``owner_id`` ``<group>/<worker>``, reads
the live sessions of the group (``GET /v1/sessions?prefix=<group>/``) and
follows the event stream (``session_opened``, ``session_ended``, and the
shards' own events).  Its target is its share: with S shards and n live
sessions, ``ceil(S / n)`` for the first ``S mod n`` sessions in session_id
order and ``floor(S / n)`` for the others, so every worker computes the
same split and the counts differ by at most one.  Below target it claims
free shards in one batch; above it, it tells the application (``on_loss``,
which must return only once nothing writes those shards any more) and
releases the surplus in one batch.  When its session is lost (a frozen or
cut-off worker), every shard is reported lost and it joins again with a
new session.  Each round also checks the shards it holds against the list
of held shards: one whose live token is another (a force release, an end
no event told of) is reported lost.
"""
from __future__ import annotations

import random
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

from ._lease import Lease
from ._session import Session
from .client import Client
from .errors import Error

__all__ = ["Worker", "target_of"]

GainFn = Callable[[Dict[str, Lease]], None]
LossFn = Callable[[List[str], str], None]


def target_of(shards: int, live: Sequence[str], me: str) -> int:
    """The share of session ``me`` among the session ids ``live``."""
    ids = sorted(set(live) | {me})
    n, rank = len(ids), ids.index(me)
    return shards // n + (1 if rank < shards % n else 0)


def _common_prefix(names: Sequence[str]) -> str:
    if not names:
        return ""
    lo, hi = min(names), max(names)
    i = 0
    while i < len(lo) and i < len(hi) and lo[i] == hi[i]:
        i += 1
    return lo[:i]


class Worker:
    """One worker of a group (see the module).  ``on_gain(leases)`` gets
    the shards just claimed (name -> :class:`Lease`, whose token stamps
    every write); ``on_loss(names, reason)`` the shards given up:
    ``"released"`` (surplus given back after it returns), ``"lost"`` or
    ``"expired"`` (the session or the shard was lost: stop writing at
    once; the fence refuses the stale writes anyway), ``"stopped"``.
    Both run on the worker's thread."""

    def __init__(self, client: Client, group: str, worker: str,
                 shards: Sequence[str], *, ttl_ms: int = 3000,
                 on_gain: Optional[GainFn] = None,
                 on_loss: Optional[LossFn] = None,
                 interval_s: float = 2.0,
                 shard_prefix: Optional[str] = None) -> None:
        if not group or "/" in group:
            raise ValueError("group must be non-empty and without '/'")
        if len(set(shards)) != len(shards):
            raise ValueError("a shard is given twice")
        self.client = client
        self.group = group
        self.owner_id = f"{group}/{worker}"
        self.shards = list(shards)
        self._set = set(self.shards)
        self.ttl_ms = ttl_ms
        self.on_gain = on_gain
        self.on_loss = on_loss
        self.interval_s = interval_s
        self.prefix = shard_prefix if shard_prefix is not None \
            else _common_prefix(self.shards)
        self._mu = threading.Lock()
        self._cond = threading.Condition(self._mu)
        self._owned: Dict[str, Lease] = {}  # the worker thread's
        self._lost: List[Lease] = []  # reported by the keepalive
        self._kick = True
        self._stopping = False
        self.session: Optional[Session] = None
        self.target = 0
        self.sessions_seen = 0
        self._thread: Optional[threading.Thread] = None
        self._events: Any = None
        self._ev_thread: Optional[threading.Thread] = None

    # ---- control ----

    def start(self) -> "Worker":
        self._events = self.client.events(self.prefix)
        self._ev_thread = threading.Thread(target=self._follow, daemon=True,
                                           name=f"share-events-{self.owner_id}")
        self._ev_thread.start()
        self._thread = threading.Thread(target=self._main, daemon=True,
                                        name=f"share-{self.owner_id}")
        self._thread.start()
        return self

    def stop(self) -> None:
        """End the session (every shard is released, after ``on_loss``
        with ``"stopped"``) and wait for the threads."""
        with self._mu:
            self._stopping = True
            self._cond.notify_all()
        if self._events is not None:
            self._events.close()
        for th in (self._thread, self._ev_thread):
            if th is not None:
                th.join()

    def __enter__(self) -> "Worker":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def owned(self) -> Dict[str, Lease]:
        """The shards this worker holds now (name -> lease)."""
        with self._mu:
            return dict(self._owned)

    def kick(self) -> None:
        """Look at the balance now rather than at the next event."""
        with self._mu:
            self._kick = True
            self._cond.notify_all()

    # ---- the keepalive's reports (its thread) ----

    def _session_ended(self, _s: Session, _why: str, _e: Any) -> None:
        self.kick()  # the worker thread sees it is no longer held

    def _lease_ended(self, lease: Lease, why: str, _e: Any) -> None:
        if why in ("lost", "expired"):
            with self._mu:
                self._lost.append(lease)
                self._kick = True
                self._cond.notify_all()

    # ---- the worker thread ----

    def _main(self) -> None:
        while True:
            with self._mu:
                while not self._kick and not self._stopping:
                    self._cond.wait(self.interval_s)
                    self._kick = True  # the interval passed: look anyway
                if self._stopping:
                    break
                self._kick = False
            try:
                self._step()
            except Error as e:
                self.client._logf(f"share {self.owner_id}: {e}")
                time.sleep(min(1.0, self.ttl_ms / 10000))
                self.kick()
        self._leave()

    def _give_up(self, names: List[str], why: str) -> None:
        with self._mu:
            for n in names:
                self._owned.pop(n, None)
        if names and self.on_loss is not None:
            self.on_loss(sorted(names), why)

    def _step(self) -> None:
        with self._mu:
            lost, self._lost = self._lost, []
        s = self.session
        if s is not None and not s.is_held():
            # lost or run out: so is every shard of it; join again.  (Only
            # the session in hand counts: the report of an older one's end
            # must not end the new one.)
            self._give_up(list(self._owned), s.state)
            self.session = None
        gone = [x.name for x in lost if self._owned.get(x.name) is x]
        self._give_up(gone, "lost")
        if self.session is None:
            self.session = self.client.open_session(
                self.owner_id, self.ttl_ms, on_end=self._session_ended,
                on_lease_end=self._lease_ended)
        self._balance(self.session)

    def _balance(self, s: Session) -> None:
        live = [i.session_id for i in
                self.client.sessions_all(self.group + "/")]
        self.sessions_seen = len(set(live) | {s.session_id})
        self.target = target_of(len(self.shards), live, s.session_id)
        taken = {i.name: i.token for i in self.client.list_all(self.prefix)}
        # a shard whose live token is another (or none) was lost: a force
        # release, an end no event told of
        gone = [n for n, x in self.owned().items() if taken.get(n) != x.token]
        self._give_up(gone, "lost")
        owned = self.owned()
        if len(owned) > self.target:
            surplus = sorted(owned)[self.target:]
            self._give_up(surplus, "released")
            s.release([owned[n] for n in surplus])
            return
        want = self.target - len(owned)
        if want <= 0:
            return
        free = [n for n in self.shards if n not in taken and n not in owned]
        random.shuffle(free)
        res = s.claim(free[:want]) if free else None
        got = {n: x for n, x in (res.granted.items() if res else ())
               if n in self._set}
        with self._mu:
            self._owned.update(got)
        if got and self.on_gain is not None:
            self.on_gain(got)
        if len(got) < want and len(free) > len(got):
            # others claimed some of the same: look again soon
            time.sleep(random.uniform(0.01, 0.05))
            self.kick()

    def _leave(self) -> None:
        names = list(self._owned)
        self._give_up(names, "stopped")
        s, self.session = self.session, None
        if s is not None:
            try:
                s.end()
            except Error:
                pass

    # ---- the event follower thread ----

    def _follow(self) -> None:
        mine = self.group + "/"
        try:
            for ev in self._events:
                typ = ev["type"]
                if typ in ("session_opened", "session_ended"):
                    if str(ev.get("owner_id") or "").startswith(mine):
                        self.kick()
                elif typ == "reset" or (ev.get("name") in self._set
                                        and typ != "acquired"):
                    self.kick()  # a shard may be free now
        except Error as e:
            self.client._logf(f"share {self.owner_id}: events: {e}")
