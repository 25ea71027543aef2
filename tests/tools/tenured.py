# SPDX-License-Identifier: MIT
"""The one way the Python harnesses start tenured: the Python package's
suites (tests/integration/python), the OpenAPI property test, the browser
tests (tests/ui) and the scripts of compare/ and bench/.  The shell
scripts' twin is tests/integration/lib-tenured.sh, Go's is
go/internal/testserver: the same rules.

A server runs on a free loopback port below the kernel's range for
outgoing connections (no client socket can hold it when it restarts
there), with its data dir and log in a folder of the caller's.  It is
ready once its own log says it listens on that port and /readyz answers
200: an answer from another process holding the port is never taken for
ours, and a port taken between the pick and the bind is replaced.

TN_BIN names the build's bin/ folder (default: build/dev/bin of the tree
this file is in); TN_SRC the source tree."""
from __future__ import annotations

import os
import random
import re
import signal
import socket
import ssl
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

SRC = Path(os.environ.get("TN_SRC", Path(__file__).resolve().parents[2]))
BIN = Path(os.environ.get("TN_BIN", SRC / "build" / "dev" / "bin"))

SANITIZER_REPORT = re.compile(
    r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:")


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    return low if low > 12000 else 32768


def free_port() -> int:
    """A loopback port nothing listens on now, below the ephemeral range
    (so no outgoing connection takes it between this check and the bind)."""
    low = _ephemeral_low()
    for _ in range(200):
        p = random.randint(10000, low - 1)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                continue
        return p
    raise RuntimeError("no free port")


class Tenured:
    """One tenured process; restart() keeps its port and data dir.

    work: the folder of its data dir (work/data unless data= is given)
    and its log (work/tenured.log unless log= is given); args: extra
    arguments; tls_ca: the server speaks HTTPS (--tls-cert), asked with
    this CA; store: a --store URL unless args name one; env: extra
    environment; port: this port and no other (default: a free one)."""

    def __init__(self, work: Union[str, Path],
                 args: Optional[Sequence[str]] = None, *,
                 data: Optional[Union[str, Path]] = None,
                 log: Optional[Union[str, Path]] = None,
                 port: int = 0, tls_ca: Optional[str] = None,
                 store: Optional[str] = None,
                 env: Optional[Dict[str, str]] = None,
                 exe: Optional[Union[str, Path]] = None) -> None:
        self.tmp = Path(work)
        self.data = Path(data) if data else self.tmp / "data"
        self.log = Path(log) if log else self.tmp / "tenured.log"
        self.args: List[str] = list(args or [])
        self.tls_ca = tls_ca
        self.store = store
        self.env = env
        self.exe = Path(exe) if exe else BIN / "tenured"
        self.fixed_port = port != 0
        self.port = port or free_port()
        self.proc: Optional[subprocess.Popen[bytes]] = None
        self.returncode: Optional[int] = None
        self._since = 0

    @property
    def url(self) -> str:
        scheme = "https" if self.tls_ca else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def _spawn(self) -> None:
        assert self.exe.exists(), f"missing {self.exe} (build first, or set TN_BIN)"
        self.data.mkdir(parents=True, exist_ok=True)
        args = list(self.args)
        if self.store and "--store" not in args:
            args = ["--store", self.store] + args
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self._since = self.log.stat().st_size if self.log.exists() else 0
        env = None
        if self.env:
            env = dict(os.environ)
            env.update(self.env)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [str(self.exe), "--listen", f"127.0.0.1:{self.port}",
                 "--data-dir", str(self.data)] + args,
                stdout=log, stderr=subprocess.STDOUT, env=env)
        self.returncode = None

    def _this_run(self) -> str:
        with open(self.log, "rb") as f:
            f.seek(self._since)
            return f.read().decode("utf-8", "replace")

    def _bound(self) -> bool:
        """Our own process listens on the port (its log says so, unless a
        --log-level above info hides the line: the 200 has to do)."""
        level = re.search(r"--log-level[= ](\w+)", " ".join(self.args))
        if level and level.group(1) not in ("info", "debug"):
            return True
        return re.search(r'msg="listening" .*port=%d ' % self.port,
                         self._this_run()) is not None

    def _readyz(self) -> bool:
        ctx = None
        if self.tls_ca:
            ctx = ssl.create_default_context(cafile=self.tls_ca)
        try:
            with urllib.request.urlopen(self.url + "/readyz", timeout=2,
                                        context=ctx) as r:
                return r.status == 200
        except OSError:
            return False

    def wait_ready(self, timeout: float = 30) -> None:
        """Until ready; RuntimeError with the log's tail when it exited or
        never answered."""
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.returncode = self.proc.returncode
                raise RuntimeError("tenured exited %d: %s" % (
                    self.proc.returncode, self.log_tail()))
            if self._bound() and self._readyz() and self.proc.poll() is None:
                return
            time.sleep(0.05)
        raise RuntimeError("tenured did not become ready on %s: %s" % (
            self.url, self.log_tail()))

    def start(self, wait: bool = True, timeout: float = 30) -> "Tenured":
        for _ in range(5):
            self._spawn()
            if not wait:
                return self
            try:
                self.wait_ready(timeout)
                return self
            except RuntimeError:
                taken = "cannot listen on" in self._this_run()
                self.kill()
                if self.fixed_port or not taken:
                    raise
            self.port = free_port()
        raise RuntimeError("tenured found no free port")

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def send_signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> Optional[int]:
        """Send sig (after a SIGCONT, in case it was stopped) and wait;
        the exit status (negative: the signal), or None if not running."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.returncode = self.proc.returncode
        self.proc = None
        return self.returncode

    def kill(self) -> Optional[int]:
        return self.stop(signal.SIGKILL)

    def restart(self, sig: int = signal.SIGKILL,
                args: Optional[Sequence[str]] = None) -> None:
        """Stop with sig and start again on the same port and data dir."""
        self.stop(sig)
        if args is not None:
            self.args = list(args)
        self._spawn()
        self.wait_ready()

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, chars: int = 2000) -> str:
        return self.log_text()[-chars:]

    def sanitizer_reports(self) -> List[str]:
        """The lines of a sanitizer build's reports in the log."""
        return [line for line in self.log_text().splitlines()
                if SANITIZER_REPORT.search(line)]
