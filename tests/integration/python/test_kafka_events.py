# SPDX-License-Identifier: MIT
"""The Python client following the Kafka topic ``tenured --publish
kafka://`` fills (librdkafka's mock cluster via tn-kafka-mock, one
partition; python3-confluent-kafka): a holder hears of a force release
through it, and a reset record, or a jump in the events' ids, makes it
renew every kept lease at once."""
from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tenure
from conftest import BIN, Server

ck = pytest.importorskip("confluent_kafka",
                         reason="python3-confluent-kafka (scripts/deps.sh)")
TOPIC = "lease-events"


@pytest.fixture
def kafka(tmp_path: Path) -> Iterator[Dict[str, Any]]:
    out = open(tmp_path / "mock.out", "w+")
    mock = subprocess.Popen([str(BIN / "tn-kafka-mock"), f"{TOPIC}:1"],
                            stdout=out, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 10
    brokers = ""
    while not brokers:
        out.seek(0)
        brokers = out.readline().strip()
        assert time.monotonic() < end, "mock cluster did not start"
        time.sleep(0.05)
    url = f"kafka://{brokers}/{TOPIC}"
    srv = Server(tmp_path, ["--publish", url])
    srv.start()
    try:
        yield {"srv": srv, "url": url, "brokers": brokers}
    finally:
        srv.stop()
        mock.kill()
        mock.wait(10)
        out.close()


def last_record(brokers: str) -> Dict[str, Any]:
    """The newest record of the topic ({} when it is empty)."""
    c = ck.Consumer({"bootstrap.servers": brokers, "group.id": "t",
                     "enable.auto.commit": False})
    try:
        tp = ck.TopicPartition(TOPIC, 0)
        lo, hi = c.get_watermark_offsets(tp, timeout=5)
        if hi <= lo:
            return {}
        c.assign([ck.TopicPartition(TOPIC, 0, hi - 1)])
        end = time.monotonic() + 10
        while time.monotonic() < end:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                return dict(json.loads(m.value()))
        raise AssertionError("could not read the newest record")
    finally:
        c.close()


def produce(brokers: str, rec: Dict[str, Any]) -> None:
    p = ck.Producer({"bootstrap.servers": brokers})
    p.produce(TOPIC, json.dumps(rec).encode(), partition=0)
    assert p.flush(10) == 0


def test_holder_hears_of_a_force_release_through_kafka(
        kafka: Dict[str, Any], uniq: str) -> None:
    srv = kafka["srv"]
    ends: List[str] = []
    done = threading.Event()

    def on_end(_l: tenure.Lease, why: str, _e: Any) -> None:
        ends.append(why)
        done.set()

    with tenure.Client(srv.url, events_url=kafka["url"]) as c:
        lease = c.acquire(uniq + "fr", ttl_ms=30000)  # renew due in 10 s
        c.keep(lease, on_end)
        assert c._ev_stream is not None
        assert c._ev_stream.wait_connected(10)
        tenure.Client(srv.url).force_release(uniq + "fr")
        assert done.wait(8), "the loss never came through the topic"
        assert ends == ["lost"]
        assert c.event_losses == 1
        assert "revoked" in str(lease._end_error)


@pytest.mark.parametrize("how", ["reset-record", "id-jump"])
def test_reset_renews_every_kept_lease_at_once(
        kafka: Dict[str, Any], uniq: str, how: str) -> None:
    """60 s leases are renewed every 20 s; a reset record, or a record
    whose id jumps, must make the follower renew both at once."""
    srv = kafka["srv"]
    log: List[str] = []
    with tenure.Client(srv.url, events_url=kafka["url"], log=log.append) as c:
        a = c.acquire(uniq + "a", ttl_ms=60000)
        b = c.acquire(uniq + "b", ttl_ms=60000)
        end = time.monotonic() + 10
        while last_record(kafka["brokers"]).get("name") != uniq + "b":
            assert time.monotonic() < end, "the acquires never reached Kafka"
            time.sleep(0.1)
        c.keep(a)
        c.keep(b)
        assert c._ev_stream is not None
        assert c._ev_stream.wait_connected(10)
        time.sleep(1.0)  # its baseline record is read
        assert not [m for m in log if m.startswith("renewed")], log
        last = int(last_record(kafka["brokers"])["id"])
        if how == "reset-record":
            rec = {"id": last + 1, "type": "reset", "name": "",
                   "owner_id": "", "token": 0, "floor": 0, "at_ms": 0}
        else:
            rec = {"id": last + 10, "type": "acquired",
                   "name": uniq + "other", "owner_id": "x", "token": 999,
                   "floor": 999, "at_ms": 0}
        produce(kafka["brokers"], rec)
        end = time.monotonic() + 8
        while len([m for m in log if m.startswith("renewed")]) < 2:
            assert time.monotonic() < end, f"no renews after the {how}: {log}"
            time.sleep(0.02)
        assert a.safe_for_ms() > 0 and b.safe_for_ms() > 0
