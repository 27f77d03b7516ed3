"""Source offsets from the offsets topic's full history (decoded by :func:`.decode.decode_offsets`).

Compaction semantics: per key (its exact bytes) and Kafka partition, the record with the highest offset
wins and a tombstone deletes. The worker finds an offset by the exact bytes of its key, so a partition
is identified here by its key bytes; ``logical_partition`` (key order ignored) groups the keys that
mean the same source partition.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

PHYSICAL = ["connector", "key", "kafka_partition"]


def _valid(decoded: DataFrame) -> DataFrame:
    return decoded.filter(F.col("malformed").isNull())


def offset_history(decoded: DataFrame) -> DataFrame:
    """Per connector and partition (key bytes, Kafka partition): the latest offset (null once deleted),
    ``live``, the number of commits and of tombstones, the first and last commit time."""
    commit = ~F.col("tombstone")
    return (
        _valid(decoded)
        .groupBy(*PHYSICAL)
        .agg(
            F.first("partition_json").alias("partition_json"),
            F.first("logical_partition").alias("logical_partition"),
            F.first("key_canonical").alias("key_canonical"),
            F.first("expected_kafka_partition").alias("expected_kafka_partition"),
            F.max_by(F.struct("tombstone", "offset_json", "offset_normal", "timestamp"), "kafka_offset").alias("last"),
            F.count(F.when(commit, 1)).alias("commits"),
            F.count(F.when(~commit, 1)).alias("tombstones"),
            F.min(F.when(commit, F.col("timestamp"))).alias("first_commit"),
            F.max(F.when(commit, F.col("timestamp"))).alias("last_commit"),
        )
        .select(
            *PHYSICAL,
            "partition_json",
            "logical_partition",
            "key_canonical",
            "expected_kafka_partition",
            (~F.col("last.tombstone")).alias("live"),
            F.col("last.offset_json").alias("offset_json"),
            F.col("last.offset_normal").alias("offset_normal"),
            "commits",
            "tombstones",
            "first_commit",
            "last_commit",
            F.col("last.timestamp").alias("last_record"),
        )
    )


def orphaned_offsets(history: DataFrame, sink_orphans: DataFrame, connectors: DataFrame) -> DataFrame:
    """Live source offsets, and committed sink group offsets (:func:`.sinks.orphaned_sink_offsets`), of
    connectors that do not exist now (deleted, or never in the config topic): per connector, its kind,
    partitions, last commit and when it was deleted."""
    existing = connectors.filter("exists").select("connector")
    known = connectors.select("connector", "deleted")
    sources = (
        history.filter("live")
        .join(existing, "connector", "left_anti")
        .groupBy("connector")
        .agg(F.count("*").alias("partitions"), F.max("last_commit").alias("last_commit"))
        .select(
            "connector",
            F.lit("source").alias("type"),
            F.lit(None).cast("string").alias("group"),
            "partitions",
            "last_commit",
        )
    )
    sinks = sink_orphans.join(existing, "connector", "left_anti").select(
        "connector", "type", "group", "partitions", F.lit(None).cast("long").alias("last_commit")
    )
    return sources.unionByName(sinks).join(known, "connector", "left")


def non_canonical_keys(history: DataFrame) -> DataFrame:
    """Live keys the worker would not find or could confuse: bytes that differ from the worker's own
    encoding, one source partition under several keys, or a key outside the partition its hash picks."""
    live = history.filter("live")
    per_logical = Window.partitionBy("connector", "logical_partition")
    reasons = F.array_compact(
        F.array(
            F.when(~F.col("key_canonical"), F.lit("key bytes differ from the worker's encoding")),
            F.when(
                F.col("keys_for_partition") > 1,
                F.concat(
                    F.lit("the same source partition under "),
                    F.col("keys_for_partition").cast("string"),
                    F.lit(" keys"),
                ),
            ),
            F.when(
                F.col("expected_kafka_partition").isNotNull()
                & (F.col("expected_kafka_partition") != F.col("kafka_partition")),
                F.concat(
                    F.lit("in Kafka partition "),
                    F.col("kafka_partition").cast("string"),
                    F.lit(", the default partitioner picks "),
                    F.col("expected_kafka_partition").cast("string"),
                ),
            ),
        )
    )
    return (
        live.withColumn("keys_for_partition", F.size(F.collect_set("key").over(per_logical)))
        .withColumn("reasons", reasons)
        .filter(F.size("reasons") > 0)
        .select(
            "connector",
            "partition_json",
            F.decode("key", "UTF-8").alias("key_text"),
            "key_canonical",
            "kafka_partition",
            "expected_kafka_partition",
            "offset_json",
            "last_commit",
            "reasons",
        )
    )


def offsets_went_backwards(decoded: DataFrame) -> DataFrame:
    """Commits whose offset is lower than the one before it for the same key (offsets ordered as tuples
    of their integer values, in the map's order). A tombstone in between is a reset, not a step back."""
    ordered = Window.partitionBy(*PHYSICAL).orderBy("kafka_offset")
    with_previous = (
        _valid(decoded)
        .withColumn("previous_rank", F.lag("offset_rank").over(ordered))
        .withColumn("previous_json", F.lag("offset_json").over(ordered))
        .withColumn("previous_tombstone", F.lag("tombstone").over(ordered))
        .withColumn("previous_timestamp", F.lag("timestamp").over(ordered))
    )
    return with_previous.filter(
        ~F.col("tombstone")
        & ~F.coalesce(F.col("previous_tombstone"), F.lit(True))
        & F.col("offset_rank").isNotNull()
        & F.col("previous_rank").isNotNull()
        & (F.size("offset_rank") == F.size("previous_rank"))
        & (F.col("offset_rank") < F.col("previous_rank"))
    ).select(
        "connector",
        "partition_json",
        F.col("previous_json").alias("from_offset"),
        F.col("offset_json").alias("to_offset"),
        F.col("previous_timestamp").alias("from_time"),
        F.col("timestamp").alias("at"),
        "kafka_partition",
        "kafka_offset",
    )


def offsets_as_of(decoded: DataFrame, as_of_ms: int | None) -> DataFrame:
    """The live offsets at ``as_of_ms`` (all records when None) of the keys the worker finds (canonical
    bytes): connector, key, partition_json, logical_partition, offset_json, offset_normal."""
    canonical = _valid(decoded).filter("key_canonical")
    if as_of_ms is not None:
        canonical = canonical.filter(F.col("timestamp") <= F.lit(as_of_ms))
    last = F.max_by(
        F.struct("tombstone", "partition_json", "logical_partition", "offset_json", "offset_normal"),
        F.struct("timestamp", "kafka_partition", "kafka_offset"),
    )
    return (
        canonical.groupBy("connector", "key")
        .agg(last.alias("last"))
        .filter(~F.col("last.tombstone"))
        .select(
            "connector",
            "key",
            "last.partition_json",
            "last.logical_partition",
            "last.offset_json",
            "last.offset_normal",
        )
    )


def source_restore_plan(decoded: DataFrame, connectors: DataFrame, as_of_ms: int) -> DataFrame:
    """Per existing source connector, the entries of the ``PATCH /connectors/{c}/offsets`` body that put
    it back to its offsets as of ``as_of_ms``: each partition's offset then, and ``offset`` null for the
    partitions that have an offset now but had none then (KIP-875: null resets a partition)."""
    then = offsets_as_of(decoded, as_of_ms).select(
        "connector", "key", F.col("partition_json").alias("then_partition"), F.col("offset_json").alias("then_offset")
    )
    now = offsets_as_of(decoded, None).select("connector", "key", F.col("partition_json").alias("now_partition"))
    sources = connectors.filter(F.col("exists") & (F.col("type") == "source")).select("connector")
    return (
        then.join(now, ["connector", "key"], "full_outer")
        .join(sources, "connector")
        .select(
            "connector",
            F.coalesce("then_partition", "now_partition").alias("partition_json"),
            F.col("then_offset").alias("offset_json"),
        )
    )
