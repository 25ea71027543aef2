# SPDX-License-Identifier: MIT
"""The tenure lease of the comparison, through the project's own Python
client (python/tenure): acquire (a waiting contender queues on the server
with ``wait_ms``, half a TTL at a time), kept alive by the client's
keepalive thread, checked with ``Lease.is_held()`` (the client's
monotonic safe time).

The fencing token is the grant's token, strictly increasing per name and
across the server.
"""
from __future__ import annotations

import time
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
        """Waits on the server at most half a TTL per request: the client
        counts a grant's safe time from when its request was *sent*, so
        a grant after a longer wait would come with none left."""
        deadline = time.monotonic() + wait_s
        while True:
            chunk = min(deadline - time.monotonic(), self.ttl_ms / 2000.0)
            try:
                self.lease = self.client.acquire(
                    resource, ttl_ms=self.ttl_ms,
                    wait_ms=max(0, int(chunk * 1000)))
                return self.lease.token
            except (tenure.Held, tenure.Timeout) as e:
                if time.monotonic() >= deadline:
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
