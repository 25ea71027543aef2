# SPDX-License-Identifier: MIT
"""``python -m tenure run``: hold a lease for exactly as long as a command
runs, with the semantics of the C CLI's ``tenure run`` (docs/CLI.md):

1. acquire NAME (exit 3 when held, after ``--wait`` if given);
2. start COMMAND in its own process group with TENURE_NAME, TENURE_TOKEN
   (and TENURE_PROOF when the server signs grants) in its environment; the
   secret is not passed on;
3. renew the lease every third of the TTL;
4. if the lease is lost, or its safe time left falls to the grace period
   without a renew succeeding, send SIGTERM to the group, then SIGKILL when
   the safe time ends (after a reported loss: after the grace period), and
   exit 4 without releasing;
5. when COMMAND exits first, kill what is left of its group, release the
   lease and exit with COMMAND's status (128+N when it died of signal N);
6. forward SIGINT, SIGTERM and SIGHUP to the group.

Exit codes: 0 / COMMAND's status, 1 error, 2 usage, 3 held, 4 lost.
"""
from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
from typing import Any, Dict, List, Optional, Sequence

from ._http import mono_ms
from .client import END_LOST, Client, Lease
from .errors import Error, Held, LockDelay

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_HELD, EXIT_LOST = 0, 1, 2, 3, 4

USAGE = """\
Usage: python -m tenure [--server URL[,URL...]] [--timeout DUR]
                        [--auth-token TOKEN | --token-file FILE] COMMAND ...

Commands:
  run [--name] NAME --ttl DUR [--wait DUR] [--grace DUR] [--owner ID] [-v]
      -- COMMAND [ARGS...]
      Acquire NAME, run COMMAND with TENURE_NAME and TENURE_TOKEN (and
      TENURE_PROOF when the server signs grants) in its environment, keep
      the lease alive while it runs, and stop COMMAND (SIGTERM, then
      SIGKILL no later than the end of the safe time) if the lease is lost.

Durations take a unit: 500ms, 10s, 5m, 1h.
Server: --server, else $TENURE_SERVER, else http://127.0.0.1:7300
(host:port means http://host:port).  Bearer token: --auth-token, else
$TENURE_AUTH_TOKEN, else the first line of --token-file / $TENURE_TOKEN_FILE.

Exit: COMMAND's status (128+N if it died of signal N), 3 held, 4 lost
(COMMAND was killed), 1 error, 2 usage.
"""

_DUR = re.compile(r"^([0-9]+)(ms|s|m|h)$")
_UNITS = {"ms": 1, "s": 1000, "m": 60000, "h": 3600000}


class UsageError(Exception):
    pass


def parse_duration(s: str, what: str) -> int:
    """Milliseconds of ``500ms``/``10s``/``5m``/``1h``; a bare number is a
    usage error (is ``10`` ten seconds or ten milliseconds?)."""
    m = _DUR.match(s)
    if m is None:
        if s.isdigit():
            raise UsageError(f"{what}: \"{s}\" needs a unit: ms, s, m or h "
                             f"(e.g. {s}s)")
        raise UsageError(f"{what}: bad duration \"{s}\" (use ms, s, m or h)")
    return int(m.group(1)) * _UNITS[m.group(2)]


def _err(msg: str) -> None:
    sys.stderr.write(f"tenure: {msg}\n")
    sys.stderr.flush()


class _Opts:
    def __init__(self) -> None:
        self.servers: List[str] = []
        self.timeout_ms = 5000
        self.bearer: Optional[str] = None
        self.token_file: Optional[str] = None


def _take(argv: List[str], i: int, opt: str) -> str:
    if i + 1 >= len(argv):
        raise UsageError(f"{opt} needs a value")
    return argv[i + 1]


def _global(argv: List[str], o: _Opts) -> int:
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            sys.stdout.write(USAGE)
            raise SystemExit(0)
        key, eq, val = a.partition("=")
        if key in ("--server", "--timeout", "--auth-token", "--token-file"):
            if not eq:
                val = _take(argv, i, key)
                i += 1
            if key == "--server":
                o.servers = [s for s in val.split(",") if s]
            elif key == "--timeout":
                o.timeout_ms = parse_duration(val, "--timeout")
                if o.timeout_ms <= 0:
                    raise UsageError("--timeout must be positive")
            elif key == "--auth-token":
                o.bearer = val
            else:
                o.token_file = val
            i += 1
            continue
        if a.startswith("-"):
            raise UsageError(f"unknown option {a}")
        return i
    raise UsageError("a command is required")


def _client(o: _Opts, log: Optional[Any]) -> Client:
    servers = o.servers or [s for s in os.environ.get(
        "TENURE_SERVER", "http://127.0.0.1:7300").split(",") if s]
    bearer = o.bearer or os.environ.get("TENURE_AUTH_TOKEN") or None
    tf = o.token_file or os.environ.get("TENURE_TOKEN_FILE")
    if bearer is None and tf:
        try:
            with open(tf, encoding="utf-8") as f:
                bearer = f.readline().strip()
        except OSError as e:
            raise Error(f"cannot read a token from \"{tf}\": {e}") from None
    try:
        return Client(servers, bearer=bearer, timeout=o.timeout_ms / 1000.0,
                      log=log)
    except ValueError as e:
        raise UsageError(str(e)) from None


class _RunArgs:
    def __init__(self) -> None:
        self.name: Optional[str] = None
        self.ttl_ms = 0
        self.wait_ms = 0
        self.grace_ms = 2000
        self.owner: Optional[str] = None
        self.verbose = False
        self.cmd: List[str] = []


def _parse_run(argv: List[str]) -> _RunArgs:
    r = _RunArgs()
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            r.cmd = argv[i + 1:]
            break
        if a in ("-h", "--help"):
            sys.stdout.write(USAGE)
            raise SystemExit(0)
        if a in ("-v", "--verbose"):
            r.verbose = True
            i += 1
            continue
        key, eq, val = a.partition("=")
        if key in ("--name", "--ttl", "--wait", "--grace", "--owner"):
            if not eq:
                val = _take(argv, i, key)
                i += 1
            if key == "--name":
                r.name = val
            elif key == "--ttl":
                r.ttl_ms = parse_duration(val, "--ttl")
            elif key == "--wait":
                r.wait_ms = parse_duration(val, "--wait")
            elif key == "--grace":
                r.grace_ms = parse_duration(val, "--grace")
            else:
                r.owner = val
            i += 1
            continue
        if a.startswith("-"):
            raise UsageError(f"run: unknown option {a}")
        if r.name is None:
            r.name = a
            i += 1
            continue
        raise UsageError(f"run: unexpected argument \"{a}\" (the command "
                         "goes after --)")
    if r.name is None or r.ttl_ms <= 0 or not r.cmd:
        raise UsageError("run: --name, --ttl (above 0) and a command after -- "
                         "are required")
    r.grace_ms = min(r.grace_ms, r.ttl_ms // 4)
    return r


class _Child:
    def __init__(self, proc: "subprocess.Popen[bytes]") -> None:
        self.proc = proc
        self.pid = proc.pid
        self.status: Optional[int] = None
        self.terminating = False
        self.killed = False
        self.kill_at_ms = 0
        self.why = ""

    def signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.pid, sig)
        except OSError:
            try:
                os.kill(self.pid, sig)
            except OSError:
                pass

    def reap(self) -> None:
        if self.status is None:
            self.status = self.proc.poll()


def _spawn(cmd: Sequence[str]) -> "subprocess.Popen[bytes]":
    kw: Dict[str, Any] = {}
    if sys.version_info >= (3, 11):
        kw["process_group"] = 0
    else:
        kw["preexec_fn"] = os.setpgrp
    return subprocess.Popen(list(cmd), **kw)


def _terminate(ch: _Child, lease: Lease, why: str, grace_ms: int) -> None:
    safe = lease.safe_for_ms()
    ch.terminating = True
    ch.why = why
    # After a reported loss the grace period applies; otherwise the group
    # must be gone when the safe time ends.
    left = grace_ms if why == "lost" or safe > grace_ms else safe
    ch.kill_at_ms = mono_ms() + left
    _err(f"lease \"{lease.name}\" {why}: stopping the command "
         f"(SIGKILL in {left} ms)")
    ch.signal_group(signal.SIGTERM)


def _supervise(ch: _Child, lease: Lease, grace_ms: int, rd: int,
               ended: Dict[str, str]) -> None:
    while True:
        ch.reap()
        if ch.status is not None:
            return
        if not ch.terminating:
            end = ended.get("why")
            if end == END_LOST:
                _terminate(ch, lease, "lost", grace_ms)
            elif end is not None or lease.safe_for_ms() <= grace_ms:
                _terminate(ch, lease, "expired", grace_ms)
        if ch.terminating and not ch.killed and mono_ms() >= ch.kill_at_ms:
            ch.signal_group(signal.SIGKILL)
            ch.killed = True
        if not ch.terminating:
            t = lease.safe_for_ms() - grace_ms
        elif not ch.killed:
            t = ch.kill_at_ms - mono_ms()
        else:
            t = 1000
        t = max(0, min(t, 60000))
        try:
            ready, _, _ = select.select([rd], [], [], t / 1000.0)
        except InterruptedError:
            ready = []
        if ready:
            try:
                while os.read(rd, 64):
                    pass
            except BlockingIOError:
                pass


def cmd_run(o: _Opts, argv: List[str]) -> int:
    r = _parse_run(argv)
    log = (lambda m: _err(m)) if r.verbose else None
    c = _client(o, log)
    try:
        try:
            lease = c.acquire(r.name or "", owner=r.owner, ttl_ms=r.ttl_ms,
                              wait_ms=r.wait_ms)
        except Held as e:
            h = e.holder
            _err(f"lease \"{r.name}\" is held by \"{h.owner_id if h else ''}\" "
                 f"(token {h.token if h else 0})"
                 + (" and the wait ran out" if r.wait_ms else ""))
            return EXIT_HELD
        except LockDelay as e:
            _err(f"lease \"{r.name}\" is in its lock delay "
                 f"({e.retry_after_ms} ms left)")
            return EXIT_HELD
        if r.verbose:
            _err(f"acquired \"{lease.name}\" token={lease.token}")
        return _hold(c, lease, r)
    finally:
        c.close()


def _hold(c: Client, lease: Lease, r: _RunArgs) -> int:
    if not lease.is_held():
        _err(f"lease \"{lease.name}\" ran out before the command started")
        return EXIT_LOST
    rd, wr = os.pipe()
    os.set_blocking(rd, False)
    os.set_blocking(wr, False)
    prev_wakeup = signal.set_wakeup_fd(wr)
    ch_box: List[_Child] = []
    pending: List[int] = []  # signals that came before the child was known

    def forward(signo: int, _frame: Any) -> None:
        if ch_box:
            ch_box[0].signal_group(signo)
        else:
            pending.append(signo)

    old = {s: signal.signal(s, forward)
           for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    old_chld = signal.signal(signal.SIGCHLD, lambda _s, _f: None)
    env_keys = ("TENURE_NAME", "TENURE_TOKEN", "TENURE_PROOF")
    saved_env = {k: os.environ.get(k) for k in env_keys}
    os.environ["TENURE_NAME"] = lease.name
    os.environ["TENURE_TOKEN"] = str(lease.token)
    if lease.proof is not None:
        os.environ["TENURE_PROOF"] = lease.proof
    else:
        os.environ.pop("TENURE_PROOF", None)
    ended: Dict[str, str] = {}
    try:
        try:
            proc = _spawn(r.cmd)
        except OSError as e:
            _err(f"cannot run \"{r.cmd[0]}\": {e}")
            try:
                lease.release()
            except Error:
                pass
            return 127
        ch = _Child(proc)
        ch_box.append(ch)
        # A signal between the spawn and the line above was kept: the
        # command may already run (and say so), so it is sent now.
        for signo in pending:
            ch.signal_group(signo)

        def on_end(_l: Lease, why: str, _e: Optional[Error]) -> None:
            ended["why"] = why
            try:
                os.write(wr, b"\0")
            except OSError:
                pass

        try:
            c.keep(lease, on_end)
        except Error:
            ended["why"] = "expired"
        _supervise(ch, lease, r.grace_ms, rd, ended)
        # Nothing of the command may outlive the lease.
        ch.signal_group(signal.SIGKILL)
        if ch.terminating:
            return EXIT_LOST  # lost or running out: nothing to give back
        try:
            lease.release()
            if r.verbose:
                _err(f"released \"{lease.name}\"")
        except Error as e:
            _err(f"release of \"{lease.name}\" failed: {e.code} {e}")
        st = ch.status if ch.status is not None else 1
        return 128 - st if st < 0 else st
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        signal.signal(signal.SIGCHLD, old_chld)
        signal.set_wakeup_fd(prev_wakeup)
        os.close(rd)
        os.close(wr)
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    o = _Opts()
    try:
        i = _global(args, o)
        cmd, rest = args[i], args[i + 1:]
        if cmd == "run":
            return cmd_run(o, rest)
        raise UsageError(f"unknown command \"{cmd}\"")
    except UsageError as e:
        _err(f"{e}\n(python -m tenure --help for the usage)")
        return EXIT_USAGE
    except Error as e:
        _err(f"{e.code}: {e}")
        return EXIT_ERROR
