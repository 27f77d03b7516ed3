"""The timeline of connector and task state changes, from the status topic's history: per key
(``status-connector-<c>``, ``status-task-<c>-<n>``) the records in offset order, kept where the state
changed; a tombstone shows as ``DELETED``."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F


def state_timeline(status: DataFrame) -> DataFrame:
    states = status.filter(F.col("malformed").isNull() & F.col("kind").isin("connector", "task"))
    state = F.when(F.col("tombstone"), F.lit("DELETED")).otherwise(F.col("state"))
    ordered = Window.partitionBy("kind", "connector", "task").orderBy("kafka_partition", "kafka_offset")
    with_previous = states.withColumn("state", state).withColumn("previous_state", F.lag("state").over(ordered))
    changed = with_previous.filter(F.col("previous_state").isNull() | (F.col("previous_state") != F.col("state")))
    return changed.select(
        "timestamp",
        "connector",
        "task",
        "state",
        "previous_state",
        "worker_id",
        "generation",
        F.substring_index(F.col("trace"), "\n", 1).alias("trace_first_line"),
    )


def state_summary(timeline: DataFrame) -> DataFrame:
    """Per connector: changes, current connector state and the time of its last change."""
    connector_rows = timeline.filter(F.col("task").isNull())
    return (
        timeline.groupBy("connector")
        .agg(F.count("*").alias("changes"), F.max("timestamp").alias("last_change"))
        .join(
            connector_rows.groupBy("connector").agg(F.max_by("state", "timestamp").alias("state")),
            "connector",
            "left",
        )
    )
