# SPDX-License-Identifier: MIT
"""The Python side of the shared client scenarios (tests/conformance): runs
one scenario file through the tenure package, with the language of
tests/conformance/README.md.  tn-conformance runs the same files through
libtenure, so the two clients cannot drift."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import tenure
from conformance_sessions import SessionSteps, Skip

MISSING = object()


class Mismatch(AssertionError):
    pass


class Runner(SessionSteps):
    def __init__(self, url: str, prefix: str) -> None:
        self.url = url
        self.prefix = prefix
        self.c = tenure.Client(url, owner_id="conformance-py")
        self.scenario = ""
        self.vars: Dict[str, Any] = {}
        self.leases: Dict[str, tenure.Lease] = {}
        self.stream: Optional[tenure.EventStream] = None
        self.got: List[Dict[str, Any]] = []
        self.cv = threading.Condition()
        self.init_sessions()

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()
        self.c.close()

    def real(self, sym: str) -> str:
        return f"{self.prefix}{self.scenario}/{sym}"

    # ---- matching ----

    def match(self, exp: Any, act: Any, path: str) -> None:
        if isinstance(exp, str) and exp.startswith("$"):
            if exp[1:] not in self.vars:
                if act is MISSING or act is None:
                    raise Mismatch(f"{path}: nothing to bind {exp}")
                self.vars[exp[1:]] = act
                return
            exp = self.vars[exp[1:]]
        if isinstance(exp, dict) and set(exp) == {"gt"}:
            lo = exp["gt"]
            if isinstance(lo, str):
                lo = self.vars.get(lo[1:])
            if not isinstance(act, int) or not isinstance(lo, int) or act <= lo:
                raise Mismatch(f"{path}: expected > {lo}, got {act!r}")
            return
        if isinstance(exp, dict) and set(exp) == {"range"}:
            lo, hi = exp["range"]
            if not isinstance(act, int) or not lo <= act <= hi:
                raise Mismatch(f"{path}: expected in [{lo}, {hi}], got {act!r}")
            return
        if isinstance(exp, dict):
            if not isinstance(act, dict):
                raise Mismatch(f"{path}: expected an object, got {act!r}")
            for k, v in exp.items():
                a = act.get(k, MISSING)
                if a is MISSING and v is not None:
                    raise Mismatch(f"{path}.{k}: missing in {act!r}")
                if k == "name" and isinstance(v, str):
                    if a != self.real(v):
                        raise Mismatch(f"{path}.{k}: expected {self.real(v)}, "
                                       f"got {a!r}")
                    continue
                self.match(v, None if a is MISSING else a, f"{path}.{k}")
            return
        if type(exp) is not type(act) or exp != act:  # noqa: E721 (True != 1)
            raise Mismatch(f"{path}: expected {exp!r}, got {act!r}")

    def arg(self, step: Dict[str, Any], key: str, default: Any = None) -> Any:
        v = step.get(key, default)
        if isinstance(v, str) and v.startswith("$"):
            return self.vars[v[1:]]
        return v

    # ---- steps ----

    @staticmethod
    def error(e: tenure.Error) -> Dict[str, Any]:
        out: Dict[str, Any] = {"error": e.code}
        if isinstance(e, tenure.LockDelay):
            out["retry_after_ms"] = e.retry_after_ms
        if isinstance(e, tenure.Held) and e.holder is not None:
            out["holder"] = {"owner_id": e.holder.owner_id,
                             "token": e.holder.token,
                             "expires_in_ms": e.holder.expires_in_ms}
        return out

    def step(self, st: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        op = st["do"]
        try:
            res = self.session_step(st)
            if res is not None:
                return res
            if op == "acquire" and "session" in st:
                lease = self.session_acquire(st)
                if "as" in st:
                    self.leases[st["as"]] = lease
                return {"ok": True, "token": lease.token,
                        "owner_id": lease.owner, "ttl_ms": lease.ttl_ms,
                        "safe_for_ms": lease.safe_for_ms()}
            if op == "acquire":
                lease = self.c.acquire(self.real(st["name"]), owner=st.get("owner"),
                                       ttl_ms=self.arg(st, "ttl_ms"),
                                       wait_ms=self.arg(st, "wait_ms", 0),
                                       request_id=st.get("request_id"),
                                       lock_delay_ms=self.arg(st, "lock_delay_ms", 0))
                if "as" in st:
                    self.leases[st["as"]] = lease
                return {"ok": True, "token": lease.token,
                        "owner_id": lease.owner, "ttl_ms": lease.ttl_ms,
                        "safe_for_ms": lease.safe_for_ms()}
            if op == "adopt":
                self.leases[st["as"]] = self.c.adopt(
                    self.real(st["name"]), self.arg(st, "token"), st["secret"])
                return {"ok": True}
            if op == "renew":
                lease = self.leases[st["lease"]]
                lease.renew(self.arg(st, "ttl_ms"))
                return {"ok": True, "safe_for_ms": lease.safe_for_ms()}
            if op == "release":
                self.leases[st["lease"]].release()
                return {"ok": True}
            if op == "safe":
                return {"safe_for_ms": self.leases[st["lease"]].safe_for_ms()}
            if op == "check":
                r = self.c.check_full(self.real(st["name"]), self.arg(st, "token"))
                current, floor = self.c.check(self.real(st["name"]),
                                              self.arg(st, "token"))
                assert (current, floor) == (r.current, r.floor)
                return {"current": r.current, "token": r.token, "floor": r.floor}
            if op == "get":
                info = self.c.get(self.real(st["name"]))
                if info is None:
                    return {"found": False}
                return {"found": True, "owner_id": info.owner_id,
                        "token": info.token}
            if op == "force_release":
                self.c.force_release(self.real(st["name"]))
                return {"ok": True}
            if op == "events_open":
                self.open_events()
                return {"ok": True}
            if op == "sleep":
                time.sleep(st["ms"] / 1000.0)
                return None
            if op == "events_expect":
                self.expect_events(st)
                return None
        except tenure.Error as e:
            return self.error(e)
        raise Mismatch(f"unknown op {op!r}")

    def open_events(self) -> None:
        if self.stream is not None:
            self.stream.close()
        self.got = []
        stream = self.c.events(prefix=f"{self.prefix}{self.scenario}/")
        self.stream = stream

        def reader() -> None:
            for ev in stream:
                if ev.get("session_id") is not None:
                    ev = self.session_event(ev)  # type: ignore[assignment]
                    if ev is None:
                        continue  # another run's session
                with self.cv:
                    self.got.append(ev)
                    self.cv.notify_all()

        threading.Thread(target=reader, daemon=True).start()
        if not stream.wait_connected(10):
            raise Mismatch("event stream did not subscribe")

    def expect_events(self, st: Dict[str, Any]) -> None:
        want = st["events"]
        timeout = st.get("timeout_ms", 5000) / 1000.0
        with self.cv:
            self.cv.wait_for(lambda: len(self.got) >= len(want), timeout)
            got = list(self.got)
        if len(got) < len(want):
            raise Mismatch(f"events: {len(got)} of {len(want)} came: {got}")
        for i, w in enumerate(want):
            self.match(w, got[i], f"events[{i}]")

    def run(self, path: Path) -> None:
        doc = json.loads(path.read_text())
        self.scenario = doc["scenario"]
        steps = doc["steps"]
        assert steps, "a scenario without steps"
        needs = doc.get("needs", [])
        for i, st in enumerate(steps):
            res = self.step(st)
            where = f"{self.scenario} step {i} ({st['do']})"
            if needs and isinstance(res, dict) \
                    and res.get("error") == "not_implemented":
                raise Skip(f"{where}: the server has no {', '.join(needs)}")
            if "expect" in st:
                self.match(st["expect"], res, where)
            elif res is not None and "error" in res:
                raise Mismatch(f"{where}: failed: {res}")
