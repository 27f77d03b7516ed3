"""Polling with a deadline, for state that a real worker reaches asynchronously."""

from __future__ import annotations

import asyncio
import faulthandler
import io
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
            detail = getattr(last, "text", "")  # an HTTP answer's body says why
            raise AssertionError(f"{what} not reached within {timeout_s}s; last value: {last!r} {detail}")
        await asyncio.sleep(0.25)


async def answered_in_time(request: Awaitable[T], timeout_s: float = 30) -> T:
    """A request to an in-process sidecar that must be answered within ``timeout_s`` (the default request
    budget). If it is not, the test fails naming what every task of the event loop was waiting on (the
    request's own included, still pending); if the loop itself was held (a blocking call), faulthandler
    writes every thread's stack to stderr first."""
    task = asyncio.ensure_future(request)
    faulthandler.dump_traceback_later(timeout_s + 5, exit=False)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
    finally:
        faulthandler.cancel_dump_traceback_later()
    if not done:
        stacks = _tasks_text()
        task.cancel()
        raise AssertionError(f"no answer within {timeout_s}s; the event loop's tasks:\n{stacks}")
    return task.result()


def _tasks_text() -> str:
    out = io.StringIO()
    for task in asyncio.all_tasks():
        task.print_stack(limit=12, file=out)
    return out.getvalue()
