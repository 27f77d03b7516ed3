"""KIP-875 done by the sidecar (stop, source and sink offsets) on real domain objects over fakes of
Kafka: a record producer whose records a fake view reads back, and in-memory consumer groups. Writes
that fail half-way are made to fail here at a chosen record."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from control_plane.codecs import (
    ConfigRecord,
    ConnectorConfig,
    ConnectorStatus,
    TargetState,
    TaskCommit,
    TaskStatus,
    Tombstone,
    decode_config,
    encode_config,
)
from control_plane.codecs.config import ConfigKey, ConfigKind
from control_plane.codecs.status import StatusKey, StatusKind
from control_plane.domain.errors import BadRequestError, ConflictError, NotFoundError, OperationFailed
from control_plane.domain.offsets.messages import framework_managed, not_stopped, sink_tasks_running
from control_plane.domain.offsets.request import SinkOffsetsRefused, parse_alter_request
from control_plane.rules.config_providers import FILE, ConfigProviders
from control_plane.settings import SettingsError, load_settings
from control_plane.upstream import REQUEST_DEADLINE
from control_plane.view import ClusterView
from tests.support.fakes import CONFIG, OFFSETS, OWN, Kafka


@pytest.fixture
def kafka() -> Kafka:
    return Kafka()


async def test_stop_writes_the_two_field_target_state_then_the_empty_task_set(kafka: Kafka) -> None:
    kafka.connector("c")
    await kafka.stopper.stop("c")
    assert kafka.written(CONFIG) == [
        (b"target-state-c", b'{"state":"PAUSED","state.v2":"STOPPED"}'),
        (b"commit-c", b'{"tasks":0}'),
    ]
    assert (kafka.view.state.target_state("c"), kafka.view.state.task_counts["c"]) == ("STOPPED", 0)
    await kafka.stopper.stop("c")  # stopping a stopped connector: the same records again
    assert len(kafka.written(CONFIG)) == 4
    with pytest.raises(NotFoundError) as caught:
        await kafka.stopper.stop("nope")
    assert caught.value.message == "Unknown connector nope"


async def test_a_stop_failing_at_its_first_write_wrote_nothing(kafka: Kafka) -> None:
    kafka.connector("c")
    kafka.failing = lambda key: ConnectionError("broker gone")
    with pytest.raises(OperationFailed) as caught:
        await kafka.stopper.stop("c")
    assert caught.value.message == (
        "Failed to stop connector c: writing its STOPPED target state (target-state-c) to the config topic "
        "failed, nothing was written: ConnectionError: broker gone"
    )
    assert kafka.written(CONFIG) == []


async def test_a_stop_failing_half_way_says_so_and_completes_when_repeated(kafka: Kafka) -> None:
    kafka.connector("c")
    kafka.failing = lambda key: ConnectionError("broker gone") if key.startswith(b"commit-") else None
    with pytest.raises(OperationFailed) as caught:
        await kafka.stopper.stop("c")
    assert caught.value.message == (
        "Failed to stop connector c: its STOPPED target state (target-state-c) was written, but writing its empty "
        "set of tasks (commit-c) failed: ConnectionError: broker gone. The connector is not fully STOPPED: it is "
        "paused and keeps its task configs, so its offsets cannot be altered or reset. Repeat the request to stop it."
    )
    await kafka.view.read_to_end(CONFIG, 1)
    assert (kafka.view.state.target_state("c"), kafka.view.state.task_counts["c"]) == ("STOPPED", 1)
    kafka.failing = lambda key: None
    await kafka.stopper.stop("c")
    assert (kafka.view.state.target_state("c"), kafka.view.state.task_counts["c"]) == ("STOPPED", 0)


def test_an_emulated_stopped_connector_shows_stopped_without_tasks_even_if_it_had_failed() -> None:
    view = ClusterView()
    view.apply_config(ConnectorConfig("c", {"connector.class": "X"}))
    view.apply_status(ConnectorStatus("c", "FAILED", "boom", "w1", 3))
    view.apply_status(TaskStatus("c", 0, "PAUSED", None, "w1", 3))
    for record in decode_config(b"target-state-c", b'{"state":"PAUSED","state.v2":"STOPPED"}'), TaskCommit("c", 0):
        view.apply_config(record)
    shown = view.connector_state("c", stopped_overlay=True)
    assert shown is not None and (shown.connector.state, shown.connector.trace, shown.tasks) == ("STOPPED", None, ())
    assert view.task_state("c", 0, stopped_overlay=True) is None
    plain = view.connector_state("c")  # a 3.5+ worker writes STOPPED itself: no overlay
    assert plain is not None and plain.connector.state == "FAILED" and len(plain.tasks) == 1


def test_an_emulated_stop_not_finished_shows_the_tasks_the_worker_still_has() -> None:
    """The target state written, the empty task set not (yet): STOPPED, with the task the old worker paused,
    as 3.5+ shows a STOPPED connector's tasks until they are gone."""
    view = ClusterView()
    view.apply_config(ConnectorConfig("c", {"connector.class": "X"}))
    view.apply_config(TaskCommit("c", 1))
    view.apply_status(ConnectorStatus("c", "PAUSED", None, "w1", 3))
    view.apply_status(TaskStatus("c", 0, "PAUSED", None, "w1", 3))
    view.apply_config(decode_config(b"target-state-c", b'{"state":"PAUSED","state.v2":"STOPPED"}'))
    shown = view.connector_state("c", stopped_overlay=True)
    assert shown is not None and shown.connector.state == "STOPPED"
    assert [(task, entry.state) for task, entry in shown.tasks] == [(0, "PAUSED")]
    assert view.task_state("c", 0, stopped_overlay=True) is not None
    view.apply_config(TaskCommit("c", 0))  # finished
    shown = view.connector_state("c", stopped_overlay=True)
    assert shown is not None and (shown.connector.state, shown.tasks) == ("STOPPED", ())
    assert view.task_state("c", 0, stopped_overlay=True) is None


async def stopped_source(kafka: Kafka, **config: str) -> None:
    kafka.connector("src", **config)
    await kafka.stopper.stop("src")


async def test_source_alter_refused_unless_stopped_and_for_unknown_connectors(kafka: Kafka) -> None:
    kafka.connector("src")
    entries = parse_alter_request(b'{"offsets":[{"partition":{"f":"x"},"offset":{"p":1}}]}')
    with pytest.raises(BadRequestError) as refused:
        await kafka.offsets.alter("src", entries)
    assert refused.value.message == not_stopped("src")
    with pytest.raises(BadRequestError):
        await kafka.offsets.reset("src")
    with pytest.raises(NotFoundError) as missing:
        await kafka.offsets.alter("nope", entries)
    assert missing.value.message == "Connector nope not found"
    assert kafka.written(OFFSETS) == []


async def test_source_alter_reuses_the_key_bytes_a_partition_has_and_keys_new_ones_as_the_worker(kafka: Kafka) -> None:
    await stopped_source(kafka)
    existing = kafka.offset(OFFSETS, "src", {"z": 1, "a": 2}, {"pos": 5})  # as a task wrote it
    entries = parse_alter_request(
        b'{"offsets":[{"partition":{"a":2,"z":1},"offset":{"pos":0}},{"partition":{"zeta":1,"b":2},"offset":{"pos":7}}]}'
    )
    assert await kafka.offsets.alter("src", entries) == framework_managed("altered")
    assert kafka.written(OFFSETS)[1:] == [
        (existing, b'{"pos":0}'),
        (b'["src",{"zeta":1,"b":2}]', b'{"pos":7}'),  # HashMap order: zeta before b
    ]
    read = (await kafka.offsets.read("src")).offsets
    assert [(dict(o.partition), o.offset) for o in read] == [
        ({"a": 2, "z": 1}, {"pos": 0}),
        ({"zeta": 1, "b": 2}, {"pos": 7}),
    ]


async def test_a_source_entry_without_a_partition_is_written_under_a_null_partition_and_never_listed(
    kafka: Kafka,
) -> None:
    """Worker.modifySourceConnectorOffsets hands a null partition to OffsetStorageWriter, which keys it
    ``[name, null]``; OffsetUtils.processPartitionKey never lists such a key, so no read or reset sees it."""
    await stopped_source(kafka)
    kafka.offset(OFFSETS, "src", {"f": "x"}, {"pos": 5})
    before = len(kafka.written(OFFSETS))
    assert await kafka.offsets.alter("src", parse_alter_request(b'{"offsets":[{}]}')) == framework_managed("altered")
    entries = parse_alter_request(b'{"offsets":[{"partition":null,"offset":{"pos":1}}]}')
    assert await kafka.offsets.alter("src", entries) == framework_managed("altered")
    assert kafka.written(OFFSETS)[before:] == [(b'["src",null]', None), (b'["src",null]', b'{"pos":1}')]
    assert [dict(o.partition) for o in (await kafka.offsets.read("src")).offsets] == [{"f": "x"}]
    assert await kafka.offsets.reset("src") == framework_managed("reset")
    assert kafka.written(OFFSETS)[before + 2 :] == [(b'["src",{"f":"x"}]', None)]


async def test_source_reset_tombstones_every_known_key_and_is_idempotent(kafka: Kafka) -> None:
    await stopped_source(kafka)
    first = kafka.offset(OFFSETS, "src", {"a": 1, "b": 2}, {"pos": 5})
    second = kafka.offset(OFFSETS, "src", {"b": 2, "a": 1}, {"pos": 6})  # the same partition, other bytes
    kafka.offset(OFFSETS, "other", {"a": 1}, {"pos": 1})
    assert await kafka.offsets.reset("src") == framework_managed("reset")
    assert sorted(kafka.written(OFFSETS)[3:]) == sorted([(first, None), (second, None)])
    assert (await kafka.offsets.read("src")).offsets == ()
    written = len(kafka.log)
    assert await kafka.offsets.reset("src") == framework_managed("reset")
    assert len(kafka.log) == written


async def test_a_source_alter_failing_half_way_says_what_was_written(kafka: Kafka) -> None:
    await stopped_source(kafka)
    kafka.failing = lambda key: ConnectionError("broker gone") if b'"b"' in key else None
    entries = parse_alter_request(
        b'{"offsets":[{"partition":{"a":1},"offset":{"p":1}},{"partition":{"b":1},"offset":{"p":2}}]}'
    )
    with pytest.raises(OperationFailed) as caught:
        await kafka.offsets.alter("src", entries)
    assert caught.value.message.startswith(
        "Failed to modify offsets for source connector src: writing to the offsets topic offsets failed: "
        "ConnectionError: broker gone. "
        "Written: 1 of 2 records to offsets; the offsets are partly modified. Repeat the request"
    ), caught.value.message
    kafka.failing = lambda key: ConnectionError("broker gone")
    with pytest.raises(OperationFailed) as nothing:
        await kafka.offsets.alter("src", entries)
    assert nothing.value.message == (
        "Failed to modify offsets for source connector src: writing to the offsets topic offsets failed, "
        "nothing was written: ConnectionError: broker gone"
    )
    kafka.failing = lambda key: None
    assert await kafka.offsets.alter("src", entries) == framework_managed("altered")


async def test_a_connectors_own_offsets_topic_gets_every_record_and_the_workers_topic_too(kafka: Kafka) -> None:
    await stopped_source(kafka, **{"offsets.storage.topic": OWN})
    kafka.groups.topics[OWN] = 5
    key = kafka.offset(OWN, "src", {"f": "x"}, {"p": 9})
    gone = kafka.offset(OFFSETS, "src", {"f": "old"}, {"p": 1})
    entries = parse_alter_request(
        b'{"offsets":[{"partition":{"f":"x"},"offset":{"p":0}},{"partition":{"f":"old"},"offset":null}]}'
    )
    await kafka.offsets.alter("src", entries)
    # tombstones to the worker's topic first, then everything to the connector's, then the values
    assert [(t, k, v) for t, k, v in kafka.log[-4:]] == [
        (OFFSETS, gone, None),
        (OWN, key, b'{"p":0}'),
        (OWN, gone, None),
        (OFFSETS, key, b'{"p":0}'),
    ]
    assert [(dict(o.partition), o.offset) for o in (await kafka.offsets.read("src")).offsets] == [
        ({"f": "x"}, {"p": 0})
    ]
    await kafka.offsets.reset("src")
    assert (await kafka.offsets.read("src")).offsets == ()


async def test_before_3_3_a_connectors_own_offsets_topic_is_ignored_as_the_worker_ignores_it(kafka: Kafka) -> None:
    kafka.offsets = kafka.connector_offsets(own_topics=False)  # a 2.8 worker: no KIP-618
    await stopped_source(kafka, **{"offsets.storage.topic": OWN})
    kafka.groups.topics[OWN] = 5
    kafka.offset(OWN, "src", {"f": "x"}, {"p": 9})  # not where the worker looks
    key = kafka.offset(OFFSETS, "src", {"f": "x"}, {"p": 3})
    assert [o.offset for o in (await kafka.offsets.read("src")).offsets] == [{"p": 3}]
    before = len(kafka.log)
    await kafka.offsets.alter("src", parse_alter_request(b'{"offsets":[{"partition":{"f":"x"},"offset":{"p":0}}]}'))
    assert [(t, k, v) for t, k, v in kafka.log[before:]] == [(OFFSETS, key, b'{"p":0}')]


async def test_sink_alter_commits_and_deletes_reset_deletes_the_group(kafka: Kafka) -> None:
    kafka.connector("snk", topics="t")
    await kafka.stopper.stop("snk")
    kafka.groups.groups["connect-snk"] = {("t", 0): 5, ("t", 1): 6}
    entries = parse_alter_request(
        b'{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":1}},'
        b'{"partition":{"kafka_topic":"t","kafka_partition":"1"},"offset":null}]}'
    )
    assert await kafka.offsets.alter("snk", entries) == framework_managed("altered")
    assert kafka.groups.groups["connect-snk"] == {("t", 0): 1}
    read = (await kafka.offsets.read("snk")).offsets
    assert [(dict(o.partition), o.offset) for o in read] == [
        ({"kafka_partition": 0, "kafka_topic": "t"}, {"kafka_offset": 1})
    ]
    assert list(read[0].partition) == ["kafka_partition", "kafka_topic"]  # as 4.3.1 answers
    assert await kafka.offsets.reset("snk") == framework_managed("reset")
    assert "connect-snk" not in kafka.groups.groups
    assert await kafka.offsets.reset("snk") == framework_managed("reset")  # no group: success


async def test_sink_group_overrides_and_refusals(kafka: Kafka) -> None:
    kafka.connector("snk", topics="t", **{"consumer.override.group.id": "mine"})
    await kafka.stopper.stop("snk")
    body = b'{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":3}}]}'
    await kafka.offsets.alter("snk", parse_alter_request(body))
    assert kafka.groups.groups == {"mine": {("t", 0): 3}}
    kafka.groups.members["mine"] = 1
    for action in (kafka.offsets.alter("snk", parse_alter_request(body)), kafka.offsets.reset("snk")):
        with pytest.raises(OperationFailed) as busy:
            await action
        assert busy.value.message in (sink_tasks_running("snk", "alter"), sink_tasks_running("snk", "reset"))
    kafka.groups.members.clear()
    bad = b'{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":2},"offset":{"kafka_offset":3}}]}'
    with pytest.raises(SinkOffsetsRefused) as caught:  # the offsets feature names the connector (500)
        await kafka.offsets.alter("snk", parse_alter_request(bad))
    assert caught.value.step == "alter" and kafka.groups.groups == {"mine": {("t", 0): 3}}
    kafka.groups.down = "KafkaConnectionError: Unable to bootstrap"
    with pytest.raises(OperationFailed) as down:
        await kafka.offsets.reset("snk")
    assert down.value.message.startswith("Failed to reset consumer group offsets for sink connector snk: ")
    assert "KafkaConnectionError: Unable to bootstrap" in down.value.message


async def test_the_worker_group_id_setting_names_the_sink_group(kafka: Kafka) -> None:
    offsets = kafka.connector_offsets(worker_group="worker-wide")
    kafka.connector("snk", topics="t")
    kafka.groups.groups["worker-wide"] = {("t", 1): 4}
    assert [o.offset for o in (await offsets.read("snk")).offsets] == [{"kafka_offset": 4}]


def test_emulation_settings_have_defaults_and_refuse_bad_values_naming_the_key() -> None:
    settings = load_settings(connect_urls="http://w1:8083")
    assert (settings.emulation_request_timeout_ms, settings.emulation_read_back_timeout_s) == (30000, 30.0)
    for field in ("emulation_request_timeout_ms", "emulation_read_back_timeout_s"):
        with pytest.raises(SettingsError) as caught:
            load_settings(connect_urls="http://w1:8083", **{field: 0})
        assert f"CONTROL_PLANE_{field.upper()}" in str(caught.value)


async def test_an_alter_waits_until_the_tasks_are_down_and_their_worker_could_commit_last(kafka: Kafka) -> None:
    kafka.connector("c")
    kafka.view.state.apply_status(TaskStatus("c", 0, "RUNNING", None, "w1", 3))
    kafka.view.worker_stops_tasks = False
    await kafka.stopper.stop("c")  # answers at once, as a native worker's stop does
    entries = parse_alter_request(b'{"offsets":[{"partition":{"f":"x"},"offset":{"p":1}}]}')
    with pytest.raises(ConflictError) as refused:  # the task never stops: refused, nothing written
        await kafka.offsets.alter("c", entries)
    assert refused.value.message == (
        "The tasks of connector c have not stopped within 1s (still active in the status topic: task 0), so their "
        "last offset commits could still overwrite new offsets. Nothing was written; retry the request once they "
        "have stopped."
    )
    assert kafka.written(OFFSETS) == [] and kafka.slept == []
    # the worker's leader deletes the task's status after the rebalance, maybe before the task stopped: the
    # alter waits for the worker's graceful shutdown timeout from then (the task commits within it)
    kafka.view.state.apply_status(Tombstone(StatusKey(StatusKind.TASK, "c", task=0)), timestamp_ms=999_000)
    assert await kafka.offsets.alter("c", entries) == framework_managed("altered")
    assert kafka.slept == [4.0]  # deleted at 999 s, now 1000 s, graceful 5 s
    # long after: no wait
    assert await kafka.offsets.reset("c") == framework_managed("reset")
    assert kafka.slept == [4.0]


async def test_an_alter_waits_for_the_tasks_within_the_request_budget(kafka: Kafka) -> None:
    kafka.connector("c")
    kafka.view.state.apply_status(TaskStatus("c", 0, "RUNNING", None, "w1", 3))
    kafka.view.worker_stops_tasks = False
    await kafka.stopper.stop("c")
    entries = parse_alter_request(b'{"offsets":[{"partition":{"f":"x"},"offset":{"p":1}}]}')
    token = REQUEST_DEADLINE.set(asyncio.get_running_loop().time() + 0.2)
    try:
        started = time.monotonic()
        with pytest.raises(ConflictError) as refused:  # the status wait ends with the budget, not its own 1 s
            await kafka.offsets.alter("c", entries)
        assert time.monotonic() - started < 0.9
        assert "have not stopped within 0.2s" in refused.value.message
        # the graceful timeout the worker keeps would outlast the budget: refused at once, nothing written
        kafka.view.state.apply_status(Tombstone(StatusKey(StatusKind.TASK, "c", task=0)), timestamp_ms=999_000)
        with pytest.raises(ConflictError) as refused:
            await kafka.offsets.alter("c", entries)
        assert refused.value.message.startswith("The tasks of connector c may still commit offsets for 4.0s")
        assert kafka.written(OFFSETS) == [] and kafka.slept == []
    finally:
        REQUEST_DEADLINE.reset(token)
    assert await kafka.offsets.alter("c", entries) == framework_managed("altered")  # no budget: the wait
    assert kafka.slept == [4.0]


async def test_failed_and_unassigned_tasks_do_not_hold_an_alter(kafka: Kafka) -> None:
    kafka.connector("c")
    kafka.view.state.apply_status(TaskStatus("c", 0, "FAILED", "trace", "w1", 3))
    kafka.view.state.apply_status(TaskStatus("c", 1, "UNASSIGNED", None, "w1", 3))
    kafka.view.worker_stops_tasks = False
    await kafka.stopper.stop("c")
    entries = parse_alter_request(b'{"offsets":[{"partition":{"f":"x"},"offset":{"p":1}}]}')
    assert await kafka.offsets.alter("c", entries) == framework_managed("altered")
    assert kafka.slept == []


@pytest.mark.parametrize(
    ("config", "worker", "kind"),
    [
        pytest.param(
            {"producer.override.bootstrap.servers": "other:9092", "offsets.storage.topic": OWN},
            {},
            "source",
            id="source-own-topic-override",
        ),
        pytest.param(
            {"offsets.storage.topic": OWN}, {"producer_bootstrap": "other:9092"}, "source", id="source-worker-prefix"
        ),
        pytest.param(
            {"producer.override.bootstrap.servers": "other:9092"},
            {"exactly_once_source_support": "enabled"},
            "source",
            id="source-exactly-once",
        ),
        pytest.param({"topics": "t", "consumer.override.bootstrap.servers": "o:1"}, {}, "sink", id="sink-override"),
        pytest.param({"topics": "t"}, {"consumer_bootstrap": "o:1,o:2"}, "sink", id="sink-worker-consumer-prefix"),
    ],
)
async def test_offsets_on_another_kafka_cluster_are_refused_naming_the_reason(
    kafka: Kafka, config: dict[str, str], worker: dict[str, str], kind: str
) -> None:
    """Where the worker keeps them on its client's cluster (a sink's group; a source's connector-specific
    store), and that cluster's id is not the worker's."""
    kafka.groups.clusters = {"other:9092": "elsewhere", "o:1": "elsewhere", "o:1,o:2": "elsewhere"}
    offsets = kafka.connector_offsets(**worker)
    kafka.connector("c", **config)
    await kafka.stopper.stop("c")
    entries = parse_alter_request(b'{"offsets":[{"partition":{"f":"x"},"offset":{"p":1}}]}')
    for action in (offsets.read, partial(offsets.alter, entries=entries), offsets.reset):
        with pytest.raises(BadRequestError) as refused:
            await action("c")
        assert refused.value.message.startswith(
            f"The sidecar cannot read or modify the offsets of {kind} connector c on this Connect version: its "
        )
        assert "uses another Kafka cluster (" in refused.value.message
        assert "(cluster elsewhere, the worker's is own)" in refused.value.message
    assert kafka.written(OFFSETS) == []


@pytest.mark.parametrize(
    ("config", "own_topics"),
    [
        pytest.param({}, True, id="no-own-topic"),  # Worker.offsetStoreForRegularSourceConnector: worker's store
        pytest.param({"offsets.storage.topic": OWN}, False, id="before-3.3"),  # 2.8: always the worker's store
    ],
)
async def test_a_producer_on_another_cluster_keeps_its_offsets_in_the_workers_topic(
    kafka: Kafka, config: dict[str, str], own_topics: bool
) -> None:
    kafka.offsets = kafka.connector_offsets(own_topics=own_topics)
    await stopped_source(kafka, **{"producer.override.bootstrap.servers": "other:9092", **config})
    entries = parse_alter_request(b'{"offsets":[{"partition":{"f":"x"},"offset":{"p":1}}]}')
    assert await kafka.offsets.alter("src", entries) == framework_managed("altered")
    assert [p.offset for p in (await kafka.offsets.read("src")).offsets] == [{"p": 1}]
    assert kafka.groups.described == []  # no cluster needed describing
    assert kafka.written(OWN) == []


async def test_other_bootstrap_servers_of_the_same_cluster_id_are_the_workers_cluster(kafka: Kafka) -> None:
    """A connector-specific offsets topic through another address of the worker's brokers: read and written."""
    kafka.groups.clusters = {"127.0.0.1:9092": "own"}
    kafka.offsets = kafka.connector_offsets()
    kafka.log.append((OWN, b"seed", None))  # the topic exists
    kafka.groups.topics[OWN] = 1
    await stopped_source(
        kafka, **{"producer.override.bootstrap.servers": "127.0.0.1:9092", "offsets.storage.topic": OWN}
    )
    entries = parse_alter_request(b'{"offsets":[{"partition":{"f":"x"},"offset":{"p":1}}]}')
    assert await kafka.offsets.alter("src", entries) == framework_managed("altered")
    assert [p.offset for p in (await kafka.offsets.read("src")).offsets] == [{"p": 1}]
    assert [v for _, v in kafka.written(OWN)][-1] == b'{"p":1}'
    assert "127.0.0.1:9092" in kafka.groups.described


async def test_a_cluster_the_sidecar_cannot_describe_is_refused_saying_why(kafka: Kafka) -> None:
    await stopped_source(kafka, **{"producer.override.bootstrap.servers": "gone:1", "offsets.storage.topic": OWN})
    with pytest.raises(BadRequestError, match=r"could not tell whether .* \(no answer from Kafka\)"):
        await kafka.offsets.read("src")


async def test_a_sink_consuming_through_another_address_of_the_cluster_has_its_group_read(kafka: Kafka) -> None:
    kafka.groups.clusters = {"alias:9092": "own"}
    kafka.connector("k", topics="t", **{"consumer.override.bootstrap.servers": "alias:9092"})
    kafka.groups.groups["connect-k"] = {("t", 0): 5}
    assert [p.offset for p in (await kafka.offsets.read("k")).offsets] == [{"kafka_offset": 5}]


async def test_the_same_brokers_in_another_order_are_the_same_cluster(kafka: Kafka) -> None:
    offsets = kafka.connector_offsets(bootstrap="a:1,b:2", producer_bootstrap="B:2, a:1")
    kafka.connector("c")
    assert (await offsets.read("c")).offsets == ()


async def test_source_offsets_of_an_exactly_once_cluster_are_not_modified(kafka: Kafka) -> None:
    offsets = kafka.connector_offsets(exactly_once_source_support="enabled")
    kafka.connector("c")
    await kafka.stopper.stop("c")
    entries = parse_alter_request(b'{"offsets":[{"partition":{"f":"x"},"offset":{"p":1}}]}')
    for action in (offsets.alter("c", entries), offsets.reset("c")):
        with pytest.raises(BadRequestError, match=r"exactly\.once\.source\.support=enabled"):
            await action
    assert (await offsets.read("c")).offsets == ()  # reading is safe
    assert kafka.written(OFFSETS) == []
    prepared = kafka.connector_offsets(exactly_once_source_support="preparing")
    assert await prepared.alter("c", entries) == framework_managed("altered")


async def test_a_partition_under_two_key_encodings_shows_the_one_the_tasks_look_up_and_says_so(kafka: Kafka) -> None:
    await stopped_source(kafka)
    canonical = kafka.offset(OFFSETS, "src", {"zeta": 1, "b": 2}, {"pos": 7})  # HashMap order: as the worker writes
    spaced = b'["src", {"b": 2, "zeta": 1}]'
    kafka.log.append((OFFSETS, spaced, b'{"pos":99}'))  # written later, by hand
    read = await kafka.offsets.read("src")
    assert [o.offset for o in read.offsets] == [{"pos": 7}]
    ((duplicate),) = read.duplicates
    assert duplicate.topic == OFFSETS and duplicate.keys == (canonical, spaced)


def written_straight_to_the_config_topic(kafka: Kafka, *records: ConfigRecord | Tombstone[ConfigKey]) -> None:
    """What another client (a worker's own REST API, another sidecar) writes meanwhile."""
    for record in records:
        key, value = encode_config(record)
        kafka.log.append((CONFIG, key, value))


async def test_a_resume_while_an_alter_waits_for_the_tasks_is_seen_at_the_write(kafka: Kafka) -> None:
    """DistributedHerder.modifyConnectorOffsets checks STOPPED in the tick that writes: a resume that lands
    while the alter waits for the tasks' last commits is the alter's 400, not a 200 its tasks undo."""
    kafka.connector("c")
    kafka.view.state.apply_status(TaskStatus("c", 0, "RUNNING", None, "w1", 3))
    kafka.view.worker_stops_tasks = False
    await kafka.stopper.stop("c")
    kafka.view.state.apply_status(Tombstone(StatusKey(StatusKind.TASK, "c", task=0)), timestamp_ms=999_000)
    kafka.while_sleeping = lambda: written_straight_to_the_config_topic(kafka, TargetState.of("c", "STARTED"))
    entries = parse_alter_request(b'{"offsets":[{"partition":{"f":"x"},"offset":{"p":1}}]}')
    with pytest.raises(BadRequestError) as refused:
        await kafka.offsets.alter("c", entries)
    assert refused.value.message == not_stopped("c") and kafka.slept == [4.0]
    assert kafka.written(OFFSETS) == []


async def test_a_resume_before_the_tasks_stopped_ends_the_wait_with_the_400(kafka: Kafka) -> None:
    """A resume that lands before the alter sees its tasks down: the tasks run again and never stop, and
    the alter answers Connect's 400 at once, not a conflict after the whole wait."""
    kafka.connector("c")
    kafka.view.state.apply_status(TaskStatus("c", 0, "RUNNING", None, "w1", 3))
    kafka.view.worker_stops_tasks = False
    await kafka.stopper.stop("c")
    entries = parse_alter_request(b'{"offsets":[{"partition":{"f":"x"},"offset":{"p":1}}]}')
    waits = kafka.view.wait_for

    async def resumed_meanwhile(topic: str, condition: Callable[[ClusterView], bool], timeout_s: float) -> None:
        written_straight_to_the_config_topic(kafka, TargetState.of("c", "STARTED"))
        await waits(topic, condition, timeout_s)

    kafka.view.wait_for = resumed_meanwhile  # type: ignore[method-assign]
    with pytest.raises(BadRequestError) as refused:
        await kafka.offsets.alter("c", entries)
    assert refused.value.message == not_stopped("c") and kafka.slept == []
    assert kafka.written(OFFSETS) == []


async def test_a_delete_while_a_reset_waits_is_the_resets_404(kafka: Kafka) -> None:
    kafka.connector("c")
    kafka.view.worker_stops_tasks = False
    await kafka.stopper.stop("c")
    kafka.offset(OFFSETS, "c", {"f": "x"}, {"p": 1})
    kafka.view.state.apply_status(Tombstone(StatusKey(StatusKind.TASK, "c", task=0)), timestamp_ms=999_000)
    kafka.while_sleeping = lambda: written_straight_to_the_config_topic(
        kafka, Tombstone(ConfigKey(ConfigKind.CONNECTOR, "c")), Tombstone(ConfigKey(ConfigKind.TARGET_STATE, "c"))
    )
    with pytest.raises(NotFoundError) as missing:
        await kafka.offsets.reset("c")
    assert missing.value.message == "Connector c not found"
    assert [value for _, value in kafka.written(OFFSETS)] == [b'{"p":1}']


async def test_a_connector_whose_class_the_worker_cannot_load_gets_connects_500_after_the_state_check(
    kafka: Kafka,
) -> None:
    """Worker.connectorOffsets and modifyConnectorOffsets load the class first (Plugins.newConnector): neither
    source nor sink, never guessed. Alter and reset check the state before (the herder's checks)."""
    kafka.view.state.plugin_types = {"org.example.Sink": "sink", "org.example.Source": "source"}
    kafka.connector("c", topics="t")
    expected = (
        "Failed to find any class that implements Connector and which name matches X, available connectors are: "
        "org.example.Sink, org.example.Source"
    )
    with pytest.raises(OperationFailed) as failed:
        await kafka.offsets.read("c")
    assert failed.value.message == expected
    entries = parse_alter_request(b'{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":null}]}')
    with pytest.raises(BadRequestError) as refused:
        await kafka.offsets.alter("c", entries)
    assert refused.value.message == not_stopped("c")
    await kafka.stopper.stop("c")
    for attempt in (kafka.offsets.alter("c", entries), kafka.offsets.reset("c")):
        with pytest.raises(OperationFailed) as failed:
            await attempt
        assert failed.value.message == expected
    assert kafka.written(OFFSETS) == [] and kafka.groups.groups == {}


async def test_a_stop_raced_by_a_delete_leaves_no_target_state_behind(kafka: Kafka) -> None:
    """KafkaConfigBackingStore.removeConnectorConfig removes the target state with the config: a STOPPED
    written after the delete is removed again (a later create of the name would start STOPPED), and the
    stop answers as if the delete came first."""
    kafka.connector("c")

    def delete_lands_first(key: bytes) -> None:
        if key == b"target-state-c" and kafka.view.state.connector_config("c") is not None:
            written_straight_to_the_config_topic(
                kafka,
                Tombstone(ConfigKey(ConfigKind.CONNECTOR, "c")),
                Tombstone(ConfigKey(ConfigKind.TARGET_STATE, "c")),
            )

    kafka.failing = delete_lands_first
    with pytest.raises(NotFoundError) as missing:
        await kafka.stopper.stop("c")
    assert missing.value.message == "Unknown connector c"
    assert kafka.written(CONFIG)[-1] == (b"target-state-c", None)
    await kafka.view.read_to_end(CONFIG, 1)
    kafka.connector("c")  # created again: it starts as asked, not STOPPED
    assert kafka.view.state.target_state("c") == "STARTED"


async def test_task_configs_a_leader_writes_after_an_emulated_stop_are_replaced_by_none(kafka: Kafka) -> None:
    """A leader before 3.5 still writes the task configs of a reconfiguration it started before it read the
    stop; the stop writes the empty set again (its connector is paused there and generates no more)."""
    kafka.connector("c")
    late = [TaskCommit("c", 2)]
    read_to_end = kafka.view.read_to_end

    async def leader_writes_late_tasks(topic: str, timeout_s: float) -> None:
        if late and kafka.written(CONFIG)[-1:] == [(b"commit-c", b'{"tasks":0}')]:
            written_straight_to_the_config_topic(kafka, late.pop())  # after the stop's records, before its read
        await read_to_end(topic, timeout_s)

    kafka.view.read_to_end = leader_writes_late_tasks  # type: ignore[method-assign]
    await kafka.stopper.stop("c")
    assert not late, "the late task configs were not written"
    assert (kafka.view.state.target_state("c"), kafka.view.state.task_counts["c"]) == ("STOPPED", 0)
    assert kafka.written(CONFIG)[-1] == (b"commit-c", b'{"tasks":0}')


async def test_config_provider_references_are_resolved_before_the_rules_read_them(kafka: Kafka, tmp_path: Path) -> None:
    """The group and the bootstrap servers the worker's clients get, not the references' text."""
    (tmp_path / "k.properties").write_text("group=resolved-group\nservers=alias:9092\n")
    kafka.groups.clusters = {"alias:9092": "own"}
    kafka.offsets = kafka.connector_offsets(
        config_providers=ConfigProviders.from_worker({"config.providers": "file", "config.providers.file.class": FILE})
    )
    kafka.connector(
        "k",
        topics="t",
        **{
            "consumer.override.group.id": f"${{file:{tmp_path}/k.properties:group}}",
            "consumer.override.bootstrap.servers": f"${{file:{tmp_path}/k.properties:servers}}",
        },
    )
    kafka.groups.groups["resolved-group"] = {("t", 0): 5}
    assert [p.offset for p in (await kafka.offsets.read("k")).offsets] == [{"kafka_offset": 5}]


async def test_a_reference_the_sidecar_cannot_resolve_is_refused_naming_it(kafka: Kafka) -> None:
    kafka.offsets = kafka.connector_offsets(
        config_providers=ConfigProviders.from_worker(
            {"config.providers": "vault", "config.providers.vault.class": "com.example.Vault"}
        )
    )
    kafka.connector("k", topics="t", **{"consumer.override.group.id": "${vault:kv/connect:group}"})
    with pytest.raises(BadRequestError) as refused:
        await kafka.offsets.read("k")
    assert "consumer.override.group.id: ${vault:kv/connect:group}: the worker's config provider vault" in (
        refused.value.message
    )
