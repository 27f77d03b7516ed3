"""Topics that a source connector's KIP-158 creation rules would have created differently from how they
are now: partitions, replication factor or cleanup policy (rules from :mod:`spark_jobs.creation_rules`)."""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from ..creation_rules import rule_for
from .driver_codec import local_frame

RULE_SCHEMA = StructType(
    [
        StructField("group", StringType(), True),
        StructField("partitions", IntegerType(), True),
        StructField("replication_factor", IntegerType(), True),
        StructField("cleanup_policy", StringType(), True),
    ]
)


def _rule(props: Mapping[str, str] | None, topic: str) -> tuple[str, int | None, int | None, str | None] | None:
    rule = rule_for(props or {}, topic)
    if rule is None:
        return None
    return rule.group, rule.partitions, rule.replication_factor, rule.topic_configs.get("cleanup.policy")


def creation_mismatches(
    connectors: DataFrame, usage: DataFrame, broker_topics: DataFrame, creation_enabled: bool = True
) -> DataFrame:
    """Per existing source connector with creation rules and each existing topic it used: the group, what
    the rules say and what the topic has, and ``mismatches`` (partitions, replication_factor,
    cleanup.policy). An unset cleanup policy means the broker's default: a topic-level override differs."""
    if not creation_enabled:
        return usage.limit(0).select("connector", "topic").withColumn("mismatches", F.array().cast("array<string>"))
    sources = connectors.filter(F.col("exists") & (F.col("type") == "source")).select("connector", "properties")
    used = usage.select("connector", "topic").distinct()
    actual = broker_topics.select(
        "topic",
        F.col("partitions").alias("actual_partitions"),
        F.col("replication_factor").alias("actual_replication_factor"),
        F.col("cleanup_policy").alias("actual_cleanup_policy"),
        "cleanup_policy_default",
    )
    pairs = sources.join(used, "connector").join(actual, "topic")
    # the shared rule in the driver, once per (connector, topic): no Python worker for a few rows
    names = RULE_SCHEMA.fieldNames()
    found_rules = [(r["connector"], r["topic"], _rule(r["properties"], r["topic"])) for r in pairs.collect()]
    rules = [(c, t, dict(zip(names, rule, strict=True))) for c, t, rule in found_rules if rule is not None]
    schema = StructType(
        [StructField("connector", StringType()), StructField("topic", StringType()), StructField("rule", RULE_SCHEMA)]
    )
    found = local_frame(pairs.sparkSession, rules, schema)
    ruled = pairs.join(found, ["connector", "topic"])
    expected_partitions, expected_rf, expected_cleanup = (
        F.col("rule.partitions"),
        F.col("rule.replication_factor"),
        F.col("rule.cleanup_policy"),
    )
    mismatches = F.array_compact(
        F.array(
            F.when(expected_partitions.isNotNull() & (expected_partitions != F.col("actual_partitions")), "partitions"),
            F.when(expected_rf.isNotNull() & (expected_rf != F.col("actual_replication_factor")), "replication_factor"),
            F.when(
                (expected_cleanup.isNotNull() & (expected_cleanup != F.col("actual_cleanup_policy")))
                | (expected_cleanup.isNull() & ~F.coalesce(F.col("cleanup_policy_default"), F.lit(True))),
                "cleanup.policy",
            ),
        )
    )
    return (
        ruled.withColumn("mismatches", mismatches)
        .filter(F.size("mismatches") > 0)
        .select(
            "connector",
            "topic",
            F.col("rule.group").alias("group"),
            expected_partitions.alias("expected_partitions"),
            "actual_partitions",
            expected_rf.alias("expected_replication_factor"),
            "actual_replication_factor",
            expected_cleanup.alias("expected_cleanup_policy"),
            "actual_cleanup_policy",
            "mismatches",
        )
    )
