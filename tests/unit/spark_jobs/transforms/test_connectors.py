"""Connector type from the one shared rule (``rules.connectors.connector_type``) wherever the jobs tell a
source from a sink: a source may carry ``topics`` (MirrorMaker 2's source does)."""

from __future__ import annotations

from pyspark.sql import SparkSession

from spark_jobs.transforms import (
    connector_configs,
    decode_config_records,
    decode_offset_parts,
    sink_topic_references,
)
from tests.support.spark_records import OFFSET_PARTITIONS, SINK, History, restore_plan

MIRROR = {"connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector", "topics": "orders"}


def test_a_source_with_topics_is_a_source_everywhere(spark: SparkSession) -> None:
    h = History()
    h.connector("mm2", MIRROR, 100)
    h.connector("sink", {**SINK, "topics": "lines"}, 100)
    h.delete_connector("forgotten", 100)  # only its deletion is retained: no config to decide from
    h.offset("mm2", {"cluster": "a", "topic": "orders", "partition": 0}, {"offset": 7}, 1000)
    frame = h.frame(spark)
    connectors = connector_configs(decode_config_records(frame))
    assert {r["connector"]: r["type"] for r in connectors.collect()} == {
        "mm2": "source",
        "sink": "sink",
        "forgotten": "unknown",
    }
    assert {r["connector"] for r in sink_topic_references(connectors, None).collect()} == {"sink"}
    plan = restore_plan(decode_offset_parts(frame, OFFSET_PARTITIONS), connectors, 2000).collect()
    assert [(r["connector"], r["offset_json"]) for r in plan] == [("mm2", '{"offset":7}')]
