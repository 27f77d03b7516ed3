"""Source offsets from the history: compaction semantics, orphans, keys the worker would not find,
offsets that went backwards, and the restore plan as of a time."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from control_plane.codecs import OffsetKey, SourceOffset, Tombstone, encode_offset, partition_for_key
from spark_jobs.transforms import (
    PARTITION_STATS_SCHEMA,
    OffsetParts,
    clustered,
    connector_configs,
    decode_config_records,
    decode_offset_parts,
    first_missing_offsets,
    key_summary,
    non_canonical_keys,
    offset_history,
    offsets_now,
    offsets_went_backwards,
    orphaned_offsets,
    orphaned_sink_offsets,
    partition_stats,
    sink_offsets,
    source_restore_plan,
    step_candidates,
)
from spark_jobs.transforms.driver_codec import local_frame
from spark_jobs.transforms.sinks import SINK_PARTITIONS_SCHEMA
from tests.support.spark_records import OFFSET_PARTITIONS, SOURCE, History, restore_plan

A = {"filename": "/a"}
B = {"filename": "/b"}


@pytest.fixture(scope="module")
def history_frames(spark: SparkSession) -> tuple[OffsetParts, DataFrame]:
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
    parts = decode_offset_parts(frame, OFFSET_PARTITIONS, keep=lambda values: values.cache())
    return parts, connector_configs(decode_config_records(frame)).cache()


def test_history_per_connector_and_partition(history_frames: tuple[OffsetParts, DataFrame]) -> None:
    decoded, _ = history_frames
    rows = {
        (r["connector"], r["partition_json"], r["key_canonical"]): r
        for r in offset_history(key_summary(decoded)).collect()
    }
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
    spark: SparkSession, history_frames: tuple[OffsetParts, DataFrame]
) -> None:
    decoded, connectors = history_frames
    sinks = sink_offsets(
        spark.createDataFrame(
            [
                ("old-sink", "connect-old-sink", False, "t", 0, 5, 0, 9, None, None, True),
                ("sink", "connect-sink", True, "t", 0, 5, 0, 9, None, None, True),
            ],
            SINK_PARTITIONS_SCHEMA,
        )
    )
    found = {
        r["connector"]: r
        for r in orphaned_offsets(
            offset_history(key_summary(decoded)), orphaned_sink_offsets(sinks), connectors
        ).collect()
    }
    assert set(found) == {"gone", "never", "old-sink"}
    assert (found["gone"]["type"], found["gone"]["partitions"], found["gone"]["deleted"]) == ("source", 1, 4000)
    assert found["never"]["deleted"] is None
    assert (found["old-sink"]["type"], found["old-sink"]["group"]) == ("sink", "connect-old-sink")


def test_keys_the_worker_would_not_find(spark: SparkSession, history_frames: tuple[OffsetParts, DataFrame]) -> None:
    decoded, _ = history_frames
    found = non_canonical_keys(offset_history(key_summary(decoded))).collect()
    by_key = {r["key_text"]: r for r in found}
    spaced = by_key['["src", {"filename": "/a"}]']
    assert "key bytes differ from the worker's encoding" in spaced["reasons"]
    assert "the same source partition under 2 keys" in spaced["reasons"]
    assert by_key['["src",{"filename":"/a"}]']["reasons"] == ["the same source partition under 2 keys"]

    key, value = encode_offset(SourceOffset("m", A, {"position": 1}))
    wrong = (partition_for_key(key, OFFSET_PARTITIONS) + 1) % OFFSET_PARTITIONS
    h = History()
    h.raw_offset(key, value, 1000, partition=wrong)  # written by a producer with another partitioner
    parts = decode_offset_parts(h.frame(spark), OFFSET_PARTITIONS)
    misplaced = non_canonical_keys(offset_history(key_summary(parts))).collect()
    expected = partition_for_key(key, OFFSET_PARTITIONS)
    assert [r["reasons"] for r in misplaced] == [
        [f"in Kafka partition {wrong}, the default partitioner picks {expected}"]
    ]


def test_offsets_that_went_backwards(history_frames: tuple[OffsetParts, DataFrame]) -> None:
    decoded, _ = history_frames
    found = offsets_went_backwards(decoded).collect()
    assert [(r["connector"], r["partition_json"], r["from_offset"], r["to_offset"], r["at"]) for r in found] == [
        ("src", '{"filename":"/a"}', '{"position":20}', '{"position":15}', 3000)
    ]


def test_the_steps_back_candidates_are_the_keys_with_a_commit_led_no_higher_than_the_one_before(
    spark: SparkSession,
) -> None:
    """Generated histories of commits (a first member of an integer or a text) and resets: the candidates
    are exactly the keys where a commit follows a commit whose first member is an integer no lower."""
    rng = random.Random(5)
    h = History()
    expected: set[str] = set()
    for n in range(60):
        partition, before, ts = {"filename": f"/{n}"}, None, 1000
        for _ in range(rng.randint(1, 8)):
            ts += 1
            if rng.random() < 0.15:
                h.offset_tombstone("src", partition, ts)
                before = None
                continue
            lead = rng.choice([rng.randint(-3, 3), "x", None])
            offset: dict[str, Any] = {"position": rng.randint(0, 9)}
            if lead is not None:
                offset = {"lead": lead, **offset}
            h.offset("src", partition, offset, ts)
            lead = next(iter(offset.values()))  # the first member's
            lead = lead if isinstance(lead, int) else None
            if lead is not None and before is not None and lead <= before:
                expected.add(json.dumps(partition, separators=(",", ":")))
            before = lead
    parts = decode_offset_parts(h.frame(spark), OFFSET_PARTITIONS)
    ids = [r["key_id"] for r in step_candidates(parts).collect()]
    keys = parts.keys.filter(F.col("key_id").isin(ids)).collect()
    assert {r["partition_json"] for r in keys} == expected
    assert 5 < len(expected) < 55


def _plan(decoded: OffsetParts, connectors: DataFrame, as_of_ms: int) -> dict[tuple[str, str], tuple[Any, ...]]:
    return {
        (r["connector"], r["partition_json"]): (r["action"], r["offset_json"], r["based_on"])
        for r in restore_plan(decoded, connectors, as_of_ms).collect()
    }


def test_restore_plan_as_of_a_time(history_frames: tuple[OffsetParts, DataFrame]) -> None:
    decoded, connectors = history_frames
    assert _plan(decoded, connectors, 2600) == {
        ("src", '{"filename":"/a"}'): ("set", '{"position":20}', "offsets_topic"),
        ("src", '{"filename":"/b"}'): ("set", '{"position":5}', "offsets_topic"),
    }
    # B's first record came later and its Kafka partition lost nothing: it had no offset then, a reset;
    # deleted and unknown connectors are not in the plan
    assert _plan(decoded, connectors, 1200) == {
        ("src", '{"filename":"/a"}'): ("set", '{"position":10}', "offsets_topic"),
        ("src", '{"filename":"/b"}'): ("reset", None, "no_record_yet"),
    }
    # B was reset (a tombstone) at 3500: a reset again, proven by the tombstone
    assert _plan(decoded, connectors, 3550)[("src", '{"filename":"/b"}')] == ("reset", None, "tombstone")


def test_a_restore_plan_as_of_now_is_the_plan_as_of_a_time_after_every_record(
    history_frames: tuple[OffsetParts, DataFrame],
) -> None:
    """offsets-reconcile asks the summary for "now" (no as-of) when as-of is after every record."""
    decoded, connectors = history_frames
    as_of_now = source_restore_plan(key_summary(decoded), first_missing_offsets(decoded.frame), connectors)
    assert sorted(as_of_now.collect()) == sorted(restore_plan(decoded, connectors, 10_000).collect())
    assert len(as_of_now.collect()) == 2


def test_as_of_now_each_key_has_the_offset_the_worker_holds_whatever_the_clocks(spark: SparkSession) -> None:
    """A commit written after another with an earlier timestamp (workers' clocks apart): now, the key's
    offset is the log's last record, the one the worker reads last and holds; as of an earlier time, the
    latest record in time at or before it."""
    h = History()
    h.connector("src", SOURCE, 100)
    h.offset("src", A, {"position": 10}, 1000)
    h.offset("src", A, {"position": 20}, 3000)
    h.offset("src", A, {"position": 30}, 2000)  # after 20 in the log, stamped by a clock behind
    h.offset("src", B, {"position": 7}, 3000)
    h.offset_tombstone("src", B, 2500)  # B reset after 7, stamped earlier
    frame = h.frame(spark)
    parts = decode_offset_parts(frame, OFFSET_PARTITIONS)
    connectors = connector_configs(decode_config_records(frame))
    now = source_restore_plan(key_summary(parts), first_missing_offsets(parts.frame), connectors)
    assert {(r["partition_json"], r["action"], r["offset_json"]) for r in now.collect()} == {
        ('{"filename":"/a"}', "set", '{"position":30}'),  # B has no offset now: nothing to reset
    }
    live = {r["partition_json"]: r["offset_json"] for r in offsets_now(key_summary(parts)).collect()}
    assert live == {'{"filename":"/a"}': '{"position":30}'}

    def plan_as_of(as_of_ms: int) -> dict[str, tuple[str, str | None]]:
        rows = restore_plan(parts, connectors, as_of_ms).collect()
        return {r["partition_json"]: (r["action"], r["offset_json"]) for r in rows}

    assert plan_as_of(2600) == {'{"filename":"/a"}': ("set", '{"position":30}')}  # B: a tombstone then, none now
    # a time in the order of the records' times: the transform's; the job asks for now past the latest record
    assert plan_as_of(3100) == {
        '{"filename":"/a"}': ("set", '{"position":20}'),
        '{"filename":"/b"}': ("set", '{"position":7}'),
    }
    history = {r["partition_json"]: r["offset_json"] for r in offset_history(key_summary(parts)).collect()}
    assert history == {'{"filename":"/a"}': '{"position":30}', '{"filename":"/b"}': None}


def _commit(h: History, partition: dict[str, str], position: int, ts: int, kafka_partition: int) -> None:
    """A commit placed in ``kafka_partition`` (the test picks where compaction removed records)."""
    h.raw_offset(*encode_offset(SourceOffset("src", partition, {"position": position})), ts, partition=kafka_partition)


@pytest.mark.parametrize("known", [False, True], ids=["counted-here", "counted-by-the-job"])
def test_first_missing_offsets(spark: SparkSession, known: bool) -> None:
    h = History()
    for ts in range(4):
        for kafka_partition in (0, 1, 2):
            _commit(h, A, ts, 1000 + ts, kafka_partition)
    h.rows = [r for r in h.rows if (r[2], r[3]) not in {(1, 2), (2, 0)}]  # compaction removed them
    decoded = decode_offset_parts(h.frame(spark), OFFSET_PARTITIONS).frame
    # the stats as a job hands them (its load counted them): a local frame of the driver's rows
    stats = local_frame(spark, [tuple(r) for r in partition_stats(decoded).collect()], PARTITION_STATS_SCHEMA)
    got = {
        r["kafka_partition"]: r["first_missing"]
        for r in first_missing_offsets(decoded, stats if known else None).collect()
    }
    assert got == {0: None, 1: 2, 2: 0}


def test_restore_plan_never_turns_history_not_retained_into_a_reset(spark: SparkSession) -> None:
    """Compaction removed records (offset gaps): a partition with no retained record at or before as-of is
    flagged, not reset, unless its Kafka partition lost nothing before its first record."""
    c, d, e, f = ({"filename": x} for x in ("/c", "/d", "/e", "/f"))
    h = History()
    h.connector("src", SOURCE, 100)
    _commit(h, c, 1, 900, 0)  # partition 0: whole
    _commit(h, c, 2, 2600, 0)
    _commit(h, d, 1, 1000, 1)  # partition 1: its first record is gone
    _commit(h, d, 7, 2700, 1)
    _commit(h, e, 3, 2800, 1)  # first written after as-of, or not? unknowable
    h.raw_offset(encode_offset(Tombstone(OffsetKey("src", e)))[0], None, 2900, partition=1)  # and deleted now
    _commit(h, f, 4, 1000, 2)  # partition 2: a gap after f's first record
    _commit(h, f, 5, 1100, 2)
    _commit(h, f, 6, 1900, 2)
    h.rows = [r for r in h.rows if (r[0], r[2], r[3]) not in {("offsets", 1, 0), ("offsets", 2, 1)}]
    frame = h.frame(spark)
    decoded = decode_offset_parts(frame, OFFSET_PARTITIONS)
    connectors = connector_configs(decode_config_records(frame))
    rows = {json.loads(r["partition_json"])["filename"]: r for r in restore_plan(decoded, connectors, 2000).collect()}
    assert (rows["/c"]["action"], rows["/c"]["offset_json"]) == ("set", '{"position":1}')
    assert (rows["/f"]["action"], rows["/f"]["offset_json"]) == ("set", '{"position":6}')
    for name, now in (("/d", "an offset"), ("/e", "none")):
        row = rows[name]
        assert (row["action"], row["offset_json"], row["based_on"]) == ("unknown", None, "history_not_retained")
        assert "partition 1 of the offsets topic lost records" in row["reason"]
        assert row["reason"].endswith(f"it has {now} now")
    assert set(rows) == {"/c", "/d", "/e", "/f"}


AGGREGATES = {"SortAggregate", "HashAggregate", "ObjectHashAggregate", "Window"}


def _paths_to_the_kept_records(plan: Any) -> list[list[str]]:
    """Each path of the physical plan's operators from ``plan`` down to the kept records (an in-memory scan)."""
    name = str(plan.nodeName())
    if name == "InMemoryTableScan":
        return [[]]
    children = plan.children()
    below = [path for i in range(children.size()) for path in _paths_to_the_kept_records(children.apply(i))]
    return [[name, *path] for path in below]


def _between_the_records_and_their_first_aggregation(plan: Any) -> list[list[str]]:
    paths = _paths_to_the_kept_records(plan)
    assert paths, "the plan does not read the kept records"
    return [path[max((i for i, n in enumerate(path) if n in AGGREGATES), default=-1) + 1 :] for path in paths]


def test_the_transforms_read_the_kept_records_without_a_shuffle_or_a_sort(spark: SparkSession) -> None:
    """A job keeps the offset records clustered by key (``clustered``): the history, the steps back (and
    their candidates) and the restore plan then aggregate and window them as they come (no exchange, no
    sort between the kept records and their first aggregation; the few aggregated rows may be sorted or
    exchanged)."""
    h = History()
    h.connector("src", SOURCE, 100)
    for n in range(30):  # one step back: the exact window reads the records of its key
        h.offset("src", {"filename": f"/{n % 4}"}, {"position": 0 if n == 21 else n}, 1000 + n)
    frame = h.frame(spark)
    kept: list[DataFrame] = []

    def keep(values: DataFrame) -> DataFrame:
        kept.append(clustered(values).cache())
        return kept[0]

    decoded = decode_offset_parts(frame, OFFSET_PARTITIONS, keep=keep)
    connectors = connector_configs(decode_config_records(frame))
    spark.conf.set("spark.sql.adaptive.enabled", "false")  # the plan as planned, not re-planned while it runs
    try:
        for transform in (
            offset_history(key_summary(decoded)),
            step_candidates(decoded),
            offsets_went_backwards(decoded),
            restore_plan(decoded, connectors, 2000),
        ):
            for path in _between_the_records_and_their_first_aggregation(
                transform._jdf.queryExecution().executedPlan()
            ):
                assert not {"Exchange", "Sort"} & set(path), path
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")
        kept[0].unpersist()
