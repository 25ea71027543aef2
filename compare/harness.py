# SPDX-License-Identifier: MIT
"""The harness of the comparison: runs the incident as trials against each
lock system, and the acquire cost of each, and writes what happened to
OUT/events.jsonl and OUT/bench.json.  It judges nothing: the reader
(reader.py), a separate process, reads the sinks and that log afterwards.

    harness.py OUT_DIR        (compare/run.sh starts the servers first)

A trial, on its own resource: worker A acquires, writes, checks that it
still holds the lock and is frozen (SIGSTOP) right after that check for a
pause drawn around the TTL; worker B, meanwhile, waits for the lock and,
once granted, writes twice; A is resumed (SIGCONT) and writes with what
it believes is still its lock.  Workers are separate processes from a
pool, so that SIGSTOP freezes each for real, heartbeat threads and all;
trials run concurrently.  Settings come from the environment (COMPARE_*,
docs/COMPARE.md).
"""
from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
from typing import Any, Dict, List, Set

import psycopg2

import sinks
from common import SYSTEMS, TOPIC, now_ns

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.environ.get("TN_PYTHON3", "/usr/bin/python3")


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


class Settings:
    def __init__(self) -> None:
        self.trials = env_int("COMPARE_TRIALS", 200)
        self.concurrency = env_int("COMPARE_CONCURRENCY", 16)
        self.ttl_ms = env_int("COMPARE_TTL_MS", 1000)
        lo, _, hi = os.environ.get("COMPARE_PAUSE", "0.5:2.5").partition(":")
        self.pause = (float(lo), float(hi or lo))
        self.seed = env_int("COMPARE_SEED", 29)
        self.bench_n = env_int("COMPARE_BENCH_N", 200)
        self.bench_rounds = env_int("COMPARE_BENCH_ROUNDS", 3)
        self.bench_workers = env_int("COMPARE_BENCH_WORKERS", 4)
        self.systems = [s for s in os.environ.get(
            "COMPARE_SYSTEMS", ",".join(SYSTEMS)).split(",") if s]


class Log:
    """OUT/events.jsonl: every worker event and the harness's own."""

    def __init__(self, path: str) -> None:
        self.f = open(path, "a", encoding="utf-8")

    def write(self, ev: Dict[str, Any]) -> None:
        ev.setdefault("t", now_ns())
        self.f.write(json.dumps(ev, separators=(",", ":")) + "\n")

    def close(self) -> None:
        self.f.close()


class Proc:
    """One worker process and the queue of its events."""

    def __init__(self, system: str, cfg_path: str, log: Log) -> None:
        self.system, self.cfg_path, self.log = system, cfg_path, log
        self.tag: Dict[str, Any] = {}
        self.events: asyncio.Queue = asyncio.Queue()
        self.p: Any = None

    async def start(self) -> None:
        self.p = await asyncio.create_subprocess_exec(
            PYTHON, os.path.join(HERE, "worker.py"), self.system,
            self.cfg_path, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, limit=1 << 24)
        asyncio.ensure_future(self._read())
        await self.until({"ready"}, 120)

    async def _read(self) -> None:
        while True:
            line = await self.p.stdout.readline()
            if not line:
                await self.events.put({"ev": "exit"})
                return
            ev = json.loads(line)
            ev.update(self.tag)
            if ev["ev"] != "bench":  # those go to bench.json
                self.log.write(ev)
            await self.events.put(ev)

    async def send(self, cmd: Dict[str, Any]) -> None:
        self.p.stdin.write((json.dumps(cmd) + "\n").encode())
        await self.p.stdin.drain()

    async def until(self, kinds: Set[str], timeout_s: float) -> Dict[str, Any]:
        """The next event of one of these kinds (or "done", "exit")."""
        while True:
            ev = await asyncio.wait_for(self.events.get(), timeout_s)
            if ev["ev"] in kinds or ev["ev"] in ("done", "exit"):
                return ev

    def signal(self, sig: int) -> None:
        try:
            os.kill(self.p.pid, sig)
        except ProcessLookupError:
            pass

    async def stop(self) -> None:
        self.signal(signal.SIGCONT)
        if self.p.returncode is None:
            try:
                await self.send({"op": "quit"})
                await asyncio.wait_for(self.p.wait(), 30)
            except (asyncio.TimeoutError, ConnectionError):
                self.signal(signal.SIGKILL)
                await self.p.wait()


class Pool:
    def __init__(self, system: str, cfg_path: str, log: Log) -> None:
        self.system, self.cfg_path, self.log = system, cfg_path, log
        self.idle: asyncio.Queue = asyncio.Queue()
        self.all: List[Proc] = []

    async def start(self, n: int) -> None:
        procs = [Proc(self.system, self.cfg_path, self.log) for _ in range(n)]
        await asyncio.gather(*(p.start() for p in procs))
        for p in procs:
            self.all.append(p)
            self.idle.put_nowait(p)

    async def get(self) -> Proc:
        return await self.idle.get()

    async def put(self, p: Proc, healthy: bool) -> None:
        p.tag = {}
        if not healthy:  # frozen, stuck or dead: replace it
            p.signal(signal.SIGKILL)
            self.all.remove(p)
            p = Proc(self.system, self.cfg_path, self.log)
            await p.start()
            self.all.append(p)
        self.idle.put_nowait(p)

    async def stop(self) -> None:
        await asyncio.gather(*(p.stop() for p in self.all))


async def trial(pool: Pool, s: Settings, i: int, pause_s: float) -> None:
    res = f"cmp:{pool.system}:{i}"
    a, b = await pool.get(), await pool.get()
    tag = {"sys": pool.system, "trial": i, "resource": res}
    a.tag, b.tag = dict(tag, role="A"), dict(tag, role="B")
    log = pool.log
    log.write(dict(tag, ev="trial", pause_ms=round(pause_s * 1000)))
    ttl_s = s.ttl_ms / 1000.0
    wait_s = s.pause[1] * ttl_s + 3 * ttl_s + 5
    ok_a, ok_b, b_started = True, True, False
    try:
        await a.send({"op": "hold", "resource": res})
        ev = await a.until({"checked"}, 120)
        if ev["ev"] == "checked":
            a.signal(signal.SIGSTOP)
            log.write(dict(tag, ev="freeze"))
            await b.send({"op": "take", "resource": res, "wait_s": wait_s,
                          "gap_s": ttl_s / 4})
            b_started = True
            await a.send({"op": "go"})  # read once A is resumed
            await asyncio.sleep(pause_s)
            a.signal(signal.SIGCONT)
            log.write(dict(tag, ev="resume"))
            ev = await a.until(set(), 120)
        ok_a = ev["ev"] == "done"
        if b_started:
            ok_b = (await b.until(set(), wait_s + 120))["ev"] == "done"
    except (asyncio.TimeoutError, ConnectionError) as e:
        log.write(dict(tag, ev="harness_error", msg=repr(e)))
        ok_a = ok_b = False
    await pool.put(a, ok_a)
    await pool.put(b, ok_b)


async def run_trials(system: str, s: Settings, cfg_path: str,
                     log: Log) -> None:
    n = min(s.concurrency, s.trials)
    pool = Pool(system, cfg_path, log)
    await pool.start(2 * n)
    rng = random.Random(f"{s.seed}:{system}")
    ttl_s = s.ttl_ms / 1000.0
    pauses = [rng.uniform(*s.pause) * ttl_s for _ in range(s.trials)]
    sem = asyncio.Semaphore(n)

    async def one(i: int) -> None:
        async with sem:
            await trial(pool, s, i, pauses[i])

    t0 = now_ns()
    await asyncio.gather(*(one(i) for i in range(s.trials)))
    print(f"compare: {system}: {s.trials} trials in "
          f"{(now_ns() - t0) / 1e9:.1f} s", file=sys.stderr)
    await pool.stop()


async def bench_round(pools: Dict[str, Pool], s: Settings, r: int,
                      out: List[Dict[str, Any]]) -> None:
    """One round: each system in turn (a rotated order each round), one
    client acquiring alone, then all the pool's clients at once."""
    names = list(pools)
    names = names[r % len(names):] + names[:r % len(names)]
    for system in names:
        procs = pools[system].all
        cmd = {"op": "bench", "n": s.bench_n, "max_s": 20}
        seq = dict(cmd, resource=f"bench:{system}:{r}:seq")
        await procs[0].send(seq)
        one = await procs[0].until({"bench"}, 120)
        await procs[0].until(set(), 60)
        for k, p in enumerate(procs):
            await p.send(dict(cmd, n=s.bench_n // 2,
                              resource=f"bench:{system}:{r}:{k}"))
        many = [await p.until({"bench"}, 120) for p in procs]
        for p in procs:
            await p.until(set(), 60)
        out.append({"sys": system, "round": r, "single": one, "many": many})


async def run_bench(s: Settings, cfg_path: str, log: Log,
                    path: str) -> None:
    pools: Dict[str, Pool] = {}
    for system in s.systems:
        pools[system] = Pool(system, cfg_path, log)
        await pools[system].start(s.bench_workers)
    out: List[Dict[str, Any]] = []
    for r in range(s.bench_rounds):
        await bench_round(pools, s, r, out)
    for p in pools.values():
        await p.stop()
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"rounds": out, "workers": s.bench_workers}, f)


def pg_databases(base: str) -> Dict[str, str]:
    """Fresh databases compare_plain, compare_fenced and compare_session
    (the advisory locks and the writes on their sessions) next to BASE."""
    urls = {}
    conn = psycopg2.connect(base)
    conn.autocommit = True
    with conn.cursor() as cur:
        for variant in ("plain", "fenced", "session"):
            cur.execute(f"DROP DATABASE IF EXISTS compare_{variant}"
                        " WITH (FORCE)")
            cur.execute(f"CREATE DATABASE compare_{variant}")
            urls[variant] = base.rsplit("/", 1)[0] + f"/compare_{variant}"
    conn.close()
    return urls


def config(out: str, s: Settings) -> Dict[str, Any]:
    e = os.environ
    return {
        "ttl_ms": s.ttl_ms, "topic": TOPIC,
        "redis": [a for a in e.get("COMPARE_REDIS", "").split(",") if a],
        "etcd": e.get("COMPARE_ETCD", ""),
        "zookeeper": e.get("COMPARE_ZOOKEEPER", ""),
        "tenure": e.get("COMPARE_TENURE", ""),
        "kafka": e.get("COMPARE_KAFKA", ""),
        "pg": pg_databases(e["COMPARE_PG"]),
        "sinks_dir": os.path.join(out, "sinks"),
    }


async def main_async(out: str) -> int:
    s = Settings()
    os.makedirs(os.path.join(out, "sinks"), exist_ok=True)
    cfg = config(out, s)
    cfg_path = os.path.join(out, "config.json")
    with open(cfg_path, "w", encoding="utf-8") as f:
        json.dump(dict(cfg, settings=vars(s)), f, indent=1)
    sinks.setup(cfg, s.systems)
    log = Log(os.path.join(out, "events.jsonl"))
    try:
        if s.bench_rounds > 0:
            await run_bench(s, cfg_path, log, os.path.join(out, "bench.json"))
        for system in s.systems:
            await run_trials(system, s, cfg_path, log)
    finally:
        log.close()
    return 0


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    return asyncio.run(main_async(sys.argv[1]))


if __name__ == "__main__":
    sys.exit(main())
