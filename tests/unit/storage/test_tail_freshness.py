"""A tail's freshness window (``TopicTail.fresh_within``): fresh while it has read to end offsets asked for
within the window; past an eighth of it, the tail reads ahead, one round after another while reads come."""

from __future__ import annotations

import asyncio

from control_plane.storage.log_reader import TopicTail


class Broker:
    """End offsets as the broker answers them; counts the requests."""

    def __init__(self, end: int) -> None:
        self.end = end
        self.asked = 0

    async def end_offsets(self) -> dict[int, int]:
        self.asked += 1
        await asyncio.sleep(0)
        return {0: self.end}


def tail_at(broker: Broker, position: int) -> TopicTail:
    tail = TopicTail("connect-status", {}, lambda record: None)
    tail.end_offsets = broker.end_offsets  # type: ignore[method-assign]
    tail._positions = {0: position}
    return tail


async def read_ahead_done(tail: TopicTail) -> None:
    assert tail._reading_ahead is not None
    await tail._reading_ahead


async def test_a_tail_is_fresh_once_it_has_read_to_ends_asked_for_within_the_window() -> None:
    broker = Broker(end=5)
    tail = tail_at(broker, position=5)
    assert not tail.fresh_within(60.0)  # never asked: not fresh, and a request goes out
    await read_ahead_done(tail)
    assert tail.fresh_within(60.0) and broker.asked == 1
    assert tail.fresh_within(60.0) and broker.asked == 1  # within the first half: nothing asked again
    await tail.stop()


async def test_a_record_written_and_not_read_keeps_the_tail_not_fresh_until_it_is_read() -> None:
    broker = Broker(end=6)
    tail = tail_at(broker, position=5)
    assert not tail.fresh_within(60.0)
    reading = tail._reading_ahead
    assert reading is not None
    for _ in range(5):
        await asyncio.sleep(0)
    assert not reading.done() and not tail.fresh_within(60.0)  # one request at a time: no second one
    assert broker.asked == 1
    tail._positions[0] = 6  # the consumer hands the record on
    async with tail._progress:
        tail._progress.notify_all()
    await reading
    assert tail.fresh_within(60.0)
    await tail.stop()


async def test_past_an_eighth_of_the_window_a_request_goes_ahead_and_past_the_window_the_tail_is_not_fresh() -> None:
    broker = Broker(end=5)
    tail = tail_at(broker, position=5)
    tail.fresh_within(1.0)
    await read_ahead_done(tail)
    now = asyncio.get_running_loop().time()
    tail._fresh_at = now - 0.6  # past an eighth of the window: still fresh, and read ahead
    assert tail.fresh_within(1.0)
    await read_ahead_done(tail)
    assert broker.asked == 2 and tail._fresh_at >= now
    tail._fresh_at = now - 2.0
    assert not tail.fresh_within(1.0)
    await tail.stop()


async def test_a_stop_ends_a_read_ahead_under_way() -> None:
    broker = Broker(end=9)
    tail = tail_at(broker, position=5)  # never reaches the end
    tail.fresh_within(1.0)
    reading = tail._reading_ahead
    await tail.stop()
    assert reading is not None and reading.done()


async def test_a_read_that_finds_the_tail_not_fresh_waits_for_a_round_sent_since_the_window_began() -> None:
    """A round of the read-ahead under way, sent within the window, will do: no request of its own."""
    broker = Broker(end=6)
    tail = tail_at(broker, position=5)
    since = asyncio.get_running_loop().time()
    tail.fresh_within(1.0)  # a round goes out (the record at 5 not read yet)
    waiting = asyncio.create_task(tail.until_fresh(since))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not waiting.done() and broker.asked == 1
    tail._positions[0] = 6
    async with tail._progress:
        tail._progress.notify_all()
    await waiting
    assert broker.asked == 1
    await tail.stop()


async def test_a_round_sent_before_the_window_began_is_not_enough() -> None:
    broker = Broker(end=5)
    tail = tail_at(broker, position=4)
    tail.fresh_within(1.0)
    for _ in range(5):  # the first round sent, waiting for the record at 4
        await asyncio.sleep(0)
    waiting = asyncio.create_task(tail.until_fresh(asyncio.get_running_loop().time()))
    await asyncio.sleep(0)
    tail._positions[0] = 5
    async with tail._progress:
        tail._progress.notify_all()
    await waiting
    assert broker.asked == 2  # the first round's, and the next one's, sent after the read came
    await tail.stop()
