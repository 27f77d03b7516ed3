"""Acknowledged means done: an offsets alter sent right after a stop, while the source was busy, holds, on
4.3.1 (native) and on 3.4.1 (emulated): the tasks' last offset commits land before the new offsets, never
after them, and the connector resumes from the altered offset (its first lines are produced again)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from aiokafka import AIOKafkaConsumer

from .conftest import InProcess
from .stack import Cluster, Stack
from .test_offsets_kip875 import FILE_SOURCE, create, created, offsets, positions, running
from .waiting import eventually

__all__ = ["created"]  # the fixture, used by name

pytestmark = pytest.mark.timeout(240)


@contextlib.asynccontextmanager
async def appending(path: Path) -> AsyncIterator[None]:
    """A file that grows by 20 lines every 10 ms while the block runs: a busy source."""
    await asyncio.to_thread(path.write_text, "".join(f"line {i}\n" for i in range(1000)))

    async def grow() -> None:
        i = 1000
        while True:
            with path.open("a") as f:
                f.writelines(f"line {n}\n" for n in range(i, i + 20))
            i += 20
            await asyncio.sleep(0.01)  # the pace of the writer under test, not a wait for a condition

    task = asyncio.create_task(grow())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def count_of(bootstrap: str, topic: str, value: str) -> int:
    """How many records of ``topic`` carry ``value`` (read from the beginning to the end)."""
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", group_id=None)
    await consumer.start()
    count = 0
    try:
        while True:
            batch = await consumer.getmany(timeout_ms=1_000)
            if not batch:
                return count
            for records in batch.values():
                count += sum(1 for r in records if r.value is not None and json.loads(r.value) == value)
    finally:
        await consumer.stop()


async def test_an_alter_right_after_stopping_a_busy_source_holds_and_the_source_resumes_from_it(
    stack: Stack,
    cluster: Cluster,
    in_process: InProcess,
    worker: httpx.AsyncClient,
    created: list[str],
    unique: str,
    tmp_path: Path,
) -> None:
    sidecar = await in_process()
    name, topic = f"busy-{cluster.name}-{unique}", f"busy-{cluster.name}-{unique}"
    source = tmp_path / "busy.txt"
    async with appending(source):
        config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(source), "topic": topic}
        await create(sidecar, name, config, created)
        await running(sidecar, name)
        await eventually(
            lambda: offsets(sidecar, name), lambda o: bool(positions(o)) and positions(o)[0] > 0, what="offsets"
        )

        assert (await sidecar.put(f"/connectors/{name}/stop")).status_code == 204
        body = {"offsets": [{"partition": {"filename": str(source)}, "offset": {"position": 0}}]}
        altered = await sidecar.patch(f"/connectors/{name}/offsets", json=body)
        assert altered.status_code == 200, altered.text
        assert positions(await offsets(sidecar, name)) == [0]
        # the worker has the tasks down: no late commit of theirs replaced the altered offset
        await eventually(
            lambda: worker.get(f"/connectors/{name}/status"), lambda r: r.json()["tasks"] == [], what="tasks gone"
        )
        assert positions(await offsets(sidecar, name)) == [0]
        assert positions(await offsets(worker, name) if cluster.newest else await offsets(sidecar, name)) == [0]

        assert (await sidecar.put(f"/connectors/{name}/resume")).status_code == 202
        await eventually(
            lambda: count_of(stack.bootstrap, topic, "line 0"), lambda n: n >= 2, what="line 0 produced again"
        )
