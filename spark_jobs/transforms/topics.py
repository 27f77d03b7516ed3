"""Topic usage from the status topic's KIP-558 records (``status-topic-<t>:connector-<c>``) and their
tombstones, the config topic and the broker's topic metadata (a frame of :data:`BROKER_TOPICS_SCHEMA`).

A topic record says a connector started using a topic; a tombstone ends it. A tombstone written while the
connector still existed (by the config topic's history at that time) is a reset; one written after the
connector's config was deleted is the deletion's clean-up.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, IntegerType, StringType, StructField, StructType

BROKER_TOPICS_SCHEMA = StructType(
    [
        StructField("topic", StringType(), False),
        StructField("partitions", IntegerType(), False),
        StructField("replication_factor", IntegerType(), False),
        StructField("cleanup_policy", StringType(), True),
        StructField("cleanup_policy_default", BooleanType(), True),  # the broker's default, not set on the topic
        StructField("internal", BooleanType(), False),
    ]
)


def topic_usage(status: DataFrame, events: DataFrame) -> DataFrame:
    """Per topic and connector: first and last seen (topic records' times), ``active`` (the latest record
    is not a tombstone), ``ended`` (time of that tombstone), ``resets`` and ``deletions`` (tombstones)."""
    records = status.filter(F.col("malformed").isNull() & (F.col("kind") == "topic"))
    tombstones = records.filter("tombstone").select(
        "topic", "connector", "timestamp", "kafka_partition", "kafka_offset"
    )
    ev = events.select(
        "connector", F.col("timestamp").alias("e_time"), F.col("kafka_offset").alias("e_offset"), "exists_after"
    )
    classified = (
        tombstones.join(ev, (tombstones.connector == ev.connector) & (ev.e_time <= tombstones.timestamp), "left")
        .groupBy(tombstones.topic, tombstones.connector, tombstones.kafka_partition, tombstones.kafka_offset)
        .agg(F.max_by("exists_after", F.struct("e_time", "e_offset")).alias("existed"))
        .groupBy("topic", "connector")
        .agg(
            F.count(F.when(F.col("existed"), 1)).alias("resets"),
            F.count(F.when(~F.coalesce(F.col("existed"), F.lit(False)), 1)).alias("deletions"),
        )
    )
    seen = ~F.col("tombstone")
    pairs = records.groupBy("topic", "connector").agg(
        F.min(F.when(seen, F.col("timestamp"))).alias("first_seen"),
        F.max(F.when(seen, F.col("timestamp"))).alias("last_seen"),
        F.min("discover_timestamp").alias("first_discovered"),
        F.max_by(F.struct("tombstone", "timestamp"), F.struct("kafka_partition", "kafka_offset")).alias("last"),
    )
    return (
        pairs.join(classified, ["topic", "connector"], "left")
        .select(
            "topic",
            "connector",
            "first_seen",
            "last_seen",
            "first_discovered",
            (~F.col("last.tombstone")).alias("active"),
            F.when(F.col("last.tombstone"), F.col("last.timestamp")).alias("ended"),
            F.coalesce("resets", F.lit(0)).alias("resets"),
            F.coalesce("deletions", F.lit(0)).alias("deletions"),
        )
        .filter(F.col("first_seen").isNotNull())  # a tombstone alone: nothing was ever seen
    )


def topics_summary(usage: DataFrame, broker_topics: DataFrame | None) -> DataFrame:
    """Per topic: every connector that used it, those using it now, first and last seen, ``last_used``
    (null while a connector uses it), resets; with the broker's facts when there are any."""
    per_topic = usage.groupBy("topic").agg(
        F.sort_array(F.collect_set("connector")).alias("connectors"),
        F.sort_array(F.collect_set(F.when(F.col("active"), F.col("connector")))).alias("active_connectors"),
        F.min("first_seen").alias("first_seen"),
        F.max("last_seen").alias("last_seen"),
        F.max("ended").alias("last_ended"),
        F.sum("resets").alias("resets"),
    )
    per_topic = per_topic.withColumn(
        "last_used", F.when(F.size("active_connectors") == 0, F.greatest("last_ended", "last_seen"))
    ).drop("last_ended")
    if broker_topics is None:
        return per_topic.withColumn("exists", F.lit(None).cast("boolean"))
    return per_topic.join(broker_topics.withColumn("exists", F.lit(True)), "topic", "full_outer").select(
        "topic",
        F.coalesce("connectors", F.array().cast("array<string>")).alias("connectors"),
        F.coalesce("active_connectors", F.array().cast("array<string>")).alias("active_connectors"),
        "first_seen",
        "last_seen",
        "last_used",
        F.coalesce("resets", F.lit(0)).alias("resets"),
        F.coalesce("exists", F.lit(False)).alias("exists"),
        "partitions",
        "replication_factor",
        "cleanup_policy",
    )


def topics_unused_by_connectors(summary: DataFrame, now_ms: int, unused_ms: int) -> DataFrame:
    """Topics some connector used (a KIP-558 topic record) but none has as an active topic now, the last
    use ending at least ``unused_ms`` ago (``last_used``: the latest reset or deletion tombstone, or topic
    record), and that still exist when the broker's facts are known. Not "idle": the status topic says
    nothing of the records written to a topic, which another producer may still write."""
    return summary.filter(
        (F.size("connectors") > 0)
        & (F.size("active_connectors") == 0)
        & (F.col("last_used") <= F.lit(now_ms - unused_ms))
        & F.coalesce(F.col("exists"), F.lit(True))
    ).select("topic", "connectors", "last_used", F.lit(now_ms).alias("now"))


def sink_topic_references(connectors: DataFrame, broker_topics: DataFrame | None) -> DataFrame:
    """Per existing sink connector, each topic its config names (``topics``) or whose name its
    ``topics.regex`` matches (Java regex, whole name, as the consumer's subscription does), with ``via``."""
    return named_topics(connectors.filter(F.col("exists") & (F.col("type") == "sink")), broker_topics, ["connector"])


def named_topics(sinks: DataFrame, broker_topics: DataFrame | None, keys: list[str]) -> DataFrame:
    """Per row of ``sinks`` (its ``keys`` and ``properties``, a sink's config), each topic the config names
    (``rules.connectors.sink_topic_via``'s rule, with Java's own regex here): ``keys``, ``topic``, ``via``.
    Without the broker's topics, only those ``topics`` lists."""
    listed = sinks.select(
        *keys, F.explode(F.split(F.coalesce(F.col("properties")["topics"], F.lit("")), ",")).alias("topic")
    ).select(*keys, F.trim("topic").alias("topic"), F.lit("topics").alias("via"))
    listed = listed.filter(F.col("topic") != "")
    if broker_topics is None:
        return listed
    regexes = sinks.select(*keys, F.trim(F.col("properties")["topics.regex"]).alias("regex")).filter(
        F.col("regex").isNotNull() & (F.col("regex") != "")
    )
    matched = regexes.crossJoin(broker_topics.select("topic")).filter(F.expr("topic RLIKE concat('^(?:', regex, ')$')"))
    return listed.unionByName(matched.select(*keys, "topic", F.lit("topics.regex").alias("via")))


def topics_without_connector(
    summary: DataFrame, references: DataFrame, internal_topics: list[str], ignore_regex: str | None
) -> DataFrame:
    """Topics that exist while no connector uses them (no active topic record) and no existing sink's
    ``topics`` or ``topics.regex`` names them; Kafka's own (``__``) and the cluster's internal topics aside."""
    candidates = summary.filter(
        F.col("exists") & (F.size("active_connectors") == 0) & ~F.col("topic").startswith("__")
    ).filter(~F.col("topic").isin(internal_topics))
    if ignore_regex:
        candidates = candidates.filter(~F.col("topic").rlike(ignore_regex))
    return candidates.join(references.select("topic").distinct(), "topic", "left_anti").select(
        "topic", (F.size("connectors") > 0).alias("ever_used"), "connectors", "last_used", "partitions"
    )


def sinks_never_active(references: DataFrame, usage: DataFrame, broker_topics: DataFrame | None) -> DataFrame:
    """Topics an existing sink's ``topics`` or ``topics.regex`` names that never became active for it
    (no topic record ever, for that pair), and whether the topic exists."""
    never = references.join(usage.select("topic", "connector"), ["topic", "connector"], "left_anti")
    if broker_topics is None:
        return never.withColumn("topic_exists", F.lit(None).cast("boolean"))
    exists = broker_topics.select("topic", F.lit(True).alias("topic_exists"))
    return never.join(exists, "topic", "left").select(
        "connector", "topic", "via", F.coalesce("topic_exists", F.lit(False)).alias("topic_exists")
    )
