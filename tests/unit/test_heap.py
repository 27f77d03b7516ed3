"""The view's heap is frozen out of the full garbage collections once the view is ready, and thawed at
stop."""

from __future__ import annotations

import asyncio
import gc

from control_plane.heap import HeapFreezer


def frozen(freezer: HeapFreezer) -> bool:
    return freezer.frozen


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
