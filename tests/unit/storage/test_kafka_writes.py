"""Every Kafka write of the sidecar goes through one write path (``storage.kafka_writes``): the config and
offsets writers' records are retried on a retriable error with the proposal's backoff and bounds, fail at
once on one that is not retriable, each writer keeps what it tells of what landed, and the per-topic-kind
metrics count it all. A write bounded in all (``within_s``) ends at its bound, retries included."""

from __future__ import annotations

import time
from typing import Any

import pytest
from aiokafka.errors import (
    KafkaConnectionError,
    NotEnoughReplicasError,
    NotLeaderForPartitionError,
    RecordTooLargeError,
    TopicAuthorizationFailedError,
)
from prometheus_client import CollectorRegistry

from control_plane.codecs import TargetState, TaskCommit, encode_config
from control_plane.composition import build_kafka_writes
from control_plane.metrics import Metrics
from control_plane.settings import load_settings
from control_plane.storage.config_writer import ConfigWriteFailed, ConfigWriter
from control_plane.storage.errors import AttemptTimeout
from control_plane.storage.kafka_writes import TopicKind
from control_plane.storage.offsets_writer import OffsetsWriteFailed, OffsetsWriter
from tests.support.scripted_producer import CountingWritesObserver, Gate, ScriptedProducer, make_writes

TOPIC = "connect-status"  # the scripted producer's one topic
STOP = (TaskCommit("c", 0), TargetState.of("c", "STOPPED"))
COMMIT_KEY, TARGET_KEY = encode_config(STOP[0])[0], encode_config(STOP[1])[0]
O1, O2, O3 = b'["c",{"p":1}]', b'["c",{"p":2}]', b'["c",{"p":3}]'


def config_writer(producer: ScriptedProducer, observer: CountingWritesObserver, **retry: Any) -> ConfigWriter:
    return ConfigWriter(TOPIC, lambda: producer, 1.0, make_writes(observer=observer, **retry))


def offsets_writer(producer: ScriptedProducer, observer: CountingWritesObserver, **retry: Any) -> OffsetsWriter:
    return OffsetsWriter(lambda: producer, 1.0, make_writes(observer=observer, **retry))


# -- config writes: one ordered batch


async def test_a_config_record_that_failed_with_a_retriable_error_is_retried_with_backoff_before_the_next() -> None:
    producer, observer = ScriptedProducer(), CountingWritesObserver()
    producer.script(COMMIT_KEY, KafkaConnectionError(), NotLeaderForPartitionError(), None)
    writer = config_writer(producer, observer, initial_ms=20, max_ms=1000, multiplier=2.0)
    await writer.write(STOP)
    assert [key for key, _, _ in producer.attempts] == [COMMIT_KEY, COMMIT_KEY, COMMIT_KEY, TARGET_KEY]
    times = [at for _, _, at in producer.attempts]
    assert times[1] - times[0] >= 0.020 and times[2] - times[1] >= 0.040  # the proposal's backoff, no jitter
    assert [key for key, _ in producer.written] == [COMMIT_KEY, TARGET_KEY]  # in order
    assert observer.counts == {("attempt", "config"): 4, ("retry", "config"): 2, ("acknowledged", "config"): 2}
    assert len(observer.latencies) == 4


async def test_a_config_record_that_failed_with_an_error_that_is_not_retriable_fails_at_once() -> None:
    producer, observer = ScriptedProducer(), CountingWritesObserver()
    producer.script(TARGET_KEY, TopicAuthorizationFailedError())
    writer = config_writer(producer, observer)
    with pytest.raises(ConfigWriteFailed) as caught:
        await writer.write(STOP)
    assert [key for key, _, _ in producer.attempts] == [COMMIT_KEY, TARGET_KEY]  # no retry
    assert caught.value.written == (STOP[0],) and caught.value.failed == STOP[1]  # what landed
    assert caught.value.cause.startswith("TopicAuthorizationFailedError")
    assert observer.counts == {("attempt", "config"): 2, ("acknowledged", "config"): 1, ("failure", "config"): 1}


async def test_a_config_record_whose_retries_run_out_fails_and_the_next_is_not_sent() -> None:
    producer, observer = ScriptedProducer(), CountingWritesObserver()
    producer.script(COMMIT_KEY, *[KafkaConnectionError()] * 3)
    writer = config_writer(producer, observer, max_retries=2)
    with pytest.raises(ConfigWriteFailed) as caught:
        await writer.write(STOP)
    assert [key for key, _, _ in producer.attempts] == [COMMIT_KEY] * 3  # the first attempt and 2 retries
    assert caught.value.written == () and caught.value.failed == STOP[0]
    assert caught.value.cause.startswith("KafkaConnectionError")
    assert observer.counts == {("attempt", "config"): 3, ("retry", "config"): 2, ("failure", "config"): 1}


# -- offsets writes: records sent together, what was written told


async def test_offsets_records_that_failed_with_a_retriable_error_are_retried_together_with_backoff() -> None:
    producer, observer = ScriptedProducer(), CountingWritesObserver()
    producer.script(O1, NotLeaderForPartitionError(), None)
    producer.script(O2, KafkaConnectionError(), KafkaConnectionError(), None)
    await offsets_writer(producer, observer, initial_ms=20, max_ms=1000, multiplier=2.0).write(
        TOPIC, [(O1, b"{}"), (O2, b"{}"), (O3, None)]
    )
    assert sorted(key for key, _ in producer.written) == [O1, O2, O3]
    assert [key for key, _, _ in producer.attempts] == [O1, O2, O3, O1, O2, O2]  # rounds of the due records
    times = [at for key, _, at in producer.attempts if key == O2]
    assert times[1] - times[0] >= 0.020 and times[2] - times[1] >= 0.040
    assert observer.counts == {("attempt", "offsets"): 6, ("retry", "offsets"): 3, ("acknowledged", "offsets"): 3}
    assert producer.started and producer.stopped


async def test_an_offsets_record_that_failed_with_an_error_that_is_not_retriable_fails_at_once() -> None:
    producer, observer = ScriptedProducer(), CountingWritesObserver()
    producer.script(O1, RecordTooLargeError())
    producer.script(O2, KafkaConnectionError(), None)
    with pytest.raises(OffsetsWriteFailed) as caught:
        await offsets_writer(producer, observer).write(TOPIC, [(O1, b"{}"), (O2, b"{}"), (O3, b"{}")])
    assert [key for key, _, _ in producer.attempts] == [O1, O2, O3, O2]  # O1 not again; O2 retried
    assert caught.value.failed == (O1,) and sorted(caught.value.written) == [O2, O3]
    assert caught.value.cause.startswith("RecordTooLargeError")
    assert observer.counts == {
        ("attempt", "offsets"): 4,
        ("retry", "offsets"): 1,
        ("acknowledged", "offsets"): 2,
        ("failure", "offsets"): 1,
    }


async def test_offsets_records_whose_retries_run_out_are_told_as_not_written() -> None:
    producer, observer = ScriptedProducer(), CountingWritesObserver()
    producer.script(O2, *[KafkaConnectionError()] * 5)
    with pytest.raises(OffsetsWriteFailed) as caught:
        await offsets_writer(producer, observer, max_retries=2).write(TOPIC, [(O1, b"{}"), (O2, b"{}")])
    assert [key for key, _, _ in producer.attempts] == [O1, O2, O2, O2]
    assert caught.value.written == (O1,) and caught.value.failed == (O2,)
    assert observer.counts[("failure", "offsets")] == 1 and observer.counts[("retry", "offsets")] == 2


# -- one path, its metrics, and what it says of itself


async def test_the_write_path_reports_per_topic_kind_on_the_metrics_endpoint() -> None:
    metrics = Metrics()
    settings = load_settings(status_storage_retry_initial_backoff_ms=1, status_storage_retry_max_backoff_ms=2)
    writes = build_kafka_writes(settings, metrics)
    producer = ScriptedProducer()
    producer.script(COMMIT_KEY, KafkaConnectionError(), None)
    await ConfigWriter(TOPIC, lambda: producer, 1.0, writes).write(STOP)
    producer.script(O1, TopicAuthorizationFailedError())
    with pytest.raises(OffsetsWriteFailed):
        await OffsetsWriter(lambda: producer, 1.0, writes).write(TOPIC, [(O1, b"{}")])
    registry: CollectorRegistry = metrics.registry

    def value(name: str, kind: str) -> float | None:
        return registry.get_sample_value(name, {"topic_kind": kind})

    assert value("kafka_write_attempts_total", "config") == 3
    assert value("kafka_write_retries_total", "config") == 1
    assert value("kafka_write_acknowledged_total", "config") == 2
    assert value("kafka_write_failures_total", "config") == 0
    assert value("kafka_write_attempt_duration_seconds_count", "config") == 3
    assert value("kafka_write_attempts_total", "offsets") == 1
    assert value("kafka_write_failures_total", "offsets") == 1
    assert value("kafka_write_attempts_total", "audit") == 0  # shown before the first write
    described = writes.describe()
    assert described["writes"] == [TopicKind.CONFIG, TopicKind.OFFSETS]
    assert described["retry"] == {
        "max_retries": 5,
        "initial_backoff_ms": 1.0,
        "max_backoff_ms": 2.0,
        "backoff_multiplier": 2.0,
        "jitter_factor": 0.25,
    }
    assert described["attempt_timeout_ms"] == {"config": 1000, "offsets": 1000}


# -- a write bounded in all (the sidecars' topic)


async def test_a_write_bounded_in_all_ends_at_its_bound_with_the_brokers_last_error() -> None:
    """Every attempt refused with a retriable error: without a bound the proposal's retries run (here 50 of
    them); with one, no retry starts that would end past it, and the broker's error is what is raised."""
    producer, observer = ScriptedProducer(default=NotEnoughReplicasError()), CountingWritesObserver()
    writes = make_writes(observer=observer, max_retries=50, initial_ms=100, max_ms=100, multiplier=1.0)
    started = time.monotonic()
    with pytest.raises(NotEnoughReplicasError):
        await writes.write(TopicKind.SIDECARS, producer, TOPIC, (b"k", b"v"), 30.0, within_s=0.35)
    assert time.monotonic() - started < 0.5
    assert 2 <= len(producer.attempts) <= 4, producer.attempts  # 0, 0.1, 0.2, 0.3 s: not 51
    assert observer.counts[("failure", "sidecars")] == 1


async def test_an_attempt_that_hangs_is_cut_at_the_whole_writes_bound() -> None:
    """A broker that takes the record and never answers (stalled): the attempt's own bound (30 s here) is
    cut at the write's."""
    producer = ScriptedProducer(default=Gate())
    started = time.monotonic()
    with pytest.raises(AttemptTimeout):
        await make_writes(max_retries=5).write(TopicKind.SIDECARS, producer, TOPIC, (b"k", b"v"), 30.0, within_s=0.2)
    assert time.monotonic() - started < 0.5
