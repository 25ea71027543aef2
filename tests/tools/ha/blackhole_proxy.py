#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A TCP relay that can go silent: the network partition of the HA chaos
profile (tests/integration/t777-chaos-ha-failover.sh).  It relays each
LISTEN_PORT:TARGET_PORT pair on 127.0.0.1.  SIGUSR1 makes it a blackhole:
it keeps every connection open and accepts new ones, but relays nothing
either way (what a cut cable or a dropping firewall looks like to both
ends: no reset, no answer); SIGUSR2 heals it, and what was held back flows
on, as TCP would retransmit it.  It is not a reset: a silent partition is
the case that shows whether tenured hangs.

    blackhole_proxy.py [--pidfile F] LISTEN:TARGET [LISTEN:TARGET ...]
"""
import argparse
import asyncio
import os
import signal
import sys


async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
               healed: asyncio.Event) -> None:
    try:
        while True:
            await healed.wait()
            data = await reader.read(65536)
            if not data:
                break
            await healed.wait()  # read just before the silence: hold it
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def relay(target: int, healed: asyncio.Event,
                reader: asyncio.StreamReader,
                writer: asyncio.StreamWriter) -> None:
    await healed.wait()  # a connection made during the silence waits
    try:
        up_r, up_w = await asyncio.open_connection("127.0.0.1", target)
    except OSError:
        writer.close()
        return
    await asyncio.gather(pump(reader, up_w, healed),
                         pump(up_r, writer, healed))


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pidfile")
    ap.add_argument("pairs", nargs="+", metavar="LISTEN:TARGET")
    a = ap.parse_args()
    healed = asyncio.Event()
    healed.set()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, healed.clear)
    loop.add_signal_handler(signal.SIGUSR2, healed.set)
    servers = []
    for pair in a.pairs:
        listen, target = (int(x) for x in pair.split(":"))
        servers.append(await asyncio.start_server(
            lambda r, w, t=target: relay(t, healed, r, w),
            "127.0.0.1", listen, reuse_address=True))
    if a.pidfile:
        with open(a.pidfile + ".tmp", "w") as f:
            f.write(f"{os.getpid()}\n")
        os.rename(a.pidfile + ".tmp", a.pidfile)
    await asyncio.gather(*(s.serve_forever() for s in servers))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
