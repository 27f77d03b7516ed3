"""Raw internal-topic records for small frames, encoded by the codecs (``encode_*``) as a worker writes
them, placed by ``partition_for_key`` as the producer would, with explicit timestamps."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import count
from typing import Any

from pyspark.sql import DataFrame, Row, SparkSession

from control_plane.codecs import (
    ConfigKey,
    ConfigKind,
    ConnectorConfig,
    ConnectorStatus,
    OffsetKey,
    SourceOffset,
    StatusKey,
    StatusKind,
    TargetState,
    TaskStatus,
    Tombstone,
    TopicStatus,
    encode_config,
    encode_offset,
    encode_status,
    partition_for_key,
)
from control_plane.codecs.config_history import Author, HistoryEntry, HistoryKey, encode_author, encode_entry
from spark_jobs.read import RECORDS_SCHEMA
from spark_jobs.transforms import OffsetParts, first_missing_offsets, key_summary, source_restore_plan

TOPICS = {"config": "cfg", "status": "st", "offsets": "off", "history": "cluster.control-plane"}
OFFSET_PARTITIONS = 5
STATUS_PARTITIONS = 3


@dataclass
class History:
    """Records appended in order; each topic partition numbers its own offsets."""

    rows: list[tuple[Any, ...]] = field(default_factory=list)
    _next: dict[tuple[str, int], count[int]] = field(default_factory=dict)

    def add(
        self,
        role: str,
        key: bytes | None,
        value: bytes | None,
        ts: int,
        partition: int | None = None,
        partitions: int = 1,
    ) -> None:
        if partition is None:
            partition = partition_for_key(key, partitions) if key is not None and partitions > 1 else 0
        offsets = self._next.setdefault((role, partition), count())
        self.rows.append((role, TOPICS[role], partition, next(offsets), ts, key, value))

    # -- offsets topic
    def offset(
        self, connector: str, partition: Mapping[str, Any] | None, offset: Mapping[str, Any], ts: int, **kw: Any
    ) -> None:
        key, value = encode_offset(SourceOffset(connector, partition, offset))
        self.add("offsets", key, value, ts, partitions=OFFSET_PARTITIONS, **kw)

    def offset_tombstone(self, connector: str, partition: Mapping[str, Any] | None, ts: int) -> None:
        key, value = encode_offset(Tombstone(OffsetKey(connector, partition)))
        self.add("offsets", key, value, ts, partitions=OFFSET_PARTITIONS)

    def raw_offset(self, key: bytes, value: bytes | None, ts: int, **kw: Any) -> None:
        self.add("offsets", key, value, ts, partitions=OFFSET_PARTITIONS, **kw)

    # -- config topic
    def connector(self, name: str, props: Mapping[str, str], ts: int) -> None:
        self.add("config", *encode_config(ConnectorConfig(name, dict(props))), ts)

    def delete_connector(self, name: str, ts: int) -> None:
        self.add("config", *encode_config(Tombstone(ConfigKey(ConfigKind.CONNECTOR, name))), ts)

    def target_state(self, name: str, state: str, ts: int) -> None:
        self.add("config", *encode_config(TargetState.of(name, state)), ts)

    # -- status topic
    def topic_used(self, topic: str, connector: str, ts: int, task: int = 0) -> None:
        key, value = encode_status(TopicStatus(topic, connector, task, ts))
        self.add("status", key, value, ts, partitions=STATUS_PARTITIONS)

    def topic_reset(self, topic: str, connector: str, ts: int) -> None:
        key, value = encode_status(Tombstone(StatusKey(StatusKind.TOPIC, connector, topic=topic)))
        self.add("status", key, value, ts, partitions=STATUS_PARTITIONS)

    def state(self, connector: str, state: str, ts: int, task: int | None = None, trace: str | None = None) -> None:
        if task is None:
            record: ConnectorStatus | TaskStatus = ConnectorStatus(connector, state, trace, "w1:8083", 1)
        else:
            record = TaskStatus(connector, task, state, trace, "w1:8083", 1)
        key, value = encode_status(record)
        self.add("status", key, value, ts, partitions=STATUS_PARTITIONS)

    # -- the sidecars' topic: the config history
    def version(
        self, name: str, version: int, props: Mapping[str, str] | None, ts: int, change: str = "updated"
    ) -> None:
        entry = HistoryEntry(version, name, ts, change, dict(props) if props is not None else None, "STARTED", "s1")
        self.add("history", *encode_entry(entry), ts + 5)

    def version_expired(self, name: str, version: int, ts: int) -> None:
        self.add("history", *encode_entry(Tombstone(HistoryKey(version, name))), ts)

    def author(self, name: str, version: int, who: str, ts: int) -> None:
        self.add("history", *encode_author(Author(version, name, who, "s1")), ts)

    def sidecar_record(self, key: bytes, value: bytes, ts: int) -> None:
        self.add("history", key, value, ts)

    def frame(self, spark: SparkSession) -> DataFrame:
        return spark.createDataFrame(self.rows, RECORDS_SCHEMA)


SOURCE = {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "topic": "lines"}
SINK = {"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "topics": "lines"}


def without_key_id(rows: list[Row]) -> list[dict[str, Any]]:
    """``decode_offset_parts``' frame's rows as dicts without ``key_id``, after checking it: the rank of the row's key
    bytes among the distinct keys (the same for the same bytes, in byte order, nulls last)."""
    of = [None if r["key"] is None else bytes(r["key"]) for r in rows]
    known = sorted({k for k in of if k is not None})
    keys: list[bytes | None] = [*known, *([None] if None in of else [])]
    assert [r["key_id"] for r in rows] == [keys.index(k) for k in of]
    return [{k: v for k, v in r.asDict().items() if k != "key_id"} for r in rows]


def restore_plan(parts: OffsetParts, connectors: DataFrame, as_of_ms: int) -> DataFrame:
    """The source restore plan as of ``as_of_ms``, composed as offsets-reconcile composes it."""
    return source_restore_plan(key_summary(parts, as_of_ms), first_missing_offsets(parts.frame), connectors)
