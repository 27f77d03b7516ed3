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
    """Per existing sink connector, the entries putting each partition back where it was at the restore
    time (``offset_at_as_of``, from :mod:`spark_jobs.kafka_admin`), in the columns of
    :func:`.offsets.source_restore_plan`: ``action`` set, ``based_on`` the position's basis (committed,
    offsets_for_times, log_end) and a ``warning`` when, for a past time, the group's committed offset now
    is below that position (with no committed offset: the position is above the log start): commits only
    move forward unless altered, so the sink was behind then, and the entry would skip the records in
    between (the group's commit history itself is not read: a sink that caught up since is not flagged)."""
    target = F.col("offset_at_as_of")
    partition = F.to_json(F.struct(F.col("topic").alias("kafka_topic"), F.col("partition").alias("kafka_partition")))
    offset = F.to_json(F.struct(target.alias("kafka_offset")))
    committed, start = F.col("committed"), F.col("log_start")
    past = F.col("offset_at_as_of_basis").isin("offsets_for_times", "log_end")
    lagged = F.coalesce(committed < target, target > start)  # no commit: records it never read before the position
    unread = target - F.greatest(committed, start)  # the records still in the log the entry would skip
    warning = F.when(
        past & lagged,
        F.format_string(
            "the sink lagged then: its group's committed offset now (%s) is below this position (%d), and "
            "commits only move forward unless altered; this entry skips %d unread record(s) still in the log",
            F.coalesce(committed.cast("string"), F.lit("none")),
            target,
            unread,
        ),
    )
    return offsets.filter(F.col("exists") & target.isNotNull()).select(
        "connector",
        partition.alias("partition_json"),
        offset.alias("offset_json"),
        F.lit("set").alias("action"),
        F.col("offset_at_as_of_basis").alias("based_on"),
        F.lit(None).cast("string").alias("reason"),
        warning.alias("warning"),
    )
