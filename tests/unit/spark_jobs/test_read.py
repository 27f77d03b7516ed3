"""Snapshots as ``control-plane export`` writes them (JSON lines and Parquet) read back by the jobs with
the exact bytes; input that cannot be read fails with the file's name and the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from control_plane.export import write_jsonl, write_parquet
from control_plane.storage.log_reader import LogRecord
from spark_jobs.read import InputError, check_snapshot, read_snapshot

TOPICS = {"config": "cfg", "status": "st", "offsets": "off"}
RECORDS = [
    LogRecord("off", 3, 17, 1_700_000_000_123, b'["src",{"filename":"/a"}]', b'{"position":7}'),
    LogRecord("off", 3, 18, 1_700_000_000_456, b'["src",{"filename":"/a"}]', None),
    LogRecord("cfg", 0, 0, 1_700_000_000_000, b"connector-\xff", b"\x00\x01"),
    LogRecord("other", 0, 0, 1_700_000_000_000, b"k", b"v"),
]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_snapshot_round_trip(spark: SparkSession, tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"snapshot{suffix}"
    (write_parquet if suffix == ".parquet" else write_jsonl)(RECORDS, path)
    got = sorted(tuple(r) for r in read_snapshot(spark, path, TOPICS).collect())
    assert got == sorted(
        (role, r.topic, r.partition, r.offset, r.timestamp, r.key, r.value)
        for role, r in (("offsets", RECORDS[0]), ("offsets", RECORDS[1]), ("config", RECORDS[2]))
    )


def test_unreadable_snapshots_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        check_snapshot(tmp_path / "missing.jsonl")
    (tmp_path / "data.csv").write_text("a,b\n")
    with pytest.raises(InputError, match=r"data.csv: expected a \.jsonl or \.parquet file"):
        check_snapshot(tmp_path / "data.csv")


def test_a_parquet_files_columns_are_read_as_its_footer_types_them(spark: SparkSession, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    # another writer's types (a 64-bit partition, large binaries) and a column the jobs do not read: the
    # driver reads the footer (no Spark job for it) and the records come out as RECORDS_SCHEMA has them
    table = pa.table(
        {
            "topic": pa.array(["off", "cfg"], pa.large_string()),
            "partition": pa.array([3, 0], pa.int64()),
            "offset": pa.array([17, 0], pa.int64()),
            "timestamp": pa.array([1_700_000_000_123, 1_700_000_000_000], pa.int64()),
            "key": pa.array([b'["src",{"filename":"/a"}]', b"connector-\xff"], pa.large_binary()),
            "value": pa.array([b'{"position":7}', None], pa.large_binary()),
            "headers": pa.array([["h"], []], pa.list_(pa.string())),
        }
    )
    path = tmp_path / "other.parquet"
    pq.write_table(table, path)
    got = sorted(tuple(r) for r in read_snapshot(spark, path, TOPICS).collect())
    assert got == [
        ("config", "cfg", 0, 0, 1_700_000_000_000, b"connector-\xff", None),
        ("offsets", "off", 3, 17, 1_700_000_000_123, b'["src",{"filename":"/a"}]', b'{"position":7}'),
    ]
    pq.write_table(table.drop_columns(["value"]), path)
    with pytest.raises(InputError, match=r"other.parquet: no column\(s\) value"):
        read_snapshot(spark, path, TOPICS)
    directory = tmp_path / "dir"  # a directory of files: Spark reads their footers itself, as before
    directory.mkdir()
    pq.write_table(table, directory / "part-0.parquet")
    assert sorted(tuple(r) for r in read_snapshot(spark, directory, TOPICS).collect()) == got
