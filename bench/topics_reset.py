"""Section 6 of the suite: a topics reset (KIP-558) of a connector with 10,000 active topics, through the
sidecar, until every tombstone is read back.

On the suite's own 4.3.1 worker (bench/view_scale.py's cluster): 10,000 topic-status records of one
connector are written to the status topic as a worker writes them; once the worker and the sidecar's view
both list them, ``PUT /connectors/{c}/topics/reset`` goes through the sidecar (the worker writes the
tombstones: 4.3.1 has the endpoint); then the worker's ``GET /connectors/{c}/topics`` (native) and the
sidecar's view (``GET /_sidecar/connectors/{c}/topics``) are polled until each lists no topic.
On the 2-core machine the time goes to writing the tombstones (the worker wrote about 170 a second, and the
sidecar's own status writer, with CONTROL_PLANE_FEATURE_TOPIC_TRACKING=emulated, about as many); the view
reads them back as they come.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
from aiokafka import AIOKafkaProducer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import row  # noqa: E402
from bench.view_scale import BenchCluster  # noqa: E402
from control_plane.codecs import TopicStatus, encode_status  # noqa: E402

CONNECTOR = "bench-connector-00003"


async def _count(session: aiohttp.ClientSession, url: str, native: bool, connector: str) -> int:
    async with session.get(url) as r:
        body = await r.json(content_type=None)
    if native:
        return len(body.get(connector, {}).get("topics", []))
    return len(body.get("topics", []))


async def _until(
    session: aiohttp.ClientSession, url: str, native: bool, connector: str, done: Any, timeout_s: float
) -> float:
    """Seconds until ``done(count)`` holds of the topics ``url`` lists (polled every 10 ms)."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout_s:
        if done(await _count(session, url, native, connector)):
            return time.perf_counter() - started
        await asyncio.sleep(0.01)
    raise SystemExit(f"{url}: not done within {timeout_s:g} s")


async def measure(cluster: BenchCluster, bootstrap: str, topics: int, connector: str = CONNECTOR) -> dict[str, float]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, max_batch_size=1 << 20, acks="all")
    await producer.start()
    try:
        now = int(time.time() * 1000)
        futures = []
        for k in range(topics):
            key, value = encode_status(TopicStatus(f"bench-reset-{k:05d}", connector, k % 5, now))
            futures.append(await producer.send(cluster.topics["status"], key=key, value=value))
        await asyncio.gather(*futures)
    finally:
        await producer.stop()
    native_url = f"{cluster.worker.url}/connectors/{connector}/topics"
    view_url = f"{cluster.sidecar.url}/_sidecar/connectors/{connector}/topics"
    async with aiohttp.ClientSession() as session:
        await _until(session, native_url, True, connector, lambda n: n >= topics, 120)
        await _until(session, view_url, False, connector, lambda n: n >= topics, 120)
        started = time.perf_counter()
        reset = f"{cluster.sidecar.url}/connectors/{connector}/topics/reset"
        async with session.put(reset, headers={"Content-Type": "application/json"}) as r:
            if r.status != 202:
                raise SystemExit(f"topics reset: {r.status} {await r.text()}")
        answered = time.perf_counter() - started
        native, view = await asyncio.gather(
            _until(session, native_url, True, connector, lambda n: n == 0, 180),
            _until(session, view_url, False, connector, lambda n: n == 0, 180),
        )
    return {"answered_s": answered, "native_s": native + answered, "sidecar_s": view + answered}


def run(cluster: BenchCluster, bootstrap: str, topics: int = 10_000) -> dict[str, Any]:
    print(f"  topics reset of {topics:,} active topics ...", file=sys.stderr, flush=True)
    got = asyncio.run(measure(cluster, bootstrap, topics))
    rows = [
        row(f"topics reset of {topics:,} topics, answered (202)", None, got["answered_s"] * 1000, "ms"),
        row(
            f"topics reset of {topics:,} topics, until every tombstone is read back",
            got["native_s"] * 1000,
            got["sidecar_s"] * 1000,
            "ms",
            "< 5,000 ms",
        ),
    ]
    return {"topics": topics, **got, "rows": rows}
