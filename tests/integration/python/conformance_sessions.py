# SPDX-License-Identifier: MIT
"""The session steps of the shared client scenarios (tests/conformance,
README "Sessions"), through the tenure package: a part of the Runner of
conformance.py."""
from __future__ import annotations

import threading
import time
from typing import Any, Dict, List, Optional

import tenure


class Skip(Exception):
    """The scenario needs what the server has not (sessions)."""


class SessionSteps:
    """Mixed into conformance.Runner, which provides c, prefix, scenario,
    leases, vars, real(), arg() and error()."""

    c: tenure.Client
    prefix: str
    scenario: str
    leases: Dict[str, tenure.Lease]

    def init_sessions(self) -> None:
        self.sessions: Dict[str, tenure.Session] = {}
        self.ends: Dict[str, Dict[str, Any]] = {}
        self.ends_mu = threading.Condition()

    def owner_real(self, sym: str) -> str:
        return f"{self.prefix}{self.scenario}/{sym}"

    def owner_rel(self, real: str) -> Optional[str]:
        ns = f"{self.prefix}{self.scenario}/"
        return real[len(ns):] if real.startswith(ns) else None

    def session_event(self, ev: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """A session event of this scenario's namespace, owner relative;
        None for another run's."""
        rel = self.owner_rel(str(ev.get("owner_id") or ""))
        if rel is None:
            return None
        return dict(ev, owner_id=rel)

    def _recorder(self, label: str) -> Dict[str, Any]:
        rec = {"reason": None, "calls": 0, "lease_calls": 0,
               "leases_before": 0}
        self.ends[label] = rec
        return rec

    def _open(self, st: Dict[str, Any]) -> Dict[str, Any]:
        label = st["as"]
        rec = self._recorder(label)

        def lease_end(_lease: Any, _why: str, _err: Any) -> None:
            with self.ends_mu:
                rec["lease_calls"] += 1
                self.ends_mu.notify_all()
        try:
            s = self.c.open_session(self.owner_real(st["owner"]),
                                    self.arg(st, "ttl_ms"), keep=False,
                                    on_lease_end=lease_end)
        except tenure.Error as e:
            if e.status in (404, 405, 501):
                raise Skip(f"the server has no sessions ({e.status})")
            raise
        self.sessions[label] = s
        return {"ok": True, "session_id": s.session_id,
                "owner_id": self.owner_rel(s.owner_id), "ttl_ms": s.ttl_ms,
                "safe_for_ms": s.safe_for_ms()}

    def _keepalive(self, st: Dict[str, Any]) -> Dict[str, Any]:
        rec = self.ends[st["session"]]

        def on_end(_s: Any, why: str, _err: Any) -> None:
            with self.ends_mu:
                rec["reason"] = why
                rec["calls"] += 1
                rec["leases_before"] = rec["lease_calls"]
                self.ends_mu.notify_all()
        self.c.keep(self.sessions[st["session"]], on_end)
        return {"ok": True}

    def _wait_end(self, st: Dict[str, Any]) -> Dict[str, Any]:
        rec = self.ends[st["session"]]
        with self.ends_mu:
            self.ends_mu.wait_for(lambda: rec["calls"] > 0,
                                  st.get("timeout_ms", 5000) / 1000.0)
        time.sleep(0.3)  # a second report would be counted
        with self.ends_mu:
            return dict(rec)

    def _get(self, st: Dict[str, Any]) -> Dict[str, Any]:
        info = self.c.get_session(self.sessions[st["session"]].session_id)
        if info is None:
            return {"found": False}
        return {"found": True, "owner_id": self.owner_rel(info.owner_id),
                "ttl_ms": info.ttl_ms, "leases": info.leases}

    def _list(self, st: Dict[str, Any]) -> Dict[str, Any]:
        infos = self.c.sessions_all(self.owner_real(st.get("prefix", "")))
        owners = sorted(str(self.owner_rel(i.owner_id)) for i in infos)
        return {"count": len(infos), "owners": owners}

    def _claim(self, st: Dict[str, Any]) -> Dict[str, Any]:
        s = self.sessions[st["session"]]
        sym = {self.real(n): n for n in st["names"]}
        res = s.claim(list(sym), owner=st.get("owner"),
                      lock_delay_ms=self.arg(st, "lock_delay_ms", 0))
        out: Dict[str, Any] = {"granted": {}, "held": {}, "lock_delay": {}}
        for name, lease in res.granted.items():
            self.leases[st.get("as", "") + sym[name]] = lease
            out["granted"][sym[name]] = {"token": lease.token}
        for name, h in res.held.items():
            out["held"][sym[name]] = {"holder": {"owner_id": h.owner_id,
                                                 "token": h.token}}
        for name, ms in res.lock_delay.items():
            out["lock_delay"][sym[name]] = {"retry_after_ms": ms}
        return out

    def _release_many(self, st: Dict[str, Any]) -> Dict[str, Any]:
        s = self.sessions[st["session"]]
        todo = [self.leases[x] for x in st["leases"]]
        rel, lost = s.release(todo)
        ns = len(f"{self.prefix}{self.scenario}/")
        return {"ok": True, "released": sorted(x.name[ns:] for x in rel),
                "lost": sorted(x.name[ns:] for x in lost)}

    def session_step(self, st: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """The result of a session step, or None when op is not one."""
        op = st["do"]
        if op == "session_open":
            return self._open(st)
        if op == "session_adopt":
            real = self.sessions[st["session"]]
            self.sessions[st["as"]] = self.c.adopt_session(
                real.session_id, st["secret"], real.owner_id)
            self._recorder(st["as"])
            return {"ok": True}
        if op == "session_renew":
            s = self.sessions[st["session"]]
            s.renew(self.arg(st, "ttl_ms"))
            return {"ok": True, "safe_for_ms": s.safe_for_ms()}
        if op == "session_end":
            self.sessions[st["session"]].end()
            return {"ok": True}
        if op == "session_force_end":
            self.c.force_end_session(self.sessions[st["session"]].session_id)
            return {"ok": True}
        if op == "session_safe":
            return {"safe_for_ms": self.sessions[st["session"]].safe_for_ms()}
        steps = {"session_get": self._get, "session_list": self._list,
                 "claim": self._claim, "release_many": self._release_many,
                 "session_keepalive": self._keepalive,
                 "session_wait_end": self._wait_end}
        fn = steps.get(op)
        return fn(st) if fn is not None else None

    def session_acquire(self, st: Dict[str, Any]) -> tenure.Lease:
        return self.sessions[st["session"]].acquire(
            self.real(st["name"]), owner=st.get("owner"),
            wait_ms=self.arg(st, "wait_ms", 0),
            request_id=st.get("request_id"),
            lock_delay_ms=self.arg(st, "lock_delay_ms", 0))

    # provided by the Runner
    def real(self, sym: str) -> str:
        raise NotImplementedError

    def arg(self, step: Dict[str, Any], key: str, default: Any = None) -> Any:
        raise NotImplementedError


__all__: List[str] = ["SessionSteps", "Skip"]
