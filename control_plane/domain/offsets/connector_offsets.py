"""Connector offsets (KIP-875): read, alter and reset, for source and sink connectors, on workers that
cannot (``GET`` before 3.5, ``PATCH`` and ``DELETE`` before 3.6), in Connect's order: the connector, its
state, then the request's contents.

Mirrors Connect's Worker (``connectorOffsets``, ``modifySourceConnectorOffsets``,
``modifySinkConnectorOffsets``) and DistributedHerder (``modifyConnectorOffsetsChecks``):

- the connector must exist (404 "Connector <c> not found"); alter and reset need its target state
  STOPPED and zero tasks in the config topic, else 400 and nothing is written. That precondition is checked
  first, then again at the moment of the write, after the wait for the tasks' last commits
  (``cluster.writes``): a resume that lands during the wait is a 400, never a 200 that its running tasks
  undo;
- a connector whose class the worker cannot load (type ``unknown``) is neither source nor sink to Connect:
  every offsets request of it is Connect's 500 "Failed to find any class ...", after the state check
  for alter and reset (Worker.modifyConnectorOffsets loads the class once the herder's checks passed);
- source offsets live in the worker's offsets topic (the view tails it) and, when the connector sets
  ``offsets.storage.topic`` to another topic (on workers from 3.3, KIP-618; older ones ignore the key), in
  that one too (read here when needed): reads merge both, the connector's own topic winning; an alter
  writes tombstones to the worker's topic first, then every record to the connector's topic, then the
  values to the worker's topic (ConnectorOffsetBackingStore);
  a reset writes a tombstone for every known partition to both. Records reuse the exact key bytes a
  partition already has (so the tasks, which look offsets up by bytes, find them); a new partition is
  keyed as the worker writes it, fields in java.util.HashMap order. Writes are confirmed by reading the
  topics back;
- sink offsets are the committed offsets of the connector's consumer group (``connect-<c>``, or the
  worker's ``consumer.group.id``, or the connector's ``consumer.override.group.id``): an alter commits
  the given offsets and deletes the ones set to null, a reset deletes the group (a missing group is
  success); both are refused with Connect's message while the group has active members, and confirmed
  by reading the group's offsets back.

The sidecar cannot call a connector's ``alterOffsets`` hook, so success answers are Connect's
"framework-managed" messages. Where the offsets are is decided as the worker of that version decides
it (``_offsets_client``), on the configuration as the worker uses it (config provider references
resolved, ``rules.config_providers``): a connector whose offsets are on another Kafka cluster (compared
by cluster id, not by bootstrap string) is refused, and so is one where the sidecar cannot tell.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from ...codecs import Malformed, OffsetKey, SourceOffset, decode_offset, json_wire
from ...codecs.javalang import canonical_partition as canonical
from ...codecs.javalang import java_hash_map_order
from ...rules.config_providers import ConfigProviders
from ...rules.connectors import (
    CONSUMER_BOOTSTRAP_OVERRIDE,
    GROUP_OVERRIDE_KEY,
    PRODUCER_BOOTSTRAP_OVERRIDE,
    client_cluster,
    on_another_cluster,
    sink_group_id,
)
from ...storage.errors import GroupNotEmpty, GroupOperationError, ReadTimeout
from ...storage.offsets_writer import OffsetRecord, OffsetsWriteFailed
from ...view import ClusterView
from ..cluster.fence import within_budget
from ..cluster.writes import ConnectorWrites, read_failure
from ..errors import BadRequestError, NotFoundError, OperationFailed, ViewNotReady
from ..ports import ClusterMetadata, GroupAdmin, OffsetsLog, TopicPartition, TopicReader, ViewSnapshot
from .messages import (
    cannot_reach,
    class_not_found,
    cluster_unknown,
    framework_managed,
    needs_fencing,
    not_found,
    not_stopped,
    sink_tasks_running,
    unresolved,
)
from .request import (
    KAFKA_OFFSET_KEY,
    KAFKA_PARTITION_KEY,
    KAFKA_TOPIC_KEY,
    OffsetEntry,
    SinkOffsetEntry,
    check_sink_topics,
    check_source_entries,
    parse_sink_entries,
)
from .task_shutdown import TaskShutdown

log = structlog.get_logger(__name__)

OFFSETS_TOPIC_KEY = "offsets.storage.topic"  # SourceConnectorConfig (KIP-618)


@dataclass(frozen=True)
class WorkerKafka:
    """What the worker's properties say about where connectors' offsets live."""

    bootstrap: str  # bootstrap.servers
    offsets_topic: str | None  # offset.storage.topic
    consumer_group: str | None = None  # consumer.group.id
    producer_bootstrap: str | None = None  # producer.bootstrap.servers
    consumer_bootstrap: str | None = None  # consumer.bootstrap.servers
    exactly_once_source_support: str = "disabled"  # exactly.once.source.support (KIP-618)
    config_providers: ConfigProviders = field(default_factory=ConfigProviders)  # config.providers (KIP-297)


@dataclass(frozen=True)
class PartitionOffset:
    """One entry of Connect's ``ConnectorOffsets``: maps in the order Connect's answer has them."""

    partition: Mapping[str, Any]
    offset: Mapping[str, Any] | None


@dataclass(frozen=True)
class DuplicateKeys:
    """One source partition stored in ``topic`` under several key encodings, the one shown first."""

    topic: str
    keys: tuple[bytes, ...]


@dataclass(frozen=True)
class OffsetsRead:
    offsets: tuple[PartitionOffset, ...]
    duplicates: tuple[DuplicateKeys, ...] = ()


def _lookup_rank(name: str, key: bytes, record: SourceOffset) -> int:
    """Which of a partition's keys the tasks find: a task looks its offsets up by the bytes the worker's
    converter makes of its partition map (OffsetStorageReaderImpl), compact JSON in the map's order: the
    java.util.HashMap order first (what the worker itself writes after an alter, and most tasks' maps),
    then the order the record has, then anything else (a key written by hand, with spaces)."""
    partition = record.partition or {}
    if key == OffsetKey(name, java_hash_map_order(partition)).to_bytes():
        return 0
    return 1 if key == OffsetKey(name, partition).to_bytes() else 2


class ResolvedConfig(dict[str, str | None]):
    """A connector's configuration as its worker uses it: config provider references resolved
    (WorkerConfigTransformer), the keys the sidecar could not resolve, and, per bootstrap string its
    offsets client uses, whether that is the worker's Kafka cluster (True, False, or why it is not known)."""

    def __init__(
        self,
        values: Mapping[str, str | None],
        unresolved: Mapping[str, str],
        clusters: Mapping[str, bool | str] | None = None,
        ids: tuple[str, str] | None = None,
    ) -> None:
        super().__init__(values)
        self.unresolved = dict(unresolved)
        self.clusters = dict(clusters or {})
        self.ids = ids  # (the client's cluster id, the worker's), where they differ


@dataclass(frozen=True)
class _Source:
    """Where a source connector's offsets are: the worker's topic and, maybe, its own."""

    worker_topic: str
    own_topic: str | None


def listed(records: Mapping[bytes, SourceOffset]) -> list[tuple[bytes, SourceOffset]]:
    """The records of the partitions the worker knows (OffsetUtils.processPartitionKey): a key whose partition
    is null (an alter may write one) is never listed, nor reset."""
    return [(key, record) for key, record in records.items() if record.partition is not None]


class EmulatedOffsets:
    def __init__(
        self,
        view: ViewSnapshot | None,
        groups: GroupAdmin,
        metadata: ClusterMetadata,
        writer: OffsetsLog,
        reader: TopicReader,
        *,
        worker: WorkerKafka,
        read_back_timeout_s: float,
        shutdown: TaskShutdown | None,
        writes: ConnectorWrites,
        connector_offsets_topics: Callable[[], bool] = lambda: True,
    ) -> None:
        self._view = view
        self._groups = groups
        self._metadata = metadata
        self._writer = writer
        self._reader = reader
        self._worker = worker
        self.read_back_timeout_s = read_back_timeout_s
        self._shutdown = shutdown
        self._writes = writes
        # whether the workers honour a source connector's own offsets.storage.topic (KIP-618, 3.3): before,
        # the key means nothing to them and its offsets are in the worker's topic only
        self._connector_offsets_topics = connector_offsets_topics

    # -- the connector as the config topic has it -------------------------------------------------
    def _ready_view(self) -> ViewSnapshot:
        if self._view is None:
            raise ViewNotReady(
                "Connector offsets on this Connect version need the sidecar's view of the internal topics, "
                "which is not configured (no config.storage.topic and status.storage.topic)"
            )
        if not self._view.ready:
            raise ViewNotReady(
                "Connector offsets on this Connect version need the sidecar's view, which is still reading the topics"
            )
        return self._view

    async def _config(self, name: str, *, refresh: str) -> tuple[ClusterView, Mapping[str, str | None]]:
        view = self._ready_view()
        try:
            await view.read_to_end("config", within_budget(self.read_back_timeout_s))
        except ReadTimeout as err:
            raise OperationFailed(f"{refresh}: {await read_failure(view, 'config', err, self._metadata)}") from err
        config = view.state.connector_config(name)
        if config is None:
            raise NotFoundError(not_found(name))
        return view.state, await self._as_worker_uses(view.state.connector_type(name), config)

    def _source_topics(self, config: Mapping[str, str | None]) -> _Source:
        worker_topic = self._worker.offsets_topic
        if not worker_topic or self._view is None or not self._view.has_tail("offsets"):
            raise OperationFailed(
                "The sidecar does not know the worker's offsets topic: give it offset.storage.topic "
                "(the worker's properties file, or CONTROL_PLANE_OFFSET_STORAGE_TOPIC)"
            )
        own = config.get(OFFSETS_TOPIC_KEY) if self._connector_offsets_topics() else None
        # the connector's own topic is on its producer's cluster, which _check_reachable found the worker's
        return _Source(worker_topic, own if own and own != worker_topic else None)

    async def _as_worker_uses(self, kind: str, config: Mapping[str, str | None]) -> ResolvedConfig:
        """``config`` with its provider references resolved as the worker resolves them, and whether the
        cluster of its offsets (``_offsets_client``) is the worker's: the same bootstrap servers, or other
        ones that reach a cluster of the same id (ConnectUtils.lookupKafkaClusterId)."""
        if isinstance(config, ResolvedConfig):
            return config
        resolved = self._worker.config_providers.resolve(config)
        connector = ResolvedConfig(resolved.values, resolved.unresolved)
        client = self._offsets_client(kind, connector)
        if client is None or client[0] in connector.unresolved:
            return connector
        servers = client[1]
        if not on_another_cluster(servers, self._worker.bootstrap):
            connector.clusters[servers] = True
            return connector
        try:
            ids = (await self._metadata.cluster_id(servers), await self._metadata.cluster_id(None))
        except GroupOperationError as err:
            connector.clusters[servers] = err.cause
            return connector
        if ids[0] is None or ids[1] is None:
            connector.clusters[servers] = "a broker did not name its cluster id"
        else:
            connector.clusters[servers] = ids[0] == ids[1]
            connector.ids = (ids[0], ids[1])
        return connector

    def _offsets_client(self, kind: str, config: Mapping[str, str | None]) -> tuple[str, str] | None:
        """The override key and bootstrap servers of the client whose cluster holds the connector's offsets;
        None where they are in the worker's offsets topic whatever its producer uses. A sink's group is on its
        consumer's cluster. A source's offsets are in the worker's topic alone unless the worker keeps a
        connector-specific store (from 3.3, KIP-618): the connector sets offsets.storage.topic, or the worker
        has exactly-once source support enabled; that store is on the producer's cluster
        (Worker.offsetStoreForRegularSourceConnector, offsetStoreForExactlyOnceSourceConnector). Before 3.3,
        the worker's store only (Worker.buildWorkerTask, 2.8)."""
        if kind == "sink":
            return CONSUMER_BOOTSTRAP_OVERRIDE, self._client_cluster(kind, config)
        exactly_once = self._worker.exactly_once_source_support.strip().lower() == "enabled"
        if not self._connector_offsets_topics() or not (config.get(OFFSETS_TOPIC_KEY) or exactly_once):
            return None
        return PRODUCER_BOOTSTRAP_OVERRIDE, self._client_cluster(kind, config)

    async def _check_stopped(self, state: ClusterView, name: str) -> None:
        """DistributedHerder.modifyConnectorOffsetsChecks (STOPPED, no tasks), then: the tasks have really
        stopped and their last commits are read (``task_shutdown``), else 409 and nothing is written. The
        write checks STOPPED again (``_write_when_stopped``)."""
        _require_stopped(state, name)
        if self._shutdown is not None:
            await self._shutdown.wait(name)

    async def _write_when_stopped(self, name: str, write: Callable[[], Awaitable[None]]) -> None:
        """``write`` at the moment the config topic, read to its end, still has the connector STOPPED with no
        tasks (DistributedHerder.modifyConnectorOffsets checks in the tick that writes)."""
        await self._writes.checked(
            name,
            lambda state: _require_stopped(state, name),
            write,
            failure="Failed to read to end of config topic before modifying connector offsets",
        )

    @staticmethod
    def _check_loadable(name: str, kind: str, state: ClusterView, config: Mapping[str, str | None]) -> None:
        """Connect's answer for a connector whose class its worker cannot load (``class_not_found``)."""
        if kind in ("source", "sink"):
            return
        connector_class = config.get("connector.class") or ""
        raise OperationFailed(class_not_found(connector_class, sorted(state.plugin_types)))

    def _client_cluster(self, kind: str, config: Mapping[str, str | None]) -> str:
        if kind == "sink":
            return client_cluster(
                config, CONSUMER_BOOTSTRAP_OVERRIDE, self._worker.bootstrap, self._worker.consumer_bootstrap
            )
        return client_cluster(
            config, PRODUCER_BOOTSTRAP_OVERRIDE, self._worker.bootstrap, self._worker.producer_bootstrap
        )

    def _check_reachable(
        self, name: str, kind: str, config: Mapping[str, str | None], *, modifying: bool = False
    ) -> None:
        """What the emulation cannot do safely is refused, never answered 200: offsets or a group on another
        Kafka cluster (by cluster id), or where it is not known; where they are depends on a config provider
        reference the sidecar cannot resolve; source offsets of an exactly-once cluster (they need zombie
        fencing)."""
        label = "sink" if kind == "sink" else "source"
        connector = config if isinstance(config, ResolvedConfig) else ResolvedConfig(config, {})
        needed: tuple[str, ...] = (GROUP_OVERRIDE_KEY,) if kind == "sink" else (OFFSETS_TOPIC_KEY,)
        client = self._offsets_client(kind, connector)
        needed += (client[0],) if client else ()
        why = next((f"{key}: {connector.unresolved[key]}" for key in needed if key in connector.unresolved), None)
        if why is not None:
            raise BadRequestError(unresolved(name, label, why))
        if client is not None:
            servers = client[1]
            same = connector.clusters.get(servers, not on_another_cluster(servers, self._worker.bootstrap))
            if isinstance(same, str):
                raise BadRequestError(cluster_unknown(name, label, servers, same))
            if not same:
                raise BadRequestError(cannot_reach(name, label, servers, self._worker.bootstrap, connector.ids))
        mode = self._worker.exactly_once_source_support.strip().lower()
        if modifying and kind != "sink" and mode == "enabled":
            raise BadRequestError(needs_fencing(name, mode))

    # -- checks of an alter request's contents, as Connect's Worker makes them --------------------------
    async def check_entries(self, kind: str, entries: Sequence[OffsetEntry]) -> tuple[SinkOffsetEntry, ...]:
        """Connect's answers for contents a ``kind`` connector cannot take; a sink's topics and partitions
        must exist (its group is on the worker's cluster: ``_check_reachable`` came first)."""
        if kind == "source":
            check_source_entries(entries)
            return ()
        if kind != "sink":
            return ()
        parsed = parse_sink_entries(entries)
        try:
            counts = await self._metadata.partition_counts(e.topic for e in parsed)
        except GroupOperationError as err:
            log.warning("cannot check the topics of a sink offsets request", error=str(err))
            return parsed  # the write fails with the broker's answer instead
        check_sink_topics(parsed, counts)
        return parsed

    # -- GET ------------------------------------------------------------------------------------
    async def read(self, name: str) -> OffsetsRead:
        state, config = await self._config(name, refresh=f"Failed to retrieve offsets for connector {name}")
        self._check_loadable(name, state.connector_type(name), state, config)
        self._check_reachable(name, state.connector_type(name), config)
        if state.connector_type(name) == "sink":
            group = sink_group_id(name, config, self._worker.consumer_group)
            try:
                committed = await self._groups.committed(group)
            except GroupOperationError as err:
                raise OperationFailed(
                    f"Failed to retrieve consumer group offsets for sink connector {name}: {err.cause}"
                ) from err
            return OffsetsRead(
                tuple(
                    PartitionOffset(
                        java_hash_map_order({KAFKA_TOPIC_KEY: topic, KAFKA_PARTITION_KEY: partition}),
                        {KAFKA_OFFSET_KEY: offset},
                    )
                    for (topic, partition), offset in sorted(committed.items())
                )
            )
        where = self._source_topics(config)
        failed = f"Failed to retrieve offsets for source connector {name}"
        records = await self._source_records(name, where, failed)
        merged: dict[bytes, SourceOffset] = {}
        duplicates: list[DuplicateKeys] = []
        for topic, topic_records in records.items():  # the worker's topic first, the connector's own then wins
            by_partition: dict[bytes, list[tuple[bytes, SourceOffset]]] = {}
            for key, record in listed(topic_records):
                by_partition.setdefault(canonical(record.partition), []).append((key, record))
            for ident, keyed in by_partition.items():
                keyed.sort(key=lambda pair: _lookup_rank(name, *pair))
                merged[ident] = keyed[0][1]
                if len(keyed) > 1:
                    duplicates.append(DuplicateKeys(topic, tuple(key for key, _ in keyed)))
        for duplicate in duplicates:
            log.warning(
                "a source partition is stored under several keys; the answer shows the one the tasks look up",
                connector=name,
                topic=duplicate.topic,
                keys=[key.decode("utf-8", "replace") for key in duplicate.keys],
            )
        return OffsetsRead(
            tuple(
                PartitionOffset(java_hash_map_order(r.partition or {}), java_hash_map_order(r.offset))
                for r in merged.values()
            ),
            tuple(duplicates),
        )

    async def _source_records(
        self, name: str, where: _Source, failed: str, *, written: bool = False
    ) -> dict[str, dict[bytes, SourceOffset]]:
        """Per topic (the worker's first), the connector's records by exact key bytes, read to the end: within
        the request's budget before a write, within ``read_back_timeout_s`` once ``written`` (a read back cut
        short by the budget would turn a write that landed into a failure)."""
        assert self._view is not None
        timeout_s = self.read_back_timeout_s if written else within_budget(self.read_back_timeout_s)
        try:
            await self._view.read_to_end("offsets", timeout_s)
        except ReadTimeout as err:
            cause = await read_failure(self._view, "offsets", err, self._metadata)
            raise OperationFailed(f"{failed}: {cause}") from err
        out = {where.worker_topic: dict(self._view.state.offsets.get(name, {}))}
        if where.own_topic:
            own = await self._read_own_topic(where.own_topic, failed, timeout_s)
            out[where.own_topic] = own.offsets.get(name, {})
        return out

    async def _read_own_topic(self, topic: str, failed: str, timeout_s: float) -> ClusterView:
        """A connector's own offsets topic, read once from the beginning to its end (KafkaBasedLog)."""
        records = ClusterView()
        try:
            counts = await self._metadata.partition_counts([topic])
        except GroupOperationError as err:
            raise OperationFailed(f"{failed}: {err}") from err
        if counts.get(topic) is None:
            return records  # never written: no offsets
        try:
            read = await self._reader.read_all(topic, timeout_s)
        except ReadTimeout as err:
            raise OperationFailed(f"{failed}: {err}") from err
        for record in read:
            decoded = decode_offset(record.key, record.value)
            if not isinstance(decoded, Malformed) and record.key is not None:
                records.apply_offset(decoded, record.key, record.timestamp)
        return records

    # -- PATCH ----------------------------------------------------------------------------------
    async def alter(self, name: str, entries: Sequence[OffsetEntry]) -> str:
        state, config = await self._config(
            name, refresh="Failed to read to end of config topic before modifying connector offsets"
        )
        kind = state.connector_type(name)
        await self._check_stopped(state, name)  # Connect's order: the state, then the connector, then the body
        self._check_loadable(name, kind, state, config)
        self._check_reachable(name, kind, config, modifying=True)
        sink_entries = await self.check_entries(kind, entries)
        if kind == "sink":
            await self._write_when_stopped(name, lambda: self._alter_sink(name, config, sink_entries))
        else:
            await self._write_when_stopped(name, lambda: self._alter_source(name, config, entries))
        return framework_managed("altered")

    async def _alter_source(self, name: str, config: Mapping[str, str | None], entries: Sequence[OffsetEntry]) -> None:
        where = self._source_topics(config)
        failed = f"Failed to modify offsets for source connector {name}"
        known = await self._source_records(name, where, failed)
        wanted: dict[bytes, OffsetEntry] = {}
        for entry in entries:  # a partition given twice: the last entry wins, as in Connect's map
            wanted.pop(canonical(entry.partition), None)
            wanted[canonical(entry.partition)] = entry
        existing: dict[bytes, set[bytes]] = {}  # canonical partition -> every key it has in either topic
        for topic_records in known.values():
            for key, record in topic_records.items():
                existing.setdefault(canonical(record.partition), set()).add(key)
        records: list[OffsetRecord] = []
        for ident, entry in wanted.items():
            value = None if entry.offset is None else json_wire.dumps(java_hash_map_order(entry.offset))
            partition = None if entry.partition is None else java_hash_map_order(entry.partition)
            new_key = OffsetKey(name, partition).to_bytes()  # OffsetStorageWriter.doFlush: [name, partition]
            keys = sorted(existing.get(ident) or {new_key})
            records += [(key, value) for key in keys]
        await self._write_source(name, where, records, failed)

    async def _write_source(self, name: str, where: _Source, records: list[OffsetRecord], failed: str) -> None:
        """ConnectorOffsetBackingStore.set: with a connector-specific topic, tombstones to the worker's
        topic first, then everything to the connector's topic, then the values to the worker's topic."""
        tombstones = [r for r in records if r[1] is None]
        values = [r for r in records if r[1] is not None]
        steps = [(where.worker_topic, records)]
        if where.own_topic and await self._groups_partition_count(where.own_topic, failed) is not None:
            steps = [(where.worker_topic, tombstones), (where.own_topic, records), (where.worker_topic, values)]
        elif where.own_topic and values:  # the worker creates it when the connector first runs
            raise OperationFailed(
                f"{failed}: its offsets topic {where.own_topic} (offsets.storage.topic) does not exist; "
                "nothing was written"
            )
        done: list[str] = []
        for topic, batch in steps:
            try:
                await self._writer.write(topic, batch)
            except OffsetsWriteFailed as err:
                if not done and not err.written:
                    raise OperationFailed(
                        f"{failed}: writing to the offsets topic {topic} failed, nothing was written: {err.cause}"
                    ) from err
                wrote = f"{len(err.written)} of {len(batch)} records to {topic}" + (
                    f" after every record to {', '.join(done)}" if done else ""
                )
                raise OperationFailed(
                    f"{failed}: writing to the offsets topic {topic} failed: {err.cause.rstrip('.')}. "
                    f"Written: {wrote}; "
                    "the offsets are partly modified. Repeat the request once Kafka is reachable to complete it."
                ) from err
            if batch:
                done.append(topic)
        await self._confirm_source(name, where, records, failed)

    async def _confirm_source(self, name: str, where: _Source, records: list[OffsetRecord], failed: str) -> None:
        read = await self._source_records(name, where, f"{failed}: written but not read back", written=True)
        for topic, present in read.items():  # with an own topic, every record went to both
            for key, value in records:
                now = present.get(key)
                expected = None if value is None else decode_offset(key, value)
                if (expected is None) != (now is None) or (
                    isinstance(expected, SourceOffset) and now is not None and now.offset != expected.offset
                ):
                    raise OperationFailed(
                        f"{failed}: written, but reading {topic} back shows {key.decode('utf-8', 'replace')} = "
                        f"{None if now is None else json_wire.dumps(now.offset).decode()}: another writer changed it"
                    )

    async def _groups_partition_count(self, topic: str, failed: str) -> int | None:
        try:
            return (await self._metadata.partition_counts([topic])).get(topic)
        except GroupOperationError as err:
            raise OperationFailed(f"{failed}: {err}") from err

    async def _alter_sink(
        self, name: str, config: Mapping[str, str | None], entries: Sequence[SinkOffsetEntry]
    ) -> None:
        group = sink_group_id(name, config, self._worker.consumer_group)
        commits = {(e.topic, e.partition): e.offset for e in entries if e.offset is not None}
        deletes = [(e.topic, e.partition) for e in entries if e.offset is None]
        failed = f"Failed to alter consumer group offsets for connector {name}"
        try:
            if await self._groups.active_members(group):
                raise OperationFailed(sink_tasks_running(name, "alter"))
            if commits:
                await self._groups.commit(group, commits)
            if deletes:
                await self._groups.delete_offsets(group, deletes)
            committed = await self._groups.committed(group)
        except GroupNotEmpty as err:
            raise OperationFailed(sink_tasks_running(name, "alter")) from err
        except GroupOperationError as err:
            raise OperationFailed(f"{failed}: {err}") from err
        wrong = [tp for tp, offset in commits.items() if committed.get(tp) != offset]
        wrong += [tp for tp in deletes if tp in committed]
        if wrong:
            raise OperationFailed(f"{failed}: written, but the group {group} reads back {_show(wrong, committed)}")

    # -- DELETE ---------------------------------------------------------------------------------
    async def reset(self, name: str) -> str:
        state, config = await self._config(
            name, refresh="Failed to read to end of config topic before modifying connector offsets"
        )
        kind = state.connector_type(name)
        await self._check_stopped(state, name)
        self._check_loadable(name, kind, state, config)
        self._check_reachable(name, kind, config, modifying=True)
        if kind == "sink":
            await self._write_when_stopped(name, lambda: self._reset_sink(name, config))
        else:
            await self._write_when_stopped(name, lambda: self._reset_source(name, config))
        return framework_managed("reset")

    async def _reset_source(self, name: str, config: Mapping[str, str | None]) -> None:
        where = self._source_topics(config)
        failed = f"Failed to modify offsets for source connector {name}"
        known = await self._source_records(name, where, failed)
        keys = sorted({key for records in known.values() for key, _ in listed(records)})
        if not keys:  # Worker: "No offsets found for source connector ..." is a success (idempotent)
            log.info("no offsets to reset", connector=name)
            return
        await self._write_source(name, where, [(key, None) for key in keys], failed)

    async def _reset_sink(self, name: str, config: Mapping[str, str | None]) -> None:
        group = sink_group_id(name, config, self._worker.consumer_group)
        try:
            if await self._groups.active_members(group):
                raise OperationFailed(sink_tasks_running(name, "reset"))
            existed = await self._groups.delete_group(group)
            left = await self._groups.committed(group)
        except GroupNotEmpty as err:
            raise OperationFailed(sink_tasks_running(name, "reset")) from err
        except GroupOperationError as err:
            raise OperationFailed(f"Failed to reset consumer group offsets for sink connector {name}: {err}") from err
        if left:
            raise OperationFailed(
                f"Failed to reset consumer group offsets for sink connector {name}: the group {group} was deleted "
                f"but reads back offsets for {_show(list(left), left)}"
            )
        log.info("sink offsets reset", connector=name, group=group, group_existed=existed)


def _require_stopped(state: ClusterView, name: str) -> None:
    """DistributedHerder.modifyConnectorOffsetsChecks: target state STOPPED and no task configs."""
    if state.connector_config(name) is None:
        raise NotFoundError(not_found(name))
    if state.target_state(name) != "STOPPED" or state.task_counts.get(name, 0) != 0:
        raise BadRequestError(not_stopped(name))


def _show(partitions: Sequence[TopicPartition], committed: Mapping[TopicPartition, int]) -> str:
    return ", ".join(f"{t}-{p}={committed.get((t, p), 'none')}" for t, p in partitions)


__all__ = ["DuplicateKeys", "EmulatedOffsets", "OffsetsRead", "PartitionOffset", "ResolvedConfig", "WorkerKafka"]
