"""Sink offsets against the log bounds, orphaned groups, the sink part of the restore plan, and the
comparison with the sidecar's view."""

from __future__ import annotations

from pyspark.sql import SparkSession

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
    # connector, group, exists, topic, partition, committed, log_start, log_end, offset_at_as_of, its basis
    ("sink", "connect-sink", True, "t", 0, 4, 0, 10, 2, "offsets_for_times"),
    ("sink", "connect-sink", True, "t", 1, 1, 3, 10, 10, "log_end"),  # lagged: committed 1, log start 3
    ("sink", "connect-sink", True, "t", 2, 50, 0, 10, None, None),
    ("sink", "connect-sink", True, "t", 3, None, 0, 7, 5, "offsets_for_times"),  # never committed
    ("gone", "connect-gone", False, "t", 0, 9, 0, 10, None, None),
]


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
    plan = {
        r["partition_json"]: (r["offset_json"], r["action"], r["based_on"], r["warning"])
        for r in sink_restore_plan(offsets).collect()
    }
    assert set(plan) == {
        '{"kafka_topic":"t","kafka_partition":0}',
        '{"kafka_topic":"t","kafka_partition":1}',
        '{"kafka_topic":"t","kafka_partition":3}',
    }  # partition 2: no position known at the time, so not in the plan
    assert plan['{"kafka_topic":"t","kafka_partition":0}'] == ('{"kafka_offset":2}', "set", "offsets_for_times", None)
    offset, _, based_on, warning = plan['{"kafka_topic":"t","kafka_partition":1}']
    assert (offset, based_on) == ('{"kafka_offset":10}', "log_end")
    assert warning.startswith("the sink lagged then: its group's committed offset now (1) is below this position (10)")
    assert warning.endswith("this entry skips 7 unread record(s) still in the log")  # 3..9: 0..2 are gone
    assert "committed offset now (none)" in plan['{"kafka_topic":"t","kafka_partition":3}'][3]


def test_plan_as_of_now_is_the_committed_offsets(spark: SparkSession) -> None:
    rows = [("sink", "connect-sink", True, "t", 0, 4, 0, 10, 4, "committed")]
    (entry,) = sink_restore_plan(sink_offsets(spark.createDataFrame(rows, SINK_PARTITIONS_SCHEMA))).collect()
    assert (entry["offset_json"], entry["based_on"], entry["warning"]) == ('{"kafka_offset":4}', "committed", None)


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
