"""The upstream's slots (``upstream.wire``): taken at once when free, handed over first come first served,
with no coroutine per request; and the per-request limits (``upstream.transport``) not rebuilt for a usual
budget."""

from __future__ import annotations

import asyncio

import pytest

from control_plane.upstream.transport import Limits
from control_plane.upstream.wire import Slots


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
