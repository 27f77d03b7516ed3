"""Section 6 of the suite: a topics reset (KIP-558) of a connector with 10,000 active topics, until the
worker and the sidecar's view list none of them.

On the suite's own 4.3.1 worker (bench/view_scale.py's cluster), three ways side by side, each on a
connector of its own whose 10,000 topic-status records are first written to the status topic as a worker
writes them (and listed by the worker and the view):
  - native: ``PUT /connectors/{c}/topics/reset`` straight to the worker (the reference);
  - sidecar, 4.3.1: through the suite's sidecar, which leaves the reset to a worker that has KIP-558;
  - sidecar, emulated: through a second sidecar with ``CONTROL_PLANE_FEATURE_TOPIC_TRACKING=emulated`` (as
    on a worker without KIP-558): the sidecar writes the tombstones itself (``StatusWriter.write_all``)
    and answers 202 once every one is acknowledged and read back into its view.
For each: when the PUT answered, when the last tombstone was in the status topic (a consumer of its own,
and the record timestamps: when the writer created them), when the worker's ``GET .../topics`` and the
view's ``GET /_sidecar/connectors/{c}/topics`` listed none, and the worker's and the sidecar's CPU time.
The lists are polled every 50 ms (``--poll-ms``): one GET of a 10,000-topic list costs the worker about
9 ms of CPU, so polling every 10 ms, as this section first did, took most of a core from the worker and
the sidecar while they wrote and read the tombstones.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import cpu_s, row, start_sidecar  # noqa: E402
from bench.view_scale import BenchCluster  # noqa: E402
from control_plane.codecs import TopicStatus, encode_status  # noqa: E402

POLL_S = 0.05
JSON = {"Content-Type": "application/json"}


async def _count(session: aiohttp.ClientSession, url: str, native: bool, connector: str) -> int:
    async with session.get(url) as r:
        body = await r.json(content_type=None)
    if native:
        return len(body.get(connector, {}).get("topics", []))
    return len(body.get("topics", []))


async def _until(
    session: aiohttp.ClientSession, url: str, native: bool, connector: str, done: Any, timeout_s: float, poll_s: float
) -> float:
    """Seconds until ``done(count)`` holds of the topics ``url`` lists (polled every ``poll_s``)."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout_s:
        if done(await _count(session, url, native, connector)):
            return time.perf_counter() - started
        await asyncio.sleep(poll_s)
    raise SystemExit(f"{url}: not done within {timeout_s:g} s")


async def _fill(bootstrap: str, topic: str, connector: str, topics: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, max_batch_size=1 << 20, acks="all")
    await producer.start()
    try:
        now = int(time.time() * 1000)
        futures = []
        for k in range(topics):
            key, value = encode_status(TopicStatus(f"bench-reset-{k:05d}", connector, k % 5, now))
            futures.append(await producer.send(topic, key=key, value=value))
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


class _Tombstones:
    """A consumer of the status topic from its end: when each tombstone of ``connector`` arrives, and
    its record timestamp (when the writer's producer created it)."""

    def __init__(self, bootstrap: str, topic: str, connector: str, expected: int) -> None:
        self.bootstrap, self.topic, self.expected = bootstrap, topic, expected
        self.suffix = f":connector-{connector}".encode()
        self.arrived: list[float] = []  # perf_counter
        self.created: list[float] = []  # epoch seconds
        self._consumer: AIOKafkaConsumer | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        consumer = self._consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False)
        await consumer.start()
        partitions = await consumer._client._wait_on_metadata(self.topic)  # the topic's partitions
        assigned = [TopicPartition(self.topic, p) for p in partitions]
        consumer.assign(assigned)
        await consumer.seek_to_end(*assigned)
        for tp in assigned:
            await consumer.position(tp)
        self._task = asyncio.create_task(self._consume())

    async def _consume(self) -> None:
        assert self._consumer is not None
        while len(self.arrived) < self.expected:
            batches = await self._consumer.getmany(timeout_ms=100)
            now = time.perf_counter()
            for records in batches.values():
                for record in records:
                    if record.value is None and record.key is not None and record.key.endswith(self.suffix):
                        self.arrived.append(now)
                        self.created.append(record.timestamp / 1000)

    async def wait(self, timeout_s: float) -> None:
        assert self._task is not None and self._consumer is not None
        try:
            await asyncio.wait_for(self._task, timeout_s)
        finally:
            await self._consumer.stop()


async def measure_one(
    cluster: BenchCluster,
    bootstrap: str,
    topics: int,
    via: str,
    view_base: str,
    pids: dict[str, int],
    poll_s: float = POLL_S,
) -> dict[str, float]:
    """One reset of a fresh connector with ``topics`` active topics, ``via`` a base URL."""
    connector = f"bench-reset-{uuid.uuid4().hex[:6]}"
    status_topic = cluster.topics["status"]
    await _fill(bootstrap, status_topic, connector, topics)
    native_url = f"{cluster.worker.url}/connectors/{connector}/topics"
    view_url = f"{view_base}/_sidecar/connectors/{connector}/topics"
    async with aiohttp.ClientSession() as session:
        await _until(session, native_url, True, connector, lambda n: n >= topics, 120, 0.5)
        await _until(session, view_url, False, connector, lambda n: n >= topics, 120, 0.5)
        tombstones = _Tombstones(bootstrap, status_topic, connector, topics)
        await tombstones.start()
        cpu_before = {name: cpu_s(pid) for name, pid in pids.items()}
        wall = time.time()
        started = time.perf_counter()
        async with session.put(f"{via}/connectors/{connector}/topics/reset", headers=JSON) as r:
            if r.status != 202:
                raise SystemExit(f"topics reset via {via}: {r.status} {await r.text()}")
        answered = time.perf_counter() - started
        native, view = await asyncio.gather(
            _until(session, native_url, True, connector, lambda n: n == 0, 180, poll_s),
            _until(session, view_url, False, connector, lambda n: n == 0, 180, poll_s),
        )
        await tombstones.wait(60)
        cpu = {f"cpu_{name}_s": cpu_s(pid) - cpu_before[name] for name, pid in pids.items()}
    return {
        "answered_s": answered,
        "tombstones_created_s": max(tombstones.created) - wall,
        "tombstones_in_topic_s": max(tombstones.arrived) - started,
        "worker_none_s": native + answered,
        "view_none_s": view + answered,
        **cpu,
    }


def run(
    cluster: BenchCluster,
    bootstrap: str,
    topics: int = 10_000,
    poll_s: float = POLL_S,
    before_code: Path | None = None,
) -> dict[str, Any]:
    print(f"  topics reset of {topics:,} active topics, three ways ...", file=sys.stderr, flush=True)
    emulate = {"CONTROL_PLANE_FEATURE_TOPIC_TRACKING": "emulated"}
    properties = cluster.worker.extra["properties"]
    emulated = start_sidecar(f"{cluster.sidecar.name}-emulated-tracking", properties, env=emulate)
    before = None
    try:
        if before_code is not None:
            before = start_sidecar(f"{cluster.sidecar.name}-before-emulated", properties, env=emulate, code=before_code)
        worker, front = cluster.worker, cluster.sidecar
        ways = {
            "native": (worker.url, front.url, {"worker": worker.pid, "sidecar": front.pid}),
            "sidecar": (front.url, front.url, {"worker": worker.pid, "sidecar": front.pid}),
            "emulated": (emulated.url, emulated.url, {"worker": worker.pid, "sidecar": emulated.pid}),
        }
        if before is not None:
            ways["before_emulated"] = (before.url, before.url, {"worker": worker.pid, "sidecar": before.pid})
        got: dict[str, dict[str, float]] = {}
        for name, (via, view_base, pids) in ways.items():
            got[name] = asyncio.run(measure_one(cluster, bootstrap, topics, via, view_base, pids, poll_s))
            print(f"    {name}: {got[name]}", file=sys.stderr, flush=True)
    finally:
        emulated.stop()
        if before is not None:
            before.stop()
    old = got.get("before_emulated")
    native, sidecar, emu = got["native"], got["sidecar"], got["emulated"]
    n = f"{topics:,} topics"

    def ms(seconds: float) -> float:
        return seconds * 1000

    rows = [
        row(f"reset {n}, 4.3.1 via sidecar: answered", ms(native["answered_s"]), ms(sidecar["answered_s"]), "ms"),
        row(
            f"reset {n}, 4.3.1 via sidecar: worker+view list none",
            ms(max(native["worker_none_s"], native["view_none_s"])),
            ms(max(sidecar["worker_none_s"], sidecar["view_none_s"])),
            "ms",
            "< 5,000 ms",
        ),
        row(f"reset {n}, emulated: answered (acked, read back)", ms(native["answered_s"]), ms(emu["answered_s"]), "ms"),
        row(
            f"reset {n}, emulated: tombstones in the topic",
            ms(native["tombstones_in_topic_s"]),
            ms(emu["tombstones_in_topic_s"]),
            "ms",
        ),
        row(
            f"reset {n}, emulated: worker+view list none",
            ms(max(native["worker_none_s"], native["view_none_s"])),
            ms(max(emu["worker_none_s"], emu["view_none_s"])),
            "ms",
            "< 5,000 ms",
            before=None if old is None else ms(max(old["worker_none_s"], old["view_none_s"])),
        ),
        row(
            f"reset {n}, emulated: CPU of the writer",
            native["cpu_worker_s"] * 1000,
            emu["cpu_sidecar_s"] * 1000,
            "ms",
            "native: the worker's",
            before=None if old is None else old["cpu_sidecar_s"] * 1000,
        ),
    ]
    return {"topics": topics, "poll_s": poll_s, "loadavg": os.getloadavg(), **got, "rows": rows}
