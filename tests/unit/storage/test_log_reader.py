"""A tail's stop when its consumer does not close cleanly (a fetch under way times out as the broker goes):
the tail is over either way, so the error is logged and the stop goes on, as Connect's ``KafkaBasedLog.stop``
logs a consumer that fails to close; the sidecar's shutdown is not cut short by it."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka.errors import RequestTimedOutError
from structlog.testing import capture_logs

from control_plane.storage.log_reader import TopicTail


class Client:
    closed = False

    async def close(self) -> None:
        self.closed = True


class ClosingBadly:
    """aiokafka's consumer whose close fails before it closes its client (``AIOKafkaConsumer.stop``)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.stopped = False
        self._client = Client()

    async def stop(self) -> None:
        self.stopped = True
        raise self.error


async def test_a_consumer_that_fails_to_close_is_logged_not_raised() -> None:
    """Its fetch under way timed out, or (aiokafka's close) its own fetch task's cancellation escaped."""
    tail = TopicTail("connect-status", {}, lambda record: None)
    consumer, ends = ClosingBadly(RequestTimedOutError()), ClosingBadly(asyncio.CancelledError())
    tail._consumer, tail._ends_client = consumer, ends
    with capture_logs() as logs:
        await tail.stop()
    assert consumer.stopped and ends.stopped  # the second is closed although the first failed
    assert consumer._client.closed and ends._client.closed  # no connection left for the garbage collector
    warned = [e for e in logs if e["log_level"] == "warning"]
    assert [e["reading"] for e in warned] == ["connect-status", "connect-status"]


async def test_a_stop_that_is_cancelled_itself_is_cancelled() -> None:
    tail = TopicTail("connect-status", {}, lambda record: None)
    started, release = asyncio.Event(), asyncio.Event()

    class Slow:
        async def stop(self) -> None:
            started.set()
            await release.wait()

    tail._consumer = Slow()
    stopping = asyncio.create_task(tail.stop())
    await started.wait()
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping


async def test_an_end_offsets_client_whose_start_is_cut_short_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stop (or a broker down) while the end-offsets client connects: it is never kept, so it is closed
    there, not left with its connections open for the garbage collector."""
    made: list[StartingForever] = []

    class StartingForever:
        def __init__(self, **_: object) -> None:
            self.stopped = False
            self._client = Client()
            made.append(self)

        async def start(self) -> None:
            await asyncio.Event().wait()

        async def stop(self) -> None:
            self.stopped = True

    monkeypatch.setattr("control_plane.storage.log_reader.AIOKafkaConsumer", StartingForever)
    tail = TopicTail("connect-status", {}, lambda record: None)
    tail._consumer = object()  # a tail that runs
    asking = asyncio.create_task(tail.end_offsets())
    while not made:  # noqa: ASYNC110 - the client is made inside end_offsets, nothing to wait on
        await asyncio.sleep(0)
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    assert made[0].stopped and tail._ends_client is None
