"""The materialized cluster view: what a worker knows from its three internal topics, kept in memory.

Pure state and rules, no I/O: ``apply_config``, ``apply_status`` and ``apply_offset`` take one record
each (already decoded by ``codecs``) and update the view the way a worker's backing stores do:
- config (KafkaConfigBackingStore): task configs are deferred until the ``commit-<c>`` record with a
  complete set arrives; a connector tombstone removes its config, task count and task configs; a
  target state defaults to STARTED for a new connector, and ``state.v2`` wins over ``state``;
- status (KafkaStatusBackingStore): a connector tombstone removes the connector's and its tasks'
  statuses; a task's UNASSIGNED does not replace RUNNING at the same or a newer generation on 3.6+
  workers (KAFKA-12525; before 3.6 the last record wins: both are kept, the reader picks its worker's
  rule); topic records add to and tombstones remove from a connector's active topics;
- offsets (OffsetBackingStore): last record per exact key bytes wins, a tombstone deletes.
Readers get immutable snapshots (tuples, frozen dataclasses, copies of maps).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ..codecs import (
    ConnectorConfig,
    ConnectorStatus,
    SourceOffset,
    TargetState,
    TaskCommit,
    TaskConfig,
    TaskStatus,
    Tombstone,
    TopicParts,
    TopicStatus,
)
from ..codecs.config import ConfigKey, ConfigKind
from ..codecs.offsets import OffsetKey
from ..codecs.status import StatusKey, StatusKind
from ..rules.connectors import connector_type
from .timeline import DESTROYED, StateTimeline, TouchLog


@dataclass(frozen=True, slots=True)
class StateEntry:
    """One connector's or task's state as the status endpoints show it (ConnectorStateInfo)."""

    state: str
    worker_id: str
    trace: str | None
    version: str | None
    generation: int
    version_field: bool = False  # the record carries "version" (4.1+ workers write it, null when unknown)


@dataclass(frozen=True, slots=True)
class ConnectorStateView:
    name: str
    connector: StateEntry
    tasks: tuple[tuple[int, StateEntry], ...]
    type: str


@dataclass(frozen=True, slots=True)
class ConnectorInfoView:
    name: str
    config: Mapping[str, str | None]
    tasks: tuple[int, ...]
    type: str


# a connector's tasks as GET /connectors/{c}/tasks lists them: each task's id and raw config (None: none stored)
TaskConfigs: TypeAlias = tuple[tuple[int, Mapping[str, str | None] | None], ...]


@dataclass(frozen=True, slots=True)
class ActiveTopic:
    topic: str
    connector: str
    task: int
    discover_timestamp: int


@dataclass
class ClusterView:
    """Mutated only by the ``apply_*`` methods, from the single event loop that reads the topics."""

    connector_configs: dict[str, Mapping[str, str | None]] = field(default_factory=dict)
    target_states: dict[str, str] = field(default_factory=dict)
    task_counts: dict[str, int] = field(default_factory=dict)
    task_configs: dict[str, dict[int, Mapping[str, str | None]]] = field(default_factory=dict)
    deferred_tasks: dict[str, dict[int, Mapping[str, str | None]]] = field(default_factory=dict)
    inconsistent: set[str] = field(default_factory=set)
    connector_statuses: dict[str, ConnectorStatus] = field(default_factory=dict)
    task_statuses: dict[str, dict[int, TaskStatus]] = field(default_factory=dict)
    # connector -> task -> the last record, an UNASSIGNED that 3.6+ ignores (a worker before 3.6 shows it)
    stale_unassigned: dict[str, dict[int, TaskStatus]] = field(default_factory=dict)
    # connector -> topic -> the record, compact (_pack_topic: a million of them in a fifth of their objects'
    # memory). No inverse index (topic -> connectors): its million entries cost as much as the records;
    # topic_connectors looks the topic up in each connector's map instead (a few thousand lookups)
    topics: dict[str, dict[str, PackedTopic]] = field(default_factory=dict)
    offsets: dict[str, dict[bytes, SourceOffset]] = field(default_factory=dict)  # connector -> key bytes
    # connector -> key bytes -> the timestamp of its latest offset record (when a task last committed it)
    offset_commit_ms: dict[str, dict[bytes, int]] = field(default_factory=dict)
    offset_commits: dict[str, int] = field(default_factory=dict)  # connector -> offset records applied
    plugin_types: dict[str, str] = field(default_factory=dict)  # connector class or alias -> source/sink
    # connector -> timestamp of the latest deletion of one of its task statuses (a task left the connector)
    task_status_deleted_ms: dict[str, int] = field(default_factory=dict)
    last_record_timestamp_ms: int | None = None
    last_applied_at: float | None = None
    # bumped by every record applied: an answer built from the view at one revision is valid until the next
    revision: int = 0
    # the status records as transitions, and the connectors whose status or configuration changed (timeline.py)
    timeline: StateTimeline = field(default_factory=StateTimeline)
    touches: TouchLog = field(default_factory=TouchLog)

    # -- applying records ----------------------------------------------------------------------
    def _touch(self, timestamp_ms: int) -> None:
        self.revision += 1
        if self.last_record_timestamp_ms is None or timestamp_ms > self.last_record_timestamp_ms:
            self.last_record_timestamp_ms = timestamp_ms
        self.last_applied_at = time.time()

    def apply_config(self, record: object, timestamp_ms: int = 0) -> None:
        self._touch(timestamp_ms)
        if isinstance(record, Tombstone) and isinstance(record.key, ConfigKey):
            key = record.key
            if key.kind in (ConfigKind.CONNECTOR, ConfigKind.TARGET_STATE):
                self.touches.touch(key.name)
            if key.kind is ConfigKind.CONNECTOR:
                self._remove_connector_config(key.name)
                self.touches.prune(len(self.connector_configs))
            elif key.kind is ConfigKind.TARGET_STATE:
                self.target_states.pop(key.name, None)
                if key.name in self.connector_configs:
                    self.target_states[key.name] = "STARTED"
            return
        if isinstance(record, ConnectorConfig | TargetState):  # what the state gauges' STOPPED overlay reads
            self.touches.touch(record.connector)
        if isinstance(record, ConnectorConfig):
            self.connector_configs[record.connector] = dict(record.properties)
            self.target_states.setdefault(record.connector, "STARTED")
        elif isinstance(record, TaskConfig):
            self.deferred_tasks.setdefault(record.connector, {})[record.task] = dict(record.properties)
        elif isinstance(record, TaskCommit):
            self._commit_tasks(record.connector, record.tasks)
        elif isinstance(record, TargetState):
            state = record.effective
            if state in ("STARTED", "PAUSED", "STOPPED"):
                self.target_states[record.connector] = state

    def _remove_connector_config(self, name: str) -> None:
        self.connector_configs.pop(name, None)
        self.task_counts.pop(name, None)
        self.task_configs.pop(name, None)
        self.deferred_tasks.pop(name, None)

    def _commit_tasks(self, name: str, count: int) -> None:
        if name not in self.connector_configs:
            # KafkaConfigBackingStore: a commit for a deleted connector only cleans up
            self._remove_connector_config(name)
            return
        deferred = self.deferred_tasks.get(name) or {}
        # KafkaConfigBackingStore.completeTaskIdSet: at least `count` configs, covering 0..count-1
        if len(deferred) >= count and all(task in deferred for task in range(count)):
            current = self.task_configs.setdefault(name, {})
            current.update(deferred)
            for task in [t for t in current if t >= count]:
                del current[task]
            self.inconsistent.discard(name)
        else:
            self.inconsistent.add(name)
        self.deferred_tasks.pop(name, None)
        self.task_counts[name] = count

    def apply_status(self, record: object, timestamp_ms: int = 0) -> None:
        self._touch(timestamp_ms)
        if isinstance(record, Tombstone) and isinstance(record.key, StatusKey):
            key = record.key
            if key.kind is StatusKind.CONNECTOR:
                self.touches.touch(key.connector)
                gone = self.connector_statuses.pop(key.connector, None)
                if gone is not None:
                    self.timeline.change(key.connector, None, DESTROYED, gone.state, timestamp_ms)
                self.task_statuses.pop(key.connector, None)
                self.stale_unassigned.pop(key.connector, None)
            elif key.kind is StatusKind.TASK and key.task is not None:
                self.touches.touch(key.connector)
                self.task_status_deleted_ms[key.connector] = timestamp_ms
                last = self._last_task_record(key.connector, key.task)
                if last is not None:
                    self.timeline.change(key.connector, key.task, DESTROYED, last.state, timestamp_ms)
                self._forget_stale(key.connector, key.task)
                tasks = self.task_statuses.get(key.connector)
                if tasks is not None:
                    tasks.pop(key.task, None)
                    if not tasks:
                        del self.task_statuses[key.connector]
            elif key.kind is StatusKind.TOPIC and key.topic is not None:
                self._remove_topic(key.connector, key.topic)
            return
        if isinstance(record, ConnectorStatus):
            self.touches.touch(record.connector)
            before = self.connector_statuses.get(record.connector)
            self.timeline.change(
                record.connector,
                None,
                record.state,
                before.state if before is not None else None,
                timestamp_ms,
                record.worker_id,
                record.generation,
            )
            self.connector_statuses[record.connector] = record
        elif isinstance(record, TaskStatus):
            self.touches.touch(record.connector)
            last = self._last_task_record(record.connector, record.task)
            self.timeline.change(
                record.connector,
                record.task,
                record.state,
                last.state if last is not None else None,
                timestamp_ms,
                record.worker_id,
                record.generation,
            )
            tasks = self.task_statuses.setdefault(record.connector, {})
            current = tasks.get(record.task)
            if (
                record.state == "UNASSIGNED"
                and current is not None
                and current.state == "RUNNING"
                and current.generation >= record.generation
            ):
                # a stale UNASSIGNED (3.6+ KafkaStatusBackingStore.readTaskStatus ignores it; 3.4/3.5 do not)
                self.stale_unassigned.setdefault(record.connector, {})[record.task] = record
                return
            self._forget_stale(record.connector, record.task)
            tasks[record.task] = record
        elif isinstance(record, TopicStatus):
            self._put_topic(record.topic, record.connector, _pack_topic(record))

    def apply_topic(self, parts: TopicParts, timestamp_ms: int = 0) -> None:
        """``apply_status`` of a ``TopicStatus`` given as its fields (``codecs.decode_topic_status``): the
        view's most frequent record, so ``_touch``, ``_pack_topic`` and ``_put_topic`` are inlined here."""
        self.revision += 1
        if self.last_record_timestamp_ms is None or timestamp_ms > self.last_record_timestamp_ms:
            self.last_record_timestamp_ms = timestamp_ms
        self.last_applied_at = time.time()
        topic, connector, task, discovered, name, value_connector = parts
        if name is not None or value_connector is not None:
            stored: PackedTopic = TopicStatus(*parts)
        elif 0 <= task < _TASK_LIMIT and 0 <= discovered < _TIMESTAMP_LIMIT:
            stored = discovered << _TASK_BITS | task
        else:
            stored = (task, discovered)
        active = self.topics.get(connector)
        if active is None:
            active = self.topics[connector] = {}
        active[topic] = stored

    def remove_topic(self, topic: str, connector: str, timestamp_ms: int = 0) -> None:
        """``apply_status`` of a topic status tombstone, given as its key's topic and connector."""
        self._touch(timestamp_ms)
        self._remove_topic(connector, topic)

    def _put_topic(self, topic: str, connector: str, stored: PackedTopic) -> None:
        active = self.topics.get(connector)
        if active is None:
            active = self.topics[connector] = {}
        active[topic] = stored

    def _last_task_record(self, connector: str, task: int) -> TaskStatus | None:
        """The last status record of a task the view read (a stale UNASSIGNED included), for the timeline."""
        stale = self.stale_unassigned.get(connector)
        if stale is not None and task in stale:
            return stale[task]
        tasks = self.task_statuses.get(connector)
        return tasks.get(task) if tasks is not None else None

    def _forget_stale(self, connector: str, task: int) -> None:
        stale = self.stale_unassigned.get(connector)
        if stale is not None:
            stale.pop(task, None)
            if not stale:
                del self.stale_unassigned[connector]

    def _remove_topic(self, connector: str, topic: str) -> None:
        active = self.topics.get(connector)
        if active is not None:
            active.pop(topic, None)
            if not active:
                del self.topics[connector]

    def apply_offset(self, record: object, key_bytes: bytes, timestamp_ms: int = 0) -> None:
        self._touch(timestamp_ms)
        if isinstance(record, Tombstone) and isinstance(record.key, OffsetKey):
            partitions = self.offsets.get(record.key.connector)
            if partitions is not None:
                partitions.pop(key_bytes, None)
                if not partitions:
                    del self.offsets[record.key.connector]
            times = self.offset_commit_ms.get(record.key.connector)
            if times is not None:
                times.pop(key_bytes, None)
                if not times:
                    del self.offset_commit_ms[record.key.connector]
        elif isinstance(record, SourceOffset):
            self.offsets.setdefault(record.connector, {})[key_bytes] = record
            self.offset_commit_ms.setdefault(record.connector, {})[key_bytes] = timestamp_ms
            self.offset_commits[record.connector] = self.offset_commits.get(record.connector, 0) + 1

    # -- reading -------------------------------------------------------------------------------
    def connectors(self) -> tuple[str, ...]:
        return tuple(self.connector_configs)

    def connector_type(self, name: str) -> str:
        """``source``, ``sink`` or ``unknown``, as AbstractHerder.connectorType answers (the shared rule)."""
        return connector_type(self.connector_configs.get(name), self.plugin_types)

    def task_statuses_of(self, name: str, *, ignore_stale_unassigned: bool = True) -> dict[int, TaskStatus]:
        """The task statuses of ``name`` by the status rule of the worker's version: 3.6+ ignores a stale
        UNASSIGNED (``ignore_stale_unassigned``), 3.4 and 3.5 show the last record of each task."""
        tasks = dict(self.task_statuses.get(name, {}))
        if not ignore_stale_unassigned:
            tasks.update(self.stale_unassigned.get(name, {}))
        return tasks

    def connector_state(
        self, name: str, *, stopped_overlay: bool = False, ignore_stale_unassigned: bool = True
    ) -> ConnectorStateView | None:
        """``stopped_overlay``: the worker cannot stop connectors (before 3.5; the sidecar did, KIP-875):
        a connector whose target state is STOPPED shows as 3.5+ shows it, STOPPED (even if it had
        failed) and without tasks, whatever the old worker, which paused it, wrote. While it still has task
        configs (a stop not finished: its empty task set not written yet, or cut off before it) its tasks
        are shown as the worker has them, as 3.5+ shows a STOPPED connector's tasks until they are gone.
        ``ignore_stale_unassigned``: the status rule of 3.6+ workers (``task_statuses_of``)."""
        status = self.connector_statuses.get(name)
        if status is None:
            return None
        stopped = stopped_overlay and self.target_state(name) == "STOPPED"
        tasks: tuple[tuple[int, StateEntry], ...] = ()
        if not stopped or self.task_counts.get(name):
            statuses = self.task_statuses_of(name, ignore_stale_unassigned=ignore_stale_unassigned)
            if stopped_overlay:
                statuses = self._configured(name, statuses)
            tasks = tuple(sorted((task, _entry(s)) for task, s in statuses.items()))
        if stopped:
            entry = StateEntry(
                "STOPPED", status.worker_id, None, status.version, status.generation, status.version_field
            )
            return ConnectorStateView(name, entry, tasks, self.connector_type(name))
        return ConnectorStateView(name, _entry(status), tasks, self.connector_type(name))

    def _configured(self, name: str, statuses: dict[int, TaskStatus]) -> dict[int, TaskStatus]:
        """Where the sidecar stops connectors (an old worker): without the UNASSIGNED of a task no longer
        configured. An old worker, which the sidecar had pause the connector and commit no task, stops the
        task in the next rebalance, and its UNASSIGNED can land after the leader deleted the task's status
        (DistributedHerder.updateDeletedTaskStatus): it would stay until the connector runs tasks again,
        where 3.5+ (stopping its tasks before that rebalance completes) shows none."""
        count = self.task_counts.get(name, 0)
        return {t: s for t, s in statuses.items() if t < count or s.state != "UNASSIGNED"}

    def task_state(
        self, name: str, task: int, *, stopped_overlay: bool = False, ignore_stale_unassigned: bool = True
    ) -> StateEntry | None:
        if stopped_overlay and self.target_state(name) == "STOPPED" and not self.task_counts.get(name):
            return None  # a STOPPED connector has no tasks (see connector_state)
        statuses = self.task_statuses_of(name, ignore_stale_unassigned=ignore_stale_unassigned)
        status = (self._configured(name, statuses) if stopped_overlay else statuses).get(task)
        return _entry(status) if status else None

    def connector_config(self, name: str) -> Mapping[str, str | None] | None:
        config = self.connector_configs.get(name)
        return dict(config) if config is not None else None

    def connector_info(self, name: str) -> ConnectorInfoView | None:
        config = self.connector_configs.get(name)
        if config is None:
            return None
        # ClusterConfigState.tasks: none while inconsistent, else 0 .. count-1
        tasks = () if name in self.inconsistent else tuple(range(self.task_counts.get(name, 0)))
        return ConnectorInfoView(name, dict(config), tasks, self.connector_type(name))

    def task_configs_of(self, name: str) -> TaskConfigs | None:
        """The task configs as ``GET /connectors/{c}/tasks`` lists them (DistributedHerder.taskConfigs): ids 0
        to the committed count - 1 (ClusterConfigState.taskCount, inconsistent or not), each with its raw
        config, None where the topic holds none (ClusterConfigState.rawTaskConfig); None: no such connector."""
        if name not in self.connector_configs:
            return None
        configs = self.task_configs.get(name, {})
        return tuple((task, configs.get(task)) for task in range(self.task_counts.get(name, 0)))

    def target_state(self, name: str) -> str | None:
        return self.target_states.get(name) if name in self.connector_configs else None

    def active_topics(self, connector: str) -> tuple[ActiveTopic, ...]:
        return tuple(
            _active_topic(topic, connector, stored) for topic, stored in self.topics.get(connector, {}).items()
        )

    def topic_connectors(self, topic: str) -> tuple[str, ...]:
        """The connectors whose active topics include ``topic`` (one lookup per connector)."""
        return tuple(sorted(connector for connector, active in self.topics.items() if topic in active))

    def source_offsets(self, connector: str) -> tuple[SourceOffset, ...]:
        return tuple(self.offsets.get(connector, {}).values())

    def offset_commits_of(self, connector: str) -> tuple[tuple[SourceOffset, int], ...]:
        """Each source partition's offset with the timestamp of the record that committed it."""
        times = self.offset_commit_ms.get(connector, {})
        return tuple((offset, times.get(key, 0)) for key, offset in self.offsets.get(connector, {}).items())

    def age_s(self, now: float | None = None) -> float | None:
        """How old the newest record the view applied is (by the record's own timestamp)."""
        if self.last_record_timestamp_ms is None:
            return None
        return max(0.0, (now or time.time()) - self.last_record_timestamp_ms / 1000)

    def counts(self) -> dict[str, Any]:
        return {
            "connectors": len(self.connector_configs),
            "tasks": sum(len(t) for t in self.task_statuses.values()),
            "active_topic_records": sum(len(t) for t in self.topics.values()),
            "source_offset_partitions": sum(len(p) for p in self.offsets.values()),
        }


# a topic status record as the view keeps it: one int when its task and timestamp are small and positive (as
# every worker writes them: ``discover_timestamp << 17 | task``, under 2**60, a 32-byte int), else the pair;
# the TopicStatus itself when its value names another topic or connector than its key
PackedTopic: TypeAlias = int | tuple[int, int] | TopicStatus
_TASK_BITS = 17
_TASK_LIMIT = 1 << _TASK_BITS
_TIMESTAMP_LIMIT = 1 << 43  # ms since the epoch: until the year 2248


def _pack_topic(record: TopicStatus) -> PackedTopic:
    if record.name is not None or record.value_connector is not None:
        return record
    task, discovered = record.task, record.discover_timestamp
    if 0 <= task < _TASK_LIMIT and 0 <= discovered < _TIMESTAMP_LIMIT:
        return discovered << _TASK_BITS | task
    return (task, discovered)


def _active_topic(topic: str, connector: str, stored: PackedTopic) -> ActiveTopic:
    if isinstance(stored, int):
        return ActiveTopic(topic, connector, stored & (_TASK_LIMIT - 1), stored >> _TASK_BITS)
    if isinstance(stored, tuple):
        return ActiveTopic(topic, connector, stored[0], stored[1])
    return ActiveTopic(stored.topic, stored.connector, stored.task, stored.discover_timestamp)


def _entry(status: ConnectorStatus | TaskStatus) -> StateEntry:
    return StateEntry(
        status.state, status.worker_id, status.trace, status.version, status.generation, status.version_field
    )
