"""The herder built on fakes of its ports: where each answer comes from (view, stale view, worker), who
does a feature (the workers or the sidecar) on an old and a new worker, and what a refusal carries."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TypeVar

import pytest

from control_plane.codecs import (
    ConnectorConfig,
    ConnectorStatus,
    TargetState,
    TaskCommit,
    TaskConfig,
    TaskStatus,
    Tombstone,
    encode_config,
)
from control_plane.codecs.status import StatusKey, StatusKind, TopicStatus
from control_plane.domain.capabilities import Feature
from control_plane.domain.errors import NotFoundError, OperationFailed
from control_plane.domain.offsets.stop import RESTART_ATTEMPTS
from control_plane.domain.outcomes import Accepted, Answer, Done, Forward, Refusal, Source
from control_plane.metrics import Metrics
from control_plane.modes import FeatureMode
from control_plane.upstream import UpstreamRequest
from control_plane.view import ClusterView
from tests.support.fake_cluster import FakeCluster
from tests.support.fakes import (
    CONFIG,
    OFFSETS,
)
from tests.support.metrics_text import samples

T = TypeVar("T")


def view_answer(outcome: Answer[T] | Refusal | Forward[T]) -> T:
    assert isinstance(outcome, Answer), outcome
    assert outcome.provenance.source is Source.VIEW and not outcome.provenance.stale
    return outcome.value


@pytest.mark.parametrize("version", ["3.4.1", "4.3.1"])
async def test_reads_come_from_the_ready_view_on_every_version(version: str) -> None:
    cluster = FakeCluster(version)
    await cluster.detect()
    cluster.running("c")
    state = view_answer(await cluster.herder.reads.connector_status("c"))
    assert state.connector.state == "RUNNING" and state.type == "source"
    assert view_answer(await cluster.herder.reads.connector_config("c")) == {
        "connector.class": "FileStreamSource",
        "name": "c",
    }
    listing = view_answer(await cluster.herder.reads.list_connectors([]))
    assert listing.names == ("c",) and listing.expanded is None


async def test_a_listing_is_built_once_per_change_of_the_view() -> None:
    cluster = FakeCluster("4.3.1")
    await cluster.detect()
    cluster.running("a")
    first = view_answer(await cluster.herder.reads.list_connectors(["status"]))
    assert view_answer(await cluster.herder.reads.list_connectors(["status"])) is first  # nothing changed: the same one
    assert view_answer(await cluster.herder.reads.list_connectors(["info"])) is not first  # another expansion
    cluster.kafka.view.state.apply_status(ConnectorStatus("a", "PAUSED", None, "w1", 2))
    paused = view_answer(await cluster.herder.reads.list_connectors(["status"]))
    assert paused is not first and paused.expanded is not None
    assert paused.expanded["a"].status is not None and paused.expanded["a"].status.connector.state == "PAUSED"
    cluster.kafka.view.state.plugin_types = {"FileStreamSource": "sink"}  # reloaded from the workers
    retyped = view_answer(await cluster.herder.reads.list_connectors(["status"]))
    assert retyped.expanded is not None and retyped.expanded["a"].status is not None
    assert retyped.expanded["a"].status.type == "sink"


@pytest.mark.parametrize("version", ["3.4.1", "4.3.1"])
async def test_a_status_is_built_once_per_change_of_the_view(version: str) -> None:
    cluster = FakeCluster(version)
    await cluster.detect()
    cluster.running("a")
    cluster.running("b")
    first = view_answer(await cluster.herder.reads.connector_status("a"))
    assert view_answer(await cluster.herder.reads.connector_status("a")) is first  # nothing changed: the same one
    assert view_answer(await cluster.herder.reads.connector_status("b")).name == "b"
    cluster.kafka.view.state.apply_status(TaskStatus("a", 0, "FAILED", "trace", "w1", 2))
    failed = view_answer(await cluster.herder.reads.connector_status("a"))
    assert failed is not first and [e.state for _, e in failed.tasks] == ["FAILED"]
    cluster.kafka.view.state.plugin_types = {"FileStreamSource": "sink"}  # reloaded from the workers
    assert view_answer(await cluster.herder.reads.connector_status("a")).type == "sink"
    assert isinstance(await cluster.herder.reads.connector_status("nope"), Refusal)  # a missing one is asked again
    cluster.running("nope")
    assert view_answer(await cluster.herder.reads.connector_status("nope")).connector.state == "RUNNING"


async def test_a_missing_connector_is_a_refusal_with_the_views_provenance() -> None:
    cluster = FakeCluster("4.3.1")
    await cluster.detect()
    refusal = await cluster.herder.reads.connector_status("nope")
    assert isinstance(refusal, Refusal) and isinstance(refusal.error, NotFoundError)
    assert refusal.error.message == "No status found for connector nope"
    assert refusal.provenance.source is Source.VIEW


def another_sidecar_wrote(cluster: FakeCluster, name: str, **config: str) -> None:
    """A config record in the config topic that this sidecar's view has not read yet."""
    key, value = encode_config(ConnectorConfig(name, {"connector.class": "FileStreamSource", "name": name, **config}))
    cluster.kafka.log.append((CONFIG, key, value))


@pytest.mark.parametrize(
    ("sync", "shown"),
    [
        pytest.param("always", "1", id="always"),
        pytest.param("missing", None, id="missing"),
        pytest.param("never", None, id="never"),
    ],
)
async def test_a_change_another_sidecar_wrote_shows_when_every_read_syncs(sync: str, shown: str | None) -> None:
    cluster = FakeCluster("4.3.1", view_read_sync=sync)
    await cluster.detect()
    cluster.running("c")
    another_sidecar_wrote(cluster, "c", n="1")
    outcome = await cluster.herder.reads.connector_config("c")
    assert isinstance(outcome, Answer) and not outcome.provenance.stale
    assert outcome.value.get("n") == shown


@pytest.mark.parametrize("sync", ["always", "missing"])
async def test_a_connector_another_sidecar_created_is_never_a_404(sync: str) -> None:
    cluster = FakeCluster("4.3.1", view_read_sync=sync)
    await cluster.detect()
    another_sidecar_wrote(cluster, "new")
    outcome = await cluster.herder.reads.connector_config("new")
    assert isinstance(outcome, Answer) and outcome.value["name"] == "new"
    listing = await cluster.herder.reads.list_connectors([])
    assert isinstance(listing, Answer) and "new" in listing.value.names


async def test_without_sync_a_connector_another_sidecar_created_is_not_known_yet() -> None:
    cluster = FakeCluster("4.3.1", view_read_sync="never")
    await cluster.detect()
    another_sidecar_wrote(cluster, "new")
    assert isinstance(await cluster.herder.reads.connector_config("new"), Refusal)


@pytest.mark.parametrize(
    ("writers_wait_s", "synced"),
    [
        pytest.param(0.01, False, id="every-sidecar-waits-the-window"),
        pytest.param(0.02, False, id="every-sidecar-waits-longer"),
        pytest.param(0.0, True, id="a-sidecar-answers-its-writes-at-once"),
        pytest.param(None, True, id="the-sidecars-not-known-yet"),
    ],
)
async def test_a_read_within_the_window_syncs_only_where_a_sidecar_does_not_wait_it_out(
    writers_wait_s: float | None, synced: bool
) -> None:
    """``always``: a view fresh within the window answers at once, since every write through any sidecar
    is answered only a window after it is done; while some live sidecar answers sooner (another setting, an
    older release), or the sidecars are not known yet, the read syncs."""
    cluster = FakeCluster("4.3.1", view_read_sync="always", writers_wait_s=lambda: writers_wait_s)
    await cluster.detect()
    cluster.running("c")
    asked: list[tuple[str, ...]] = []
    cluster.kafka.view.fresh_within = lambda topics, window_s: True  # type: ignore[method-assign]
    read = cluster.kafka.view.read_all_to_end

    async def read_all_to_end(topics: Sequence[str], timeout_s: float | None) -> None:
        asked.append(tuple(topics))
        await read(topics, timeout_s)

    cluster.kafka.view.read_all_to_end = read_all_to_end  # type: ignore[method-assign]
    another_sidecar_wrote(cluster, "c", n="1")  # not in the window's ends: a write not answered yet
    outcome = await cluster.herder.reads.connector_config("c")
    assert isinstance(outcome, Answer) and not outcome.provenance.stale
    assert (bool(asked), outcome.value.get("n")) == (synced, "1" if synced else None)


async def test_the_synced_reads_are_counted_by_outcome_and_exported() -> None:
    """``view_read_syncs_total`` and ``view_read_window_in_use`` on /metrics: what ``always`` costs the reads."""
    waits: list[float | None] = [0.025]
    cluster = FakeCluster("4.3.1", view_read_sync="always", writers_wait_s=lambda: waits[0])
    await cluster.detect()
    cluster.running("c")
    fresh = [True]
    cluster.kafka.view.fresh_within = lambda topics, window_s: fresh[0]  # type: ignore[method-assign]
    await cluster.herder.reads.connector_config("c")  # within the window
    fresh[0] = False
    await cluster.herder.reads.connector_config("c")  # waits for a round (the fake's: reads the log)
    waits[0] = 0.0  # a sidecar that does not wait: every read asks
    await cluster.herder.reads.connector_config("c")
    metrics = Metrics()
    metrics.watch_read_syncs(cluster.herder._rule)
    text = metrics.render().decode()
    counted = {dict(labels)["outcome"]: value for labels, value in samples(text, "view_read_syncs_total").items()}
    assert counted == {"window": 1.0, "waited": 1.0, "synced": 1.0}
    assert samples(text, "view_read_window_in_use") == {(): 0.0}


@pytest.mark.parametrize(("sync", "waits"), [("always", True), ("missing", False), ("never", False)])
async def test_a_write_is_answered_a_window_after_it_is_done_only_when_every_read_syncs(sync: str, waits: bool) -> None:
    cluster = FakeCluster("4.3.1", view_read_sync=sync)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await cluster.herder.settle_write()
    assert (loop.time() - started >= 0.01) is waits


async def test_a_view_read_that_cannot_sync_in_time_is_marked_stale() -> None:
    cluster = FakeCluster("4.3.1", view_read_sync="always", view_read_sync_s=0.05)
    await cluster.detect()
    cluster.running("c")

    async def hangs(topics: Sequence[str], timeout_s: float | None) -> None:
        await asyncio.sleep(10)

    cluster.kafka.view.read_all_to_end = hangs  # type: ignore[method-assign]
    outcome = await cluster.herder.reads.connector_status("c")
    assert isinstance(outcome, Answer) and outcome.provenance.stale and outcome.value.name == "c"


async def test_with_read_from_upstream_reads_go_to_the_workers_and_fall_back_to_the_stale_view() -> None:
    cluster = FakeCluster("4.3.1", read_from_view=False)
    await cluster.detect()
    cluster.running("c")
    outcome = await cluster.herder.reads.connector_config("c")
    assert isinstance(outcome, Forward) and outcome.fallback is not None
    fallback = outcome.fallback()
    assert isinstance(fallback, Answer) and fallback.provenance.stale
    assert fallback.value["name"] == "c"


async def test_a_connectors_info_and_task_configs_come_from_the_view_only_when_no_worker_answered() -> None:
    """GET /connectors/{c} and .../tasks pass through; their view answers (DistributedHerder.connectorInfo,
    taskConfigs) are stale fallbacks, and a connector whose task set is inconsistent lists its committed count
    with no config where the topic holds none (ClusterConfigState.taskCount, rawTaskConfig)."""
    cluster = FakeCluster("3.4.1")
    await cluster.detect()
    state = cluster.kafka.view.state
    cluster.running("c")
    state.apply_config(TaskConfig("c", 0, {"task.class": "T", "n": "0"}))
    state.apply_config(TaskCommit("c", 1))
    info = cluster.herder.reads.unanswered_info("c")
    assert isinstance(info, Answer) and info.provenance.source is Source.VIEW and info.provenance.stale
    assert info.value.tasks == (0,) and info.value.type == "source" and info.value.config["name"] == "c"
    configs = cluster.herder.reads.unanswered_task_configs("c")
    assert isinstance(configs, Answer) and configs.provenance.stale
    assert configs.value == ((0, {"task.class": "T", "n": "0"}),)
    state.apply_config(TaskCommit("c", 2))  # no config for task 1: inconsistent
    info = cluster.herder.reads.unanswered_info("c")
    configs = cluster.herder.reads.unanswered_task_configs("c")
    assert isinstance(info, Answer) and info.value.tasks == ()
    assert isinstance(configs, Answer) and configs.value == ((0, {"task.class": "T", "n": "0"}), (1, None))
    for missing in (cluster.herder.reads.unanswered_info("nope"), cluster.herder.reads.unanswered_task_configs("nope")):
        assert isinstance(missing, Refusal) and isinstance(missing.error, NotFoundError)
        assert missing.error.message == "Connector nope not found" and missing.provenance.stale


@pytest.mark.parametrize(("version", "answered_by_view"), [("3.4.1", True), ("4.3.1", False)])
async def test_a_connector_the_sidecar_stopped_has_its_info_and_task_configs_from_the_view(
    version: str, answered_by_view: bool
) -> None:
    """Before 3.5 the sidecar stops a connector through the config topic; the worker's herder applies the
    stop after the stop's answer (seconds later with hundreds of tasks) and lists the old tasks meanwhile,
    so the view, which read the stop back, answers GET /connectors/{c} and .../tasks as 3.5+ does: no
    tasks. A running connector's, and every connector's on a worker that stops them itself, pass through."""
    cluster = FakeCluster(version)
    await cluster.detect()
    cluster.running("c")
    assert cluster.herder.reads.stopped_info("c") is None and cluster.herder.reads.stopped_task_configs("c") is None
    state = cluster.kafka.view.state
    state.apply_config(TaskCommit("c", 0))
    state.apply_config(TargetState.of("c", "STOPPED"))
    assert cluster.herder.reads.may_know_better() is answered_by_view
    info, configs = cluster.herder.reads.stopped_info("c"), cluster.herder.reads.stopped_task_configs("c")
    if not answered_by_view:
        assert info is None and configs is None
        return
    assert info is not None and configs is not None
    assert view_answer(info).tasks == () and view_answer(info).config["name"] == "c"
    assert view_answer(configs) == ()
    assert cluster.herder.reads.stopped_info("nope") is None  # not stopped by the sidecar: the worker's 404


async def test_without_a_ready_view_an_unanswered_read_has_no_view_answer() -> None:
    cluster = FakeCluster("3.4.1")
    await cluster.detect()
    cluster.kafka.view.ready = False
    assert (
        cluster.herder.reads.unanswered_info("c") is None and cluster.herder.reads.unanswered_task_configs("c") is None
    )


async def test_while_no_worker_answers_view_answers_are_marked_stale_with_their_age() -> None:
    cluster = FakeCluster("4.3.1")
    await cluster.detect()
    cluster.running("c")
    cluster.kafka.view.state.apply_status(ConnectorStatus("c", "RUNNING", None, "w1", 2), timestamp_ms=1)
    cluster.workers.versions = {"http://w1:8083": None}
    await cluster.probe.probe()
    outcome = await cluster.herder.reads.connector_status("c")
    assert isinstance(outcome, Answer) and outcome.provenance.stale
    assert outcome.provenance.age_s is not None and outcome.provenance.age_s > 0


async def test_stop_is_forwarded_to_a_worker_that_has_it_and_done_by_the_sidecar_before_3_5() -> None:
    new, old = FakeCluster("4.3.1"), FakeCluster("3.4.1")
    for cluster in (new, old):
        await cluster.detect()
        cluster.running("c")
    assert isinstance(await new.herder.offsets.stop("c"), Forward)
    assert new.kafka.written(CONFIG) == []
    assert isinstance(await old.herder.offsets.stop("c"), Done)
    assert [k for k, _ in old.kafka.written(CONFIG)] == [b"target-state-c", b"commit-c"]
    # the old worker would show PAUSED: the view knows better, even with reads from the workers
    state = view_answer(await old.herder.reads.connector_status("c"))
    assert state.connector.state == "STOPPED" and state.tasks == ()


async def test_before_any_worker_answered_a_request_waits_a_bounded_moment_then_goes_to_the_workers() -> None:
    cluster = FakeCluster(None)
    cluster.running("c")
    assert isinstance(await cluster.herder.offsets.stop("c"), Forward)
    assert cluster.kafka.written(CONFIG) == []


async def test_a_feature_forced_emulated_is_done_by_the_sidecar_on_a_new_worker() -> None:
    cluster = FakeCluster("4.3.1", modes={Feature.STOP_AND_OFFSETS_READ: FeatureMode.EMULATED})
    await cluster.detect()
    cluster.running("c")
    assert isinstance(await cluster.herder.offsets.stop("c"), Done)


async def test_topic_tracking_is_served_from_the_view_and_reset_through_the_status_sink() -> None:
    """On a worker without KIP-558 (before 2.5), or with emulation forced by setting."""
    for cluster in (FakeCluster("2.4.1"), FakeCluster("4.3.1", modes={Feature.TOPIC_TRACKING: FeatureMode.EMULATED})):
        await cluster.detect()
        cluster.kafka.view.state.apply_status(TopicStatus("orders", "c", 0, 1000))
        assert view_answer(await cluster.herder.topics.active("c")) == ("orders",)
        assert isinstance(await cluster.herder.topics.reset("c"), Accepted)
        assert cluster.sink.submitted == [Tombstone(StatusKey(StatusKind.TOPIC, "c", topic="orders"))]


async def test_a_worker_with_kip_558_writes_the_reset_itself_while_the_view_serves_the_reads() -> None:
    cluster = FakeCluster("2.5.0")
    await cluster.detect()
    cluster.kafka.view.state.apply_status(TopicStatus("orders", "c", 0, 1000))
    assert view_answer(await cluster.herder.topics.active("c")) == ("orders",)
    assert isinstance(await cluster.herder.topics.reset("c"), Forward)
    assert cluster.sink.submitted == []


async def test_topic_tracking_forced_native_goes_to_the_workers() -> None:
    cluster = FakeCluster("4.3.1", modes={Feature.TOPIC_TRACKING: FeatureMode.NATIVE})
    await cluster.detect()
    assert isinstance(await cluster.herder.topics.active("c"), Forward)
    assert isinstance(await cluster.herder.topics.reset("c"), Forward)
    assert cluster.sink.submitted == []


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b'{"offsets":[{"partition":{"kafka_topic":"t"},"offset":{"kafka_offset":1}}]}', id="no-partition"),
        pytest.param(b'{"offsets":[{}]}', id="empty-entry"),
        pytest.param(b'{"offsets":[]}', id="no-offsets"),
        pytest.param(b"not json", id="not-json"),
        pytest.param(b"", id="empty"),
    ],
)
async def test_an_alter_for_a_native_worker_is_forwarded_unread(body: bytes) -> None:
    """The worker checks the body itself (ConnectorsResource, then DistributedHerder: the connector's state
    first): the sidecar forwards the bytes, whatever they hold and whatever state the connector is in."""
    cluster = FakeCluster("4.3.1")
    await cluster.detect()
    cluster.running("s", topics="t")
    cluster.kafka.view.state.plugin_types = {"FileStreamSource": "sink"}
    assert isinstance(await cluster.herder.offsets.alter("s", body), Forward)
    assert isinstance(await cluster.herder.offsets.alter("ghost", body), Forward)


async def test_the_probe_loads_plugin_types_for_connector_types() -> None:
    cluster = FakeCluster("4.3.1")
    cluster.workers.answers[("GET", "/connector-plugins")] = (
        200,
        b'[{"class":"org.example.ThingConnector","type":"sink","version":"1"}]',
    )
    await cluster.detect()
    cluster.running("c", **{"connector.class": "Thing"})
    state = view_answer(await cluster.herder.reads.connector_status("c"))
    assert state.type == "sink"


async def test_readiness_follows_the_view() -> None:
    cluster = FakeCluster("4.3.1")
    cluster.kafka.view.ready = False
    assert not cluster.herder.reads.readiness().ready
    cluster.kafka.view.ready = True
    assert cluster.herder.reads.readiness().checks == {"view_caught_up": True}


async def test_stopping_an_unknown_connector_on_an_old_worker_answers_connects_404() -> None:
    cluster = FakeCluster("3.4.1")
    await cluster.detect()
    with pytest.raises(NotFoundError, match="Unknown connector ghost"):
        await cluster.herder.offsets.stop("ghost")
    cluster.kafka.view.state.apply_config(TargetState.of("ghost", "STOPPED"))
    assert cluster.kafka.written(CONFIG) == []


async def test_an_emulated_sink_alter_for_a_missing_topic_is_connects_500_naming_the_connector() -> None:
    """Worker.alterSinkConnectorOffsets: the admin client refuses a partition of no topic; 4.3.1 answers 500
    "Failed to alter consumer group offsets for connector <c>"; a negative offset fails before it (500
    "Failed to modify offsets for sink connector <c>"). Nothing is written."""
    cluster = FakeCluster("3.4.1")
    await cluster.detect()
    cluster.kafka.view.state.plugin_types = {"FileStreamSource": "sink"}
    cluster.running("here", topics="elsewhere")
    await cluster.herder.offsets.stop("here")
    body = b'{"offsets":[{"partition":{"kafka_topic":"elsewhere","kafka_partition":0},"offset":{"kafka_offset":1}}]}'
    with pytest.raises(OperationFailed) as missing:
        await cluster.herder.offsets.alter("here", body)
    assert missing.value.message == "Failed to alter consumer group offsets for connector here"
    negative = (
        b'{"offsets":[{"partition":{"kafka_topic":"elsewhere","kafka_partition":0},"offset":{"kafka_offset":-1}}]}'
    )
    with pytest.raises(OperationFailed) as refused:
        await cluster.herder.offsets.alter("here", negative)
    assert refused.value.message == "Failed to modify offsets for sink connector here"


async def test_duplicate_offset_keys_come_with_a_warning_on_an_old_worker() -> None:
    cluster = FakeCluster("3.4.1")
    await cluster.detect()
    cluster.running("c")
    cluster.kafka.offset(OFFSETS, "c", {"f": "x"}, {"p": 1})
    cluster.kafka.log.append((OFFSETS, b'["c", {"f": "x"}]', b'{"p":2}'))
    answer = await cluster.herder.offsets.read("c")
    assert isinstance(answer, Answer)
    assert [o.offset for o in answer.value] == [{"p": 1}]
    assert answer.warnings == (
        f"source partition stored under 2 key encodings in {OFFSETS}; shown: the key its tasks look up",
    )


async def test_a_change_through_the_sidecar_is_in_the_view_when_the_answer_comes_back() -> None:
    cluster = FakeCluster("4.3.1")
    await cluster.detect()
    cluster.running("c")

    def worker_pauses(request: UpstreamRequest) -> None:
        # the worker's leader writes the target state and reads it back before it answers
        key, value = encode_config(TargetState.of("c", "PAUSED"))
        cluster.kafka.log.append((CONFIG, key, value))

    cluster.workers.answers[("PUT", "/connectors/c/pause")] = (202, b"")
    cluster.workers.before_answer = worker_pauses
    answer = await cluster.herder.forward(UpstreamRequest("PUT", "/connectors/c/pause"))
    assert answer.status == 202
    assert cluster.kafka.view.state.target_state("c") == "PAUSED"


@pytest.mark.parametrize(("version", "shown"), [("3.5.2", "UNASSIGNED"), ("3.6.0", "RUNNING"), ("4.3.1", "RUNNING")])
async def test_task_statuses_follow_the_status_rule_of_the_workers_version(version: str, shown: str) -> None:
    cluster = FakeCluster(version)
    await cluster.detect()
    cluster.running("c")
    cluster.kafka.view.state.apply_status(TaskStatus("c", 0, "UNASSIGNED", None, "w2", 1))  # stale on 3.6+
    assert [e.state for _, e in view_answer(await cluster.herder.reads.connector_status("c")).tasks] == [shown]
    assert view_answer(await cluster.herder.reads.task_status("c", 0)).state == shown
    listing = view_answer(await cluster.herder.reads.list_connectors(["status"]))
    assert listing.expanded is not None
    status = listing.expanded["c"].status
    assert status is not None and [e.state for _, e in status.tasks] == [shown]


def stopped_after(cluster: FakeCluster, name: str, state: str) -> None:
    cluster.running(name)
    view = cluster.kafka.view.state
    view.apply_status(ConnectorStatus(name, state, "trace" if state == "FAILED" else None, "w1", 1))
    view.apply_config(TaskCommit(name, 0))
    view.apply_config(TargetState.of(name, "STOPPED"))


@pytest.mark.parametrize("segment", ["c", "with%20space"])
async def test_resuming_a_connector_stopped_after_it_failed_restarts_it_on_an_old_worker(segment: str) -> None:
    cluster = FakeCluster("3.4.1")
    await cluster.detect()
    name = segment.replace("%20", " ")
    stopped_after(cluster, name, "FAILED")
    cluster.workers.answers[("PUT", f"/connectors/{segment}/resume")] = (202, b"")
    cluster.workers.answers[("POST", f"/connectors/{segment}/restart")] = (204, b"")
    answer = await cluster.herder.forward(UpstreamRequest("PUT", f"/connectors/{segment}/resume"))
    assert answer.status == 202
    # the restart first, while the worker's target state is PAUSED: after the resume it races the STARTED record
    assert [(r.method, r.path) for r in cluster.workers.forwarded if r.path.startswith("/connectors")] == [
        ("POST", f"/connectors/{segment}/restart"),
        ("PUT", f"/connectors/{segment}/resume"),
    ]


@pytest.mark.parametrize(("version", "state"), [("3.4.1", "PAUSED"), ("4.3.1", "FAILED"), ("4.3.1", "STOPPED")])
async def test_a_resume_is_only_forwarded_where_the_worker_brings_the_connector_back(version: str, state: str) -> None:
    cluster = FakeCluster(version)
    await cluster.detect()
    stopped_after(cluster, "c", state)
    cluster.workers.answers[("PUT", "/connectors/c/resume")] = (202, b"")
    assert (await cluster.herder.forward(UpstreamRequest("PUT", "/connectors/c/resume"))).status == 202
    assert [r.path for r in cluster.workers.forwarded if r.path.startswith("/connectors")] == ["/connectors/c/resume"]


async def test_on_a_new_worker_a_resume_of_a_failed_connector_waits_until_the_worker_shows_it_stopped() -> None:
    """4.3.1 loses a resume whose STARTED its herder reads before it applied the STOPPED of a FAILED connector
    (DistributedHerder.processTargetStateChanges applies the latest only; domain.offsets.stop): held until then."""
    cluster = FakeCluster("4.3.1")
    await cluster.detect()
    stopped_after(cluster, "c", "FAILED")
    cluster.workers.answers[("PUT", "/connectors/c/resume")] = (202, b"")
    view = cluster.kafka.view
    seen: list[object] = []

    async def wait_for(topic: str, condition: Callable[[ClusterView], bool], timeout_s: float) -> None:
        resumed = [r for r in cluster.workers.forwarded if r.path.startswith("/connectors")]
        seen.append((topic, condition(view.state), resumed == []))
        view.state.apply_status(ConnectorStatus("c", "STOPPED", None, "w1", 2))  # the herder applied the stop
        seen.append(condition(view.state))

    view.wait_for = wait_for  # type: ignore[method-assign]
    assert (await cluster.herder.forward(UpstreamRequest("PUT", "/connectors/c/resume"))).status == 202
    assert seen == [("status", False, True), True]
    assert [r.path for r in cluster.workers.forwarded if r.path.startswith("/connectors")] == ["/connectors/c/resume"]


async def test_a_restart_pre_empted_by_the_stops_paused_record_is_sent_again_before_the_resume() -> None:
    # a 3.4 herder that has not applied the stop's PAUSED yet starts the new connector STARTED; the PAUSED
    # pre-empts it and the restart answers 500, leaving a new connector, PAUSED (domain.offsets.stop)
    cluster = FakeCluster("3.4.1")
    await cluster.detect()
    stopped_after(cluster, "c", "FAILED")
    restart = ("POST", "/connectors/c/restart")
    cluster.workers.answers[("PUT", "/connectors/c/resume")] = (202, b"")
    cluster.workers.answers[restart] = (500, b'{"error_code":500,"message":"Failed to start connector: c"}')

    def paused_by_now(request: UpstreamRequest) -> None:
        if (request.method, request.path) == restart:  # the first answer is the 500; the PAUSED is applied by now
            cluster.workers.before_answer = lambda request: cluster.workers.answers.update({restart: (204, b"")})

    cluster.workers.before_answer = paused_by_now
    assert (await cluster.herder.forward(UpstreamRequest("PUT", "/connectors/c/resume"))).status == 202
    assert [r.path for r in cluster.workers.forwarded if r.path.startswith("/connectors")] == [
        "/connectors/c/restart",
        "/connectors/c/restart",
        "/connectors/c/resume",
    ]


async def test_a_restart_that_keeps_failing_is_sent_three_times_and_the_connector_is_not_resumed() -> None:
    cluster = FakeCluster("3.4.1")
    await cluster.detect()
    stopped_after(cluster, "c", "FAILED")
    cluster.workers.answers[("PUT", "/connectors/c/resume")] = (202, b"")
    failed = b'{"error_code":500,"message":"Failed to start connector: c"}'
    cluster.workers.answers[("POST", "/connectors/c/restart")] = (500, failed)
    with pytest.raises(OperationFailed, match=r"answered 500: .*Failed to start connector: c.*stays STOPPED"):
        await cluster.herder.forward(UpstreamRequest("PUT", "/connectors/c/resume"))
    assert [r.path for r in cluster.workers.forwarded if r.path.startswith("/connectors")] == [
        "/connectors/c/restart"
    ] * RESTART_ATTEMPTS


async def test_a_restart_the_old_worker_refuses_is_a_500_saying_the_connector_was_not_resumed() -> None:
    cluster = FakeCluster("3.4.1")
    await cluster.detect()
    stopped_after(cluster, "c", "FAILED")
    cluster.workers.answers[("PUT", "/connectors/c/resume")] = (202, b"")
    cluster.workers.answers[("POST", "/connectors/c/restart")] = (409, b'{"error_code":409,"message":"busy"}')
    with pytest.raises(OperationFailed, match="Connector c was not resumed: it had failed before it was stopped"):
        await cluster.herder.forward(UpstreamRequest("PUT", "/connectors/c/resume"))
    assert [r.path for r in cluster.workers.forwarded if r.path.startswith("/connectors")] == ["/connectors/c/restart"]
