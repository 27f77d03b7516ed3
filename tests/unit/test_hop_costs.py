"""What the proxied hop and the view's tail do once rather than per request: the upstream's
slots without a coroutine, the limits not rebuilt per request, the config writer's kept producer, the
view's heap frozen out of full garbage collections."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

from control_plane.codecs import TargetState, TaskCommit
from control_plane.heap import HeapFreezer
from control_plane.storage.config_writer import ConfigWriteFailed, ConfigWriter
from control_plane.upstream.wire import Limits, Slots


async def test_slots_are_taken_at_once_then_handed_over_first_come_first_served() -> None:
    slots = Slots(1)
    assert slots.take_now()
    assert not slots.take_now()
    order: list[str] = []

    async def wait(name: str) -> None:
        await slots.take()
        order.append(name)

    first, second = asyncio.create_task(wait("first")), asyncio.create_task(wait("second"))
    await asyncio.sleep(0)
    slots.release()
    await asyncio.sleep(0)
    assert order == ["first"]
    slots.release()
    await asyncio.sleep(0)
    assert order == ["first", "second"]
    await asyncio.gather(first, second)
    slots.release()
    assert slots.take_now()


async def test_a_slot_handed_to_a_cancelled_waiter_goes_to_the_next() -> None:
    slots = Slots(1)
    assert slots.take_now()
    cancelled = asyncio.create_task(slots.take())
    waiting = asyncio.create_task(slots.take())
    await asyncio.sleep(0)
    slots.release()  # handed to the first waiter, which is cancelled before it runs
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    await asyncio.wait_for(waiting, 1)
    assert not slots.take_now()  # the second waiter holds it


def test_limits_are_not_rebuilt_for_a_usual_budget() -> None:
    limits = Limits(connect_s=5, read_s=95, pool_s=10)
    assert limits.within(29.9) is limits  # the read timeout is shortened by the wire (read_s), not a new object
    assert limits.within(3) == Limits(3, 3, 3)


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


def frozen(freezer: HeapFreezer) -> bool:
    return freezer.frozen


async def test_the_config_writer_keeps_its_producer_and_drops_it_after_a_failure() -> None:
    made: list[CountingProducer] = []

    def factory() -> CountingProducer:
        made.append(CountingProducer(fail=False))
        return made[-1]

    writer = ConfigWriter("configs", factory, 1.0)
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


async def test_the_heap_is_frozen_once_the_view_is_ready_and_thawed_at_stop() -> None:
    ready = asyncio.Event()
    freezer = HeapFreezer(ready.wait)
    await freezer.start()
    try:
        await asyncio.sleep(0)
        assert not frozen(freezer)
        ready.set()
        for _ in range(100):
            if frozen(freezer):
                break
            await asyncio.sleep(0.01)
        assert frozen(freezer) and gc.get_freeze_count() > 0
    finally:
        await freezer.stop()
    assert gc.get_freeze_count() == 0
