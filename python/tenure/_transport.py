# SPDX-License-Identifier: MIT
"""What every part of the client shares: the servers and the one that last
answered, the credential, the timeouts, the safety margin, the log hook,
and the one lock (with its condition) that guards the state of every lease
and session of a client.  Sits just above _http and errors: leases,
sessions, the event stream, the keepalive and the client all take a
:class:`Transport`, and none of them imports another one's module upward.
"""
from __future__ import annotations

import json
import socket
import ssl
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence
from urllib.parse import quote

from . import _http
from ._http import mono_ms
from .errors import ConnectError, Error, ProtocolError, from_response

__all__ = ["Transport", "LogFn"]

LogFn = Callable[[str], None]
Track = Callable[[Optional[socket.socket]], None]


class Transport:
    """The servers, credentials and limits of one client, and its lock."""

    def __init__(self, urls: Sequence[str], *, bearer: Optional[str],
                 timeout_ms: int, connect_timeout_ms: int, owner_id: str,
                 margin_ms: Optional[int],
                 ssl_ctx: Optional[ssl.SSLContext],
                 log: Optional[LogFn]) -> None:
        self.targets: List[_http.Target] = [_http.parse_url(u) for u in urls]
        self.current = 0  # index of the URL that last answered
        self.timeout_ms = timeout_ms
        self.connect_timeout_ms = connect_timeout_ms
        self.owner_id = owner_id
        self.bearer = bearer
        self.margin = margin_ms
        self.ssl_ctx = ssl_ctx
        self.log = log
        # One lock for every lease and session of the client: the keepalive
        # decides over many of them at once, and a session's leases read
        # the session's safe time.
        self.mu = threading.Lock()
        self.cond = threading.Condition(self.mu)

    def logf(self, msg: str) -> None:
        if self.log is not None:
            try:
                self.log(msg)
            except Exception:  # a log hook never breaks the keepalive
                pass

    def margin_ms(self, ttl_ms: int) -> int:
        return self.margin if self.margin is not None and self.margin >= 0 \
            else ttl_ms // 10

    def headers(self) -> Dict[str, str]:
        h = {"Accept": "application/json"}
        if self.bearer is not None:
            h["Authorization"] = f"Bearer {self.bearer}"
        return h

    def do(self, method: str, path: str, body: Optional[Dict[str, Any]] = None,
           *, extra_ms: int = 0, deadline_ms: Optional[int] = None,
           track: Optional[Track] = None) -> _http.Response:
        """Send to the URL that last answered, on a fresh connection; move
        on when nothing was sent (no connection) or on a 503, never after a
        request was sent and no answer came."""
        data = json.dumps(body, separators=(",", ":")).encode("utf-8") \
            if body is not None else None
        if deadline_ms is None:
            deadline_ms = mono_ms() + self.timeout_ms + extra_ms
        n = len(self.targets)
        start = self.current
        last: Optional[_http.Response] = None
        err: Optional[Error] = None
        for i in range(n):
            idx = (start + i) % n
            try:
                r = _http.request(self.targets[idx], method, path,
                                  headers=self.headers(), body=data,
                                  deadline_ms=deadline_ms,
                                  connect_timeout_ms=self.connect_timeout_ms,
                                  ssl_ctx=self.ssl_ctx, track=track)
            except ConnectError as e:
                err = e
                continue
            self.current = idx
            if r.status == 503 and i + 1 < n:
                last = r
                continue
            return r
        if last is not None:
            return last
        assert err is not None
        raise err


def raise_for(r: _http.Response) -> None:
    """Raise the error of an error answer."""
    raise error_of(r)


def error_of(r: _http.Response) -> Error:
    try:
        body = r.json()
    except ProtocolError:
        body = None
    return from_response(r.status, body if isinstance(body, dict) else None)


def lease_path(name: str, suffix: str = "") -> str:
    return "/v1/leases/" + quote(name, safe="") + suffix


def session_path(session_id: str, suffix: str = "") -> str:
    return "/v1/sessions/" + quote(session_id, safe="") + suffix
