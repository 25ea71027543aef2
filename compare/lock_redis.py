# SPDX-License-Identifier: MIT
"""The Redis locks of the comparison: one server with ``SET NX PX`` and a
Lua check-and-delete release, and Redlock over three servers (a majority
of ``SET NX PX`` within the validity time).  Both keep the lock alive with
a watchdog (a Lua check-and-``PEXPIRE`` every third of the TTL), as
Redisson does, so only a frozen holder loses it.

Neither has a fencing token: the random value identifies the holder to
the server, not to a sink.  Through Debian's python3-redis.
"""
from __future__ import annotations

import os
import random
import time
from typing import List, Optional

import redis

from common import NotGranted, Renewer

RELEASE = ("if redis.call('get', KEYS[1]) == ARGV[1] then"
           " return redis.call('del', KEYS[1]) else return 0 end")
EXTEND = ("if redis.call('get', KEYS[1]) == ARGV[1] then"
          " return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end")
POLL_S = 0.02



def _client(addr: str, timeout_s: float = 2.0) -> redis.Redis:
    host, _, port = addr.rpartition(":")
    return redis.Redis(host=host, port=int(port), socket_timeout=timeout_s,
                       socket_connect_timeout=2.0)


class RedisLock:
    """``SET key value NX PX ttl`` on one server."""
    token_kind: Optional[str] = None

    def __init__(self, cfg: dict) -> None:
        self.ttl_ms = cfg["ttl_ms"]
        self.r = _client(cfg["redis"][0])
        self.release_script = self.r.register_script(RELEASE)
        self.extend_script = self.r.register_script(EXTEND)
        self.key: Optional[str] = None
        self.value = b""
        self.renewer: Optional[Renewer] = None

    def acquire(self, resource: str, wait_s: float) -> Optional[int]:
        value = os.urandom(16).hex().encode()
        deadline = time.monotonic() + wait_s
        while not self.r.set(resource, value, nx=True, px=self.ttl_ms):
            if time.monotonic() >= deadline:
                raise NotGranted(resource)
            time.sleep(POLL_S)
        self.key, self.value = resource, value
        return None

    def keep(self) -> None:
        self.renewer = Renewer(lambda: self.extend_script(
            keys=[self.key], args=[self.value, self.ttl_ms]) == 1,
            self.ttl_ms / 3000.0)
        self.renewer.start()

    def check(self) -> bool:
        return self.r.get(self.key) == self.value

    def release(self) -> bool:
        if self.renewer is not None:
            self.renewer.stop()
        return self.release_script(keys=[self.key], args=[self.value]) == 1

    def close(self) -> None:
        if self.renewer is not None:
            self.renewer.stop()
        self.r.close()


class Redlock:
    """Redlock (redis.io's distributed-lock page) over N servers: SET NX
    PX on each in turn, granted when a majority answered OK and the
    validity (TTL minus the time taken minus the clock drift allowance)
    is still positive; otherwise every server is unlocked and the client
    retries after a random delay."""
    token_kind: Optional[str] = None

    def __init__(self, cfg: dict) -> None:
        self.ttl_ms = cfg["ttl_ms"]
        # Redlock asks for a per-server timeout well below the TTL, so
        # that one dead server does not eat the validity time.
        self.servers: List[redis.Redis] = [_client(a, 0.1)
                                           for a in cfg["redis"]]
        self.quorum = len(self.servers) // 2 + 1
        self.key: Optional[str] = None
        self.value = b""
        self.valid_until = 0.0
        self.renewer: Optional[Renewer] = None

    def _on_all(self, script: str, args: list) -> int:
        n = 0
        for c in self.servers:
            try:
                n += int(c.eval(script, 1, self.key, *args) == 1)
            except redis.RedisError:
                pass
        return n

    def _try(self, resource: str, value: bytes) -> bool:
        start = time.monotonic()
        n = 0
        for c in self.servers:
            try:
                n += int(bool(c.set(resource, value, nx=True,
                                    px=self.ttl_ms)))
            except redis.RedisError:
                pass
        drift_s = (self.ttl_ms * 0.01 + 2) / 1000.0
        validity = self.ttl_ms / 1000.0 - (time.monotonic() - start) - drift_s
        self.key, self.value = resource, value
        if n >= self.quorum and validity > 0:
            self.valid_until = time.monotonic() + validity
            return True
        self._on_all(RELEASE, [value])
        return False

    def acquire(self, resource: str, wait_s: float) -> Optional[int]:
        deadline = time.monotonic() + wait_s
        while not self._try(resource, os.urandom(16).hex().encode()):
            if time.monotonic() >= deadline:
                raise NotGranted(resource)
            time.sleep(random.uniform(POLL_S / 2, POLL_S * 1.5))
        return None

    def _extend(self) -> bool:
        start = time.monotonic()
        if self._on_all(EXTEND, [self.value, self.ttl_ms]) < self.quorum:
            return False
        self.valid_until = start + self.ttl_ms / 1000.0
        return True

    def keep(self) -> None:
        self.renewer = Renewer(self._extend, self.ttl_ms / 3000.0)
        self.renewer.start()

    def check(self) -> bool:
        """Redlock's own test: is the validity time still running?"""
        return time.monotonic() < self.valid_until

    def release(self) -> bool:
        if self.renewer is not None:
            self.renewer.stop()
        return self._on_all(RELEASE, [self.value]) >= self.quorum

    def close(self) -> None:
        if self.renewer is not None:
            self.renewer.stop()
        for c in self.servers:
            c.close()
