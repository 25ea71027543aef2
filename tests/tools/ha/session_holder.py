#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A session that holds several leases across failovers (docs/HA.md).

  session_holder.py --urls URL,URL,... --stop FILE --out FILE
                    [--ttl-ms 60000] [--names 3] [--prefix patroni:session]

Opens a session with the Python client given every instance, claims
--names names under it, and renews it every third of its TTL (a failed
renew, 503 or no answer, is tried again every 0.5 s, on the next instance
as the client does) until FILE exists.  Then it reads every name back
(each must still be this session's, with the token it was granted) and
the session itself, ends it and prints one line:

  patroni-session ttl_ms=T renews=N renew_gap_max_ms=G leases=L kept=K
                  lost=0|1

renew_gap_max_ms is the longest time between the sending of two
acknowledged renews (the open counts as the first), and from the last one
to the end: the session and its leases stay live while it is below the
TTL.  lost=1 when a renew or a claim answered lost, or a name was no
longer the session's.  Each attempt is logged as a JSON line to --out.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "python"))
import tenure  # noqa: E402
from tenure import errors  # noqa: E402

RETRYABLE = (errors.Unavailable, errors.TransportError)


def now_ms():
    return time.monotonic_ns() // 1000000


def log(out, **kw):
    kw["t_ms"] = now_ms()
    out.write(json.dumps(kw) + "\n")
    out.flush()


def until_ok(out, what, fn, stop):
    """fn() until it answers, retrying what may have changed nothing."""
    while True:
        try:
            return fn()
        except RETRYABLE as e:
            log(out, op=what, ok=False, err=type(e).__name__)
            if os.path.exists(stop):
                raise
            time.sleep(0.5)


def hold(a, out):
    c = tenure.Client(a.urls.split(","), timeout=5.0, owner_id="patroni-session")
    s = until_ok(out, "open", lambda: c.open_session(
        ttl_ms=a.ttl_ms, keep=False), a.stop)
    last = now_ms()
    names = [f"{a.prefix}:{i}" for i in range(a.names)]
    res = until_ok(out, "claim", lambda: s.claim(names), a.stop)
    tokens = {n: lease.token for n, lease in res.granted.items()}
    log(out, op="claim", ok=True, tokens=tokens)
    st = {"renews": 0, "gap": 0, "lost": 0}
    while not os.path.exists(a.stop):
        time.sleep(0.2)
        if now_ms() - last < a.ttl_ms // 3:
            continue
        sent = now_ms()
        try:
            s.renew()
        except RETRYABLE as e:
            log(out, op="renew", ok=False, err=type(e).__name__)
            time.sleep(0.3)
            continue
        except errors.Lost as e:
            log(out, op="renew", ok=False, err=type(e).__name__)
            st["lost"] = 1
            break
        st["gap"] = max(st["gap"], sent - last)
        st["renews"] += 1
        last = sent
        log(out, op="renew", ok=True, gap_ms=st["gap"])
    st["gap"] = max(st["gap"], now_ms() - last)
    kept = 0
    for n, tok in tokens.items():
        info = until_ok(out, "get", lambda n=n: c.get(n), a.stop + ".none")
        mine = info is not None and info.token == tok
        log(out, op="get", name=n, ok=mine,
            token=None if info is None else info.token)
        kept += mine
    if kept != len(names):
        st["lost"] = 1
    if not st["lost"]:
        until_ok(out, "end", s.end, a.stop + ".none")
    return (f"patroni-session ttl_ms={a.ttl_ms} renews={st['renews']} "
            f"renew_gap_max_ms={st['gap']} leases={len(names)} kept={kept} "
            f"lost={st['lost']}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--urls", required=True)
    p.add_argument("--stop", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--ttl-ms", type=int, default=60000)
    p.add_argument("--names", type=int, default=3)
    p.add_argument("--prefix", default="patroni:session")
    a = p.parse_args()
    with open(a.out, "a", encoding="utf-8") as out:
        try:
            line = hold(a, out)
        except errors.Error as e:
            log(out, op="fatal", err=f"{type(e).__name__}: {e}")
            line = f"patroni-session ttl_ms={a.ttl_ms} lost=1 error={type(e).__name__}"
    print(line, flush=True)
    return 0 if " lost=0" in line else 1


if __name__ == "__main__":
    sys.exit(main())
