"""The config history of the sidecars' topic: each connector's kept versions with who wrote them, and the topics
only earlier configs named."""

from __future__ import annotations

from pyspark.sql import SparkSession

from spark_jobs.transforms import (
    config_versions,
    connector_configs,
    decode_config_records,
    decode_history_records,
    sink_topic_references,
    topics_only_earlier_configs_named,
)
from spark_jobs.transforms.topics import BROKER_TOPICS_SCHEMA
from tests.support.spark_records import SINK, History

BROKER = [(t, 1, 1, "delete", True, False) for t in ("old", "kept", "rx-a", "shared", "gone-sink-topic")]


def test_versions_and_the_topics_only_earlier_configs_named(spark: SparkSession) -> None:
    h = History()
    h.connector("s", {**SINK, "topics": "kept"}, 300)  # the config topic now: s names kept only
    h.connector("other", {**SINK, "topics": "shared"}, 300)
    h.version("s", 10, {**SINK, "topics": "old, kept,shared"}, 100, change="created")
    h.author("s", 10, "alice", 106)
    h.version("s", 11, {**SINK, "topics": "old, kept,shared"}, 110, change="state")
    h.version("s", 12, {**SINK, "topics": "kept"}, 120)
    h.version("s", 12, {**SINK, "topics": "kept"}, 120)  # recorded twice (two recorders for a while)
    h.version("s", 9, {**SINK, "topics": "older"}, 90, change="created")
    h.version_expired("s", 9, 400)  # past retention
    h.version("r", 20, {**SINK, "topics": "", "topics.regex": "rx-.*"}, 200, change="created")
    h.version("r", 21, None, 210, change="deleted")
    h.version("g", 30, {**SINK, "topics": "gone-sink-topic"}, 300, change="created")  # its newest still names it
    h.sidecar_record(b"fence-s", b'{"holder": "s1"}', 130)  # not the history: no row
    h.sidecar_record(b"config-history-x-s", b"{}", 131)  # malformed: counted, skipped
    frame = h.frame(spark)
    decoded = decode_history_records(frame)
    assert decoded.count() == 11 and decoded.filter(decoded.malformed.isNotNull()).count() == 1

    versions = {(r["connector"], r["version"]): r for r in config_versions(decoded).collect()}
    assert sorted(versions) == [("g", 30), ("r", 20), ("r", 21), ("s", 10), ("s", 11), ("s", 12)]
    created = versions[("s", 10)]
    assert (created["who"], created["change"], created["type"], created["changed_at"]) == (
        "alice",
        "created",
        "sink",
        100,
    )
    assert created["properties"]["topics"] == "old, kept,shared" and versions[("s", 11)]["who"] is None
    assert versions[("r", 21)]["properties"] is None and versions[("r", 21)]["recorded_by"] == "s1"

    broker = spark.createDataFrame(BROKER, BROKER_TOPICS_SCHEMA)
    current = sink_topic_references(connector_configs(decode_config_records(frame)), broker)
    found = topics_only_earlier_configs_named(config_versions(decoded), current, broker)
    got = sorted(
        (r["topic"], r["connector"], r["version"], r["via"], r["named_at"], r["until"], r["who"])
        for r in found.collect()
    )
    assert got == [
        ("old", "s", 11, "topics", 110, 120, None),  # the newest version that named it, until the next one
        ("rx-a", "r", 20, "topics.regex", 200, 210, None),  # until its deletion
    ]  # shared: another connector's current config names it; gone-sink-topic: g's newest version names it
    offline = topics_only_earlier_configs_named(config_versions(decoded), current, None)
    assert sorted(r["topic"] for r in offline.collect()) == ["old"]  # no broker: topics lists only, no regex
