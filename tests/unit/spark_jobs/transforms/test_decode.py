"""Decoding with the sidecar's codecs inside Spark: one row per record, malformed records kept with
their reason (and skipped later), canonical-key and partition checks."""

from __future__ import annotations

import json

from pyspark.sql import SparkSession

from control_plane.codecs import partition_for_key
from spark_jobs.transforms import decode_config_records, decode_offset_parts, decode_status_records, skipped
from tests.support.spark_records import OFFSET_PARTITIONS, SINK, History


def test_offsets_rows_carry_the_codec_outcome(spark: SparkSession) -> None:
    h = History()
    h.offset("src", {"filename": "/a", "z": 1}, {"position": 7}, 1000)
    h.offset_tombstone("src", {"filename": "/a", "z": 1}, 2000)
    h.raw_offset(json.dumps(["src", {"filename": "/a", "z": 1}]).encode(), b'{"position":9}', 3000)  # Python's json
    h.raw_offset(b"not json", b"{}", 4000)
    rows = {r["timestamp"]: r for r in decode_offset_parts(h.frame(spark), OFFSET_PARTITIONS).frame.collect()}

    written = rows[1000]
    assert (written["connector"], written["partition_json"], written["offset_json"]) == (
        "src",
        '{"filename":"/a","z":1}',
        '{"position":7}',
    )
    assert written["key_canonical"] and not written["tombstone"] and written["offset_rank"] == [7]
    assert written["expected_kafka_partition"] == partition_for_key(written["key"], OFFSET_PARTITIONS)
    assert rows[2000]["tombstone"] and rows[2000]["offset_json"] is None
    spaced = rows[3000]
    assert spaced["key_canonical"] is False
    assert spaced["logical_partition"] == written["logical_partition"]
    assert rows[4000]["malformed"].startswith("offset key not JSON")


def test_config_and_status_rows(spark: SparkSession) -> None:
    h = History()
    h.connector("sink", SINK, 1000)
    h.target_state("sink", "STOPPED", 1100)
    h.delete_connector("sink", 1200)
    h.state("sink", "RUNNING", 1300)
    h.state("sink", "FAILED", 1400, task=0, trace="boom\n\tat x")
    h.topic_used("lines", "sink", 1500)
    h.add("status", b"status-nonsense", b"{}", 1600)
    frame = h.frame(spark)
    config = {r["timestamp"]: r for r in decode_config_records(frame).collect()}
    assert config[1000]["kind"] == "connector" and config[1000]["properties"]["topics"] == "lines"
    assert config[1100]["kind"] == "target-state" and config[1100]["target_state"] == "STOPPED"
    assert config[1200]["tombstone"] and config[1200]["connector"] == "sink"
    status_frame = decode_status_records(frame)
    status = {r["timestamp"]: r for r in status_frame.collect()}
    assert (status[1300]["kind"], status[1300]["state"], status[1300]["task"]) == ("connector", "RUNNING", None)
    assert (status[1400]["kind"], status[1400]["task"], status[1400]["trace"]) == ("task", 0, "boom\n\tat x")
    assert (status[1500]["kind"], status[1500]["topic"], status[1500]["discover_timestamp"]) == ("topic", "lines", 1500)
    assert {r["malformed"]: r["count"] for r in skipped(status_frame).collect()} == {"unknown key": 1}
