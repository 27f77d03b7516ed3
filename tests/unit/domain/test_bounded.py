"""``each_bounded``: the items acted on in order, never more than the bound at once, none started once told
to stop, each in a context of its own."""

from __future__ import annotations

import asyncio
import contextvars

from control_plane.domain.bounded import each_bounded

MINE: contextvars.ContextVar[int] = contextvars.ContextVar("mine", default=-1)


async def test_at_most_the_bound_at_once_and_the_results_in_order() -> None:
    under_way, most = 0, 0

    async def act(i: int) -> int:
        nonlocal under_way, most
        under_way += 1
        most = max(most, under_way)
        MINE.set(i)
        await asyncio.sleep(0)
        seen = MINE.get()  # no other item's value
        under_way -= 1
        return seen * 10

    assert await each_bounded(list(range(9)), 3, act) == [i * 10 for i in range(9)]
    assert most == 3
    assert MINE.get() == -1


async def test_none_started_once_told_to_stop() -> None:
    done: list[int] = []

    async def act(i: int) -> int:
        done.append(i)
        return i

    results = await each_bounded(list(range(6)), 1, act, go_on=lambda: len(done) < 2)
    assert results == [0, 1, None, None, None, None]


async def test_no_items() -> None:
    async def act(i: int) -> int:
        return i

    assert await each_bounded([], 4, act) == []
