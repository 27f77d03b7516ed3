"""The status writer over a fake producer: retries of retriable errors only, with the proposal's backoff;
order per key; a retry dropped when a newer write of its key came; metrics, logs and the endpoint."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Callable

import orjson
import pytest
import structlog
from aiokafka.errors import (
    KafkaConnectionError,
    KafkaTimeoutError,
    MessageSizeTooLargeError,
    NotLeaderForPartitionError,
    RequestTimedOutError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)

from control_plane.composition import build_status_writer
from control_plane.metrics import Metrics
from control_plane.settings import load_settings
from control_plane.storage.errors import AttemptTimeout, StorageError, is_retriable
from control_plane.storage.status_writes import (
    Outcome,
    StatusStoreNotConfigured,
    StatusWriteFailed,
    StatusWriterClosed,
)
from tests.support.asgi_app import CONNECT_URLS, Running
from tests.support.scripted_producer import SEED, TOPIC, CountingObserver, Gate, ScriptedProducer, make_writer, until

K1 = b"status-topic-orders:connector-sink"
K2 = b"status-task-sink-0"


# -- which errors are retried


@pytest.mark.parametrize(
    ("error", "retriable"),
    [
        pytest.param(KafkaConnectionError(), True, id="connection"),
        pytest.param(NotLeaderForPartitionError(), True, id="not-leader"),
        pytest.param(RequestTimedOutError(), True, id="request-timed-out"),
        pytest.param(UnknownTopicOrPartitionError(), True, id="unknown-topic"),
        pytest.param(KafkaTimeoutError(), True, id="client-timeout"),
        pytest.param(AttemptTimeout(1.0), True, id="attempt-timeout"),
        pytest.param(MessageSizeTooLargeError(), False, id="too-large"),
        pytest.param(TopicAuthorizationFailedError(), False, id="not-authorized"),
        pytest.param(ValueError("bug"), False, id="not-kafka"),
    ],
)
def test_retriable_is_read_from_the_error_class(error: BaseException, retriable: bool) -> None:
    assert is_retriable(error) is retriable


async def test_a_write_that_succeeds_first_time_makes_no_retry() -> None:
    producer, observer = ScriptedProducer(), CountingObserver()
    async with make_writer(producer, observer=observer) as writer:
        assert await writer.write(K1, b'{"topic":{}}', "topic") is Outcome.WRITTEN
    assert producer.written == [(K1, b'{"topic":{}}')]
    assert observer.counts == {("success", "topic"): 1}
    assert producer.started and producer.stopped


async def test_retriable_errors_are_retried_with_backoff_then_succeed() -> None:
    producer, observer = ScriptedProducer(), CountingObserver()
    producer.script(K2, KafkaConnectionError(), NotLeaderForPartitionError(), None)
    async with make_writer(producer, observer=observer, initial_ms=20, max_ms=1000, multiplier=2.0) as writer:
        with structlog.testing.capture_logs() as logs:
            assert await writer.write(K2, b"{}", "task") is Outcome.WRITTEN
    assert len(producer.attempts) == 3
    gaps = [b[2] - a[2] for a, b in zip(producer.attempts, producer.attempts[1:], strict=False)]
    assert gaps[0] >= 0.020 and gaps[1] >= 0.040  # 20 ms then 40 ms (no jitter)
    assert observer.counts == {("retry", "task"): 2, ("success", "task"): 1}
    retries = [line for line in logs if line["event"] == "status write failed; retrying"]
    assert [(r["log_level"], r["attempt"], r["backoff_ms"]) for r in retries] == [
        ("warning", 1, 20),
        ("warning", 2, 40),
    ]
    assert retries[0]["error"].startswith("KafkaConnectionError")
    assert retries[1]["key"] == K2.decode() and retries[1]["kind"] == "task"


async def test_an_error_that_is_not_retriable_fails_at_once() -> None:
    producer, observer = ScriptedProducer(), CountingObserver()
    producer.script(K1, TopicAuthorizationFailedError())
    async with make_writer(producer, observer=observer) as writer:
        with structlog.testing.capture_logs() as logs:
            with pytest.raises(StatusWriteFailed) as caught:
                await writer.write(K1, b"{}", "topic")
    assert len(producer.attempts) == 1
    assert caught.value.attempts == 1 and isinstance(caught.value.cause, TopicAuthorizationFailedError)
    assert "status-topic-orders:connector-sink" in str(caught.value)
    assert observer.counts == {("failure", "topic"): 1}
    assert [(line["event"], line["log_level"]) for line in logs] == [("status write failed", "error")]


async def test_retries_stop_after_max_retries_and_the_failure_is_listed() -> None:
    producer, observer = ScriptedProducer(default=KafkaConnectionError()), CountingObserver()
    async with make_writer(producer, observer=observer, max_retries=3) as writer:
        ticket = writer.submit(K1, b"old", "topic")
        with pytest.raises(StatusWriteFailed) as caught:
            await ticket.result()
        assert ticket.outcome is Outcome.FAILED
        assert caught.value.attempts == 4  # the first attempt and 3 retries
        assert observer.counts == {("retry", "topic"): 3, ("failure", "topic"): 1}
        (failed,) = writer.snapshot().failed
        assert (failed.key, failed.kind, failed.state, failed.attempts) == (K1.decode(), "topic", "failed", 4)
        assert failed.last_error and failed.last_error.startswith("KafkaConnectionError")
        assert writer.snapshot().pending == []

        producer.default = None  # the broker is back: the next write of the key succeeds and clears it
        assert await writer.write(K1, b"new", "topic") is Outcome.WRITTEN
        assert writer.snapshot().failed == []
    assert producer.written == [(K1, b"new")]


async def test_zero_max_retries_means_one_attempt() -> None:
    producer = ScriptedProducer(default=KafkaConnectionError())
    async with make_writer(producer, max_retries=0) as writer:
        with pytest.raises(StatusWriteFailed):
            await writer.write(K1, b"v", "topic")
    assert len(producer.attempts) == 1


async def test_an_attempt_that_hangs_times_out_and_is_retried() -> None:
    producer = ScriptedProducer()
    producer.script(K1, Gate())  # never opened: a broker that does not answer
    async with make_writer(producer, attempt_timeout_s=0.05) as writer:
        assert await writer.write(K1, b"v", "topic") is Outcome.WRITTEN
    assert len(producer.attempts) == 2 and producer.written == [(K1, b"v")]


async def test_submit_returns_at_once_while_the_write_goes_on_in_the_background() -> None:
    producer = ScriptedProducer()
    gate = Gate()
    producer.script(K1, gate)
    async with make_writer(producer) as writer:
        ticket = writer.submit(K1, b"v", "topic")
        assert not ticket.done()
        await gate.entered.wait()
        (pending,) = writer.snapshot().pending
        assert (pending.key, pending.state, pending.attempts) == (K1.decode(), "sending", 1)
        gate.opened.set()
        assert await ticket.result() is Outcome.WRITTEN


# -- order per key, and retries dropped when a newer write came


async def test_writes_of_one_key_are_made_in_the_order_submitted() -> None:
    producer = ScriptedProducer()
    async with make_writer(producer) as writer:
        tickets = [writer.submit(K1, f"v{i}".encode(), "topic") for i in range(5)]
        tickets += [writer.submit(K2, f"t{i}".encode(), "task") for i in range(3)]
        tickets.append(writer.submit(K1, None, "topic"))  # a tombstone last
        assert [await t.result() for t in tickets] == [Outcome.WRITTEN] * 9
    assert [v for k, v in producer.written if k == K1] == [b"v0", b"v1", b"v2", b"v3", b"v4", None]
    assert [v for k, v in producer.written if k == K2] == [b"t0", b"t1", b"t2"]


async def test_a_retry_waiting_its_backoff_is_dropped_when_a_newer_write_of_the_key_comes() -> None:
    producer, observer = ScriptedProducer(), CountingObserver()
    producer.script(K1, KafkaConnectionError())  # "old" fails once, then would wait 10 s
    async with make_writer(producer, observer=observer, initial_ms=10_000, max_ms=10_000) as writer:
        old = writer.submit(K1, b"old", "topic")
        await until(lambda: any(p.state == "waiting-retry" for p in writer.snapshot().pending))
        (waiting,) = writer.snapshot().pending
        assert waiting.next_retry_ms is not None and waiting.next_retry_ms > time.time() * 1000 + 9000
        started = time.monotonic()
        new = writer.submit(K1, b"new", "topic")
        assert await old.result() is Outcome.SUPERSEDED
        assert await new.result() is Outcome.WRITTEN
        assert time.monotonic() - started < 1.0  # the backoff was cut short, not waited out
    assert producer.values_sent(K1) == [b"old", b"new"]  # "old" was never sent again
    assert producer.written == [(K1, b"new")]
    assert observer.counts == {("success", "topic"): 1}  # a dropped retry is neither a retry nor a failure


async def test_an_attempt_under_way_finishes_before_the_newer_write_and_is_not_retried() -> None:
    producer = ScriptedProducer()
    gate = Gate(then=NotLeaderForPartitionError())
    producer.script(K1, gate)
    async with make_writer(producer) as writer:
        old = writer.submit(K1, b"old", "topic")
        await gate.entered.wait()
        new = writer.submit(K1, b"new", "topic")
        await asyncio.sleep(0.01)
        assert producer.values_sent(K1) == [b"old"]  # "new" waits for the attempt under way
        gate.opened.set()
        assert await old.result() is Outcome.SUPERSEDED
        assert await new.result() is Outcome.WRITTEN
    assert producer.values_sent(K1) == [b"old", b"new"]


async def test_an_old_value_never_lands_after_a_new_one() -> None:
    """Many writes of one key through a flaky producer: the last value written is the last submitted."""
    producer = ScriptedProducer()
    rng = random.Random(SEED)
    for _ in range(200):
        producer.script(K1, KafkaConnectionError() if rng.random() < 0.5 else None)
    async with make_writer(producer, max_retries=10, initial_ms=1, max_ms=2) as writer:
        tickets = []
        for i in range(30):
            tickets.append(writer.submit(K1, f"v{i:02d}".encode(), "topic"))
            await asyncio.sleep(rng.random() / 500)
        outcomes = [await t.result() for t in tickets]
    assert outcomes[-1] is Outcome.WRITTEN
    written = [v for _, v in producer.written if v is not None]
    assert written == sorted(written) and written[-1] == b"v29"


# -- lifecycle and errors


async def test_without_a_status_topic_the_writer_does_not_start_and_submit_says_why() -> None:
    writer = build_status_writer(load_settings())
    async with writer:
        assert not writer.running
        with pytest.raises(StatusStoreNotConfigured) as caught:
            writer.submit(K1, b"v", "topic")
    assert "status.storage.topic" in str(caught.value)
    assert isinstance(caught.value, StorageError)
    assert writer.snapshot().running is False


async def test_submit_outside_start_and_stop_is_refused() -> None:
    writer = make_writer(ScriptedProducer())
    with pytest.raises(StatusWriterClosed):
        writer.submit(K1, b"v", "topic")
    async with writer:
        with pytest.raises(ValueError, match="kind"):
            writer.submit(K1, b"v", "connectors")
    with pytest.raises(StatusWriterClosed):
        writer.submit(K1, b"v", "topic")


async def test_stop_does_not_hang_on_a_producer_that_never_answers() -> None:
    producer = ScriptedProducer(default=Gate())
    writer = make_writer(producer, attempt_timeout_s=0.2, initial_ms=5000, max_ms=5000)
    await writer.start()
    sending = writer.submit(K1, b"a", "topic")
    queued = writer.submit(K1, b"b", "topic")
    other = writer.submit(K2, b"c", "task")
    await until(lambda: len(producer.attempts) == 2)
    started = time.monotonic()
    with structlog.testing.capture_logs() as logs:
        await writer.stop()
    assert time.monotonic() - started < 1.5
    for ticket in (sending, queued, other):
        with pytest.raises(StatusWriterClosed):
            await ticket.result()
    assert producer.stopped
    assert sum(line["event"] == "status write abandoned: the writer stopped" for line in logs) == 3


async def test_stop_with_a_flush_lets_pending_writes_and_retries_finish() -> None:
    """Graceful shutdown: queued writes and a retry under way reach Kafka before the writer stops."""
    gate = Gate()
    producer = ScriptedProducer()
    producer.script(K1, gate)
    producer.script(K2, KafkaConnectionError())  # retried after its backoff
    writer = make_writer(producer, initial_ms=50, max_ms=50)
    await writer.start()
    tickets = [writer.submit(K1, b"a", "topic"), writer.submit(K1, b"b", "topic"), writer.submit(K2, b"c", "task")]
    await asyncio.wait_for(gate.entered.wait(), 2)
    asyncio.get_running_loop().call_later(0.1, gate.opened.set)
    with structlog.testing.capture_logs() as logs:
        await writer.stop(flush_timeout_s=5)
    assert [ticket.outcome for ticket in tickets] == [Outcome.WRITTEN] * 3
    assert sorted(producer.written) == sorted([(K1, b"a"), (K1, b"b"), (K2, b"c")])
    assert any(line["event"] == "status writes flushed" and line["pending"] == 3 for line in logs)
    assert producer.stopped


async def test_a_flush_is_bounded() -> None:
    producer = ScriptedProducer(default=Gate())
    writer = make_writer(producer, attempt_timeout_s=0.2, initial_ms=5000, max_ms=5000)
    await writer.start()
    ticket = writer.submit(K1, b"a", "topic")
    started = time.monotonic()
    with structlog.testing.capture_logs() as logs:
        await writer.stop(flush_timeout_s=0.3)
    assert time.monotonic() - started < 1.5
    with pytest.raises(StatusWriterClosed):
        await ticket.result()
    assert any(line["event"] == "status writes not all flushed in time" for line in logs)


async def test_a_settings_built_writer_uses_the_retry_settings() -> None:
    settings = load_settings(
        status_storage_topic="st",
        status_storage_retry_max_retries=7,
        status_storage_retry_initial_backoff_ms=5,
        status_write_request_timeout_ms=1500,
    )
    writer = build_status_writer(settings)
    assert (writer.topic, writer.max_retries, writer.attempt_timeout_s, writer.stop_timeout_s) == ("st", 7, 3.0, 1.5)
    assert writer.configured and not writer.running


# -- metrics and the sidecar's endpoint


def sample(metrics: Metrics, name: str, kind: str) -> float:
    value = metrics.registry.get_sample_value(name, {"kind": kind})
    assert value is not None
    return value


async def test_metrics_count_successes_retries_and_failures_per_kind() -> None:
    metrics = Metrics()
    producer = ScriptedProducer()
    producer.script(K2, KafkaConnectionError(), None)
    producer.script(K1, MessageSizeTooLargeError())
    async with make_writer(producer, observer=metrics) as writer:
        await writer.write(K2, b"{}", "task")
        await writer.write(b"status-connector-sink", b"{}", "connector")
        with pytest.raises(StatusWriteFailed):
            await writer.write(K1, b"{}", "topic")
    assert sample(metrics, "status_update_success_total", "task") == 1
    assert sample(metrics, "status_update_success_total", "connector") == 1
    assert sample(metrics, "status_update_retry_total", "task") == 1
    assert sample(metrics, "status_update_failure_total", "topic") == 1
    assert sample(metrics, "status_update_failure_total", "task") == 0
    text = metrics.render().decode()
    assert 'status_update_retry_total{kind="task"} 1.0' in text


async def test_the_sidecar_lists_pending_and_failed_writes_and_shows_the_counters(serve) -> None:
    settings = load_settings(
        connect_urls="http://w1:8083",
        status_storage_topic=TOPIC,
        status_storage_retry_initial_backoff_ms=10_000,
        status_storage_retry_max_backoff_ms=10_000,
        status_storage_retry_jitter_factor=0.0,
    )
    # the real writer's producer would need a broker: the fake goes under the sidecar's own writer
    producer = ScriptedProducer()
    producer.script(K1, TopicAuthorizationFailedError())
    producer.script(K2, KafkaConnectionError())
    async with serve(settings=settings, status_producer=producer) as running:
        writer = running.runtime.status_writer
        assert writer.running
        with pytest.raises(StatusWriteFailed):
            await writer.write(K1, b"{}", "topic")
        writer.submit(K2, b"{}", "task")
        await until(lambda: any(p.state == "waiting-retry" for p in writer.snapshot().pending))

        answer = await running.client.get("/_sidecar/status-writes")
        assert answer.status_code == 200
        body = orjson.loads(answer.content)
        assert body["topic"] == TOPIC and body["running"] is True
        (pending,) = body["pending"]
        assert pending["key"] == K2.decode() and pending["kind"] == "task"
        assert pending["state"] == "waiting-retry" and pending["attempts"] == 1
        assert pending["last_error"].startswith("KafkaConnectionError")
        assert pending["next_retry_ms"] > pending["first_submitted_ms"]
        (failed,) = body["failed"]
        assert failed["key"] == K1.decode() and failed["state"] == "failed"

        metrics = (await running.client.get("/metrics")).text
        assert 'status_update_failure_total{kind="topic"} 1.0' in metrics
        assert 'status_update_retry_total{kind="task"} 0.0' in metrics  # the retry has not started yet


async def test_without_a_status_topic_the_endpoint_says_the_writer_is_not_running(serve) -> None:
    async with serve() as running:
        body = (await running.client.get("/_sidecar/status-writes")).json()
        assert body == {"topic": None, "running": False, "pending": [], "failed": []}
        with pytest.raises(StatusStoreNotConfigured):
            running.runtime.status_writer.submit(K1, None, "topic")


async def test_a_writer_stopped_and_started_again_writes_again() -> None:
    producer = ScriptedProducer()
    writer = make_writer(producer)
    async with writer:
        await writer.write(K1, b"a", "topic")
    async with writer:
        assert await writer.write(K1, b"b", "topic") is Outcome.WRITTEN
    assert producer.written == [(K1, b"a"), (K1, b"b")]


async def test_the_real_producer_turns_a_broker_that_refuses_into_a_retriable_error() -> None:
    """No broker listens on the port: the aiokafka producer cannot bootstrap, which the writer retries."""
    settings = load_settings(
        bootstrap_servers="127.0.0.1:9",
        status_storage_topic=TOPIC,
        status_storage_retry_max_retries=1,
        status_storage_retry_initial_backoff_ms=1,
        status_storage_retry_max_backoff_ms=1,
        status_write_request_timeout_ms=1000,
    )
    observer = CountingObserver()
    async with build_status_writer(settings, observer) as writer:
        with pytest.raises(StatusWriteFailed) as caught:
            await writer.write(K1, b"v", "topic")
    assert isinstance(caught.value.cause, KafkaConnectionError) and is_retriable(caught.value.cause)
    assert caught.value.attempts == 2
    assert observer.counts == {("retry", "topic"): 1, ("failure", "topic"): 1}


async def test_the_lifespan_flushes_pending_writes_at_shutdown(
    serve: Callable[..., contextlib.AbstractAsyncContextManager[Running]],
) -> None:
    """Graceful shutdown through the composition root: the app's lifespan ends, the write under way
    reaches Kafka (``shutdown_flush_timeout_s``) before the writer stops."""
    gate = Gate()
    producer = ScriptedProducer()
    producer.script(K1, gate)
    settings = load_settings(connect_urls=CONNECT_URLS, status_storage_topic=TOPIC, shutdown_flush_timeout_s=5)
    async with serve(settings=settings, status_producer=producer) as running:
        ticket = running.runtime.status_writer.submit(K1, b"a", "topic")
        await asyncio.wait_for(gate.entered.wait(), 2)
        asyncio.get_running_loop().call_later(0.1, gate.opened.set)
    assert ticket.outcome is Outcome.WRITTEN
    assert producer.written == [(K1, b"a")] and producer.stopped
