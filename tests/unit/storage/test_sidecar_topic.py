"""The sidecars' topic's writer (storage/sidecar_topic.py): concurrent writes share one producer; a write
that fails for good replaces it for the writes after it, and never stops it under the others."""

from __future__ import annotations

import asyncio
from typing import Any

from control_plane.backoff import ProposalBackoff
from control_plane.storage.kafka_writes import KafkaWrites, RetryPolicy
from control_plane.storage.sidecar_topic import SidecarTopic


class Producer:
    """Sends ``a`` only to fail it for good (once ``b`` is under way); ``b`` once ``a`` has failed."""

    def __init__(self, a_failed: asyncio.Event, b_sent: asyncio.Event) -> None:
        self.a_failed, self.b_sent = a_failed, b_sent
        self.stopped = False

    async def start(self) -> None: ...

    async def send(self, topic: str, key: bytes, value: bytes | None) -> None:
        if self.stopped:
            raise RuntimeError("the producer is not started")  # AiokafkaRecordProducer's
        if key == b"a":
            await self.b_sent.wait()
            self.a_failed.set()
            raise ValueError("not retriable")
        self.b_sent.set()
        await self.a_failed.wait()
        await asyncio.sleep(0)  # the failed write's own handling runs first
        if self.stopped:
            raise RuntimeError("the producer is not started")

    async def stop(self) -> None:
        self.stopped = True


async def test_a_write_that_fails_for_good_never_stops_the_producer_under_another() -> None:
    a_failed, b_sent = asyncio.Event(), asyncio.Event()
    made: list[Producer] = []

    def factory() -> Any:
        made.append(Producer(a_failed, b_sent))
        return made[-1]

    writes = KafkaWrites(RetryPolicy(0, ProposalBackoff(1, 1, 1.0, 0.0)))
    topic = SidecarTopic("sidecars", None, factory, 1.0, writes, replication_factor=1)  # type: ignore[arg-type]
    topic._ensured = True
    a, b = await asyncio.gather(topic.write(b"a", b"{}"), topic.write(b"b", b"{}"), return_exceptions=True)
    assert isinstance(a, ValueError) and b is None  # b rode on the producer a's failure gave up
    assert len(made) == 1 and made[0].stopped  # stopped once both were done with it
    await topic.write(b"c", b"{}")  # the next write makes a new one
    assert len(made) == 2 and not made[1].stopped
