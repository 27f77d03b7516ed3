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
