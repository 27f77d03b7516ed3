"""Sink offsets against the log bounds, orphaned groups, the sink part of the restore plan, and the
comparison with the sidecar's view."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pyspark.sql import Row, SparkSession

from spark_jobs.transforms import (
    connector_configs,
    decode_config_records,
    decode_offset_parts,
    history_view,
    key_summary,
    offsets_now,
    orphaned_sink_offsets,
    running_connectors,
    sidecar_disagreements,
    sink_offsets,
    sink_restore_plan,
)
from spark_jobs.transforms.compare import SIDECAR_ANSWERS_SCHEMA, SIDECAR_OFFSETS_SCHEMA
from spark_jobs.transforms.sinks import SINK_PARTITIONS_SCHEMA
from tests.support.spark_records import OFFSET_PARTITIONS, SINK, SOURCE, History

ROWS = [
    # connector, group, exists, topic, partition, committed, log_start, log_end, offset_at_as_of, its basis,
    # subscribed
    ("sink", "connect-sink", True, "t", 0, 4, 0, 10, 2, "offsets_for_times", True),
    ("sink", "connect-sink", True, "t", 1, 1, 3, 10, 10, "log_end", True),  # lagged: committed 1, log start 3
    ("sink", "connect-sink", True, "t", 2, 50, 0, 10, None, None, True),
    ("sink", "connect-sink", True, "t", 3, None, 0, 7, 5, "offsets_for_times", True),  # never committed
    ("gone", "connect-gone", False, "t", 0, 9, 0, 10, None, None, True),
]


def plan_of(rows: Sequence[tuple[object, ...]], spark: SparkSession) -> dict[str, Row]:
    frame = sink_offsets(spark.createDataFrame(rows, SINK_PARTITIONS_SCHEMA))
    return {r["partition_json"]: r for r in sink_restore_plan(frame).collect()}


def test_status_lag_and_orphans(spark: SparkSession) -> None:
    offsets = sink_offsets(spark.createDataFrame(ROWS, SINK_PARTITIONS_SCHEMA))
    got = {(r["connector"], r["partition"]): (r["status"], r["lag"]) for r in offsets.collect()}
    assert got == {
        ("sink", 0): ("ok", 6),
        ("sink", 1): ("below_log_start", 9),
        ("sink", 2): ("beyond_log_end", None),  # its own finding, never a negative lag
        ("sink", 3): ("uncommitted", None),
        ("gone", 0): ("ok", 1),
    }
    assert [tuple(r) for r in orphaned_sink_offsets(offsets).collect()] == [("gone", "sink", "connect-gone", 1)]


def test_the_plan_never_skips_records_the_sink_has_not_read(spark: SparkSession) -> None:
    plan = {k: (r["offset_json"], r["action"], r["based_on"]) for k, r in plan_of(ROWS, spark).items()}
    assert plan == {
        '{"kafka_topic":"t","kafka_partition":0}': ('{"kafka_offset":2}', "set", "offsets_for_times"),  # a rewind
        # committed 1 (the records before 3 are gone): the log end, 10, would skip 3..9, never read
        '{"kafka_topic":"t","kafka_partition":1}': (None, "unknown", "sink_behind"),
        # never committed: it reads from the log start, 0; 5 would skip 0..4
        '{"kafka_topic":"t","kafka_partition":3}': (None, "unknown", "sink_behind"),
    }  # partition 2: no position known at the time, so not in the plan
    reasons = {k: r["reason"] for k, r in plan_of(ROWS, spark).items()}
    assert reasons['{"kafka_topic":"t","kafka_partition":0}'] is None
    lagged = reasons['{"kafka_topic":"t","kafka_partition":1}']
    assert "the next record it reads is 3 (its committed offset now: 1, the log start: 3)" in lagged
    assert "would skip 7 unread record(s) still in the log" in lagged
    assert "would skip 5 unread record(s)" in reasons['{"kafka_topic":"t","kafka_partition":3}']


@pytest.mark.parametrize(
    ("committed", "log_start", "position", "planned"),
    [
        pytest.param(4, 0, 4, True, id="at-its-commit"),
        pytest.param(4, 0, 3, True, id="below-its-commit-a-rewind"),
        pytest.param(4, 0, 5, False, id="past-its-commit"),
        pytest.param(1, 3, 3, True, id="commit-below-the-log-start-position-at-it"),  # 1, 2: gone, none skipped
        pytest.param(1, 3, 4, False, id="commit-below-the-log-start-position-past-it"),
        pytest.param(None, 2, 2, True, id="never-committed-position-at-the-log-start"),
        pytest.param(None, 2, 3, False, id="never-committed-position-past-the-log-start"),
    ],
)
@pytest.mark.parametrize("basis", ["offsets_for_times", "log_end"])
def test_a_past_position_is_planned_only_where_the_sink_had_read_up_to_it(
    spark: SparkSession, committed: int | None, log_start: int, position: int, planned: bool, basis: str
) -> None:
    rows = [("s", "connect-s", True, "t", 0, committed, log_start, 10, position, basis, True)]
    (entry,) = plan_of(rows, spark).values()
    if planned:
        assert (entry["action"], entry["offset_json"], entry["based_on"]) == (
            "set",
            f'{{"kafka_offset":{position}}}',
            basis,
        )
    else:
        assert (entry["action"], entry["offset_json"], entry["based_on"]) == ("unknown", None, "sink_behind")


def test_plan_as_of_now_is_the_committed_offsets(spark: SparkSession) -> None:
    rows = [("sink", "connect-sink", True, "t", 0, 4, 0, 10, 4, "committed", True)]
    (entry,) = plan_of(rows, spark).values()
    assert (entry["offset_json"], entry["based_on"], entry["reason"]) == ('{"kafka_offset":4}', "committed", None)


def test_a_stale_offset_beyond_the_log_end_is_not_planned(spark: SparkSession) -> None:
    # committed 50 on a topic recreated since (its log ends at 10): once the log passes 50 again, a
    # consumer starting there skips 10..49
    rows = [("sink", "connect-sink", True, "t", 0, 50, 0, 10, 50, "committed", True)]
    (entry,) = plan_of(rows, spark).values()
    assert (entry["action"], entry["offset_json"], entry["based_on"]) == ("unknown", None, "beyond_log_end")
    assert entry["reason"].startswith("this position (50) is beyond the log end (10)")


def test_offsets_of_topics_the_connector_does_not_read_are_not_planned(spark: SparkSession) -> None:
    # a group shared with another consumer (the worker's consumer.group.id), or a topic it no longer reads
    rows = [
        ("sink", "shared", True, "mine", 0, 4, 0, 10, 4, "committed", True),
        ("sink", "shared", True, "theirs", 0, 7, 0, 10, 7, "committed", False),
    ]
    plan = plan_of(rows, spark)
    assert plan['{"kafka_topic":"mine","kafka_partition":0}']["action"] == "set"
    theirs = plan['{"kafka_topic":"theirs","kafka_partition":0}']
    assert (theirs["action"], theirs["offset_json"], theirs["based_on"]) == ("unknown", None, "not_read_by_connector")
    assert theirs["reason"].startswith("the connector does not read topic theirs")


def test_sidecar_disagreements(spark: SparkSession) -> None:
    h = History()
    h.connector("src", SOURCE, 100)
    h.connector("sink", SINK, 100)
    h.connector("quiet", SOURCE, 100)
    h.connector("busy", SOURCE, 100)  # started: its offsets move, a difference says nothing
    for name in ("src", "sink", "quiet"):
        h.target_state(name, "STOPPED", 200)
    h.offset("src", {"filename": "/a", "n": 1}, {"position": 3}, 1000)
    h.offset("src", {"filename": "/b"}, {"position": 4}, 1000)
    frame = h.frame(spark)
    connectors = connector_configs(decode_config_records(frame))
    sinks = sink_offsets(spark.createDataFrame(ROWS[:1], SINK_PARTITIONS_SCHEMA))
    history = history_view(offsets_now(key_summary(decode_offset_parts(frame, OFFSET_PARTITIONS))), sinks, connectors)
    sidecar = spark.createDataFrame(
        [
            ("src", '{"filename":"/a","n":1}', '{"position":3}'),  # the same, keys in another order is fine
            ("src", '{"filename":"/c"}', None),  # the worker knows the partition, not its offset
            ("sink", '{"kafka_partition":0,"kafka_topic":"t"}', '{"kafka_offset":5}'),
            ("busy", '{"filename":"/x"}', '{"position":1}'),
        ],
        SIDECAR_OFFSETS_SCHEMA,
    )
    answers = spark.createDataFrame(
        [("src", None), ("sink", None), ("quiet", None), ("busy", None), ("down", "HTTP 503: no worker")],
        SIDECAR_ANSWERS_SCHEMA,
    )
    running = running_connectors(connectors)
    assert [r["connector"] for r in running.collect()] == ["busy"]
    got = {r["connector"]: r for r in sidecar_disagreements(history, sidecar, answers, running).collect()}
    assert set(got) == {"src", "sink", "quiet", "down"}
    unfiltered = sidecar_disagreements(history, sidecar, answers).filter("connector = 'busy'")
    assert [r["agrees"] for r in unfiltered.collect()] == [False]  # what running leaves out
    assert got["quiet"]["agrees"] is True
    assert (got["src"]["only_in_history"], got["src"]["only_in_sidecar"]) == (
        ['{"filename":"/b"}'],
        ['{"filename":"/c"}'],
    )
    assert [tuple(d) for d in got["sink"]["different"]] == [
        ('{"kafka_partition":0,"kafka_topic":"t"}', '{"kafka_offset":4}', '{"kafka_offset":5}')
    ]
    assert (got["down"]["agrees"], got["down"]["error"]) == (False, "HTTP 503: no worker")
