# SPDX-License-Identifier: MIT
"""The keepalive: renews every kept lease and session and reports each
one's end exactly once.

One scheduler thread decides: it renews an item when a third of its TTL
has passed since its last successful renew was sent (retrying with backoff
from TTL/30 doubling up to TTL/6 while safe time is left), reports ends
(lost, expired, released, stopped) and runs the callbacks.  The renews
themselves go out on a few worker threads, each with one kept-alive
connection on which it pipelines a batch of renews (a renew may safely be
sent twice), so one client keeps thousands of leases: a batch is bounded
by the earliest safe deadline among its items, and a hung batch holds only
its own items.  The event follower (``watch_events``) is in _follow.py.

Imports run one way: this module takes a Transport and Kept items (leases
and sessions) and knows nothing of the client.
"""
from __future__ import annotations

import heapq
import itertools
import json
import socket
import threading
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from . import _http
from ._http import mono_ms
from ._lease import (END_EXPIRED, END_LOST, END_RELEASED, END_STOPPED,
                     _EXPIRED, _HELD, _LOST, _RELEASED, EndFn, Kept, Lease,
                     parse_renewed)
from ._transport import Transport
from .errors import Error, Expired

__all__ = ["Keepalive"]

WORKERS = 4  # connections renewing at once
BATCH = 64  # renews pipelined on one connection at once
COALESCE_MS = 25  # renews due this soon go out with the ones due now

Job = Tuple[Kept, str, str, Dict[str, Any], Optional[int], int]
Call = Tuple[Callable[..., None], Tuple[Any, ...]]


class Keepalive:
    """The renews and end reports of one client's kept items."""

    def __init__(self, t: Transport, workers: int = WORKERS,
                 batch: int = BATCH) -> None:
        self._t = t
        self._nworkers = workers
        self._batch = batch
        self._kept: Set[Kept] = set()
        self.by_name: Dict[str, Set[Lease]] = {}  # kept leases, for events
        self.sessions: Dict[str, Kept] = {}  # kept sessions by id
        self._seq = itertools.count()
        self._due: List[Tuple[int, int, Kept]] = []  # (next renew, seq, item)
        self._deadlines: List[Tuple[int, int, Kept]] = []
        self._changed: List[Kept] = []
        self._work: List[Tuple[List[Job], int]] = []
        self._idle = 0  # workers waiting for a batch
        self._threads: List[threading.Thread] = []
        self._socks: Set[socket.socket] = set()  # the workers' connections
        self._sending = 0  # batches on their way
        self._stopping = False
        self._started = False

    # ---- entry points (any thread) ----

    def keep(self, item: Kept, on_end: Optional[EndFn]) -> None:
        """Keep item; on_end(item, reason, error) runs exactly once, on the
        scheduler thread, when it ends."""
        t = self._t
        with t.mu:
            if item._t is not t or item._kept or self._stopping:
                raise Error("cannot be kept", code="bad_request")
            if isinstance(item, Lease) and item.session is not None:
                raise Error("a lease under a session is kept by its session",
                            code="bad_request")
            if item._safe_at(mono_ms()) <= 0:
                if item._state == _EXPIRED:
                    raise Expired(f"the safe time of {item._what()} ran out")
                raise Error(f"{item._what()} is not held", code="bad_request")
            self._start()
            item._kept = True
            item._stop_requested = False
            item._on_end = on_end
            item._ended = None
            item._backoff_ms = 0
            item._notify = self._notify
            self._kept.add(item)
            if isinstance(item, Lease):
                self.by_name.setdefault(item.name, set()).add(item)
            sid = getattr(item, "session_id", None)
            if isinstance(sid, str):
                self.sessions[sid] = item
            self._schedule(item, item._sent_ms + item._ttl_ms // 3)
            t.cond.notify_all()

    def stop_keeping(self, item: Kept) -> None:
        """Stop renewing item without releasing it; its on_end runs with
        ``"stopped"`` unless it already ended."""
        with self._t.mu:
            if item._kept:
                item._stop_requested = True
                self._notify(item)

    def renew_all_now(self) -> None:
        """Lock held: renew every kept item at once (the events were
        reset: an end may have gone unheard)."""
        now = mono_ms()
        for item in self._kept:
            if item._state == _HELD and item._next_renew_ms > now:
                self._schedule(item, now)
        self._t.cond.notify_all()

    def in_flight(self) -> int:
        """Batches of renews sent and not yet answered."""
        with self._t.mu:
            return self._sending

    def close(self) -> None:
        """Stop: every kept item ends ``"stopped"`` (without a release) and
        renews in flight are aborted; waits for the threads."""
        with self._t.mu:
            self._stopping = True
            for item in self._kept:
                self._notify(item)
            socks = list(self._socks)
            threads = list(self._threads)
            self._t.cond.notify_all()
        for s in socks:
            abort(s)
        for th in threads:
            th.join()

    # ---- bookkeeping (lock held) ----

    def _start(self) -> None:
        if self._started:
            return
        self._started = True
        th = threading.Thread(target=self._main, name="tenure-keepalive",
                              daemon=True)
        self._threads.append(th)
        th.start()
        for i in range(self._nworkers):
            w = threading.Thread(target=self._worker, daemon=True,
                                 name=f"tenure-renew-{i}")
            self._threads.append(w)
            w.start()

    def _notify(self, item: Kept) -> None:
        if not item._queued:
            item._queued = True
            self._changed.append(item)
        self._t.cond.notify_all()

    def _schedule(self, item: Kept, at_ms: int) -> None:
        item._next_renew_ms = at_ms
        heapq.heappush(self._due, (at_ms, next(self._seq), item))
        if item._deadline_ms is not None:
            heapq.heappush(self._deadlines,
                           (item._deadline_ms, next(self._seq), item))

    def _end_of(self, item: Kept, now: int
                ) -> Optional[Tuple[str, Optional[Error]]]:
        item._safe_at(now)
        if item._state == _LOST:
            return END_LOST, item._end_error
        if item._state == _EXPIRED:
            return END_EXPIRED, Expired(f"the safe time of {item._what()} "
                                        "ran out before a renew succeeded")
        if item._state == _RELEASED and item._release_done:
            return END_RELEASED, item._end_error
        if self._stopping or item._stop_requested:
            return END_STOPPED, None
        return None

    def _forget(self, item: Kept, why: str) -> None:
        self._kept.discard(item)
        item._kept = False
        item._ended = why
        item._notify = None
        if isinstance(item, Lease):
            held = self.by_name.get(item.name)
            if held is not None:
                held.discard(item)
                if not held:
                    del self.by_name[item.name]
        sid = getattr(item, "session_id", None)
        if isinstance(sid, str) and self.sessions.get(sid) is item:
            del self.sessions[sid]

    def _ends(self, now: int) -> List[Call]:
        """The callbacks of every item that ended since the last look (a
        session's leases before the session)."""
        calls: List[Call] = []
        changed, self._changed = self._changed, []
        for item in changed:
            item._queued = False
            end = self._end_of(item, now) if item._kept else None
            lease_ends = getattr(item, "_lease_ends", None)
            if lease_ends is not None:
                calls.extend(lease_ends(now, end[0] if end else None))
            if end is None:
                continue
            self._forget(item, end[0])
            calls.append((self._t.logf, (f"keepalive of {item._log_name()} "
                                         f"ended: {end[0]}",)))
            if item._on_end is not None:
                calls.append((item._on_end, (item, end[0], end[1])))
        return calls

    def _expire(self, now: int) -> None:
        """Look at every item whose safe time ran out by now."""
        while self._deadlines and self._deadlines[0][0] <= now:
            _, _, item = heapq.heappop(self._deadlines)
            if item._kept:
                item._safe_at(now)  # notifies when it ran out

    def _renewable(self, item: Kept) -> bool:
        return (item._kept and item._state == _HELD and not item._busy
                and not item._stop_requested and not self._stopping)

    def _take_batch(self, now: int) -> Optional[List[Job]]:
        jobs: List[Job] = []
        while self._due and len(jobs) < self._batch \
                and self._due[0][0] <= now + COALESCE_MS:
            at, _, item = heapq.heappop(self._due)
            if at != item._next_renew_ms or not self._renewable(item):
                continue  # rescheduled since, or not to renew
            item._busy = True
            method, path, body = item._renew_request(item._ttl_ms)
            jobs.append((item, method, path, body, item._ttl_ms,
                         item._ttl_ms))
        return jobs or None

    def _next_wake(self) -> Optional[int]:
        wake = self._deadlines[0][0] if self._deadlines else None
        if self._due and self._idle > len(self._work):
            at = self._due[0][0]
            wake = at if wake is None else min(wake, at)
        return wake

    # ---- the scheduler thread ----

    def _main(self) -> None:
        t = self._t
        with t.mu:
            while True:
                now = mono_ms()
                self._expire(now)
                calls = self._ends(now)
                if calls:
                    t.mu.release()
                    try:
                        run_calls(calls, t.logf)
                    finally:
                        t.mu.acquire()
                    continue
                if self._stopping and not self._kept:
                    break
                while self._idle > len(self._work):
                    jobs = self._take_batch(now)
                    if jobs is None:
                        break
                    self._work.append((jobs, self._batch_deadline(jobs, now)))
                    t.cond.notify_all()
                wake = self._next_wake()
                if self._changed:
                    continue
                t.cond.wait(None if wake is None
                            else max(0.0, (wake - mono_ms()) / 1000.0))
            self._stopping = True
            t.cond.notify_all()

    def _batch_deadline(self, jobs: List[Job], now: int) -> int:
        d = now + self._t.timeout_ms
        for job in jobs:
            dl = job[0]._deadline_ms
            if dl is not None and dl < d:
                d = dl
        return d

    # ---- the workers ----

    def _track(self, sock: Optional[socket.socket],
               old: List[Optional[socket.socket]]) -> None:
        with self._t.mu:
            if old[0] is not None:
                self._socks.discard(old[0])
            old[0] = sock
            if sock is not None:
                self._socks.add(sock)
            stop = sock is not None and self._stopping
        if stop and sock is not None:
            abort(sock)

    def _worker(self) -> None:
        t = self._t
        cur: List[Optional[socket.socket]] = [None]
        conn = _http.Conn(t.connect_timeout_ms, t.ssl_ctx,
                          lambda s: self._track(s, cur))
        try:
            while True:
                with t.mu:
                    self._idle += 1
                    t.cond.notify_all()
                    while not self._work and not self._stopping:
                        t.cond.wait()
                    self._idle -= 1
                    if not self._work:
                        return
                    jobs, deadline = self._work.pop(0)
                    self._sending += 1
                outs = self._send(conn, jobs, deadline)
                self._apply(jobs, outs)
        finally:
            conn.close()

    def _send(self, conn: _http.Conn, jobs: List[Job], deadline: int
              ) -> List[Any]:
        """One outcome per job: the answer or the error, through the URLs
        in turn as Transport.do goes (the next one when nothing was sent,
        or for the renews a server answered 503)."""
        t = self._t
        reqs = [(m, p, json.dumps(b, separators=(",", ":")).encode())
                for _, m, p, b, _, _ in jobs]
        outs: List[Any] = [None] * len(jobs)
        todo = list(range(len(jobs)))
        n = len(t.targets)
        err: Optional[Error] = None
        start = t.current
        for i in range(n):
            idx = (start + i) % n
            try:
                got = conn.pipeline(t.targets[idx], t.headers(),
                                    [reqs[j] for j in todo], deadline)
            except Error as e:  # connect: nothing was sent
                err = e
                continue
            t.current = idx
            again = []
            for j, out in zip(todo, got):
                outs[j] = out
                if isinstance(out, _http.Response) and out.status == 503 \
                        and i + 1 < n:
                    again.append(j)
            todo = again
            if not todo:
                break
        for j in todo:
            if outs[j] is None:
                outs[j] = err
        return outs

    def _apply(self, jobs: List[Job], outs: List[Any]) -> None:
        t = self._t
        logs: List[str] = []
        with t.mu:
            self._sending -= 1
            now = mono_ms()
            for (item, _m, _p, _b, ttl_sent, before), out in zip(jobs, outs):
                item._busy = False
                res, err = None, None
                if isinstance(out, Error):
                    err = out
                else:
                    try:
                        res = parse_renewed(out, ttl_sent, before)
                    except Error as e:
                        err = e
                if item._state == _HELD:
                    err = item._apply_renew(res, err)
                if not item._kept:
                    continue
                if err is None:
                    item._backoff_ms = 0
                    self._schedule(item, item._sent_ms + item._ttl_ms // 3)
                    if t.log is not None:
                        logs.append(f"renewed {item._log_name()} "
                                    f"safe_for_ms={item._safe_at(now)}")
                    continue
                first = max(10, item._ttl_ms // 30)
                cap = max(first, item._ttl_ms // 6)
                item._backoff_ms = first if item._backoff_ms == 0 \
                    else min(cap, 2 * item._backoff_ms)
                self._schedule(item, now + item._backoff_ms)
                if t.log is not None:
                    logs.append(f"renew of {item._log_name()} failed: "
                                f"{err.code} ({err})")
            t.cond.notify_all()
        for msg in logs:
            t.logf(msg)


def run_calls(calls: List[Call], logf: Callable[[str], None]) -> None:
    for fn, args in calls:
        try:
            fn(*args)
        except Exception as e:  # a callback never kills the keepalive
            logf(f"callback {getattr(fn, '__name__', fn)!r} raised {e!r}")


def abort(sock: socket.socket) -> None:
    """Make a blocked request on sock fail at once."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
