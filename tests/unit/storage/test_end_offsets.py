"""The sinks' lag's end-offsets consumer when the broker is down as it starts: the start fails, yet the
consumer holds connections (aiokafka's client bootstraps before it fails), so it is stopped there, never
left for the garbage collector; the next call makes another."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiokafka.errors import KafkaConnectionError

from control_plane.storage.end_offsets import EndOffsets


class Client:
    closed = False

    async def close(self) -> None:
        self.closed = True


async def test_a_consumer_whose_start_fails_is_stopped_and_made_again(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Refused] = []

    class Refused:
        def __init__(self, **_: object) -> None:
            self.stopped = False
            self._client = Client()
            made.append(self)

        async def start(self) -> None:
            raise KafkaConnectionError("Unable to bootstrap from [('127.0.0.1', 9, <AddressFamily.AF_INET: 2>)]")

        async def stop(self) -> None:
            self.stopped = True

    monkeypatch.setattr("control_plane.storage.end_offsets.AIOKafkaConsumer", Refused)
    ends = EndOffsets({"bootstrap_servers": "127.0.0.1:9"}, 1000)
    for _ in range(2):
        with pytest.raises(KafkaConnectionError):
            await ends.topics()
    assert len(made) == 2 and all(consumer.stopped for consumer in made)
    assert ends._consumer is None


async def test_callers_side_by_side_share_one_consumer(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Slow] = []
    release = asyncio.Event()

    class Slow:
        def __init__(self, **_: object) -> None:
            self.stopped = False
            made.append(self)

        async def start(self) -> None:
            await release.wait()

        async def end_offsets(self, partitions: list[Any]) -> dict[Any, int]:
            return dict.fromkeys(partitions, 0)

        async def beginning_offsets(self, partitions: list[Any]) -> dict[Any, int]:
            return dict.fromkeys(partitions, 0)

        async def stop(self) -> None:
            self.stopped = True

    monkeypatch.setattr("control_plane.storage.end_offsets.AIOKafkaConsumer", Slow)
    offsets = EndOffsets({"bootstrap_servers": "127.0.0.1:9"}, 1000)
    asking = asyncio.gather(offsets.starts([("t", 0)]), offsets.starts([("t", 1)]))
    await asyncio.sleep(0)
    release.set()
    assert list(await asking) == [{("t", 0): 0}, {("t", 1): 0}]
    await offsets.stop()
    assert len(made) == 1 and made[0].stopped  # no second consumer left running
