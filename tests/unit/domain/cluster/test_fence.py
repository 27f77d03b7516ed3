"""The connector fence among several sidecars, over the sidecars' topic in memory."""

from __future__ import annotations

import asyncio
import time

import pytest

from control_plane.domain.cluster.fence import ConnectorFence
from control_plane.domain.errors import OperationFailed
from tests.support.fakes import FakeSidecarsTopic


def now_ms() -> float:
    return time.time() * 1000


def sidecars(
    topic: FakeSidecarsTopic, count: int, *, lease_s: float = 5.0, wait_s: float = 5.0
) -> list[ConnectorFence]:
    return [
        ConnectorFence(topic, topic.reader(), sidecar=f"s{i}", lease_s=lease_s, wait_s=wait_s, read_timeout_s=1)
        for i in range(count)
    ]


async def test_one_writer_at_a_time_among_sidecars() -> None:
    topic = FakeSidecarsTopic(now_ms)
    inside: list[str] = []
    overlaps = 0

    async def write(fence: ConnectorFence, n: int) -> None:
        nonlocal overlaps
        async with fence.held("c"):
            overlaps += len(inside)
            inside.append(f"{fence.sidecar}-{n}")
            await asyncio.sleep(0.002)
            inside.pop()

    fences = sidecars(topic, 3)
    await asyncio.gather(*(write(f, n) for n in range(10) for f in fences))
    assert overlaps == 0
    for fence in fences:
        await fence.stop()  # the releases behind the last answers written
    assert sidecars(topic, 1)[0].holders() == []  # every fence given back


async def test_connectors_are_fenced_apart() -> None:
    topic = FakeSidecarsTopic(now_ms)
    one, two = sidecars(topic, 2)
    async with one.held("a"), two.held("b"):
        assert sorted(h.connector for h in two.holders()) == ["a", "b"]  # two read after both claims


async def test_a_dead_holder_blocks_nobody_beyond_its_lease() -> None:
    topic = FakeSidecarsTopic(now_ms)
    dead, alive = sidecars(topic, 2, lease_s=0.3)
    await dead._take("c")  # taken and never given back: the sidecar died
    started = time.monotonic()
    async with alive.held("c") as lease:
        lease.ensure("writing")
    assert 0.2 < time.monotonic() - started < 2


async def test_a_write_waits_no_longer_than_its_setting() -> None:
    topic = FakeSidecarsTopic(now_ms)
    holder, waiter = sidecars(topic, 2, wait_s=0.2)
    async with holder.held("c"):
        with pytest.raises(OperationFailed, match=r"fence was held by sidecar s0 for 0\.2s"):
            async with waiter.held("c"):
                pass


async def test_a_lease_that_ran_out_refuses_the_write() -> None:
    topic = FakeSidecarsTopic(now_ms)
    (fence,) = sidecars(topic, 1, lease_s=0.2)
    lease = await fence._take("c")
    await asyncio.sleep(0.2)
    with pytest.raises(OperationFailed, match="this sidecar's fence of connector c ran out"):
        lease.ensure("writing")


async def test_the_holder_renews_while_it_works() -> None:
    topic = FakeSidecarsTopic(now_ms)
    holder, waiter = sidecars(topic, 2, lease_s=0.3, wait_s=0.1)
    async with holder.held("c") as lease:
        await asyncio.sleep(0.5)  # longer than the lease: renewed meanwhile
        lease.ensure("writing")
        with pytest.raises(OperationFailed):
            async with waiter.held("c"):
                pass


async def test_a_request_cancelled_while_claiming_gives_the_fence_back() -> None:
    """A claim appended, then the request cancelled before it read the claim back (the client left): the
    claim took the fence, and is released at once, not held until its lease ends."""
    topic = FakeSidecarsTopic(now_ms)
    cancelled, next_one = sidecars(topic, 2, lease_s=5.0, wait_s=1.0)
    reading = asyncio.Event()

    async def never_reads(topic: str, timeout_s: float) -> None:
        reading.set()
        await asyncio.Event().wait()

    cancelled._reader.read_to_end = never_reads  # type: ignore[method-assign]
    claiming = asyncio.create_task(cancelled._take("c"))
    await reading.wait()
    claiming.cancel()
    with pytest.raises(asyncio.CancelledError):
        await claiming
    async with next_one.held("c") as lease:  # within its 1 s wait, not the 5 s lease
        lease.ensure("writing")
