# SPDX-License-Identifier: MIT
"""The ZooKeeper lock of the comparison: kazoo's Lock, the recipe of the
ZooKeeper documentation (an ephemeral sequential znode under the lock's
path; the lowest sequence holds the lock, each other contender watches
its predecessor).  The lock lives as long as the client's session, whose
timeout is the TTL: kazoo's own thread keeps it alive with pings.

The fencing token is the lock znode's czxid, the id of the transaction
that created it: every later write of the ensemble has a higher one, so a
later holder's znode always does.  Through Debian's python3-kazoo.
"""
from __future__ import annotations

import logging
from typing import Dict, Optional

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import KazooException, LockTimeout
from kazoo.recipe.lock import Lock

from common import NotGranted

# kazoo logs a frozen holder's expired session as an error: expected here.
logging.getLogger("kazoo").setLevel(logging.CRITICAL)



class ZkLock:
    token_kind: Optional[str] = "czxid of the lock znode"

    def __init__(self, cfg: dict) -> None:
        self.client = KazooClient(hosts=cfg["zookeeper"],
                                  timeout=cfg["ttl_ms"] / 1000.0)
        self.client.start(timeout=10)
        self.lock: Optional[Lock] = None
        self.locks: Dict[str, Lock] = {}

    def acquire(self, resource: str, wait_s: float) -> Optional[int]:
        # One Lock object per name, as a long-lived worker keeps it: the
        # recipe creates the lock's parent znode on its first use only.
        lock = self.locks.setdefault(resource,
                                     self.client.Lock("/compare/" + resource))
        try:
            ok = lock.acquire(blocking=wait_s > 0,
                              timeout=wait_s if wait_s > 0 else None)
        except LockTimeout as e:
            raise NotGranted(resource) from e
        if not ok:
            raise NotGranted(resource)
        self.lock = lock
        stat = self.client.exists(lock.path + "/" + lock.node)
        return int(stat.czxid)

    def keep(self) -> None:
        """The session's pings keep it: nothing to start."""

    def check(self) -> bool:
        """Is the session connected and the lock ours?"""
        return (self.client.state == KazooState.CONNECTED
                and self.lock is not None and self.lock.is_acquired)

    def release(self) -> bool:
        """True when our znode still existed (the lock was still ours)."""
        lock = self.lock
        self.lock = None
        if lock is None or lock.node is None:
            return False
        try:
            existed = self.client.exists(lock.path + "/" + lock.node)
            lock.release()
            return existed is not None
        except KazooException:
            return False

    def close(self) -> None:
        try:
            self.client.stop()
            self.client.close()
        except KazooException:
            pass
