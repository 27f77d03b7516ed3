"""The jobs' fast decoding path (Spark's expressions on every record; the codecs in the driver on each
distinct key and each distinct unusual value) against the exact codecs run on every record, and against
the Python workers' path the jobs fall back to when the driver would get too many rows: over odd keys,
unicode, escapes (a trace's ``\\n``, ``\\\\``, ``\\"``, ``\\/``, ``\\u00e9``), tombstones and malformed values."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from pyspark import StorageLevel
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from control_plane.codecs import ConnectorConfig, TaskConfig, TaskStatus, encode_config, encode_status
from control_plane.codecs.json_wire import dumps
from spark_jobs.read import RECORDS_SCHEMA
from spark_jobs.transforms import (
    HIGHEST_PARTITION,
    decode_config_records,
    decode_offset_parts,
    decode_offsets_per_record,
    decode_status_records,
    decode_status_records_per_record,
)
from tests.support.spark_records import OFFSET_PARTITIONS, History, without_key_id
from tests.support.tricky_records import STATUS_KEYS, STATUS_VALUES, TRICKY_KEYS, TRICKY_VALUES

ORDER = ["kafka_partition", "kafka_offset"]
TRACES = [
    "org.example.Boom: no\n\tat org.example.Task.poll(Task.java:1)",
    'a "quoted" \\ backslash / slash \r\n\b\f end\\',
    "\\n is not a newline; \\\\ two",
    "unicode é 日本 😀",
    "control \x01 and DEL \x7f",
    "",
]
ESCAPED_VALUES = [
    b'{"state":"FAILED","trace":"a\\\\nb","worker_id":"w","generation":1}',  # backslash, then n
    b'{"state":"FAILED","trace":"a\\\\\\nb","worker_id":"w","generation":1}',  # backslash, then newline
    b'{"state":"FAILED","trace":"\\/\\"\\b\\f\\r\\t","worker_id":"w","generation":1}',
    b'{"state":"FAILED","trace":"\\u00e9\\u0041","worker_id":"w","generation":1}',
    b'{"state":"FAILED","trace":"\\x","worker_id":"w","generation":1}',  # not an escape: malformed
    b'{"state":"FAILED","trace":"end\\\\","worker_id":"w","generation":1}',
    b'{"state":"FAILED","trace":"end\\","worker_id":"w","generation":1}',  # an unterminated string
    b'{"state":"FAILED","trace":"tab\there","worker_id":"w","generation":1}',  # a raw control character
]


def _same(ours: list[Row], exact: list[Row]) -> None:
    assert len(ours) == len(exact)
    for a, b in zip(ours, exact, strict=True):
        assert a.asDict() == b.asDict()


def _history(rng: random.Random) -> History:
    h = History()
    ts = 1000
    for value in TRICKY_VALUES:
        for key in TRICKY_KEYS:
            h.raw_offset(key, value, ts := ts + 1, partition=rng.randrange(OFFSET_PARTITIONS))  # type: ignore[arg-type]
    for n in range(120):  # offsets as a worker writes them, unsorted names, repeated values
        offset = {"position": rng.randint(0, 50), "file": rng.choice(["a", "b,c", "d:e", "日"]), "a!": n % 3}
        partition = {"shard": n % 7, "name": rng.choice(["x", "y z", "é"])}
        h.raw_offset(dumps(["src", partition]), dumps(offset) if n % 11 else None, ts := ts + 1)
    for key in STATUS_KEYS:
        for value in [*STATUS_VALUES, *ESCAPED_VALUES]:
            h.add("status", key, value, ts := ts + 1)
    for trace in TRACES:
        h.add("status", *encode_status(TaskStatus("src", 0, "FAILED", trace, "w1:8083", 3)), ts := ts + 1)
    for n in range(30):
        props = {"connector.class": "org.example.Src", "name": f"c{n}", "x": "é\n" * (n % 3)}
        h.add("config", *encode_config(ConnectorConfig(f"c{n}", props)), ts := ts + 1)
        h.add("config", *encode_config(TaskConfig(f"c{n}", 0, props)), ts := ts + 1)
    h.add("config", b"connector-odd", b"not json", ts := ts + 1)
    h.add("config", b"unknown-key", b"{}", ts := ts + 1)
    return h


PATHS = pytest.mark.parametrize("driver_rows", [200_000, 0], ids=["driver", "workers"])


@pytest.fixture(scope="module")
def frame(spark: SparkSession) -> Iterator[DataFrame]:
    records = _history(random.Random(13)).frame(spark).cache()
    yield records
    records.unpersist()


@PATHS
def test_offsets_fast_path_decodes_as_the_codec_does(frame: DataFrame, driver_rows: int) -> None:
    ours = without_key_id(
        decode_offset_parts(frame, OFFSET_PARTITIONS, driver_rows=driver_rows).frame.orderBy(*ORDER).collect()
    )
    exact = decode_offsets_per_record(frame, OFFSET_PARTITIONS).orderBy(*ORDER).collect()
    assert ours == [r.asDict() for r in exact]


@PATHS
def test_a_partition_count_not_known_is_the_records_highest_partition_plus_one(
    frame: DataFrame, driver_rows: int
) -> None:
    """A snapshot's offsets topic: its partition count is its records' highest partition + 1, found in the
    distinct keys' pass (``HIGHEST_PARTITION``), in the driver and in the Python workers."""
    highest = frame.filter(F.col("role") == "offsets").agg(F.max("partition")).first()
    assert highest is not None and highest[0] is not None
    ours = without_key_id(
        decode_offset_parts(frame, HIGHEST_PARTITION, driver_rows=driver_rows).frame.orderBy(*ORDER).collect()
    )
    exact = decode_offsets_per_record(frame, highest[0] + 1).orderBy(*ORDER).collect()
    assert ours == [r.asDict() for r in exact]
    assert any(r["expected_kafka_partition"] is not None for r in ours)


@PATHS
def test_status_fast_path_decodes_as_the_codec_does(frame: DataFrame, driver_rows: int) -> None:
    status = decode_status_records(frame, driver_rows=driver_rows).orderBy(*ORDER).collect()
    _same(status, decode_status_records_per_record(frame).orderBy(*ORDER).collect())
    assert set(TRACES) <= {r["trace"] for r in status}


@pytest.mark.parametrize(
    ("driver", "frames"), [("everything", 2), ("the keys only", 2), ("nothing", 1)], ids=["all", "keys", "none"]
)
def test_status_kept_as_a_job_keeps_it_decodes_as_the_codec_does(frame: DataFrame, driver: str, frames: int) -> None:
    """Kept as a job keeps the records (``keep``): the values' matches kept, the records of other shapes
    found in what is kept, then decoded in the driver and joined to it (kept in turn), or in the Python
    workers when they are more than the driver takes (kept with the rest), or everything in the workers."""
    status = frame.filter(F.col("role") == "status")
    keys = status.select("key").distinct().count()
    driver_rows = {"everything": 200_000, "the keys only": keys, "nothing": 0}[driver]
    kept: list[DataFrame] = []

    def keep(decoded: DataFrame) -> DataFrame:
        kept.append(decoded.persist(StorageLevel.DISK_ONLY))
        return decoded

    try:
        decoded = decode_status_records(frame, driver_rows=driver_rows, keep=keep)
        _same(decoded.orderBy(*ORDER).collect(), decode_status_records_per_record(frame).orderBy(*ORDER).collect())
        assert len(kept) == frames and all(k.is_cached for k in kept)
        in_workers = "MapInArrow" in decoded._jdf.queryExecution().analyzed().toString()
        assert in_workers == (driver != "everything")
    finally:
        for k in kept:
            k.unpersist()


def test_config_decoded_in_the_driver_as_in_the_workers(frame: DataFrame) -> None:
    _same(
        decode_config_records(frame).orderBy(*ORDER).collect(),
        decode_config_records(frame, driver_rows=0).orderBy(*ORDER).collect(),
    )


def test_the_driver_path_plans_no_python_worker(spark: SparkSession) -> None:
    """Records of the usual shape (no unusual value: an empty frame of the codec's rows) decode with
    Spark's expressions and the driver's local frames only: nothing in the plan runs Python (a frame of an
    empty Python list would, when read)."""
    h = History()
    for n in range(20):
        h.raw_offset(dumps(["src", {"shard": n % 3}]), dumps({"position": n}), 1000 + n)
    records = spark.createDataFrame(h.frame(spark).toArrow(), RECORDS_SCHEMA)  # a local frame: no RDD of rows
    plan = decode_offset_parts(records, OFFSET_PARTITIONS).frame._jdf.queryExecution().executedPlan().toString()
    assert "LocalTableScan" in plan
    assert not any(name in plan for name in ("Python", "ArrowEval", "MapInArrow", "ExistingRDD"))
