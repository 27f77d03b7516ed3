"""Acting on many items with a bound on how many are under way at once: the one scheduling of a bulk action
(each connector's single request) and of an apply (each step with its retries)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


async def each_bounded(
    items: Sequence[T],
    concurrency: int,
    act: Callable[[T], Awaitable[R]],
    *,
    go_on: Callable[[], bool] = lambda: True,
) -> list[R | None]:
    """``act`` on each item in their order, at most ``concurrency`` at once, each in a task of its own (so a
    context variable it sets, as a request's deadline, is its own). Before an item is started ``go_on`` is
    asked: once it answers False no other item starts (those under way end). The results in the items' order,
    None for an item not started."""
    results: list[R | None] = [None] * len(items)
    pending = iter(range(len(items)))

    async def worker() -> None:
        for i in pending:
            if not go_on():
                return
            results[i] = await asyncio.create_task(_call(act, items[i]))

    async with asyncio.TaskGroup() as group:
        for _ in range(min(max(1, concurrency), len(items))):
            group.create_task(worker())
    return results


async def _call(act: Callable[[T], Awaitable[R]], item: T) -> R:
    return await act(item)


__all__ = ["each_bounded"]
