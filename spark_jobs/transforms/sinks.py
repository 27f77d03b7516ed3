"""Sink connectors' offsets: the committed offsets of their consumer groups against the log start and
end offsets of their topic partitions, all taken once by the driver (:mod:`spark_jobs.kafka_admin`) into
a frame of :data:`SINK_PARTITIONS_SCHEMA`."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, IntegerType, LongType, StringType, StructField, StructType

SINK_PARTITIONS_SCHEMA = StructType(
    [
        StructField("connector", StringType(), False),
        StructField("group", StringType(), False),
        StructField("exists", BooleanType(), False),  # the connector exists now
        StructField("topic", StringType(), False),
        StructField("partition", IntegerType(), False),
        StructField("committed", LongType(), True),  # null: the group has no offset for it
        StructField("log_start", LongType(), True),
        StructField("log_end", LongType(), True),
        StructField("offset_at_as_of", LongType(), True),  # its position at the restore time, if known
        StructField("offset_at_as_of_basis", StringType(), True),  # committed, offsets_for_times or log_end
        StructField("subscribed", BooleanType(), False),  # the connector reads the topic (topics, topics.regex)
    ]
)


def sink_offsets(partitions: DataFrame) -> DataFrame:
    """Per sink connector and topic partition: committed offset, log start and end, ``lag`` (end minus
    committed; null when uncommitted, and when the committed offset is beyond the log end: that is its own
    status, never a negative lag) and ``status``: ok, below_log_start (the data it would read next is
    gone), beyond_log_end, or uncommitted."""
    committed, start, end = F.col("committed"), F.col("log_start"), F.col("log_end")
    status = (
        F.when(committed.isNull(), "uncommitted")
        .when(start.isNotNull() & (committed < start), "below_log_start")
        .when(end.isNotNull() & (committed > end), "beyond_log_end")
        .otherwise("ok")
    )
    return partitions.select(
        "connector",
        "group",
        "exists",
        "topic",
        "partition",
        "committed",
        "log_start",
        "log_end",
        F.when(committed.isNotNull() & (committed <= end), end - committed).alias("lag"),
        status.alias("status"),
        "offset_at_as_of",
        "offset_at_as_of_basis",
        "subscribed",
    )


def orphaned_sink_offsets(offsets: DataFrame) -> DataFrame:
    """Committed offsets of the groups of sink connectors that no longer exist."""
    return (
        offsets.filter(~F.col("exists") & F.col("committed").isNotNull())
        .groupBy("connector", "group")
        .agg(F.count("*").alias("partitions"))
        .select("connector", F.lit("sink").alias("type"), "group", "partitions")
    )


def sink_restore_plan(offsets: DataFrame) -> DataFrame:
    """Per existing sink connector, what a restore to the restore time does to each partition, in the
    columns of :func:`.offsets.source_restore_plan`. The position then (``offset_at_as_of``, from
    :mod:`spark_jobs.kafka_admin`; ``based_on`` its basis: committed, offsets_for_times, log_end) is
    ``set``, unless applying it could skip records the sink has not read; then the entry is ``unknown``
    (left out of the body: the group keeps its offset) with a ``reason``, and ``based_on`` says which:

    - ``not_read_by_connector``: the connector does not read the topic (neither in ``topics`` nor matched
      by ``topics.regex`` as Java's Pattern matches it): the group's offset is stale, or another
      consumer's of a group it shares (the worker's ``consumer.group.id``);
    - ``beyond_log_end``: the position is past the log end (a topic recreated or truncated since the
      commit): a consumer fetching there once the log has grown past it skips the records before;
    - ``sink_behind``: the position is past the next record the sink would read now (its committed offset,
      or the log start when it has none or the records before it are gone): commits only move forward
      unless altered, so it had not read up to the position then, and the entry would skip the records in
      between. A sink that lagged then but caught up since cannot be told: its group's commit history is
      not read."""
    target, committed = F.col("offset_at_as_of"), F.col("committed")
    start, end = F.col("log_start"), F.col("log_end")
    partition = F.to_json(F.struct(F.col("topic").alias("kafka_topic"), F.col("partition").alias("kafka_partition")))
    offset = F.to_json(F.struct(target.alias("kafka_offset")))
    next_read = F.greatest(committed, start)  # greatest skips nulls: both null only for an unreadable topic
    beyond_end = F.coalesce(target > end, F.lit(False))
    behind = F.coalesce(target > next_read, F.lit(False))
    based_on = (
        F.when(~F.col("subscribed"), "not_read_by_connector")
        .when(beyond_end, "beyond_log_end")
        .when(behind, "sink_behind")
        .otherwise(F.col("offset_at_as_of_basis"))
    )
    reason = (
        F.when(
            ~F.col("subscribed"),
            F.format_string(
                "the connector does not read topic %s (its topics, or topics.regex as Java's Pattern matches "
                "it): the group's offset %s is stale or another consumer's; left out",
                F.col("topic"),
                F.coalesce(committed.cast("string"), F.lit("none")),
            ),
        )
        .when(
            beyond_end,
            F.format_string(
                "this position (%d) is beyond the log end (%d): a consumer fetching there once the log has "
                "grown past it skips the records before; left out, the group keeps its offset",
                target,
                end,
            ),
        )
        .when(
            behind,
            F.format_string(
                "the sink has not read up to this position (%d): the next record it reads is %d (its "
                "committed offset now: %s, the log start: %s), and commits only move forward unless altered; "
                "the entry would skip %d unread record(s) still in the log; left out, the group keeps its offset",
                target,
                next_read,
                F.coalesce(committed.cast("string"), F.lit("none")),
                F.coalesce(start.cast("string"), F.lit("unknown")),
                target - next_read,
            ),
        )
    )
    return offsets.filter(F.col("exists") & target.isNotNull()).select(
        "connector",
        partition.alias("partition_json"),
        F.when(reason.isNull(), offset).alias("offset_json"),
        F.when(reason.isNull(), "set").otherwise("unknown").alias("action"),
        based_on.alias("based_on"),
        reason.alias("reason"),
    )
