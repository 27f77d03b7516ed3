"""The config writer keeps its producer between writes (a write is not a producer's start and stop) and
drops it after a failure, starting a new one for the next write."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from control_plane.codecs import TargetState, TaskCommit
from control_plane.storage.config_writer import ConfigWriteFailed, ConfigWriter
from tests.support.scripted_producer import make_writes


class CountingProducer:
    def __init__(self, fail: bool) -> None:
        self.fail, self.sent, self.stopped = fail, 0, False

    async def start(self) -> None: ...

    async def send(self, topic: str, key: bytes, value: bytes | None) -> None:
        if self.fail:
            raise ConnectionError("broker gone")
        self.sent += 1

    async def enqueue(self, topic: str, key: bytes, value: bytes | None) -> asyncio.Future[Any]:
        raise NotImplementedError  # the config writer sends one at a time

    async def stop(self) -> None:
        self.stopped = True


def stopped(producer: CountingProducer) -> bool:
    return producer.stopped  # read anew each time (mypy would narrow the attribute)


async def test_the_config_writer_keeps_its_producer_and_drops_it_after_a_failure() -> None:
    made: list[CountingProducer] = []

    def factory() -> CountingProducer:
        made.append(CountingProducer(fail=False))
        return made[-1]

    writer = ConfigWriter("configs", factory, 1.0, make_writes())
    records = (TaskCommit("c", 0), TargetState.of("c", "STOPPED"))
    await writer.write(records)
    await writer.write(records)
    assert len(made) == 1 and made[0].sent == 4 and not stopped(made[0])
    made[0].fail = True
    with pytest.raises(ConfigWriteFailed):
        await writer.write(records)
    assert stopped(made[0])  # dropped
    await writer.write(records)
    assert len(made) == 2 and made[1].sent == 2
    await writer.stop()
    assert stopped(made[1])
