"""Source offsets from the history: compaction semantics, orphans, keys the worker would not find,
offsets that went backwards, and the restore plan as of a time."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import DataFrame, SparkSession

from control_plane.codecs import SourceOffset, encode_offset, partition_for_key
from spark_jobs.transforms import (
    connector_configs,
    decode_config_records,
    decode_offsets,
    non_canonical_keys,
    offset_history,
    offsets_went_backwards,
    orphaned_offsets,
    orphaned_sink_offsets,
    sink_offsets,
    source_restore_plan,
)
from spark_jobs.transforms.sinks import SINK_PARTITIONS_SCHEMA

from .records import OFFSET_PARTITIONS, SOURCE, History

A = {"filename": "/a"}
B = {"filename": "/b"}


@pytest.fixture(scope="module")
def history_frames(spark: SparkSession) -> tuple[DataFrame, DataFrame]:
    h = History()
    h.connector("src", SOURCE, 100)
    h.offset("src", A, {"position": 10}, 1000)
    h.offset("src", A, {"position": 20}, 2000)
    h.offset("src", B, {"position": 5}, 2500)
    h.offset("src", A, {"position": 15}, 3000)  # an alter to a lower offset: backwards
    h.offset_tombstone("src", B, 3500)  # a reset of B
    h.offset("src", B, {"position": 1}, 3600)  # lower than before the reset: not backwards
    h.raw_offset(json.dumps(["src", A]).encode(), b'{"position":99}', 3700)  # a hand-written key
    h.connector("gone", SOURCE, 100)
    h.offset("gone", A, {"position": 3}, 1500)
    h.delete_connector("gone", 4000)
    h.offset("never", A, {"position": 1}, 1600)  # no config ever
    frame = h.frame(spark)
    return decode_offsets(frame, OFFSET_PARTITIONS).cache(), connector_configs(decode_config_records(frame)).cache()


def test_history_per_connector_and_partition(history_frames: tuple[DataFrame, DataFrame]) -> None:
    decoded, _ = history_frames
    rows = {(r["connector"], r["partition_json"], r["key_canonical"]): r for r in offset_history(decoded).collect()}
    a = rows[("src", '{"filename":"/a"}', True)]
    assert (a["offset_json"], a["commits"], a["tombstones"], a["first_commit"], a["last_commit"], a["live"]) == (
        '{"position":15}',
        3,
        0,
        1000,
        3000,
        True,
    )
    b = rows[("src", '{"filename":"/b"}', True)]
    assert (b["offset_json"], b["commits"], b["tombstones"], b["live"]) == ('{"position":1}', 2, 1, True)
    assert rows[("src", '{"filename":"/a"}', False)]["offset_json"] == '{"position":99}'


def test_orphans_of_deleted_and_unknown_connectors(
    spark: SparkSession, history_frames: tuple[DataFrame, DataFrame]
) -> None:
    decoded, connectors = history_frames
    sinks = sink_offsets(
        spark.createDataFrame(
            [
                ("old-sink", "connect-old-sink", False, "t", 0, 5, 0, 9, None),
                ("sink", "connect-sink", True, "t", 0, 5, 0, 9, None),
            ],
            SINK_PARTITIONS_SCHEMA,
        )
    )
    found = {
        r["connector"]: r
        for r in orphaned_offsets(offset_history(decoded), orphaned_sink_offsets(sinks), connectors).collect()
    }
    assert set(found) == {"gone", "never", "old-sink"}
    assert (found["gone"]["type"], found["gone"]["partitions"], found["gone"]["deleted"]) == ("source", 1, 4000)
    assert found["never"]["deleted"] is None
    assert (found["old-sink"]["type"], found["old-sink"]["group"]) == ("sink", "connect-old-sink")


def test_keys_the_worker_would_not_find(spark: SparkSession, history_frames: tuple[DataFrame, DataFrame]) -> None:
    decoded, _ = history_frames
    found = non_canonical_keys(offset_history(decoded)).collect()
    by_key = {r["key_text"]: r for r in found}
    spaced = by_key['["src", {"filename": "/a"}]']
    assert "key bytes differ from the worker's encoding" in spaced["reasons"]
    assert "the same source partition under 2 keys" in spaced["reasons"]
    assert by_key['["src",{"filename":"/a"}]']["reasons"] == ["the same source partition under 2 keys"]

    key, value = encode_offset(SourceOffset("m", A, {"position": 1}))
    wrong = (partition_for_key(key, OFFSET_PARTITIONS) + 1) % OFFSET_PARTITIONS
    h = History()
    h.raw_offset(key, value, 1000, partition=wrong)  # written by a producer with another partitioner
    misplaced = non_canonical_keys(offset_history(decode_offsets(h.frame(spark), OFFSET_PARTITIONS))).collect()
    expected = partition_for_key(key, OFFSET_PARTITIONS)
    assert [r["reasons"] for r in misplaced] == [
        [f"in Kafka partition {wrong}, the default partitioner picks {expected}"]
    ]


def test_offsets_that_went_backwards(history_frames: tuple[DataFrame, DataFrame]) -> None:
    decoded, _ = history_frames
    found = offsets_went_backwards(decoded).collect()
    assert [(r["connector"], r["partition_json"], r["from_offset"], r["to_offset"], r["at"]) for r in found] == [
        ("src", '{"filename":"/a"}', '{"position":20}', '{"position":15}', 3000)
    ]


def test_restore_plan_as_of_a_time(history_frames: tuple[DataFrame, DataFrame]) -> None:
    decoded, connectors = history_frames
    at = {
        (r["connector"], r["partition_json"]): r["offset_json"]
        for r in source_restore_plan(decoded, connectors, 2600).collect()
    }
    assert at == {("src", '{"filename":"/a"}'): '{"position":20}', ("src", '{"filename":"/b"}'): '{"position":5}'}
    early = {
        (r["connector"], r["partition_json"]): r["offset_json"]
        for r in source_restore_plan(decoded, connectors, 1200).collect()
    }
    # B had no offset then: the plan resets it (null); deleted and unknown connectors are not in the plan
    assert early == {("src", '{"filename":"/a"}'): '{"position":10}', ("src", '{"filename":"/b"}'): None}
