"""Reading the internal topics' records into one DataFrame, from Kafka or from a snapshot file.

Every reader returns :data:`RECORDS_SCHEMA`: ``role`` (config, status or offsets), ``topic``,
``partition``, ``offset``, ``timestamp`` (ms since the epoch, as the broker stored it), ``key`` and
``value`` (bytes, exactly as written; ``value`` null for a tombstone). Records of other topics are dropped.

- Kafka: Spark's Kafka source over the full retained history of the three topics, up to the end offsets
  the driver saw (so the three topics are read as of one moment), read-committed like the worker.
- Snapshot: what ``control-plane export`` writes. JSON lines (``.jsonl``, ``.json``, ``.ndjson``) with
  ``key`` and ``value`` in base64, or Parquet (a file or a directory) with binary ``key`` and ``value``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.errors import PySparkTypeError
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_type
from pyspark.sql.types import BinaryType, IntegerType, LongType, StringType, StructField, StructType

RECORDS_SCHEMA = StructType(
    [
        StructField("role", StringType(), False),
        StructField("topic", StringType(), False),
        StructField("partition", IntegerType(), False),
        StructField("offset", LongType(), False),
        StructField("timestamp", LongType(), False),
        StructField("key", BinaryType(), True),
        StructField("value", BinaryType(), True),
    ]
)
JSON_LINES_SCHEMA = "topic STRING, partition INT, offset BIGINT, timestamp BIGINT, key STRING, value STRING"
JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")
SNAPSHOT_COLUMNS = {"topic", "partition", "offset", "timestamp", "key", "value"}


class InputError(ValueError):
    """The input cannot be read; the message names it and says why."""


def _role(topics: dict[str, str]) -> Column:
    expr = F.lit(None).cast("string")
    for role, topic in topics.items():
        expr = F.when(F.col("topic") == topic, F.lit(role)).otherwise(expr)
    return expr


def with_roles(records: DataFrame, topics: dict[str, str]) -> DataFrame:
    """Keep the records of the three internal topics (``topics``: role -> name), tagged with their role."""
    tagged = records.withColumn("role", _role(topics)).filter(F.col("role").isNotNull())
    return tagged.select(*(F.col(f.name).cast(f.dataType).alias(f.name) for f in RECORDS_SCHEMA.fields))


def read_kafka(
    spark: SparkSession,
    topics: dict[str, str],
    options: dict[str, str],
    ending_offsets: dict[str, dict[int, int]] | None = None,
) -> DataFrame:
    """The full history of ``topics`` (role -> name) up to ``ending_offsets`` (topic -> partition -> offset)."""
    reader = spark.read.format("kafka").options(**options)
    reader = reader.option("subscribe", ",".join(sorted(set(topics.values()))))
    reader = reader.option("startingOffsets", "earliest")
    if ending_offsets:
        ends = {t: {str(p): o for p, o in parts.items()} for t, parts in ending_offsets.items()}
        reader = reader.option("endingOffsets", json.dumps(ends))
    else:
        reader = reader.option("endingOffsets", "latest")
    # compacted topics have gaps in their offsets, and the log start may move while the job runs
    reader = reader.option("failOnDataLoss", "false")
    raw = reader.load()
    return with_roles(raw.withColumn("timestamp", F.unix_millis(F.col("timestamp"))), topics)


def snapshot_format(path: Path) -> str:
    if path.is_dir():
        if any(path.rglob("*.parquet")):
            return "parquet"
        if any(p.suffix in JSON_SUFFIXES for p in path.rglob("*")):
            return "jsonl"
        raise InputError(f"cannot read snapshot {path}: a directory with no .parquet or .jsonl files")
    if path.suffix == ".parquet":
        return "parquet"
    if path.suffix in JSON_SUFFIXES:
        return "jsonl"
    raise InputError(f"cannot read snapshot {path}: expected a .jsonl or .parquet file")


def check_snapshot(path: Path) -> str:
    """Fail before Spark starts when the snapshot is plainly unreadable; returns its format."""
    if not path.exists():
        raise InputError(f"cannot read snapshot {path}: no such file or directory")
    if path.is_file():
        try:
            with path.open("rb") as f:
                f.read(1)
        except OSError as err:
            raise InputError(f"cannot read snapshot {path}: {err.strerror}") from None
    return snapshot_format(path)


def read_snapshot(spark: SparkSession, path: Path, topics: dict[str, str]) -> DataFrame:
    fmt = check_snapshot(path)
    if fmt == "jsonl":
        raw = spark.read.schema(JSON_LINES_SCHEMA).option("mode", "FAILFAST").json(str(path))
        raw = raw.withColumn("key", F.unbase64("key")).withColumn("value", F.unbase64("value"))
    else:
        schema = _file_schema(path)
        raw = (spark.read.schema(schema) if schema is not None else spark.read).parquet(str(path))
        missing = SNAPSHOT_COLUMNS - set(raw.columns)
        if missing:
            raise InputError(f"cannot read snapshot {path}: no column(s) {', '.join(sorted(missing))}")
    return with_roles(raw, topics)


def _file_schema(path: Path) -> StructType | None:
    """A Parquet file's columns of :data:`SNAPSHOT_COLUMNS` as its footer has them, read in the driver, so
    that Spark does not run a job to read the footer itself; None (Spark infers it) for a directory, a
    file pyarrow cannot read, or types Spark's Arrow conversion does not know. A missing column is left
    out, and the caller names it."""
    if not path.is_file():
        return None
    try:
        footer = pq.read_schema(path)
        fields = [StructField(f.name, from_arrow_type(f.type), True) for f in footer if f.name in SNAPSHOT_COLUMNS]
    except (OSError, pa.ArrowException, TypeError, PySparkTypeError):
        return None
    return StructType(fields)
