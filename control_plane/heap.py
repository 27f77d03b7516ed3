"""The heap the view built at start, frozen out of the cyclic garbage collector once the view is ready.

At 2,000 connectors the view and the modules hold a few hundred thousand objects. CPython's collector
walks them all in each full (oldest generation) collection: 72 ms of CPU for 164,000 objects measured
on the 2-core machine, during which the event loop answers nothing; that was the tail of the freshness
figure (a status record written until the sidecar answers with it, bench section 3). ``gc.freeze()``
moves every object alive at that moment to a permanent generation no collection walks; objects made
later are collected as before, and frozen ones still go when their last reference does (the view's
entries are replaced, not cyclic).
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable

import structlog

from .background import cancel_and_wait

log = structlog.get_logger(__name__)


class HeapFreezer:
    """Once ``ready()`` has returned: one full collection, then ``gc.freeze()``."""

    def __init__(self, ready: Callable[[], Awaitable[object]]) -> None:
        self._ready = ready
        self._task: asyncio.Task[None] | None = None
        self.frozen = False

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="heap-freeze")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        if self.frozen:
            gc.unfreeze()
            self.frozen = False

    async def _run(self) -> None:
        await self._ready()
        started = time.perf_counter()
        gc.collect()
        gc.freeze()
        self.frozen = True
        log.info(
            "heap frozen",
            objects=gc.get_freeze_count(),
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )


__all__ = ["HeapFreezer"]
