# SPDX-License-Identifier: MIT
"""The etcd lock of the comparison: a lease (TTL in whole seconds, kept
alive every third of it, as clientv3's concurrency.Session does) and the
v3 lock service's Lock call with that lease, which is ``etcdctl lock``:
the lock is the key NAME/LEASE-ID, and whoever's key has the lowest create
revision among NAME/'s keys holds it.

The fencing token is that key's create revision: it grows with every
write to the store, so a later holder's key always has a higher one.
Spoken through etcd's HTTP/JSON gateway (/v3/...) with http.client: no
client library is needed.
"""
from __future__ import annotations

import base64
import http.client
import json
import math
from typing import Any, Dict, Optional
from urllib.parse import urlsplit

from common import NotGranted, Renewer



def b64(s: str) -> str:
    return base64.b64encode(s.encode("utf-8")).decode("ascii")


class Gateway:
    """One keep-alive HTTP connection to etcd's gateway."""

    def __init__(self, url: str) -> None:
        u = urlsplit(url)
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 2379
        self.conn: Optional[http.client.HTTPConnection] = None

    def call(self, path: str, body: Dict[str, Any],
             timeout_s: float = 5.0) -> Dict[str, Any]:
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port,
                                                   timeout=timeout_s)
        self.conn.timeout = timeout_s
        if self.conn.sock is not None:
            self.conn.sock.settimeout(timeout_s)
        try:
            self.conn.request("POST", path, json.dumps(body),
                              {"Content-Type": "application/json"})
            resp = self.conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise
        out = json.loads(data or b"{}")
        if resp.status != 200:
            raise RuntimeError(f"etcd {path}: {resp.status} {out}")
        # Streaming calls (keepalive) answer {"result": {...}}.
        return out.get("result", out) if isinstance(out, dict) else {}

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class EtcdLock:
    token_kind: Optional[str] = "create revision of the lock key"

    def __init__(self, cfg: dict) -> None:
        self.url = cfg["etcd"]
        self.ttl_s = max(1, math.ceil(cfg["ttl_ms"] / 1000))
        self.gw = Gateway(self.url)
        self.lease = ""
        self.key = ""
        self.renewer: Optional[Renewer] = None
        self.keep_gw = Gateway(self.url)

    def acquire(self, resource: str, wait_s: float) -> Optional[int]:
        g = self.gw.call("/v3/lease/grant", {"TTL": self.ttl_s})
        self.lease = str(g["ID"])
        if wait_s > 0:
            # The Lock call blocks for as long as it waits: keep the
            # lease alive meanwhile, as a session does.
            self.keep()
        try:
            r = self.gw.call("/v3/lock/lock",
                             {"name": b64(resource), "lease": self.lease},
                             timeout_s=max(wait_s, 5.0))
        except (OSError, http.client.HTTPException) as e:
            self._revoke()
            raise NotGranted(f"{resource}: {e}") from e
        self.key = r["key"]
        kv = self.gw.call("/v3/kv/range", {"key": self.key})
        return int(kv["kvs"][0]["create_revision"])

    def _keepalive(self, gw: Gateway) -> bool:
        r = gw.call("/v3/lease/keepalive", {"ID": self.lease})
        return int(r.get("TTL", 0)) > 0

    def keep(self) -> None:
        if self.renewer is not None:
            return
        gw = self.keep_gw  # used by the renewer's thread alone
        self.renewer = Renewer(lambda: self._keepalive(gw), self.ttl_s / 3.0)
        self.renewer.start()

    def check(self) -> bool:
        """Does the server still have our lease?  (Its TTL is in whole
        seconds, rounded down, so a live lease may answer 0; a lease the
        server no longer has answers -1.)"""
        r = self.gw.call("/v3/lease/timetolive", {"ID": self.lease})
        return int(r.get("TTL", 0)) >= 0

    def _revoke(self) -> bool:
        if self.renewer is not None:
            self.renewer.stop()
            self.renewer = None
        try:
            self.gw.call("/v3/lease/revoke", {"ID": self.lease})
            return True
        except RuntimeError:  # the lease had expired
            return False

    def release(self) -> bool:
        if self.key:
            self.gw.call("/v3/lock/unlock", {"key": self.key})
        return self._revoke()

    def close(self) -> None:
        if self.renewer is not None:
            self.renewer.stop()
        self.gw.close()
        self.keep_gw.close()
