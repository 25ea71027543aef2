# SPDX-License-Identifier: MIT
"""The exceptions of the tenure client.

Every error the client raises is a :class:`Error`.  Server error bodies
(``{"error": code, "message": text}``) map one to one to a subclass, as in
libtenure (docs/CLIENT.md): ``held`` -> :class:`Held`, ``lost`` ->
:class:`Lost`, and so on; an unknown code keeps the base class with its
``code`` and ``status``.  Transport failures are :class:`ConnectError` (the
request certainly was not processed) or :class:`Timeout` (it may have been:
retry an acquire with the same ``request_id``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Type

__all__ = [
    "Error", "BadRequest", "Unauthorized", "Forbidden", "NotFound",
    "MethodNotAllowed", "Held", "LockDelay", "Lost", "Expired",
    "PayloadTooLarge", "UnsupportedMediaType", "HeadersTooLarge",
    "TooManyRequests", "Unavailable", "Internal", "TransportError",
    "ConnectError", "Timeout", "ProtocolError", "StaleToken", "Holder",
]


@dataclass(frozen=True)
class Holder:
    """Who holds a lease that blocked an acquire."""

    owner_id: str
    token: int
    expires_in_ms: Optional[int]


class Error(Exception):
    """Base of every tenure error.

    ``code`` is the server's error code (``"held"``, ``"lost"``, ...) or a
    local one (``"connect"``, ``"timeout"``, ``"protocol"``, ``"expired"``);
    ``status`` the HTTP status when the server answered, else None.
    """

    code: str = "error"

    def __init__(self, message: str, *, code: Optional[str] = None,
                 status: Optional[int] = None,
                 body: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.status = status
        self.body = body if body is not None else {}


class BadRequest(Error):
    code = "bad_request"


class Unauthorized(Error):
    code = "unauthorized"


class Forbidden(Error):
    """Wrong lease secret, or not permitted for this principal."""

    code = "forbidden"


class NotFound(Error):
    code = "not_found"


class MethodNotAllowed(Error):
    code = "method_not_allowed"


class Held(Error):
    """The name is held by someone else; ``holder`` says by whom."""

    code = "held"

    def __init__(self, message: str, **kw: Any) -> None:
        super().__init__(message, **kw)
        h = self.body.get("holder")
        self.holder: Optional[Holder] = None
        if isinstance(h, dict):
            tok = h.get("token")
            exp = h.get("expires_in_ms")
            self.holder = Holder(
                owner_id=str(h.get("owner_id", "")),
                token=tok if isinstance(tok, int) else 0,
                expires_in_ms=exp if isinstance(exp, int) else None)


class LockDelay(Error):
    """The name is in its lock delay; ``retry_after_ms`` says how long."""

    code = "lock_delay"

    def __init__(self, message: str, **kw: Any) -> None:
        super().__init__(message, **kw)
        ra = self.body.get("retry_after_ms")
        self.retry_after_ms: Optional[int] = ra if isinstance(ra, int) else None


class Lost(Error):
    """The grant is gone for good (expired, released, superseded): acquire
    again for a new token.  Also raised by ``hold()`` at exit when the lease
    was lost while the body ran."""

    code = "lost"


class Expired(Lost):
    """The lease's safe time ran out before a renew succeeded (what a frozen
    process, a frozen server or a cut network look like).  A :class:`Lost`:
    the holder must have stopped."""

    code = "expired"


class PayloadTooLarge(Error):
    code = "payload_too_large"


class UnsupportedMediaType(Error):
    code = "unsupported_media_type"


class HeadersTooLarge(Error):
    code = "request_header_fields_too_large"


class TooManyRequests(Error):
    code = "too_many_requests"


class Unavailable(Error):
    """503: the server cannot take writes now; state is unchanged."""

    code = "unavailable"


class Internal(Error):
    code = "internal"


class TransportError(Error):
    """No answer from the server."""

    code = "transport"


class ConnectError(TransportError):
    """No server URL accepted a connection: the request was not sent."""

    code = "connect"


class Timeout(TransportError):
    """The request was sent but no answer came in time: its outcome is
    unknown (retry an acquire with the same request_id)."""

    code = "timeout"


class ProtocolError(Error):
    """The server's answer was not what the API describes."""

    code = "protocol"


class StaleToken(Error):
    """Raised by the fence helpers' ``require_*`` variants when a write's
    token is below the resource's mark."""

    code = "stale"


_BY_CODE: Dict[str, Type[Error]] = {
    c.code: c for c in (BadRequest, Unauthorized, Forbidden, NotFound,
                        MethodNotAllowed, Held, LockDelay, Lost,
                        PayloadTooLarge, UnsupportedMediaType,
                        HeadersTooLarge, TooManyRequests, Unavailable,
                        Internal)
}

_BY_STATUS: Dict[int, Type[Error]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound,
    405: MethodNotAllowed, 409: Error, 413: PayloadTooLarge,
    415: UnsupportedMediaType, 429: TooManyRequests,
    431: HeadersTooLarge, 500: Internal, 503: Unavailable,
}


def from_response(status: int, body: Optional[Dict[str, Any]]) -> Error:
    """The exception for an error answer (status and parsed body)."""
    b = body if isinstance(body, dict) else {}
    code = b.get("error")
    msg = b.get("message")
    text = msg if isinstance(msg, str) and msg else f"HTTP {status}"
    if isinstance(code, str) and code in _BY_CODE:
        return _BY_CODE[code](text, status=status, body=b)
    cls = _BY_STATUS.get(status, Error)
    return cls(text, code=code if isinstance(code, str) else None,
               status=status, body=b)
