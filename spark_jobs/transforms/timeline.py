"""The timeline of connector and task state changes, from the status topic's history: per key
(``status-connector-<c>``, ``status-task-<c>-<n>``) the records in offset order, kept where the state
changed, each with its position (``kafka_partition``, ``kafka_offset``); a tombstone shows as ``DELETED``.

A connector's state now is its last record in the log, as a worker reads the topic
(``KafkaStatusBackingStore.readConnectorStatus``: each record read replaces the one before), not the one
of the latest timestamp: two records of one millisecond, or a later one written by a worker whose clock is
behind, would otherwise leave the answer to chance or give an older state."""

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
        "kafka_partition",
        "kafka_offset",
    )


def recent_changes(timeline: DataFrame) -> DataFrame:
    """The timeline's changes, latest first, without their position; of one millisecond, the later in its
    partition first (a deterministic order)."""
    latest_first = [F.desc("timestamp"), F.asc("kafka_partition"), F.desc("kafka_offset")]
    return timeline.orderBy(*latest_first).drop("kafka_partition", "kafka_offset")


def state_summary(timeline: DataFrame) -> DataFrame:
    """Per connector: changes, current connector state (its last record in the log) and the time of its
    last change (the latest timestamp)."""
    # the connector's own last record in the log (its key is in one partition of the topic): its tasks' rows
    # have no position here, and max_by passes over a row without one
    own_position = F.when(F.col("task").isNull(), F.struct("kafka_partition", "kafka_offset"))
    return timeline.groupBy("connector").agg(
        F.count("*").alias("changes"),
        F.max("timestamp").alias("last_change"),
        F.max_by("state", own_position).alias("state"),
    )
