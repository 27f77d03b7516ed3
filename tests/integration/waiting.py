"""Polling with a deadline, for state that a real worker reaches asynchronously."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def eventually(
    probe: Callable[[], Awaitable[T]], ok: Callable[[T], bool], *, timeout_s: float = 60, what: str = "condition"
) -> T:
    deadline = time.monotonic() + timeout_s
    last: T | None = None
    while True:
        last = await probe()
        if ok(last):
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout_s}s; last value: {last!r}")
        await asyncio.sleep(0.25)
