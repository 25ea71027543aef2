# SPDX-License-Identifier: MIT
"""Lease events from the Kafka topic ``tenured --publish kafka://...`` fills.

Needs Debian's ``python3-confluent-kafka`` (imported only when used).  One
consumer without a group: each partition is assigned at its high
watermark (read when the iterator starts, so nothing produced after that
is missed).  Records are JSON objects with ``id type name owner_id token
floor at_ms``; :class:`KafkaEventStream` yields the SSE iterator's dicts,
skips repeated ids and yields a ``reset`` for a ``reset`` record or, on a
topic of one partition (the only one with one order of ids), for a jump in
ids -- as libtenure-kafka does (src/client/events_kafka.c).  The URL's
query holds librdkafka settings: ``kafka://B1,B2/TOPIC?security.protocol=
ssl&ssl.ca.location=FILE``.
"""
from __future__ import annotations

import json
import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ._redis import _reset
from .errors import ConnectError

VALUE_MAX = 65536
POLL_S = 0.2
FETCH_WAIT_MS = 10


def parse_url(url: str) -> Tuple[str, str, Dict[str, str]]:
    """``kafka://BROKER[,BROKER...]/TOPIC[?key=value&...]`` -> (brokers,
    topic, librdkafka settings); ValueError when it is not of that form."""
    if not url.startswith("kafka://"):
        raise ValueError(f"not a kafka:// URL: {url!r}")
    rest, _, query = url[len("kafka://"):].partition("?")
    brokers, slash, topic = rest.partition("/")
    if not brokers or not slash or not topic or "/" in topic \
            or len(topic) > 249:
        raise ValueError(f"expected kafka://BROKERS/TOPIC: {url!r}")
    conf: Dict[str, str] = {}
    for kv in filter(None, query.split("&")):
        k, eq, v = kv.partition("=")
        if not eq or not k:
            raise ValueError(f"bad setting {kv!r} in {url!r}")
        conf[k] = v
    return brokers, topic, conf


def _int(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) \
        and 0 <= v < 2 ** 64 else None


class KafkaEventStream:
    """Iterator over lease events read from a Kafka topic (the interface
    of :class:`tenure.EventStream`: ``close``, ``cut``, ``wait_connected``,
    ``last_id``, ``connects``).  Starts at the end of every partition;
    filters by ``prefix`` on the client side; ``reset`` is yielded whatever
    the prefix."""

    def __init__(self, url: str, prefix: str = "") -> None:
        self._brokers, self._topic, self._conf = parse_url(url)
        self.url = url
        self.prefix = prefix
        self.last_id: Optional[int] = None
        self._closed = threading.Event()
        self.connected = threading.Event()
        self.connects = 0
        self._ordered = False  # one partition: ids in one order
        self._baseline = False  # next record only sets last_id

    def close(self) -> None:
        self._closed.set()

    def cut(self) -> None:
        """Nothing to cut: librdkafka reconnects by itself."""

    def wait_connected(self, timeout: float) -> bool:
        """True once every partition's start position is fixed."""
        return self.connected.wait(timeout)

    def __enter__(self) -> "KafkaEventStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        return self._run()

    def _consumer(self) -> Any:
        try:
            from confluent_kafka import Consumer
        except ImportError:
            raise ConnectError("kafka:// needs confluent_kafka "
                               "(Debian: python3-confluent-kafka)") from None
        conf: Dict[str, Any] = {
            "bootstrap.servers": self._brokers,
            # assign() needs a group id, but joins no group, commits nothing
            "group.id": f"tenure-follower-{id(self)}",
            "enable.auto.commit": False, "enable.partition.eof": False,
            # as libtenure-kafka: a broker that does not wake a held fetch
            # when a record lands (the mock cluster) would delay each
            # event by up to librdkafka's default 500 ms; the query may
            # set it back (docs/PYTHON.md)
            "fetch.wait.max.ms": FETCH_WAIT_MS}
        conf.update(self._conf)
        return Consumer(conf)

    def _assign(self, c: Any) -> bool:
        from confluent_kafka import KafkaException, TopicPartition
        try:
            md = c.list_topics(self._topic, timeout=1.0)
            t = md.topics.get(self._topic)
            if t is None or t.error is not None or not t.partitions:
                return False
            ids = sorted(t.partitions)
            tps: List[Any] = []
            for p in ids:
                lo, hi = c.get_watermark_offsets(
                    TopicPartition(self._topic, p), timeout=1.0)
                # One partition: from the newest record, for its id only,
                # so that a jump is seen from the first event on.
                self._baseline = len(ids) == 1 and hi > lo
                tps.append(TopicPartition(self._topic, p,
                                          hi - 1 if self._baseline else hi))
            c.assign(tps)
        except KafkaException:
            return False
        self._ordered = len(ids) == 1
        return True

    def _record(self, value: Optional[bytes]) -> Iterator[Dict[str, Any]]:
        if not value or len(value) > VALUE_MAX:
            return
        try:
            v = json.loads(value)
        except ValueError:
            return
        if not isinstance(v, dict):
            return
        ev_id, typ = _int(v.get("id")), v.get("type")
        if not ev_id or not isinstance(typ, str):
            return
        last = self.last_id
        if self._baseline:
            self._baseline = False
            self.last_id = ev_id
            return
        if self._ordered and last is not None and ev_id <= last:
            return  # delivered again
        if self._ordered or last is None or ev_id > last:
            self.last_id = ev_id
        if typ == "reset":
            yield _reset(ev_id, "the publisher dropped events")
            return
        if self._ordered and last is not None and ev_id != last + 1:
            yield _reset(None, f"event ids jumped from {last} to {ev_id}")
        name = v.get("name")
        if not isinstance(name, str) or not name.startswith(self.prefix):
            return
        ev: Dict[str, Any] = {"type": typ, "name": name,
                              "owner_id": v.get("owner_id"),
                              "token": _int(v.get("token")),
                              "floor": _int(v.get("floor")), "id": ev_id}
        if _int(v.get("at_ms")) is not None:
            ev["at_ms"] = v["at_ms"]
        yield ev

    def _run(self) -> Iterator[Dict[str, Any]]:
        from confluent_kafka import KafkaError
        c = self._consumer()
        try:
            while not self._closed.is_set() and not self._assign(c):
                self._closed.wait(POLL_S)
            self.connects += 1
            self.connected.set()
            while not self._closed.is_set():
                m = c.poll(POLL_S)
                if m is None:
                    continue
                err = m.error()
                if err is None:
                    yield from self._record(m.value())
                elif err.code() == KafkaError._AUTO_OFFSET_RESET:
                    yield _reset(None, "records were skipped")
        finally:
            c.close()
