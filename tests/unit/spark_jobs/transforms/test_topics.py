"""Topic usage from KIP-558 records: resets versus deletions, per-topic summary, topics unused by connectors, topics
without a connector, sink topics never active, creation-rule mismatches, the state timeline."""

from __future__ import annotations

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_jobs.transforms import (
    connector_configs,
    connector_events,
    creation_mismatches,
    decode_config_records,
    decode_status_records,
    recent_changes,
    sink_topic_references,
    sinks_never_active,
    state_summary,
    state_timeline,
    topic_usage,
    topics_summary,
    topics_unused_by_connectors,
    topics_without_connector,
)
from spark_jobs.transforms.topics import BROKER_TOPICS_SCHEMA
from tests.support.spark_records import SINK, SOURCE, History

CREATING = {
    **SOURCE,
    "topic.creation.default.replication.factor": "1",
    "topic.creation.default.partitions": "3",
    "topic.creation.groups": "compacted",
    "topic.creation.compacted.include": "cfg-.*",
    "topic.creation.compacted.cleanup.policy": "compact",
}
BROKER = [
    # topic, partitions, replication factor, cleanup.policy, is the broker's default, internal
    ("lines", 1, 1, "delete", True, False),  # the rules say 3 partitions
    ("cfg-a", 3, 1, "delete", True, False),  # the rules say compact
    ("data-ok", 3, 1, "delete", True, False),
    ("orders", 1, 1, "delete", True, False),
    ("orders-eu", 1, 1, "delete", True, False),
    ("lonely", 1, 1, "delete", True, False),
    ("cfg", 1, 1, "compact", False, False),  # the cluster's own config topic
    ("__consumer_offsets", 5, 1, "compact", False, True),
]


@pytest.fixture(scope="module")
def frames(spark: SparkSession) -> dict[str, DataFrame]:
    h = History()
    h.connector("src", CREATING, 100)
    h.topic_used("lines", "src", 1000)
    h.topic_used("cfg-a", "src", 1100)
    h.topic_used("data-ok", "src", 1150)
    h.topic_reset("lines", "src", 2000)  # a reset: src still exists
    h.topic_used("lines", "src", 3000)
    h.connector("old", SOURCE, 100)
    h.topic_used("stale", "old", 500)
    h.delete_connector("old", 4000)
    h.topic_reset("stale", "old", 4001)  # the deletion's clean-up
    h.connector("sink", {**SINK, "topics": "orders, missing", "topics.regex": ""}, 100)
    h.connector("rx", {**SINK, "topics": "", "topics.regex": "orders-.*"}, 100)
    h.topic_used("orders", "sink", 1200)
    h.state("src", "UNASSIGNED", 90)
    h.state("src", "RUNNING", 100)
    h.state("src", "RUNNING", 150)  # no change
    h.state("src", "FAILED", 200, task=0, trace="boom\n\tat somewhere")
    frame = h.frame(spark)
    config, status = decode_config_records(frame), decode_status_records(frame)
    broker = spark.createDataFrame(BROKER, BROKER_TOPICS_SCHEMA)
    usage = topic_usage(status, connector_events(config)).cache()
    return {"connectors": connector_configs(config).cache(), "status": status, "usage": usage, "broker": broker}


def test_usage_resets_and_deletions(frames: dict[str, DataFrame]) -> None:
    got = {(r["topic"], r["connector"]): r for r in frames["usage"].collect()}
    lines = got[("lines", "src")]
    assert (lines["first_seen"], lines["last_seen"], lines["active"], lines["resets"], lines["deletions"]) == (
        1000,
        3000,
        True,
        1,
        0,
    )
    stale = got[("stale", "old")]
    assert (stale["active"], stale["ended"], stale["resets"], stale["deletions"]) == (False, 4001, 0, 1)


def test_summary_unused_and_without_connector(frames: dict[str, DataFrame]) -> None:
    summary = topics_summary(frames["usage"], frames["broker"]).cache()
    rows = {r["topic"]: r for r in summary.collect()}
    assert rows["lines"]["active_connectors"] == ["src"] and rows["lines"]["last_used"] is None
    assert (rows["stale"]["exists"], rows["stale"]["last_used"]) == (False, 4001)
    unused = topics_unused_by_connectors(topics_summary(frames["usage"], None), 10_000, 5_000)
    offline = {r["topic"] for r in unused.collect()}
    assert offline == {"stale"}
    assert topics_unused_by_connectors(summary, 10_000, 5_000).count() == 0  # stale no longer exists
    refs = sink_topic_references(frames["connectors"], frames["broker"])
    alone = {r["topic"] for r in topics_without_connector(summary, refs, ["cfg", "st", "off"], None).collect()}
    assert alone == {"lonely"}
    assert {r["topic"] for r in topics_without_connector(summary, refs, ["cfg"], "^lon").collect()} == set()


def test_sink_topics_never_active(frames: dict[str, DataFrame]) -> None:
    refs = sink_topic_references(frames["connectors"], frames["broker"])
    never = {
        (r["connector"], r["topic"], r["via"], r["topic_exists"])
        for r in sinks_never_active(refs, frames["usage"], frames["broker"]).collect()
    }
    assert never == {("sink", "missing", "topics", False), ("rx", "orders-eu", "topics.regex", True)}


def test_creation_mismatches(frames: dict[str, DataFrame]) -> None:
    got = {
        r["topic"]: r for r in creation_mismatches(frames["connectors"], frames["usage"], frames["broker"]).collect()
    }
    assert set(got) == {"lines", "cfg-a"}
    assert (got["lines"]["group"], got["lines"]["expected_partitions"], got["lines"]["mismatches"]) == (
        "default",
        3,
        ["partitions"],
    )
    assert (got["cfg-a"]["group"], got["cfg-a"]["expected_cleanup_policy"], got["cfg-a"]["mismatches"]) == (
        "compacted",
        "compact",
        ["cleanup.policy"],
    )
    assert creation_mismatches(frames["connectors"], frames["usage"], frames["broker"], False).count() == 0


def test_state_timeline(frames: dict[str, DataFrame]) -> None:
    timeline = state_timeline(frames["status"])
    got = [
        (r["timestamp"], r["task"], r["state"], r["previous_state"], r["trace_first_line"])
        for r in timeline.orderBy("timestamp").collect()
    ]
    assert got == [
        (90, None, "UNASSIGNED", None, None),
        (100, None, "RUNNING", "UNASSIGNED", None),
        (200, 0, "FAILED", None, "boom"),
    ]
    assert [tuple(r) for r in state_summary(timeline).collect()] == [("src", 3, 200, "RUNNING")]
    assert {(r["kafka_partition"], r["kafka_offset"]) for r in timeline.collect()} <= {
        (r["kafka_partition"], r["kafka_offset"]) for r in frames["status"].collect()
    }


def test_a_connectors_state_is_its_last_record_in_the_log_whatever_the_clocks(spark: SparkSession) -> None:
    """As a worker reads the status topic (the last record read wins): two changes of one millisecond, and
    a change written by a worker whose clock is behind; the recent changes in a deterministic order."""
    h = History()
    h.state("tie", "RUNNING", 100)
    h.state("tie", "PAUSED", 100)  # the same millisecond, later in the log
    h.state("skew", "RUNNING", 200)
    h.state("skew", "UNASSIGNED", 150)  # later in the log, its worker's clock behind
    h.state("skew", "FAILED", 160, task=0)  # a task's record, later still: not the connector's state
    h.state("tasks-only", "RUNNING", 170, task=0)  # no record of the connector's own: no state
    timeline = state_timeline(decode_status_records(h.frame(spark)))
    got = {r["connector"]: (r["changes"], r["last_change"], r["state"]) for r in state_summary(timeline).collect()}
    assert got == {"tie": (2, 100, "PAUSED"), "skew": (3, 200, "UNASSIGNED"), "tasks-only": (1, 170, None)}
    timeline = timeline.filter(F.col("task").isNull())
    recent = [(r["timestamp"], r["connector"], r["state"]) for r in recent_changes(timeline).collect()]
    assert recent == [
        (200, "skew", "RUNNING"),
        (150, "skew", "UNASSIGNED"),
        (100, "tie", "PAUSED"),
        (100, "tie", "RUNNING"),
    ]
    assert recent_changes(timeline).columns == [c for c in timeline.columns if not c.startswith("kafka_")]
