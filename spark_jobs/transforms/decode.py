"""Decoding the raw records with the sidecar's codecs, inside the Python workers (``mapInArrow``).

Each function takes the records of :data:`spark_jobs.read.RECORDS_SCHEMA` and returns one row per
record of its role, with the codec's outcome spread into columns. A record the codec rejects keeps its
row with ``malformed`` set (the reason) and is skipped by every later transform: counted, never fatal.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Literal

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from control_plane.codecs import (
    ConnectorConfig,
    ConnectorStatus,
    Malformed,
    OffsetKey,
    SourceOffset,
    TargetState,
    TaskConfig,
    TaskStatus,
    Tombstone,
    TopicStatus,
    UnknownKey,
    config_key_of,
    decode_config,
    decode_offset,
    decode_status,
    partition_for_key,
)
from control_plane.codecs.config import ConfigKey
from control_plane.codecs.config_history import (
    AUTHOR_PREFIX,
    ENTRY_PREFIX,
    Author,
    HistoryEntry,
    HistoryKey,
    decode_author,
    decode_entry,
)
from control_plane.codecs.json_wire import dumps
from control_plane.codecs.status import StatusKey
from control_plane.rules.connectors import connector_type
from control_plane.rules.secrets import DEFAULT_SECRET_RULE

from .driver_codec import DRIVER_ROWS, codec_frame, in_workers
from .jsonnorm import normal_json, rank_of

KEY_CACHE = 100_000  # distinct offset keys remembered per task

POSITION = [
    StructField("kafka_partition", IntegerType(), False),
    StructField("kafka_offset", LongType(), False),
    StructField("timestamp", LongType(), False),
]

# what a job reports of the records of a topic it loaded: per reason a record was skipped (``malformed``;
# null: decoded) and Kafka partition, count_aggregates
COUNTED = ["malformed", "kafka_partition"]


def partition_aggregates() -> list[Column]:
    """Of a group of records: their count ``n``, lowest and highest offset (``low``, ``high``)."""
    return [F.count("*").alias("n"), F.min("kafka_offset").alias("low"), F.max("kafka_offset").alias("high")]


def count_aggregates() -> list[Column]:
    """Of a group of records: :func:`partition_aggregates` and their latest timestamp (``latest``)."""
    return [*partition_aggregates(), F.max("timestamp").alias("latest")]


# how :func:`count_aggregates`' columns of several groups add up to those of their records together (by
# Spark: rolled_up_counts; by Arrow in the driver, on rows it holds: jvm_decode's counts of the keys' pass)
ROLL_UP: dict[str, Literal["sum", "min", "max"]] = {"n": "sum", "low": "min", "high": "max", "latest": "max"}


def rolled_up_counts() -> list[Column]:
    """Of a group of :func:`count_aggregates` rows: the same aggregates over all their records."""
    return [getattr(F, function)(name).alias(name) for name, function in ROLL_UP.items()]


def record_counts(decoded: DataFrame) -> DataFrame:
    """Per :data:`COUNTED` group of decoded records: :func:`count_aggregates`."""
    return decoded.groupBy(*COUNTED).agg(*count_aggregates())


OFFSETS_SCHEMA = StructType(
    [
        *POSITION,
        StructField("key", BinaryType(), True),
        StructField("connector", StringType(), True),
        StructField("partition_json", StringType(), True),  # the source partition as the worker writes it
        StructField("logical_partition", StringType(), True),  # key order ignored: the same partition
        StructField("key_canonical", BooleanType(), True),  # key bytes == the worker's encoding of the key
        StructField("expected_kafka_partition", IntegerType(), True),  # where the default partitioner puts it
        StructField("tombstone", BooleanType(), False),
        StructField("offset_json", StringType(), True),
        StructField("offset_normal", StringType(), True),
        StructField("offset_rank", ArrayType(LongType()), True),
        StructField("malformed", StringType(), True),
    ]
)

CONFIG_SCHEMA = StructType(
    [
        *POSITION,
        StructField("kind", StringType(), True),  # connector, task, commit, target-state, restart, ...
        StructField("connector", StringType(), True),
        StructField("task", IntegerType(), True),
        StructField("tombstone", BooleanType(), False),
        StructField("properties", MapType(StringType(), StringType()), True),
        StructField("target_state", StringType(), True),  # the effective state: STARTED, PAUSED, STOPPED
        StructField("malformed", StringType(), True),
    ]
)

STATUS_SCHEMA = StructType(
    [
        *POSITION,
        StructField("kind", StringType(), True),  # connector, task, topic
        StructField("connector", StringType(), True),
        StructField("task", IntegerType(), True),
        StructField("topic", StringType(), True),
        StructField("state", StringType(), True),
        StructField("worker_id", StringType(), True),
        StructField("generation", IntegerType(), True),
        StructField("trace", StringType(), True),
        StructField("discover_timestamp", LongType(), True),
        StructField("tombstone", BooleanType(), False),
        StructField("malformed", StringType(), True),
    ]
)


HISTORY_SCHEMA = StructType(
    [
        *POSITION,
        StructField("kind", StringType(), True),  # entry (a version of a connector) or author (who wrote it)
        StructField("connector", StringType(), True),
        StructField("version", LongType(), True),  # the change's offset in the config topic
        StructField("tombstone", BooleanType(), False),
        StructField("changed_at", LongType(), True),  # the config topic record's timestamp
        StructField("change", StringType(), True),  # created, updated, state, deleted
        StructField("properties", MapType(StringType(), StringType()), True),  # secrets [hidden] already
        StructField("state", StringType(), True),
        StructField("type", StringType(), True),  # rules.connectors.connector_type of the version's config
        StructField("who", StringType(), True),
        StructField("sidecar", StringType(), True),
        StructField("malformed", StringType(), True),
    ]
)
_HISTORY_KEYS = (ENTRY_PREFIX.encode(), AUTHOR_PREFIX.encode())


def _columns(batch: pa.RecordBatch) -> Iterator[tuple[Any, ...]]:
    """The batch's (kafka_partition, kafka_offset, timestamp, key, value) rows as Python values."""
    return zip(
        *(batch.column(name).to_pylist() for name in ("kafka_partition", "kafka_offset", "timestamp", "key", "value")),
        strict=True,
    )


def _position(df: DataFrame, role: str) -> DataFrame:
    return df.filter(F.col("role") == role).select(
        F.col("partition").alias("kafka_partition"),
        F.col("offset").alias("kafka_offset"),
        "timestamp",
        "key",
        "value",
    )


def _key_fields(key: bytes, offset_key: OffsetKey, partitions: int | None) -> dict[str, object]:
    """What a record's key alone decides (the same for every commit of the partition)."""
    partition = offset_key.partition
    return {
        "connector": offset_key.connector,
        "partition_json": dumps(partition).decode("utf-8"),
        "logical_partition": normal_json(partition),
        "key_canonical": offset_key.to_bytes() == key,
        "expected_kafka_partition": partition_for_key(key, partitions) if partitions else None,
    }


def _offsets_rows(
    batch: pa.RecordBatch, partitions: int | None, keys: dict[bytes, dict[str, object]]
) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {f.name: [] for f in OFFSETS_SCHEMA.fields}
    for kp, ko, ts, key, value in _columns(batch):
        decoded = decode_offset(key, value)
        row: dict[str, object] = dict.fromkeys(out)
        row.update(kafka_partition=kp, kafka_offset=ko, timestamp=ts, key=key, tombstone=value is None)
        if isinstance(decoded, Malformed):
            row["malformed"] = decoded.reason
        else:
            fields = keys.get(key)
            if fields is None:
                if len(keys) >= KEY_CACHE:
                    keys.clear()
                fields = keys[key] = _key_fields(key, decoded.key, partitions)
            row.update(fields)
            if isinstance(decoded, SourceOffset):
                row["offset_json"] = value.decode("utf-8")  # the value as stored (it decoded, so it is UTF-8 JSON)
                row["offset_normal"] = normal_json(decoded.offset)
                row["offset_rank"] = rank_of(decoded.offset)
        for name, value_ in row.items():
            out[name].append(value_)
    return out


def decode_offsets_per_record(records: DataFrame, partitions: int | None = None) -> DataFrame:
    """The offsets topic's records, every one through the codec; ``partitions``: the topic's partition
    count (where each key belongs). The reference for :func:`.jvm_decode.decode_offset_parts`, which the jobs use."""

    schema = to_arrow_schema(OFFSETS_SCHEMA)

    def decode(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        keys: dict[bytes, dict[str, object]] = {}  # per task: a partition's commits share their key
        for batch in batches:
            yield pa.RecordBatch.from_pydict(_offsets_rows(batch, partitions, keys), schema=schema)

    return in_workers(_position(records, "offsets"), decode, OFFSETS_SCHEMA)


def _config_rows(batch: pa.RecordBatch) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {f.name: [] for f in CONFIG_SCHEMA.fields}
    for kp, ko, ts, key, value in _columns(batch):
        decoded = decode_config(key, value)
        row: dict[str, object] = dict.fromkeys(out)
        row.update(kafka_partition=kp, kafka_offset=ko, timestamp=ts, tombstone=value is None)
        if isinstance(decoded, (Malformed, UnknownKey)):
            row["malformed"] = decoded.reason if isinstance(decoded, Malformed) else "unknown key"
        elif isinstance(decoded, Tombstone):
            config_key: ConfigKey = decoded.key
            row.update(kind=config_key.kind.value.rstrip("-"), connector=config_key.name or None, task=config_key.task)
        else:
            config_key = config_key_of(decoded)
            row.update(kind=config_key.kind.value.rstrip("-"), connector=config_key.name or None, task=config_key.task)
            if isinstance(decoded, (ConnectorConfig, TaskConfig)):
                row["properties"] = DEFAULT_SECRET_RULE.mask_strings(decoded.properties)  # no secret in a report
            if isinstance(decoded, TargetState):
                row["target_state"] = decoded.effective
        for name, value_ in row.items():
            out[name].append(value_)
    return out


def decode_config_records(records: DataFrame, driver_rows: int = DRIVER_ROWS) -> DataFrame:
    """The config topic's records: connector configs (``properties``), target states, task commits...
    Up to ``driver_rows`` records (a config topic holds few) are decoded in the driver (this runs a Spark
    job at once), more in the Python workers. Decoded in the driver, the frame is one partition: the
    transforms aggregate and join it without a shuffle (each shuffle of a few rows costs a Spark job)."""
    frame, local = codec_frame(_position(records, "config"), _config_rows, CONFIG_SCHEMA, driver_rows)
    return frame.coalesce(1) if local else frame


def _history_rows(batch: pa.RecordBatch) -> dict[str, list[object]]:
    """The config history's records of the sidecars' topic; its other records (fences, presence, ...) give
    no row."""
    out: dict[str, list[object]] = {f.name: [] for f in HISTORY_SCHEMA.fields}
    for kp, ko, ts, key, value in _columns(batch):
        if not (key or b"").startswith(_HISTORY_KEYS):
            continue
        decoded: HistoryEntry | Author | Tombstone[HistoryKey] | UnknownKey | Malformed
        entry = key.startswith(_HISTORY_KEYS[0])
        decoded = decode_entry(key, value) if entry else decode_author(key, value)
        row: dict[str, object] = dict.fromkeys(out)
        row.update(kafka_partition=kp, kafka_offset=ko, timestamp=ts, tombstone=value is None)
        row["kind"] = "entry" if entry else "author"
        if isinstance(decoded, (Malformed, UnknownKey)):
            row["malformed"] = decoded.reason if isinstance(decoded, Malformed) else "unknown key"
        elif isinstance(decoded, Tombstone):
            row.update(connector=decoded.key.connector, version=decoded.key.offset)
        elif isinstance(decoded, HistoryEntry):
            config = dict(decoded.config) if decoded.config is not None else None
            row.update(
                connector=decoded.connector,
                version=decoded.offset,
                changed_at=decoded.timestamp_ms,
                change=decoded.change,
                properties=config,
                state=decoded.state,
                type=connector_type(config) if config is not None else None,
                sidecar=decoded.sidecar,
            )
        else:
            row.update(connector=decoded.connector, version=decoded.offset, who=decoded.who, sidecar=decoded.sidecar)
        for name, value_ in row.items():
            out[name].append(value_)
    return out


def decode_history_records(records: DataFrame, driver_rows: int = DRIVER_ROWS) -> DataFrame:
    """The config history's records (``codecs.config_history``) of the sidecars' topic, as
    :func:`decode_config_records` decodes the config topic's: in the driver when few."""
    frame, local = codec_frame(_position(records, "history"), _history_rows, HISTORY_SCHEMA, driver_rows)
    return frame.coalesce(1) if local else frame


def _status_rows(batch: pa.RecordBatch) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {f.name: [] for f in STATUS_SCHEMA.fields}
    for kp, ko, ts, key, value in _columns(batch):
        decoded = decode_status(key, value)
        row: dict[str, object] = dict.fromkeys(out)
        row.update(kafka_partition=kp, kafka_offset=ko, timestamp=ts, tombstone=value is None)
        if isinstance(decoded, (Malformed, UnknownKey)):
            row["malformed"] = decoded.reason if isinstance(decoded, Malformed) else "unknown key"
        elif isinstance(decoded, Tombstone):
            status_key: StatusKey = decoded.key
            kind = status_key.kind.value.removeprefix("status-").rstrip("-")
            row.update(kind=kind, connector=status_key.connector, task=status_key.task, topic=status_key.topic)
        elif isinstance(decoded, TopicStatus):
            row.update(
                kind="topic",
                connector=decoded.connector,
                task=decoded.task,
                topic=decoded.topic,
                discover_timestamp=decoded.discover_timestamp,
            )
        elif isinstance(decoded, (ConnectorStatus, TaskStatus)):
            row.update(
                kind="connector" if isinstance(decoded, ConnectorStatus) else "task",
                connector=decoded.connector,
                task=decoded.task if isinstance(decoded, TaskStatus) else None,
                state=decoded.state,
                worker_id=decoded.worker_id,
                generation=decoded.generation,
                trace=decoded.trace,
            )
        for name, value_ in row.items():
            out[name].append(value_)
    return out


def decode_status_positioned(positioned: DataFrame) -> DataFrame:
    """Status records already in the position columns (kafka_partition, kafka_offset, timestamp, key,
    value), every one through the codec."""

    schema = to_arrow_schema(STATUS_SCHEMA)

    def decode(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield pa.RecordBatch.from_pydict(_status_rows(batch), schema=schema)

    return in_workers(positioned, decode, STATUS_SCHEMA)


def decode_status_records_per_record(records: DataFrame) -> DataFrame:
    """The status topic's records (connector and task states, KIP-558 topic records), every one through
    the codec. The reference for :func:`.jvm_status.decode_status_records`, which the jobs use."""
    return decode_status_positioned(_position(records, "status"))


def skipped(decoded: DataFrame) -> DataFrame:
    """The records a codec rejected: reason and count."""
    return decoded.filter(F.col("malformed").isNotNull()).groupBy("malformed").count()
