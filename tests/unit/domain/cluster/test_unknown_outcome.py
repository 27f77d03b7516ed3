"""A write whose outcome is unknown keeps the connector's writes held until the worker can no longer make it,
and its caller is answered at once; a write whose claim on the fence is no longer the holder's is refused."""

from __future__ import annotations

import asyncio
import time

import pytest

from control_plane.codecs.fence import FenceClaim, encode_fence
from control_plane.domain.cluster.fence import ConnectorFence
from control_plane.domain.cluster.outcome import ANY_WORKER, OutcomeBarrier, unknown_outcome
from control_plane.domain.cluster.writes import ConnectorWrites
from control_plane.domain.errors import OperationFailed, OutcomeUnknown
from control_plane.upstream import (
    ConnectionRefused,
    NoWorkerAvailable,
    UpstreamError,
    UpstreamRequest,
    UpstreamResponse,
    UpstreamTimeout,
    WorkerDisconnected,
    WorkerUnreachable,
)
from tests.support.fakes import FakeSidecarsTopic


class Barrier(OutcomeBarrier):
    """Settles when ``release`` is set; records what it was asked."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.settle_s = 0.0
        self.asked: list[tuple[str, str]] = []

    async def settled(self, worker: str, connector: str) -> bool:
        self.asked.append((worker, connector))
        await self.release.wait()
        return True


def writes(barrier: OutcomeBarrier | None, *, wait_s: float | None = None) -> ConnectorWrites:
    return ConnectorWrites(None, None, 1.0, barrier=barrier, wait_s=wait_s)  # type: ignore[arg-type]


async def timed_out(writes_: ConnectorWrites, name: str) -> None:
    async with writes_.serialized(name):
        raise UpstreamTimeout("http://w1:8083", "no answer within the request budget")


async def test_the_caller_is_answered_at_once_and_the_connector_stays_held_until_the_worker_settles() -> None:
    barrier = Barrier()
    held = writes(barrier)
    started = time.monotonic()
    with pytest.raises(OutcomeUnknown, match="whether connector c was changed is not known") as raised:
        await timed_out(held, "c")
    assert raised.value.timed_out
    assert time.monotonic() - started < 0.5
    next_write = asyncio.create_task(_enter(held, "c"))
    other = asyncio.create_task(_enter(held, "d"))
    await asyncio.wait_for(other, 1)  # another connector is not held
    await asyncio.sleep(0.05)
    assert not next_write.done()  # the same connector waits for the outcome
    assert barrier.asked == [("http://w1:8083", "c")]
    barrier.release.set()
    await asyncio.wait_for(next_write, 1)
    await held.stop()


async def test_what_the_block_asked_for_runs_once_settled_still_held() -> None:
    barrier = Barrier()
    held = writes(barrier)
    ran: list[str] = []

    async def undo() -> None:
        ran.append("undo")

    async def disconnected() -> None:
        async with held.serialized("c"):
            held.if_unknown("c", undo)
            raise WorkerDisconnected("http://w1:8083", "connection closed")

    with pytest.raises(OutcomeUnknown):
        await disconnected()
    assert ran == []
    barrier.release.set()
    await asyncio.wait_for(_enter(held, "c"), 1)
    assert ran == ["undo"]


async def test_a_write_the_worker_refused_or_never_took_holds_nothing() -> None:
    barrier = Barrier()
    held = writes(barrier)
    for err in (WorkerUnreachable("http://w1:8083", "refused"), OperationFailed("no")):
        with pytest.raises(type(err)):
            async with held.serialized("c"):
                raise err
        await asyncio.wait_for(_enter(held, "c"), 1)
    assert barrier.asked == []


async def test_a_write_waits_for_a_held_connector_no_longer_than_its_setting() -> None:
    held = writes(Barrier(), wait_s=0.2)
    with pytest.raises(OutcomeUnknown):
        await timed_out(held, "c")
    with pytest.raises(OperationFailed, match=r"did not end within 0\.2s"):
        await _enter(held, "c")
    await held.stop()


@pytest.mark.parametrize(
    ("err", "worker"),
    [
        pytest.param(UpstreamTimeout("w1", "slow"), "w1", id="timeout"),
        pytest.param(WorkerDisconnected("w1", "closed"), "w1", id="disconnected"),
        pytest.param(WorkerUnreachable("w1", "refused"), None, id="unreachable"),
        pytest.param(
            NoWorkerAvailable([WorkerUnreachable("w1", "x"), UpstreamTimeout("w2", "y")]), "w2", id="one-took"
        ),
        pytest.param(NoWorkerAvailable([WorkerUnreachable("w1", "x")]), None, id="none-took"),
        pytest.param(NoWorkerAvailable([UpstreamTimeout("w1", "x"), UpstreamTimeout("w2", "y")]), ANY_WORKER, id="two"),
        pytest.param(asyncio.CancelledError(), ANY_WORKER, id="cancelled"),
        pytest.param(ValueError(), None, id="other"),
    ],
)
def test_which_failures_leave_the_outcome_unknown(err: BaseException, worker: str | None) -> None:
    assert unknown_outcome(err) == worker


class Workers:
    """Answers ``GET /connectors/c`` as scripted: an error to raise, or an answer."""

    def __init__(self, *script: UpstreamError | int) -> None:
        self.script = list(script)
        self.workers = ("w1", "w2")
        self.sent: list[str] = []

    async def send_to(self, worker: str, request: UpstreamRequest, timeout_s: float | None = None) -> UpstreamResponse:
        self.sent.append(worker)
        step = self.script.pop(0) if self.script else 200
        if isinstance(step, UpstreamError):
            raise step
        return UpstreamResponse(step, [], b"{}", worker)


async def test_the_barrier_waits_for_a_queued_read_answered_by_the_worker() -> None:
    workers = Workers(UpstreamTimeout("w1", "stalled"), 200, WorkerDisconnected("w1", "closed"), 409)
    barrier = OutcomeBarrier(workers, hold_s=5, interval_s=0.01)  # type: ignore[arg-type]
    assert await barrier.settled("w1", "c")
    assert workers.sent == ["w1"] * 5  # two answers in a row: the second sent once the first was answered


async def test_a_worker_that_refuses_connections_has_no_queue_left() -> None:
    workers = Workers(ConnectionRefused("w1", "refused"))
    assert await OutcomeBarrier(workers, hold_s=5).settled("w1", "c")  # type: ignore[arg-type]


async def test_a_worker_not_reached_for_another_reason_may_still_have_it_queued() -> None:
    workers = Workers(WorkerUnreachable("w1", "connect timed out"), WorkerUnreachable("w1", "no free connection"))
    barrier = OutcomeBarrier(workers, hold_s=5, interval_s=0.01)  # type: ignore[arg-type]
    assert await barrier.settled("w1", "c")
    assert workers.sent == ["w1"] * 4  # asked until it answered twice


async def test_an_unknown_worker_means_every_worker_is_asked_and_the_hold_is_bounded() -> None:
    workers = Workers(*(UpstreamTimeout("w", "stalled") for _ in range(1000)))
    barrier = OutcomeBarrier(workers, hold_s=0.2, interval_s=0.01)  # type: ignore[arg-type]
    started = time.monotonic()
    assert not await barrier.settled(ANY_WORKER, "c")
    assert time.monotonic() - started < 1
    assert set(workers.sent) == {"w1"}  # still on the first when the bound ran out


async def test_a_claim_that_is_no_longer_the_holder_is_refused_at_the_write() -> None:
    clock = [time.time() * 1000]
    topic = FakeSidecarsTopic(lambda: clock[0])  # the broker's append time
    fence = ConnectorFence(
        topic, topic.reader(), sidecar="s0", lease_s=30, wait_s=1, read_timeout_s=1, now_ms=lambda: clock[0]
    )
    async with fence.held("c") as lease:
        await fence.confirm(lease, "writing")
        # the log's time passed the lease and another sidecar took the fence, while this sidecar's own clock
        # says its lease runs still (clocks apart, a renewal that never landed)
        clock[0] += 31_000
        await topic.write(*encode_fence(FenceClaim("c", "other-token", "s1", 30_000)))
        with pytest.raises(OperationFailed, match="writing: the fence of connector c is no longer this sidecar's"):
            await fence.confirm(lease, "writing")
    await fence.stop()


async def _enter(writes_: ConnectorWrites, name: str) -> None:
    async with writes_.serialized(name):
        pass
