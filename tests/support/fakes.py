"""Fakes of the domain's ports (``control_plane.domain.ports``), each a few lines over in-memory state:
a record producer whose records a fake view reads back, in-memory consumer groups and topic reader, the
workers' REST API, and ``Kafka``, which wires them into the real stopper and offsets feature."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import orjson

from control_plane.codecs import (
    ConnectorConfig,
    SourceOffset,
    TaskCommit,
    Tombstone,
    decode_config,
    decode_offset,
    encode_offset,
)
from control_plane.codecs.auto_restart import (
    RestartBudget,
    RestartPolicy,
    RestartState,
    decode_budget,
    decode_policy,
    decode_state,
)
from control_plane.codecs.config_history import Author, HistoryEntry, decode_author, decode_entry
from control_plane.codecs.connect_group import WorkerAssignment, WorkerMetadata, encode_assignment, encode_metadata
from control_plane.codecs.fence import FenceClaim, FenceRelease, decode_fence
from control_plane.codecs.presence import SidecarPresence
from control_plane.codecs.status import StatusKey, StatusKind
from control_plane.codecs.worker_plugins import InstalledOnWorker
from control_plane.domain.capabilities import Capabilities
from control_plane.domain.cluster.forward_route import ForwardRoute
from control_plane.domain.cluster.writes import ConnectorWrites
from control_plane.domain.configs import Configs, ConnectorConfigs, ConnectorCreation
from control_plane.domain.liveness import WorkerProbe
from control_plane.domain.newer import HealthCheck, Loggers, NewerApi
from control_plane.domain.offsets import ConnectorStopper, EmulatedOffsets, TaskShutdown, WorkerKafka
from control_plane.domain.plugins import PluginCatalog, PluginVersions, WorkerCatalogs
from control_plane.domain.ports import TopicPartition, Workers
from control_plane.domain.read_rule import ReadRule
from control_plane.storage.config_writer import ConfigWriter
from control_plane.storage.consumer_groups import GroupDescription, GroupMember
from control_plane.storage.errors import GroupNotEmpty, GroupOperationError, ReadTimeout
from control_plane.storage.kafka_writes import KafkaWrites
from control_plane.storage.log_reader import LogRecord
from control_plane.storage.offsets_writer import OffsetsWriter
from control_plane.storage.status_writes import StatusWrites
from control_plane.upstream import UpstreamRequest, UpstreamResponse
from control_plane.view import ClusterView
from control_plane.view.auto_restarts import AutoRestartTable
from control_plane.view.config_history import ConfigHistoryTable
from control_plane.view.fences import FenceTable
from control_plane.view.installed import InstalledTable
from control_plane.view.sidecars import SidecarTable
from tests.support.scripted_producer import CountingWritesObserver, make_writes

CONFIG, OFFSETS, OWN = "configs", "offsets", "own-offsets"
Log = list[tuple[str, bytes, bytes | None]]


class FakeProducer:
    """The record producer seam: appends to ``log``; ``fail(key)`` returns the error to raise for a key."""

    def __init__(self, log: Log, fail: Callable[[bytes], BaseException | None]) -> None:
        self.log, self.fail = log, fail

    async def start(self) -> None: ...

    async def send(self, topic: str, key: bytes, value: bytes | None) -> None:
        error = self.fail(key)
        if error is not None:
            raise error
        self.log.append((topic, key, value))

    async def enqueue(self, topic: str, key: bytes, value: bytes | None) -> asyncio.Future[None]:
        return asyncio.ensure_future(self.send(topic, key, value))

    async def stop(self) -> None: ...


class FakeView:
    """The view port (``domain.ports.ViewSnapshot``): its state, updated from the log by ``read_to_end``."""

    def __init__(self, log: Log) -> None:
        self.state = ClusterView()
        self.ready = True
        self.worker_stops_tasks = True  # False: a worker whose tasks never stop (one that hangs)
        self.now_ms: Callable[[], int] = lambda: 0  # the time the fake worker stamps its records with
        self._log, self._read = log, 0

    async def wait_for(self, topic: str, condition: Callable[[ClusterView], bool], timeout_s: float) -> None:
        """No time passes here: what the log holds is read, then the condition holds or it never will."""
        await self.read_to_end(topic, timeout_s)
        if not condition(self.state):
            raise ReadTimeout(f"the condition did not hold within {timeout_s:g}s of reading {topic}")

    def has_tail(self, topic: str) -> bool:
        return topic in ("config", "status", "offsets")

    def tail_error(self, topic: str) -> str | None:
        return None

    def diagnostics(self) -> dict[str, Any]:
        return {}

    async def read_all_to_end(self, topics: Sequence[str], timeout_s: float | None) -> None:
        await self.read_to_end(topics[0] if topics else CONFIG, timeout_s or 0.0)  # one log: every topic read at once

    def fresh_within(self, topics: Sequence[str], window_s: float) -> bool:
        return False  # no time passes here: a read syncs (reads what the log holds)

    async def until_fresh(self, topics: Sequence[str], window_s: float) -> None:
        await self.read_all_to_end(topics, None)

    async def read_to_end(self, topic: str, timeout_s: float) -> None:
        for topic_name, key, value in self._log[self._read :]:
            if topic_name == CONFIG:
                record = decode_config(key, value)
                self.state.apply_config(record)
                if isinstance(record, TaskCommit) and record.tasks == 0 and self.worker_stops_tasks:
                    # a worker shuts the tasks down; its leader then deletes their statuses
                    for task in list(self.state.task_statuses.get(record.connector, {})):
                        deleted = StatusKey(StatusKind.TASK, record.connector, task=task)
                        self.state.apply_status(Tombstone(deleted), timestamp_ms=self.now_ms())
            elif topic_name == OFFSETS:
                self.state.apply_offset(decode_offset(key, value), key)
        self._read = len(self._log)


class FakeGroups:
    """ConsumerGroups in memory."""

    def __init__(self) -> None:
        self.groups: dict[str, dict[TopicPartition, int]] = {}
        self.members: dict[str, int] = {}
        self.topics = {"t": 2}
        self.down: str | None = None
        self.clusters: dict[str, str] = {}  # bootstrap -> cluster id; the sidecar's own brokers are "own"
        self.described: list[str | None] = []

    def _up(self, what: str) -> None:
        if self.down:
            raise GroupOperationError(what, self.down)

    async def committed(self, group: str) -> dict[TopicPartition, int]:
        self._up("read")
        return dict(self.groups.get(group, {}))

    async def active_members(self, group: str) -> int:
        self._up("describe")
        return self.members.get(group, 0)

    async def partition_counts(self, topics: Iterable[str]) -> dict[str, int | None]:
        self._up("metadata")
        return {t: self.topics.get(t) for t in topics}

    async def cluster_id(self, bootstrap: str | None = None) -> str | None:
        self.described.append(bootstrap)
        if bootstrap is None:
            self._up("metadata")
            return "own"
        if bootstrap not in self.clusters:
            raise GroupOperationError(f"describing the Kafka cluster at {bootstrap}", "no answer from Kafka")
        return self.clusters[bootstrap]

    async def unreachable(self) -> str | None:
        return self.down

    async def commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        self._up("commit")
        if self.members.get(group):
            raise GroupNotEmpty("commit", "UnknownMemberIdError")
        self.groups.setdefault(group, {}).update(offsets)

    async def delete_offsets(self, group: str, partitions: Iterable[TopicPartition]) -> None:
        self._up("delete offsets")
        for tp in partitions:
            self.groups.get(group, {}).pop(tp, None)

    async def delete_group(self, group: str) -> bool:
        self._up("delete group")
        if self.members.get(group):
            raise GroupNotEmpty("delete", "NonEmptyGroup")
        return self.groups.pop(group, None) is not None


class FakeReader:
    """The topic reader port: a whole topic of the log, once."""

    def __init__(self, log: Log) -> None:
        self.log = log

    async def read_all(self, topic: str, timeout_s: float) -> list[LogRecord]:
        return [LogRecord(t, 0, i, 0, k, v) for i, (t, k, v) in enumerate(self.log) if t == topic]


class Kafka:
    """The fakes wired into the real stopper and offsets feature."""

    def __init__(self) -> None:
        self.log: Log = []
        self.failing: Callable[[bytes], BaseException | None] = lambda key: None
        self.writes_observer = CountingWritesObserver()
        self.writes: KafkaWrites = make_writes(observer=self.writes_observer)  # the write path, fast backoff
        self.view = FakeView(self.log)
        self.view.now_ms = lambda: int(self.now * 1000)
        self.groups = FakeGroups()
        self.connector_writes = ConnectorWrites(self.view, self.groups, 1.0)
        self.stopper = ConnectorStopper(
            self.view, ConfigWriter(CONFIG, self.producer, 1.0, self.writes), self.connector_writes
        )
        self.now = 1_000.0  # the clock of the task shutdown: seconds, moved by sleeping
        self.slept: list[float] = []
        self.while_sleeping: Callable[[], None] = lambda: None  # what happens on the cluster meanwhile
        self.offsets = self.connector_offsets()

    def creation(self, workers: Workers, configs: ConnectorConfigs) -> ConnectorCreation:
        """``initial_state``'s emulation over this config log."""
        writer = ConfigWriter(CONFIG, self.producer, 1.0, self.writes)
        return ConnectorCreation(ForwardRoute(workers, None), configs, self.view, writer, 1.0, self.connector_writes)

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        self.while_sleeping()

    def producer(self) -> FakeProducer:
        return FakeProducer(self.log, lambda key: self.failing(key))

    def connector_offsets(self, worker_group: str | None = None, **worker: Any) -> EmulatedOffsets:
        """``own_topics=False``: workers before 3.3 (no KIP-618); the rest is ``WorkerKafka``'s."""
        own_topics = bool(worker.pop("own_topics", True))
        return EmulatedOffsets(
            self.view,
            self.groups,
            self.groups,
            OffsetsWriter(self.producer, 1.0, self.writes),
            FakeReader(self.log),
            worker=WorkerKafka(
                **{"bootstrap": "k1:9092", "offsets_topic": OFFSETS, "consumer_group": worker_group, **worker}
            ),
            read_back_timeout_s=1.0,
            shutdown=TaskShutdown(
                self.view, status_timeout_s=1.0, graceful_shutdown_s=5.0, clock=lambda: self.now, sleep=self.sleep
            ),
            writes=self.connector_writes,
            connector_offsets_topics=lambda: own_topics,
        )

    def connector(self, name: str, **config: str) -> None:
        self.view.state.apply_config(ConnectorConfig(name, {"connector.class": "X", "name": name, **config}))
        self.view.state.apply_config(TaskCommit(name, 1))

    def offset(self, topic: str, connector: str, partition: dict[str, Any], offset: dict[str, Any] | None) -> bytes:
        key, value = encode_offset(SourceOffset(connector, partition, offset or {}))
        self.log.append((topic, key, value if offset is not None else None))
        return key

    def written(self, topic: str) -> list[tuple[bytes, bytes | None]]:
        return [(k, v) for t, k, v in self.log if t == topic]


class FakeWorkerGroup:
    """The worker group port: the members ``description`` holds (``member``: one as a worker joins)."""

    def __init__(self, *members: GroupMember) -> None:
        self.description = GroupDescription("connect-cluster", "Stable", "connect", "sessioned", members)
        self.failing: str | None = None

    async def describe(self, group: str) -> GroupDescription:
        if self.failing:
            raise GroupOperationError("DescribeGroups", self.failing)
        return self.description


def member(
    member_id: str, url: str, leader: str, leader_url: str, tasks: tuple[tuple[str, int], ...] = ()
) -> GroupMember:
    """A worker in the group as a 3.x+ worker joins it (the sessioned protocol, version 2)."""
    metadata = encode_metadata(WorkerMetadata(2, url, 7))
    assignment = encode_assignment(WorkerAssignment(2, 0, leader, leader_url, 7, (), tasks))
    return GroupMember(member_id, "connect-1", "/127.0.0.1", metadata, assignment)


class FakeWorkers:
    """The workers port: ``versions`` per worker (None: did not answer); ``answers`` by (method, path)."""

    def __init__(self, version: str | None = "4.3.1") -> None:
        self.versions: dict[str, str | None] = {"http://w1:8083": version}
        self.answers: dict[tuple[str, str], tuple[int, bytes]] = {}
        self.forwarded: list[UpstreamRequest] = []
        self.sent_to: list[tuple[str, UpstreamRequest]] = []
        self.before_answer: Callable[[UpstreamRequest], None] = lambda request: None  # what the worker does

    @property
    def workers(self) -> tuple[str, ...]:
        return tuple(self.versions)

    async def forward(self, request: UpstreamRequest) -> UpstreamResponse:
        self.forwarded.append(request)
        self.before_answer(request)
        status, body = self.answers.get((request.method, request.path), (404, b'{"error_code":404}'))
        return UpstreamResponse(status, [], body, "http://w1:8083")

    async def send_to(self, worker: str, request: UpstreamRequest, timeout_s: float | None = None) -> UpstreamResponse:
        self.sent_to.append((worker, request))
        self.before_answer(request)
        status, body = self.answers.get((request.method, request.path), (404, b'{"error_code":404}'))
        return UpstreamResponse(status, [], body, worker)

    async def worker_versions(self) -> dict[str, str | None]:
        return dict(self.versions)


def read_rule(
    capabilities: Capabilities,
    workers: FakeWorkers,
    view: FakeView | None = None,
    probe: WorkerProbe | None = None,
    *,
    reads_from_view: bool = False,
    view_read_sync: str = "never",
    view_read_sync_s: float = 1.0,
    writers_wait_s: Callable[[], float | None] = lambda: None,
) -> ReadRule:
    """The read rule over the fakes (no view: every read goes to the workers; ``writers_wait_s``: what the
    live sidecars' presence says they wait after a write, None: not known)."""
    return ReadRule(
        capabilities=capabilities,
        workers=workers,
        view=view,
        probe=probe,
        reads_from_view=reads_from_view,
        view_read_sync=view_read_sync,
        view_read_sync_s=view_read_sync_s,
        view_read_sync_window_s=0.01,
        writers_wait_s=writers_wait_s,
    )


def newer_api(rule: ReadRule) -> NewerApi:
    """The newer releases' API (loggers, health, restart options) over the fakes."""
    workers = rule.workers
    return NewerApi(rule, Loggers(workers, timeout_s=1.0, clock=lambda: 1_700_000_000.0), HealthCheck(workers, 1.0))


def configs_feature(rule: ReadRule, configs: ConnectorConfigs, kafka: Kafka | None = None) -> Configs:
    """The configurations feature over the fakes (``kafka``: its config log; else none)."""
    if kafka:
        return Configs(rule, configs, kafka.creation(rule.workers, configs))
    writes = ConnectorWrites(rule.view, FakeGroups(), 1.0)
    creation = ConnectorCreation(ForwardRoute(rule.workers, None), configs, rule.view, None, 1.0, writes)
    return Configs(rule, configs, creation)


class FakeStatusSink:
    """The status sink port: records submitted, in order."""

    def __init__(self) -> None:
        self.submitted: list[object] = []
        self.running = True

    def submit_record(self, record: object) -> object:
        self.submitted.append(record)
        return record

    def submit_all(self, records: Sequence[object]) -> Sequence[object]:
        self.submitted.extend(records)
        return records

    async def write_all(self, records: Sequence[object]) -> None:
        self.submitted.extend(records)

    def snapshot(self) -> StatusWrites:
        return StatusWrites("status", self.running, [], [])


class FakeSidecarsTopic:
    """The sidecars' topic in memory: one ordered log every reader sees, stamped with the time given by
    ``now_ms`` (the broker's append time)."""

    def __init__(self, now_ms: Callable[[], float]) -> None:
        self.records: list[tuple[bytes, bytes | None, int]] = []
        self.now_ms = now_ms
        self.appended = asyncio.Condition()

    def reader(self) -> FakeSidecarReader:
        return FakeSidecarReader(self)

    async def write(self, key: bytes, value: bytes | None) -> None:
        async with self.appended:
            self.records.append((key, value, int(self.now_ms())))
            self.appended.notify_all()


class FakeSidecarReader:
    """One sidecar's tail of ``FakeSidecarsTopic`` (``domain.cluster.fence.FenceReader``), which reads a record
    only when asked to (``read_to_end``) or while it waits (``wait_for``)."""

    def __init__(self, topic: FakeSidecarsTopic) -> None:
        self.topic = topic
        self.fences = FenceTable()
        self.auto_restarts = AutoRestartTable()
        self.history = ConfigHistoryTable()
        self._read = 0

    def tail_error(self, topic: str) -> str | None:
        return None

    async def read_to_end(self, topic: str, timeout_s: float) -> None:
        for key, value, timestamp in self.topic.records[self._read :]:
            decoded = decode_fence(key, value)
            if isinstance(decoded, FenceClaim | FenceRelease):
                self.fences.apply(decoded, timestamp)
            policy, state = decode_policy(key, value), decode_state(key, value)
            if isinstance(policy, RestartPolicy | Tombstone):
                self.auto_restarts.apply_policy(policy)
            if isinstance(state, RestartState | Tombstone):
                self.auto_restarts.apply_state(state)
            budget = decode_budget(key, value)
            if isinstance(budget, RestartBudget | Tombstone):
                self.auto_restarts.apply_budget(budget)
            entry, author = decode_entry(key, value), decode_author(key, value)
            if isinstance(entry, HistoryEntry | Tombstone):
                self.history.apply_entry(entry)
            if isinstance(author, Author | Tombstone):
                self.history.apply_author(author)
        self._read = len(self.topic.records)

    async def wait_for(self, topic: str, condition: Callable[[ClusterView], bool], timeout_s: float) -> None:
        try:
            async with asyncio.timeout(timeout_s), self.topic.appended:
                while True:
                    await self.read_to_end(topic, timeout_s)
                    if condition(ClusterView()):
                        return
                    await self.topic.appended.wait()
        except TimeoutError:
            raise ReadTimeout(f"the condition did not hold within {timeout_s:g}s of reading {topic}") from None


def plugin_listing(plugins: Mapping[str, Mapping[str, Sequence[str | None]]]) -> bytes:
    """A worker's ``GET /connector-plugins?connectorsOnly=false`` answer: type -> class -> versions (None: the
    plugin listed once, without a version, as before 4.1)."""
    listed: list[dict[str, Any]] = []
    for kind, classes in plugins.items():
        for name, versions in classes.items():
            for version in versions:
                listed.append({"class": name, "type": kind} | ({"version": version} if version is not None else {}))
    return orjson.dumps(listed)


class SidecarsOfWorkers:
    """Workers with a sidecar in front of each, sharing the sidecars' topic as they all read it: each worker
    by id (``host:port``) with its version and plugins; ``sidecar(worker)`` is the ``PluginVersions`` of the
    sidecar in front of that worker (its catalog its worker's list; the others' from the shared tables);
    ``report(worker)`` puts that sidecar's presence and installed-plugins record on the topic. ``members``:
    the group's live workers (None: the group cannot be read)."""

    def __init__(self, now_ms: int = 1_000_000) -> None:
        self.now_ms = now_ms
        self.table = SidecarTable()
        self.installed = InstalledTable()
        self.members: list[str] | None = []
        self.workers: dict[str, tuple[FakeWorkers, Capabilities]] = {}

    async def add(self, worker: str, version: str, plugins: Mapping[str, Mapping[str, Sequence[str | None]]]) -> None:
        workers = FakeWorkers(version)
        workers.answers[("GET", "/connector-plugins")] = (200, plugin_listing(plugins))
        capabilities = Capabilities(workers, {}, refresh_s=60, first_detection_wait_s=0.1)
        assert await capabilities.refresh()
        self.workers[worker] = (workers, capabilities)
        if self.members is not None:
            self.members.append(worker)

    def sidecar(self, worker: str, capabilities: Capabilities | None = None) -> PluginVersions:
        workers, own = self.workers[worker]
        catalog = PluginCatalog(workers, refresh_s=60)
        catalogs = WorkerCatalogs(
            catalog,
            worker_versions=lambda: own.worker_versions,
            worker_ids={"http://w1:8083": worker},  # FakeWorkers' one URL is this worker
            sidecars=self.table,
            installed=self.installed,
            sidecar=f"sidecar-of-{worker}",
            now_ms=lambda: self.now_ms,
        )

        async def members() -> list[str] | None:
            return None if self.members is None else list(self.members)

        return PluginVersions(capabilities or self.cluster_capabilities(), catalog, catalogs, members)

    def cluster_capabilities(self) -> Capabilities:
        """The decision every sidecar makes: by the oldest worker."""
        return min((c for _, c in self.workers.values()), key=lambda c: c.version.parts if c.version else (0, 0, 0))

    async def report(
        self, worker: str, plugins: Mapping[str, Mapping[str, Sequence[str | None]]] | None = None
    ) -> None:
        """The sidecar in front of ``worker`` reports its plugins (``plugins``: changed since ``add``)."""
        workers, capabilities = self.workers[worker]
        if plugins is not None:
            workers.answers[("GET", "/connector-plugins")] = (200, plugin_listing(plugins))
        catalog = PluginCatalog(workers, refresh_s=60)
        assert await catalog.load()
        version = capabilities.worker_versions.get("http://w1:8083")
        record = InstalledOnWorker(worker, version, catalog.snapshot.by_type())
        self.installed.apply(record)
        sidecar = f"sidecar-of-{worker}"
        presence = SidecarPresence(sidecar, None, "test", 5000, {}, {}, {worker: record.digest})
        self.table.apply(presence, int(self.now_ms))
