"""Lag and freshness (domain/lag/): a sink's lag from its group's committed offsets and the partitions'
end offsets, read once per refresh; a source's freshness from the offsets topic the view reads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from control_plane.codecs import ConnectorConfig, SourceOffset, Tombstone
from control_plane.codecs.offsets import OffsetKey
from control_plane.domain.errors import NotFoundError, ViewNotReady
from control_plane.domain.lag import Lags, SinkLags
from control_plane.domain.offsets import WorkerKafka, sink_group_of
from control_plane.domain.outcomes import Answer, Refusal
from control_plane.domain.ports import GroupUnknown
from control_plane.rest.resources.lag import connector_json, overview_json
from control_plane.rules.config_providers import ConfigProviders
from control_plane.rules.connectors import sink_offset_reset
from control_plane.view import ClusterView

T = TypeVar("T")

SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


def cluster() -> ClusterView:
    state = ClusterView()
    for name, config in (
        ("plain", {"connector.class": SINK, "topics": "t"}),
        ("grouped", {"connector.class": SINK, "topics": "t", "consumer.override.group.id": "mine"}),
        ("elsewhere", {"connector.class": SINK, "topics": "t", "consumer.override.bootstrap.servers": "far:9092"}),
        ("src", {"connector.class": SOURCE, "topic": "t", "file": "/f"}),
    ):
        state.apply_config(ConnectorConfig(name, {"name": name, **config}))
    return state


class Broker:
    def __init__(self) -> None:
        self.groups: dict[str, dict[tuple[str, int], int]] = {
            "connect-plain": {("t", 0): 5, ("t", 1): 7},
            "mine": {("t", 0): 10},
        }
        self.end = {("t", 0): 10, ("t", 1): 7}
        self.start: dict[tuple[str, int], int] = {}
        self.topic_partitions: dict[str, int] = {}  # the cluster's topics (Metadata): none unless a test says
        self.asked: list[str] = []

    async def committed_of(self, groups: Sequence[str], concurrent: int) -> Mapping[str, Mapping[tuple[str, int], int]]:
        self.asked.extend(groups)
        return {group: self.groups.get(group, {}) for group in groups}

    async def ends(self, partitions: Sequence[tuple[str, int]]) -> tuple[Mapping[tuple[str, int], int], int]:
        self.asked.append(f"ends {sorted(partitions)}")
        return {tp: self.end[tp] for tp in partitions if tp in self.end}, 1

    async def starts(self, partitions: Sequence[tuple[str, int]]) -> Mapping[tuple[str, int], int]:
        self.asked.append(f"starts {sorted(partitions)}")
        return {tp: self.start.get(tp, 0) for tp in partitions}

    async def topics(self) -> Mapping[str, int]:
        return self.topic_partitions


WORKER = WorkerKafka(bootstrap="near:9092", offsets_topic="offsets")


def value(outcome: Answer[T] | Refusal) -> T:
    assert isinstance(outcome, Answer), outcome
    return outcome.value


def one(lags: Lags, connector: str) -> dict[str, Any]:
    """One connector's lag as ``GET /_sidecar/connectors/{c}/lag`` renders it."""
    return connector_json(value(lags.of(connector)))


async def test_a_refresh_reads_each_group_once_and_all_ends_at_once() -> None:
    state, broker = cluster(), Broker()
    lags = SinkLags(lambda: state, sink_group_of(WORKER), broker, broker, interval_s=30)
    snapshot = await lags.refresh()
    assert sorted(broker.asked) == ["connect-plain", "ends [('t', 0), ('t', 1)]", "mine"]
    plain, grouped, elsewhere = (snapshot.sinks[n] for n in ("plain", "grouped", "elsewhere"))
    assert (plain.group, plain.total, plain.max) == ("connect-plain", 5, 5)
    assert [(p.partition, p.committed, p.end, p.lag) for p in plain.partitions] == [(0, 5, 10, 5), (1, 7, 7, 0)]
    assert (grouped.group, grouped.total) == ("mine", 0)
    assert elsewhere.total is None and "other brokers (far:9092)" in (elsewhere.error or "")
    assert "src" not in snapshot.sinks
    assert snapshot.requests == 2 * 2 + 1 + 1  # FindCoordinator and OffsetFetch per group, Metadata, ListOffsets


def test_a_group_that_is_a_reference_is_resolved_or_refused(tmp_path: Path) -> None:
    secrets = tmp_path / "s.properties"
    secrets.write_text("group=from-the-file\n")
    file_provider = {
        "config.providers": "file,vault",
        "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
        "config.providers.vault.class": "com.example.VaultConfigProvider",  # a class the sidecar cannot run
    }
    worker = WorkerKafka(
        bootstrap="near:9092", offsets_topic="o", config_providers=ConfigProviders.from_worker(file_provider)
    )
    group_of = sink_group_of(worker)
    assert group_of("c", {"consumer.override.group.id": f"${{file:{secrets}:group}}"}) == "from-the-file"
    refused = group_of("c", {"consumer.override.group.id": "${vault:/x:group}"})
    assert isinstance(refused, GroupUnknown) and "consumer.override.group.id" in refused.reason


def test_a_source_is_as_fresh_as_its_newest_commit() -> None:
    state = cluster()
    for partition, at in (({"filename": "/a"}, 1_000), ({"filename": "/b"}, 4_000), ({"filename": "/a"}, 6_000)):
        record = SourceOffset("src", partition, {"position": at})
        state.apply_offset(record, OffsetKey("src", partition).to_bytes(), at)
    lags = Lags(SinkLags(lambda: state, sink_group_of(WORKER), Broker(), Broker(), interval_s=30), lambda: state)
    shown = one(Lags(lags.sinks, lambda: state, now_ms=lambda: 10_000), "src")
    assert (shown["last_commit_ms"], shown["since_last_commit_s"], shown["commits"]) == (6_000, 4.0, 3)
    assert [p["last_commit_ms"] for p in shown["partitions"]] == [6_000, 4_000]
    key = OffsetKey("src", {"filename": "/a"})
    state.apply_offset(Tombstone(key), key.to_bytes(), 7_000)  # a reset of that partition
    assert [p["partition"] for p in one(Lags(lags.sinks, lambda: state), "src")["partitions"]] == [{"filename": "/b"}]
    refused = lags.of("nobody")
    assert isinstance(refused, Refusal) and isinstance(refused.error, NotFoundError)
    assert refused.error.message == "Connector nobody not found"


async def test_the_overview_has_every_connector_once_refreshed() -> None:
    state, broker = cluster(), Broker()
    sinks = SinkLags(lambda: state, sink_group_of(WORKER), broker, broker, interval_s=30)
    lags = Lags(sinks, lambda: state)
    before = overview_json(value(lags.overview()))
    assert (
        before["refreshed_ms"] is None
        and before["sinks"] == []
        and [s["connector"] for s in before["sources"]] == ["src"]
    )
    sinks.latest = await sinks.refresh()
    after = overview_json(value(lags.overview()))
    assert [s["connector"] for s in after["sinks"]] == ["elsewhere", "grouped", "plain"]
    assert lags.sink_totals() == {"grouped": 0, "plain": 5}
    assert one(lags, "plain")["partitions"][0] == {"topic": "t", "partition": 0, "committed": 5, "end": 10, "lag": 5}


def test_without_a_view_it_says_so() -> None:
    for refused in (Lags(None, lambda: None).overview(), Lags(None, lambda: None).of("c")):
        assert isinstance(refused, Refusal) and isinstance(refused.error, ViewNotReady)
        assert (
            refused.error.message
            == "Lag and freshness need the sidecar's view (READ_FROM=upstream without one has none)"
        )
    assert Lags(None, lambda: None).readings() is None


async def test_a_sink_that_never_committed_lags_by_what_it_has_still_to_read() -> None:
    """A partition of its topics its group committed nothing for counts from the log start (Connect's
    ``earliest``), or from the end where its consumer starts there, and is marked either way."""
    state, broker = ClusterView(), Broker()
    for name, config in (
        ("failing", {"topics": "t, u"}),
        ("pattern", {"topics.regex": "u|v"}),
        ("from-end", {"topics": "u", "consumer.override.auto.offset.reset": "latest"}),
    ):
        state.apply_config(ConnectorConfig(name, {"name": name, "connector.class": SINK, **config}))
    broker.topic_partitions = {"t": 2, "u": 1, "w": 1}
    broker.groups = {"connect-failing": {("t", 0): 4}}
    broker.end = {("t", 0): 10, ("t", 1): 7, ("u", 0): 1500}
    broker.start = {("t", 1): 2, ("u", 0): 100}
    lags = Lags(SinkLags(lambda: state, sink_group_of(WORKER), broker, broker, interval_s=30), lambda: state)
    assert lags.sinks is not None
    lags.sinks.latest = await lags.sinks.refresh()
    failing = one(lags, "failing")
    assert (failing["lag"], failing["uncommitted_partitions"], failing["uncommitted_records"]) == (
        6 + 5 + 1400,
        2,
        1405,
    )
    assert failing["partitions"] == [
        {"topic": "t", "partition": 0, "committed": 4, "end": 10, "lag": 6},
        {
            "topic": "t",
            "partition": 1,
            "committed": None,
            "end": 7,
            "no_commit_yet": True,
            "log_start": 2,
            "offset_reset": "earliest",
            "lag": 5,
        },
        {
            "topic": "u",
            "partition": 0,
            "committed": None,
            "end": 1500,
            "no_commit_yet": True,
            "log_start": 100,
            "offset_reset": "earliest",
            "lag": 1400,
        },
    ]
    pattern = one(lags, "pattern")  # its pattern matches u (v does not exist, w does not match)
    assert [(p["topic"], p["lag"]) for p in pattern["partitions"]] == [("u", 1400)] and pattern["lag"] == 1400
    from_end = one(lags, "from-end")  # starts at the end: nothing to read, still marked as not committed
    assert (from_end["lag"], from_end["uncommitted_partitions"], from_end["uncommitted_records"]) == (0, 1, 0)
    assert from_end["partitions"][0]["offset_reset"] == "latest"
    assert lags.sink_totals() == {"failing": 1411, "pattern": 1400, "from-end": 0}
    assert lags.sink_uncommitted() == {"failing": (2, 1405), "pattern": (1, 1400), "from-end": (1, 0)}
    assert "starts [('t', 1), ('u', 0)]" in broker.asked  # one ListOffsets (earliest) for them all


def test_where_a_sinks_consumer_starts_is_its_override_else_the_workers_else_earliest() -> None:
    assert sink_offset_reset({}, None) == "earliest"  # Worker.baseConsumerConfigs
    assert sink_offset_reset({}, "latest") == "latest"
    assert sink_offset_reset({"consumer.override.auto.offset.reset": " LATEST "}, "earliest") == "latest"
