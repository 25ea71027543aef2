# SPDX-License-Identifier: MIT
"""tenure: leases with fencing tokens from tenured, for Python workers.

    import tenure
    c = tenure.Client("http://127.0.0.1:7300")
    with c.hold("shard:8841", owner="indexer-04", ttl_ms=3000) as lease:
        ...  # stamp every write with lease.token; check lease.is_held()
    with c.hold_session(["shard:1", "shard:2"], ttl_ms=3000) as s:
        ...  # s.leases(): one heartbeat for all of them

See docs/PYTHON.md.  Standard library only.
"""
from . import fence
from ._kafka import KafkaEventStream
from ._redis import RedisEventStream
from .client import (END_EXPIRED, END_LOST, END_RELEASED, END_STOPPED,
                     CheckResult, ClaimResult, Client, EventStream, Hold,
                     Lease, LeaseInfo, Session, SessionHold, SessionInfo)
from .errors import (BadRequest, ConnectError, Error, Expired, Forbidden,
                     HeadersTooLarge, Held, Holder, Internal, LockDelay, Lost,
                     MethodNotAllowed, NotFound, PayloadTooLarge,
                     ProtocolError, StaleToken, Timeout, TooManyRequests,
                     TransportError, Unauthorized, Unavailable,
                     UnsupportedMediaType)

__version__ = "0.1.0"

__all__ = [
    "Client", "Lease", "LeaseInfo", "CheckResult", "EventStream",
    "RedisEventStream", "KafkaEventStream", "Hold", "Session", "SessionHold",
    "SessionInfo", "ClaimResult",
    "END_LOST", "END_EXPIRED", "END_RELEASED", "END_STOPPED", "fence",
    "Error", "BadRequest", "Unauthorized", "Forbidden", "NotFound",
    "MethodNotAllowed", "Held", "Holder", "LockDelay", "Lost", "Expired",
    "PayloadTooLarge", "UnsupportedMediaType", "HeadersTooLarge",
    "TooManyRequests", "Unavailable", "Internal", "TransportError",
    "ConnectError", "Timeout", "ProtocolError", "StaleToken", "__version__",
]
