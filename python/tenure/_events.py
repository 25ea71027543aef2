# SPDX-License-Identifier: MIT
"""The server's event stream (GET /v1/events) as an iterator that resumes
with Last-Event-ID across reconnects: :class:`EventStream`."""
from __future__ import annotations

import json
import threading
from typing import Any, Dict, Iterator, List, Optional
from urllib.parse import urlencode

from . import _http
from ._transport import Transport
from .errors import (ProtocolError, TooManyRequests, TransportError,
                     Unavailable, from_response)

__all__ = ["EventStream"]


class EventStream:
    """Iterator over lease events of ``GET /v1/events``.

    Yields dicts with ``type`` (``acquired``, ``released``, ``expired``,
    ``revoked``, ``session_opened``, ``session_ended`` or ``reset``),
    ``name``, ``owner_id``, ``token``, ``floor`` and ``id`` (None where the
    event has none: a reset has no name, a session event no name, token or
    floor); session events also carry ``session_id`` (and ``reason`` when
    ended).  When
    the stream is cut it reconnects (through the client's URLs) with
    ``Last-Event-ID`` and resumes after the last id seen; when the server no
    longer has the missed events it yields ``{"type": "reset", ...}``: state
    must be read again.  ``close()`` (from any thread) ends the iteration.
    """

    def __init__(self, t: Transport, prefix: str,
                 last_event_id: Optional[int], idle_timeout_s: float,
                 reconnect: bool) -> None:
        self._t = t
        self.prefix = prefix
        self.last_id: Optional[int] = last_event_id
        self._idle_s = idle_timeout_s
        self._reconnect = reconnect
        self._stream: Optional[_http.Stream] = None
        self._closed = threading.Event()
        self.connected = threading.Event()
        self.connects = 0
        self._lock = threading.Lock()

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            st = self._stream
        if st is not None:
            st.close()

    def wait_connected(self, timeout: float) -> bool:
        """True once the server said the stream is subscribed."""
        return self.connected.wait(timeout)

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def cut(self) -> None:
        """Drop the current connection (as a network cut would); iteration
        goes on with a reconnection.  For tests and failover drills."""
        with self._lock:
            st = self._stream
        if st is not None:
            st.close()

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        return self._run()

    def _open(self, attempt: int) -> _http.Stream:
        c = self._t
        t = c.targets[(c.current + attempt) % len(c.targets)]
        q = urlencode({"prefix": self.prefix}) if self.prefix else ""
        hdrs = c.headers()
        hdrs["Accept"] = "text/event-stream"
        if self.last_id is not None:
            hdrs["Last-Event-ID"] = str(self.last_id)
        st = _http.open_stream(t, "/v1/events" + ("?" + q if q else ""),
                               headers=hdrs,
                               connect_timeout_ms=c.connect_timeout_ms,
                               first_answer_ms=c.timeout_ms,
                               idle_s=self._idle_s, ssl_ctx=c.ssl_ctx)
        if st.status != 200:
            body = st.body.read_all()
            st.close()
            try:
                parsed = json.loads(body.decode("utf-8")) if body else None
            except ValueError:
                parsed = None
            raise from_response(st.status, parsed)
        return st

    def _run(self) -> Iterator[Dict[str, Any]]:
        attempt = 0
        while not self._closed.is_set():
            try:
                st = self._open(attempt)
            except (TransportError, Unavailable, TooManyRequests):
                if not self._reconnect:
                    raise
                attempt += 1
                # 100 ms, doubling to 5 s while nobody answers
                self._closed.wait(min(5.0, 0.1 * 2 ** min(attempt - 1, 6)))
                continue
            attempt = 0
            with self._lock:
                self._stream = st
            if self._closed.is_set():
                st.close()
                break
            self.connects += 1
            try:
                yield from self._read(st)
            except (TransportError, ProtocolError):
                pass  # cut: resume after the last id
            finally:
                with self._lock:
                    self._stream = None
                st.close()
            if not self._reconnect:
                break
            self._closed.wait(0.1)  # a pause between reconnects

    def _read(self, st: _http.Stream) -> Iterator[Dict[str, Any]]:
        ev_id: Optional[int] = None
        data: List[str] = []
        size = 0
        while True:
            line = st.readline()
            if line is None:
                return
            if line == "":
                if ev_id is not None:
                    self.last_id = ev_id
                if data:
                    ev = self._event("\n".join(data), ev_id)
                    if ev is not None:
                        yield ev
                ev_id, data, size = None, [], 0
                continue
            if line.startswith(":"):
                if line.startswith(": subscribed"):
                    self.connected.set()
                continue
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "id":
                ev_id = int(value) if value.isdigit() else None
            elif field == "data":
                data.append(value)
                size += len(value) + 1
                if size > _http.MAX_HEADER_BYTES:
                    # one event's data is capped as one line is: a server
                    # cannot make the client hold more (a cut: resumed)
                    raise ProtocolError("event data too long")

    @staticmethod
    def _event(text: str, ev_id: Optional[int]) -> Optional[Dict[str, Any]]:
        try:
            o = json.loads(text)
        except ValueError:
            return None
        if not isinstance(o, dict) or not isinstance(o.get("type"), str):
            return None
        ev: Dict[str, Any] = {"type": o["type"], "name": o.get("name"),
                              "owner_id": o.get("owner_id"),
                              "token": o.get("token"),
                              "floor": o.get("floor"), "id": ev_id}
        for k in ("message", "session_id", "reason"):
            if k in o:
                ev[k] = o[k]
        return ev
