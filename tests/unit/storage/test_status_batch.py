"""``StatusWriter.write_all`` (a topics reset's tombstones) over a fake producer: every record handed
over before any acknowledgement is awaited; it returns only when every record is acknowledged, and raises
when a broker error leaves one unwritten (the reset then answers an error, never its 202); the
proposal's retries, order per key and superseded retries as for single writes; the domain's reset on it."""

from __future__ import annotations

import asyncio
import time

import pytest
import structlog
from aiokafka.errors import KafkaConnectionError, NotLeaderForPartitionError, TopicAuthorizationFailedError

from control_plane.codecs import Tombstone, TopicStatus, encode_status
from control_plane.codecs.status import StatusKey, StatusKind
from control_plane.domain.errors import OperationFailed
from control_plane.domain.topics.tracking import TopicTracking
from control_plane.storage.status_writes import Outcome, StatusBatchFailed, StatusWriteFailed, StatusWriterClosed
from control_plane.view import ClusterView
from tests.support.scripted_producer import CountingObserver, Gate, ScriptedProducer, make_writer, until

CONNECTOR = "sink"


def tombstones(count: int, connector: str = CONNECTOR) -> list[Tombstone[StatusKey]]:
    return [Tombstone(StatusKey(StatusKind.TOPIC, connector, topic=f"t{i:04d}")) for i in range(count)]


def key_of(record: Tombstone[StatusKey]) -> bytes:
    return encode_status(record)[0]


async def test_every_record_is_handed_over_before_any_acknowledgement_is_awaited() -> None:
    producer, observer = ScriptedProducer(), CountingObserver()
    records = tombstones(200)
    acknowledge = asyncio.Event()
    for record in records:
        producer.script(key_of(record), Gate(opened=acknowledge))
    async with make_writer(producer, observer=observer) as writer:
        writing = asyncio.create_task(writer.write_all(records))
        await until(lambda: len(producer.attempts) == 200)  # all 200 in flight at once, none acknowledged
        assert not writing.done() and producer.written == []
        assert {p.state for p in writer.snapshot().pending} == {"sending"}
        acknowledge.set()
        await writing
        assert writer.snapshot().pending == []
    assert sorted(k for k, _ in producer.written) == sorted(key_of(r) for r in records)
    assert all(v is None for _, v in producer.written)
    assert observer.counts == {("success", "topic"): 200}


async def test_a_broker_error_mid_batch_raises_and_the_others_are_written() -> None:
    producer, observer = ScriptedProducer(), CountingObserver()
    records = tombstones(50)
    refused = key_of(records[20])
    producer.script(refused, TopicAuthorizationFailedError())
    async with make_writer(producer, observer=observer) as writer:
        with structlog.testing.capture_logs() as logs:
            with pytest.raises(StatusBatchFailed) as caught:
                await writer.write_all(records)
        (failed,) = writer.snapshot().failed
        assert failed.key == refused.decode() and failed.attempts == 1
    assert len(caught.value.failures) == 1 and caught.value.total == 50
    (failure,) = caught.value.failures
    assert isinstance(failure, StatusWriteFailed) and isinstance(failure.cause, TopicAuthorizationFailedError)
    assert refused.decode() in caught.value.message
    assert len(producer.written) == 49 and refused not in {k for k, _ in producer.written}
    assert observer.counts == {("success", "topic"): 49, ("failure", "topic"): 1}
    assert [(line["event"], line["records"]) for line in logs if line["log_level"] == "error"] == [
        ("status writes failed", 1)
    ]


async def test_retriable_errors_are_sent_again_together_with_the_proposals_backoff() -> None:
    producer, observer = ScriptedProducer(), CountingObserver()
    records = tombstones(30)
    flaky = [key_of(r) for r in records[:10]]
    for key in flaky:
        producer.script(key, KafkaConnectionError(), NotLeaderForPartitionError(), None)
    async with make_writer(producer, observer=observer, initial_ms=20, max_ms=1000, multiplier=2.0) as writer:
        with structlog.testing.capture_logs() as logs:
            await writer.write_all(records)
    sent = [at for key, _, at in producer.attempts if key == flaky[0]]
    assert len(sent) == 3
    assert sent[1] - sent[0] >= 0.020 and sent[2] - sent[1] >= 0.040  # 20 ms then 40 ms (no jitter)
    assert len(producer.attempts) == 30 + 2 * 10
    assert observer.counts == {("success", "topic"): 30, ("retry", "topic"): 20}
    retries = [line for line in logs if line["event"] == "status writes failed; retrying"]
    assert [(r["records"], r["attempt"], r["backoff_ms"], r["retry"]) for r in retries] == [
        (10, 1, 20, "1/3"),
        (10, 2, 40, "2/3"),
    ]
    assert retries[0]["error"].startswith("KafkaConnectionError")


async def test_retries_run_out_and_the_batch_fails_naming_how_many() -> None:
    producer, observer = ScriptedProducer(), CountingObserver()
    records = tombstones(10)
    for record in records[:4]:
        producer.script(key_of(record), *([KafkaConnectionError()] * 3))
    async with make_writer(producer, observer=observer, max_retries=2) as writer:
        with pytest.raises(StatusBatchFailed) as caught:
            await writer.write_all(records)
        assert len(writer.snapshot().failed) == 4
    assert caught.value.message.startswith("4 of 10 status records were not written; ")
    assert all(f.attempts == 3 for f in caught.value.failures if isinstance(f, StatusWriteFailed))
    assert observer.counts == {("success", "topic"): 6, ("retry", "topic"): 8, ("failure", "topic"): 4}


async def test_an_attempt_that_hangs_times_out_and_is_sent_again() -> None:
    producer = ScriptedProducer()
    records = tombstones(5)
    producer.script(key_of(records[2]), Gate())  # never opened: a broker that does not answer
    async with make_writer(producer, attempt_timeout_s=0.05) as writer:
        await writer.write_all(records)
    assert len(producer.attempts) == 6 and len(producer.written) == 5


async def test_a_record_whose_key_has_a_write_under_way_goes_behind_it() -> None:
    producer = ScriptedProducer()
    records = tombstones(3)
    key = key_of(records[1])
    gate = Gate()
    producer.script(key, gate)
    async with make_writer(producer) as writer:
        earlier = writer.submit(key, b"earlier", "topic")
        await gate.entered.wait()
        writing = asyncio.create_task(writer.write_all(records))
        await until(lambda: len(producer.written) == 2)  # the other two keys are written meanwhile
        assert producer.values_sent(key) == [b"earlier"] and not writing.done()
        gate.opened.set()
        await writing
        assert await earlier.result() is Outcome.WRITTEN
    assert producer.values_sent(key) == [b"earlier", None]


async def test_a_newer_write_of_a_key_drops_the_batchs_retry_and_lands_last() -> None:
    producer, observer = ScriptedProducer(), CountingObserver()
    records = tombstones(3)
    key = key_of(records[0])
    producer.script(key, KafkaConnectionError())
    async with make_writer(producer, observer=observer, initial_ms=200, max_ms=200) as writer:
        writing = asyncio.create_task(writer.write_all(records))
        await until(lambda: any(p.state == "waiting-retry" for p in writer.snapshot().pending))
        value, _ = encode_status(TopicStatus("t0000", CONNECTOR, 0, 1)), None
        newer = writer.submit(key, value[1], "topic")
        await writing  # superseded is an outcome, not a failure
        assert await newer.result() is Outcome.WRITTEN
    assert producer.values_sent(key) == [None, value[1]]  # the tombstone was not sent again after it
    assert observer.counts == {("success", "topic"): 3}


async def test_stop_during_a_batchs_backoff_abandons_it_and_the_caller_gets_an_error() -> None:
    producer = ScriptedProducer(default=KafkaConnectionError())
    writer = make_writer(producer, initial_ms=10_000, max_ms=10_000)
    await writer.start()
    writing = asyncio.create_task(writer.write_all(tombstones(5)))
    await until(lambda: any(p.state == "waiting-retry" for p in writer.snapshot().pending))
    started = time.monotonic()
    await writer.stop()
    with pytest.raises(StatusBatchFailed) as caught:
        await writing
    assert time.monotonic() - started < 2.0  # the backoff was cut short
    assert all(isinstance(f, StatusWriterClosed) for f in caught.value.failures)


async def test_many_records_take_a_few_attempts_not_one_round_trip_each() -> None:
    """10,000 tombstones: one attempt each, and quickly (the lanes took about 0.5 ms of CPU a record)."""
    producer = ScriptedProducer()
    records = tombstones(10_000)
    async with make_writer(producer) as writer:
        started = time.process_time()
        await writer.write_all(records)
        cpu_s = time.process_time() - started
    assert len(producer.attempts) == 10_000 and len(producer.written) == 10_000
    print(f"10,000 tombstones through write_all over the fake producer: {cpu_s:.2f} s of CPU")


# -- the domain's reset on the writer


def tracking_of(writer: object, topics: int) -> TopicTracking:
    view = ClusterView()
    for i in range(topics):
        view.apply_status(TopicStatus(f"t{i:04d}", CONNECTOR, 0, 1000))
    return TopicTracking(view, writer, enabled=True, allow_reset=True)  # type: ignore[arg-type]


async def test_a_reset_answers_at_once_and_its_tombstones_are_written_in_the_background() -> None:
    """A topics reset answers as the worker does (its 202 once the tombstones are handed to the producer),
    and its writes are visible: pending until acknowledged, then written, all pipelined."""
    producer = ScriptedProducer()
    acknowledge = asyncio.Event()
    for record in tombstones(100):
        producer.script(key_of(record), Gate(opened=acknowledge))
    async with make_writer(producer) as writer:
        outcome = tracking_of(writer, 100).reset(CONNECTOR)
        assert len(outcome.topics) == 100
        await until(lambda: len(producer.attempts) == 100)  # all handed on before any acknowledgement
        assert len(writer.snapshot().pending) == 100
        acknowledge.set()
        assert await writer.flush(5.0)
    assert len(producer.written) == 100 and writer.snapshot().pending == []


async def test_a_broker_error_mid_reset_is_listed_as_failed() -> None:
    producer = ScriptedProducer()
    producer.script(key_of(tombstones(100)[57]), TopicAuthorizationFailedError())
    async with make_writer(producer) as writer:
        tracking_of(writer, 100).reset(CONNECTOR)
        assert await writer.flush(5.0)
        failed = writer.snapshot().failed
    assert [row.key for row in failed] == ["status-topic-t0057:connector-sink"]
    assert "TopicAuthorizationFailedError" in (failed[0].last_error or "")
    assert len(producer.written) == 99


async def test_a_reset_with_the_writer_stopped_is_an_error_in_connects_shape() -> None:
    async with make_writer(ScriptedProducer()) as writer:
        pass
    with pytest.raises(OperationFailed) as caught:
        tracking_of(writer, 3).reset(CONNECTOR)
    assert str(caught.value).startswith(f"Failed to reset the active topics of connector {CONNECTOR}: ")
