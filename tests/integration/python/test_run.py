# SPDX-License-Identifier: MIT
"""python -m tenure run: the C CLI's `tenure run` semantics (docs/CLI.md)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import tenure
from conftest import Server


def run(url: str, args: List[str], **kw: object) -> "subprocess.Popen[str]":
    return subprocess.Popen([sys.executable, "-m", "tenure", "--server", url,
                             "run"] + args, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)  # type: ignore[call-overload]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_runs_the_command_with_the_token_and_releases(server: Server,
                                                      uniq: str) -> None:
    p = run(server.url, ["--name", uniq + "a", "--ttl", "5s", "--owner", "w1",
                         "--", "sh", "-c",
                         'echo "$TENURE_NAME $TENURE_TOKEN"; sleep 1; exit 7'])
    out, err = p.communicate(timeout=30)
    assert p.returncode == 7, err
    name, token = out.split()
    assert name == uniq + "a" and int(token) > 0
    c = tenure.Client(server.url)
    assert c.get(uniq + "a") is None  # released
    assert c.check(uniq + "a", int(token)) == (False, int(token))


def test_held_exits_3(server: Server, uniq: str) -> None:
    c = tenure.Client(server.url)
    lease = c.acquire(uniq + "a", owner="other", ttl_ms=10000)
    p = run(server.url, [uniq + "a", "--ttl", "2s", "--", "true"])
    _, err = p.communicate(timeout=30)
    assert p.returncode == 3 and '"other"' in err, err
    p = run(server.url, [uniq + "a", "--ttl", "2s", "--wait", "300ms", "--",
                         "true"])
    _, err = p.communicate(timeout=30)
    assert p.returncode == 3 and "wait ran out" in err, err
    lease.release()


def test_usage_errors_exit_2(server: Server, uniq: str) -> None:
    for args, says in ((["--name", uniq, "--ttl", "10", "--", "true"], "unit"),
                       (["--name", uniq, "--ttl", "0s", "--", "true"], "--ttl"),
                       (["--name", uniq, "--ttl", "2s"], "command"),
                       (["--ttl", "2s", "--", "true"], "--name"),
                       (["--name", uniq, "--ttl", "2s", "--bogus", "--",
                         "true"], "--bogus")):
        p = run(server.url, args)
        _, err = p.communicate(timeout=30)
        assert p.returncode == 2, (args, err)
        assert says in err, (args, err)
        assert len(err.strip().splitlines()) == 2, err  # one error, one hint


def test_lost_kills_the_group_and_exits_4(server: Server, uniq: str,
                                          tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    p = run(server.url, ["--name", uniq + "a", "--ttl", "3s", "--", "sh",
                         "-c", f'sleep 60 & echo $$ $! > {pidfile}; wait'])
    end = time.monotonic() + 10
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert time.monotonic() < end
        time.sleep(0.02)
    pids = [int(x) for x in pidfile.read_text().split()]
    c = tenure.Client(server.url)
    c.force_release(uniq + "a")
    succ = c.acquire(uniq + "a", owner="successor", ttl_ms=10000)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 4, err
    assert "lost" in err
    for pid in pids:  # the shell and its background child
        assert not alive(pid), pid
    assert c.check(uniq + "a", succ.token)[0]  # not released by run
    succ.release()


def test_signals_are_forwarded_and_the_lease_released(server: Server,
                                                      uniq: str) -> None:
    p = run(server.url, ["--name", uniq + "a", "--ttl", "3s", "--", "sh", "-c",
                         "echo up; exec sleep 60"])
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "up"
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=30)
    assert p.returncode == 128 + signal.SIGTERM
    assert tenure.Client(server.url).get(uniq + "a") is None


def test_a_signal_before_the_child_is_known_is_forwarded(
        server: Server, uniq: str, monkeypatch: "object") -> None:
    """A SIGTERM that lands after the command started but before the
    supervisor knew its process (the command may already have printed its
    first line) reaches the command: it was dropped, and run waited for
    the command to end by itself."""
    import tenure.cli as cli
    spawn = cli._spawn

    def spawn_then_signal(cmd: List[str]) -> "subprocess.Popen[bytes]":
        p = spawn(cmd)
        os.kill(os.getpid(), signal.SIGTERM)  # handled before p is known
        return p

    monkeypatch.setattr(cli, "_spawn", spawn_then_signal)  # type: ignore
    t0 = time.monotonic()
    rc = cli.main(["--server", server.url, "run", "--name", uniq + "a",
                   "--ttl", "3s", "--", "sleep", "5"])
    assert rc == 128 + signal.SIGTERM
    assert time.monotonic() - t0 < 4.5
    assert tenure.Client(server.url).get(uniq + "a") is None


def test_a_frozen_supervisor_kills_at_once_when_resumed(server: Server,
                                                        uniq: str) -> None:
    p = run(server.url, ["--name", uniq + "a", "--ttl", "2s", "--", "sh", "-c",
                         "echo up; exec sleep 60"])
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "up"
    os.kill(p.pid, signal.SIGSTOP)
    time.sleep(2.5)  # past the whole TTL
    t0 = time.monotonic()
    os.kill(p.pid, signal.SIGCONT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 4, err
    assert time.monotonic() - t0 < 2.0
