# SPDX-License-Identifier: MIT
"""The tenure lease of the comparison, through the project's own Python
client (python/tenure): acquire (a waiting contender queues on the server
with ``wait_ms``), kept alive by the client's
keepalive thread, checked with ``Lease.is_held()`` (the client's
monotonic safe time).

The fencing token is the grant's token, strictly increasing per name and
across the server.
"""
from __future__ import annotations

from typing import Optional

import tenure

from common import NotGranted



class TenureLock:
    token_kind: Optional[str] = "the lease's fencing token"

    def __init__(self, cfg: dict) -> None:
        self.ttl_ms = int(cfg["ttl_ms"])
        self.client = tenure.Client(cfg["tenure"], timeout=10.0,
                                    owner_id="compare")
        self.lease: Optional[tenure.Lease] = None

    def acquire(self, resource: str, wait_s: float) -> Optional[int]:
        """Queues on the server for up to wait_s.  A grant whose wait used
        up its safe time (counted from the sending) is renewed by the
        client before it is returned."""
        try:
            self.lease = self.client.acquire(
                resource, ttl_ms=self.ttl_ms,
                wait_ms=max(0, int(wait_s * 1000)))
            return self.lease.token
        except (tenure.Held, tenure.Timeout) as e:
            raise NotGranted(resource) from e

    def keep(self) -> None:
        assert self.lease is not None
        self.client.keep(self.lease)

    def check(self) -> bool:
        return self.lease is not None and self.lease.is_held()

    def release(self) -> bool:
        assert self.lease is not None
        try:
            self.lease.release()
            return True
        except tenure.Error:  # Lost: a newer grant or an expiry ended it
            return False

    def close(self) -> None:
        self.client.close()
